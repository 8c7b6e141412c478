"""Host adapters: each translates one host's hook protocol into a hook request and back.

- :mod:`plangate.hooks.hosts.protocol` -- what every adapter shares: the output
  triple, payload parsing, the tool-call envelope, the fail-closed wrapper;
- :mod:`plangate.hooks.hosts.claude` -- Claude Code (its protocol is also Codex's);
- :mod:`plangate.hooks.hosts.codex` -- Codex tool vocabulary (``apply_patch``, argv shells);
- :mod:`plangate.hooks.hosts.cursor` -- Cursor (``.cursor/hooks.json`` version 1);
- :mod:`plangate.hooks.hosts.git` -- git ``pre-commit`` and ``pre-push``.
"""
