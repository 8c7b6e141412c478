"""What every command receives: where it runs and where it writes."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO, TextIO


class Context:
    """Run context of one command invocation.

    Commands print through ``stdout``/``stderr`` and read ``stdin`` from here,
    never from :mod:`sys` directly, so tests can drive ``main`` in-process.
    A plain class (not a dataclass) keeps the CLI's start-up cheap.
    """

    __slots__ = ("cwd", "env", "stderr", "stdin", "stdout")

    def __init__(
        self,
        cwd: Path,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        stdin: BinaryIO | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.cwd = cwd
        self.stdout: TextIO = stdout if stdout is not None else sys.stdout
        self.stderr: TextIO = stderr if stderr is not None else sys.stderr
        self.stdin: BinaryIO = stdin if stdin is not None else sys.stdin.buffer
        self.env: Mapping[str, str] = env if env is not None else {}

    def out(self, text: str = "") -> None:
        """Print one line to stdout (a closed pipe raises ``OutputClosed``)."""
        from plangate.cli.output import write_line

        write_line(self.stdout, text)

    def err(self, text: str = "") -> None:
        """Print one line to stderr (a closed pipe raises ``OutputClosed``)."""
        from plangate.cli.output import write_line

        write_line(self.stderr, text)
