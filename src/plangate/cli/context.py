"""What every command receives: where it runs and where it writes."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO


@dataclass
class Context:
    """Run context of one command invocation.

    Commands print through ``stdout``/``stderr`` and read ``stdin`` from here,
    never from :mod:`sys` directly, so tests can drive ``main`` in-process.
    """

    cwd: Path
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: BinaryIO = field(default_factory=lambda: sys.stdin.buffer)
    env: Mapping[str, str] = field(default_factory=dict)

    def out(self, text: str = "") -> None:
        """Print one line to stdout."""
        print(text, file=self.stdout)

    def err(self, text: str = "") -> None:
        """Print one line to stderr."""
        print(text, file=self.stderr)
