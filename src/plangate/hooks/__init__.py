"""Where agents meet the gate: host hook adapters, git hooks and doctor.

The package is split so that the hook hot path stays light:

- :mod:`plangate.hooks.decision` -- the ONE pure decision "may this action happen now?";
- :mod:`plangate.hooks.paths` -- raw host paths to canonical repository paths;
- :mod:`plangate.hooks.shell` -- the shell classifier (tree-sitter-bash, full option tables);
- :mod:`plangate.hooks.service` -- reads the facts (task, record, scope, surfaces, ledger);
- :mod:`plangate.hooks.override` -- override grants as the hooks read them (light);
  :mod:`plangate.hooks.override_service` -- grant, list and revoke (the ledger IO);
- :mod:`plangate.hooks.hosts` -- one adapter per host (``claude``, ``codex``,
  ``cursor``, ``git``) and their shared ``protocol``;
- :mod:`plangate.hooks.entry` -- the one dispatcher (``python -m plangate.hooks <host>``);
- ``install`` (host configuration), ``doctor`` (canaries).

Only the standard library and plangate core are imported at module level.
"""
