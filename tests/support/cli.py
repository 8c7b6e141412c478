"""The CLI driven in-process, as a user runs it."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from plangate.cli.context import Context
from plangate.cli.main import main


@dataclass
class CliResult:
    """What one in-process CLI run produced."""

    code: int
    out: str
    err: str


RunCli = Callable[..., CliResult]


class Terminal(io.BytesIO):
    """Standard input that says it is an interactive terminal (a human at the keyboard)."""

    def isatty(self) -> bool:
        """Always a terminal."""
        return True


def run_cli_in(
    cwd: Path, *argv: str, stdin: bytes = b"", env: dict[str, str] | None = None,
    tty: bool = False,
) -> CliResult:
    """Run ``plangate`` in-process: ``run_cli_in(repo, "c3", "verify", "TASK-0001")``.

    ``tty`` makes stdin an interactive terminal (what human-only options require).
    """
    out, err = io.StringIO(), io.StringIO()
    ctx = Context(
        cwd=Path(cwd),
        stdout=out,
        stderr=err,
        stdin=Terminal(stdin) if tty else io.BytesIO(stdin),
        env=dict(os.environ if env is None else env),
    )
    code = main(list(argv), ctx)
    return CliResult(code, out.getvalue(), err.getvalue())
