"""Authority: who approved, checked against a trust root the change cannot have written.

- :mod:`plangate.authority.trustfile` parses ``.plangate/trust.toml`` (roles
  to principals, whether signatures are required, the trust branch);
- :mod:`plangate.authority.signers` parses ``.plangate/allowed_signers`` (the
  OpenSSH allowed-signers format, restricted) and ``.plangate/revoked_signers``;
- :mod:`plangate.authority.root` joins both into one :class:`TrustRoot` and
  checks them against each other;
- :mod:`plangate.authority.source` reads the trust root from a commit through
  the git door (the step's only IO);
- :mod:`plangate.authority.sshsig` parses an armored SSHSIG signature (pure);
- :mod:`plangate.authority.sshkeygen` is the one process door to
  ``ssh-keygen -Y sign|verify`` (no private key ever passes through PlanGate);
- :mod:`plangate.authority.verify` decides, as an ordered rule table, whether
  a signature names an authorised principal;
- :mod:`plangate.authority.statement` is the signed review statement.
"""
