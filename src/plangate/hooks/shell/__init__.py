"""The shell classifier: a convenience that says "read-only" only when it knows.

It is not a boundary (docs/agents.md, "Shell commands"). A command line is
parsed with a real shell parser (tree-sitter-bash) into simple commands whose
words are literal after quote removal; each program is judged by its full
option table. The answer is one of:

- ``read_only``: every program is a known reader, every option is known, no
  word expands, nothing is redirected into a file;
- ``writes``: every part is understood and the files it writes are listed,
  each with the step that writes it (:class:`~plangate.hooks.shell.state.Write`);
  a command that creates, moves or deletes a ref lists ``.git``;
- ``runs_code``: a program runs project code (interpreters, test runners,
  build tools, package managers, linters): allowed only where the operating
  system confines its writes;
- ``unclassified``: anything else (an expansion, an unknown program or option,
  an abbreviation, a parse error...).

Hook-skipping flags (``git commit -n``, ``git push --no-verify``,
``git -c core.hooksPath=...``) are reported separately and always denied.
The classifier never runs anything and never touches the file system.
"""

from plangate.hooks.shell.classify import ShellAnalysis, ShellKind, analyse
from plangate.hooks.shell.state import Write

__all__ = ["ShellAnalysis", "ShellKind", "Write", "analyse"]
