"""Host adapters: each translates one host's hook protocol into a hook request and back.

- :mod:`plangate.hooks.hosts.table` -- the host table: every host, what differs
  between them, and where its adapter is;
- :mod:`plangate.hooks.hosts.protocol` -- what every adapter shares: the output
  triple, payload parsing, the tool-call envelope, the fail-closed wrapper;
- :mod:`plangate.hooks.hosts.requests` -- one reader of tool calls for every host
  (:mod:`plangate.hooks.hosts.tools`: the vocabularies; :mod:`plangate.hooks.hosts.patch`:
  ``apply_patch`` texts);
- :mod:`plangate.hooks.hosts.claude_protocol` -- Claude Code's hook protocol, also Codex's;
- :mod:`plangate.hooks.hosts.claude` -- Claude Code;
- :mod:`plangate.hooks.hosts.codex` -- Codex;
- :mod:`plangate.hooks.hosts.cursor` -- Cursor (``.cursor/hooks.json`` version 1);
- :mod:`plangate.hooks.hosts.git` -- git ``pre-commit`` and ``pre-push``.

No adapter imports another: what two share lives in a shared module, and a host
reaches another through the table.
"""
