"""What the classifier learns about one command line, as it walks it."""

from __future__ import annotations

import posixpath
import re

from plangate.hooks.paths import is_device_sink
from plangate.records import NamedTuple

_PROC = re.compile(r"/+proc(?:/|$)")
_DESCRIPTOR = re.compile(r"/+(?:dev|proc/+(?:self|thread-self))/+fd/+([^/]*)/*")


class Write(NamedTuple):
    """One path a part of the command writes.

    ``step`` is the index of the simple command that writes it (earlier steps
    run first); ``relinks`` is True when the write may create, replace or move
    a link or a directory (``ln``, ``mv``, ``cp -r``, ``git mv``, ``rm``), so
    later paths through it cannot be resolved before it has run.
    """

    path: str
    step: int
    relinks: bool = False
    directory: bool = False
    """``mkdir``: the path is a directory the command creates (its files are not judged)."""
    keeps_contents: bool = False
    """``touch``/``mkdir``: an existing directory's files are left as they are."""


class State:
    """Mutable findings of one walk (see :func:`plangate.hooks.shell.analyse`)."""

    def __init__(self, *, cdpath: bool = False) -> None:
        self.cdpath = cdpath
        """``CDPATH`` is set: a relative ``cd`` may go to a directory it names, not ``./``."""
        self.writes: list[Write] = []
        self.problems: list[str] = []
        self.runs_code: list[str] = []
        self.skips_hooks: list[str] = []
        self.programs: list[str] = []
        self.into_dir: list[tuple[str, str, int]] = []
        self.commits = False
        self.commit_paths: list[str] = []
        self.commit_all = False
        self.stage_all = False
        """A part stages changes no plain path names (``git add -A``, ``git add .``, a glob)."""
        self.stage_paths: list[str | None] = []
        """Paths a part stages (``git add F``; None: relative to an unknown directory)."""
        self.step = 0
        self.cwd: str | None = ""
        """Directory changed into ('' = the tool's directory, None = unknown)."""
        self.moved = False
        """Set by a ``cd`` the shell itself runs (``cd``, ``command cd``), for the walk."""
        self.stream_writes: list[str] = []
        """Writes to a standard descriptor by its path (``/dev/stdout``, ``/dev/fd/0``)."""
        self.opened_fds: set[str] = set()
        """Descriptors a redirection of the line opened (``3>f``, ``3>&1``)."""
        self.reads_file = False
        """A ``<`` redirection opens a file on a descriptor somewhere in the line."""

    def unclassified(self, note: str) -> None:
        if note not in self.problems:
            self.problems.append(note)

    def runs(self, note: str) -> None:
        if note not in self.runs_code:
            self.runs_code.append(note)

    def skips(self, note: str) -> None:
        if note not in self.skips_hooks:
            self.skips_hooks.append(note)

    def joined(self, raw: str) -> str | None:
        if raw.startswith(("/", "~")):
            return raw
        if self.cwd is None:
            return None
        return posixpath.join(self.cwd, raw) if self.cwd else raw

    def write(
        self,
        raw: str,
        *,
        sink_ok: bool = False,
        relinks: bool = False,
        directory: bool = False,
        keeps_contents: bool = False,
    ) -> None:
        # Redirecting into /dev/null or tee-ing to /dev/stderr writes no file; 'rm
        # /dev/null' or 'touch /dev/stderr' does touch one outside the repository.
        # Checked as the shell will open it: after a 'cd /dev/fd', '5' is '/dev/fd/5'.
        where = raw if raw.startswith("/") else (self.joined(raw) or raw)
        descriptor = _DESCRIPTOR.fullmatch(where)
        if descriptor is not None and descriptor.group(1) not in ("0", "1", "2"):
            # A descriptor other than the standard three is inherited from whatever
            # started the shell: it may be open on any file.
            self.unclassified(f"write target {raw!r} is an inherited descriptor")
            return
        if _PROC.match(where):
            # '/proc/self/cwd/F' is F in the shell's directory, but the hook would resolve
            # it in its own process: another directory, another file.
            self.unclassified(f"write target {raw!r} depends on the process that opens it")
            return
        if sink_ok and is_device_sink(raw):
            if raw not in ("/dev/null", "/dev/tty"):
                # '/dev/stdout', '/dev/fd/1': no file, unless the line opened that
                # descriptor on one ('echo x < F > /dev/fd/0' rewrites F): see analyse.
                self.stream_writes.append(raw)
            return
        if raw == "" or any(c in raw for c in "*?[]"):
            self.unclassified(f"write target {raw!r} is not a plain path")
            return
        if raw.startswith(("!", "=")):
            # zsh reads '>!FILE' as a clobbering '>' to FILE and expands '=NAME' to the
            # path of the program NAME: the file written is not the one spelled.
            self.unclassified(f"write target {raw!r} means another file to zsh")
            return
        if raw.startswith(":"):
            self.unclassified(f"write target {raw!r} looks like a git pathspec with magic")
            return
        path = self.joined(raw)
        if path is None:
            self.unclassified(f"write target {raw!r} is relative to an unknown directory")
            return
        self.writes.append(Write(path, self.step, relinks, directory, keeps_contents))

    def into(self, destination: str, base: str) -> None:
        joined = self.joined(destination)
        if joined is not None:
            self.into_dir.append((joined, base, self.step))
