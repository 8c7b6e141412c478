"""``apply_patch`` texts: the paths their headers name, and the shell forms that carry one.

A patch names every file it touches in a header::

    *** Begin Patch
    *** Update File: src/app.py
    *** Add File: src/new.py
    *** Delete File: old.py
    *** Move to: src/renamed.py
    *** End Patch

Every header path is a target (a move writes both its old and new path). A patch
with no recognisable header is unclassifiable. Codex's ``apply_patch`` tool, Cursor's
and a shell command that pipes a patch into ``apply_patch`` (Codex intercepts
``apply_patch <<'EOF' ... EOF`` sent through ``exec_command``; its hooks report it as
``Bash``) are all read here. Only a host that intercepts the heredoc itself
(:attr:`plangate.hooks.hosts.table.Host.shell_patches`) has its shell commands read as
patches; elsewhere ``apply_patch`` is a program like any other.
"""

from __future__ import annotations

import re

HEADERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")
MARKERS = ("*** Begin Patch", "*** End Patch", "*** End of File")
BEGIN = "*** Begin Patch"
PATCH_PROGRAMS = ("apply_patch", "applypatch")
_PROGRAM_WORD = re.compile(r"(?<![\w-])(?:apply_patch|applypatch)(?![\w-])")
_HEREDOC_PATCH = re.compile(
    r"\s*(?:cd\s+(?P<dir>[^\s;&|<>'\"`$\\]+)\s*&&\s*)?(?:apply_patch|applypatch)\s*"
    r"<<\s*(?P<q>['\"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?P=q)[ \t]*\n"
    r"(?P<body>.*?)\n(?P=word)\s*",
    re.DOTALL,
)
SHELL_FORM_PROBLEM = (
    "a shell command that carries a patch must be exactly "
    "'apply_patch <<'EOF' ... EOF' (nothing before or after it)"
)


def patch_targets(patch: str) -> tuple[list[str], list[str]]:
    """``(paths, problems)`` named by the headers of an apply_patch text.

    A line that looks like a header after leading whitespace, or a ``***`` line
    that is no known header (``***  Add File:``, ``*** Update file:``), is a
    problem: a patch tool may read it as a header, so it cannot be ignored.
    """
    lines = patch.replace("\r\n", "\n").split("\n")
    if not any(line.strip() == BEGIN for line in lines):
        return [], [f"the patch has no '{BEGIN}' line"]
    paths: list[str] = []
    for line in lines:
        for header in HEADERS:
            if line.startswith(header):
                path = line[len(header) :].strip()
                if not path:
                    return paths, [f"empty path in {header.strip()!r}"]
                paths.append(path)
                break
        else:
            bare = line.strip()
            if bare.startswith("***") and bare not in MARKERS:
                return paths, [f"unrecognised patch header {bare[:80]!r}"]
    if not paths:
        return [], ["the patch names no file"]
    return paths, []


def carries_patch(command: str) -> bool:
    """True for a shell command that feeds a patch to ``apply_patch`` (both appear in it)."""
    return BEGIN in command and _PROGRAM_WORD.search(command) is not None


def shell_patch(command: object, cwd: str) -> tuple[str | None, str, str]:
    """``(patch, cwd, problem)`` for a shell command that carries an apply_patch text.

    Only two shapes are read: the argv ``["apply_patch", PATCH]`` (optionally
    inside ``bash -lc``) and the heredoc ``[cd DIR &&] apply_patch <<'EOF' ... EOF``.
    Anything else around a patch (other commands before or after it) cannot be
    judged by the patch's headers alone, so it is a problem.
    """
    import posixpath

    if isinstance(command, list) and all(isinstance(a, str) for a in command):
        if len(command) == 2 and posixpath.basename(command[0]) in PATCH_PROGRAMS:
            return command[1], cwd, ""
        if (
            len(command) == 3
            and posixpath.basename(command[0]) in ("bash", "sh", "zsh")
            and (command[1] in ("-c", "-lc"))
        ):
            command = command[2]
    if isinstance(command, str):
        match = _HEREDOC_PATCH.fullmatch(command)
        # The shell ends the heredoc at the FIRST line equal to the word: a body
        # holding that line would hide the commands after it.
        if match is not None and match.group("word") not in match.group("body").split("\n"):
            directory = match.group("dir")
            if directory:
                cwd = directory if directory.startswith("/") else posixpath.join(cwd, directory)
            return match.group("body"), cwd, ""
    return None, cwd, SHELL_FORM_PROBLEM
