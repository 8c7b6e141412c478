"""Where agents meet the gate: host hook adapters, git hooks, CI and doctor.

The package is split so that the hook hot path stays light:

- :mod:`plangate.hooks.decision` -- the ONE pure decision "may this action happen now?";
- :mod:`plangate.hooks.paths` -- raw host paths to canonical repository paths;
- :mod:`plangate.hooks.bash` -- a conservative shell-command classifier;
- :mod:`plangate.hooks.service` -- reads the facts (task, record, scope, surfaces, ledger);
- :mod:`plangate.hooks.claude` / ``codex`` / ``cursor`` -- host protocol adapters;
- :mod:`plangate.hooks.git_hooks`, ``ci``, ``install``, ``override``, ``doctor``.

Only the standard library and plangate core are imported at module level.
"""
