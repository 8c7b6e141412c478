"""Shared output helpers: one JSON form and one human form for every Result, and the
one place where a closed output ends a command quietly.

A reader that stops early (``plangate ledger log | head -1``) closes the pipe;
the next write raises :class:`BrokenPipeError`. Every line a command prints goes
through :func:`write_line`, which turns that into :class:`OutputClosed`; the
CLI's error boundary ends the command with exit code 141 (128 + SIGPIPE, what a
shell reports for a process stopped by a closed pipe), prints nothing, and
points the standard output at ``/dev/null`` so that the interpreter's final
flush cannot fail either.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from plangate.verdict import Result

if TYPE_CHECKING:
    from plangate.cli.context import Context

EXIT_OUTPUT_CLOSED = 141
"""Exit code of a command whose reader closed the output (128 + SIGPIPE)."""


class OutputClosed(Exception):
    """The reader of the command's output went away; nothing more can be printed."""


def write_line(stream: TextIO, text: str) -> None:
    """Print one line to ``stream``; a closed pipe raises :class:`OutputClosed`."""
    try:
        print(text, file=stream)
    except BrokenPipeError:
        raise OutputClosed from None


def flush(stream: TextIO) -> None:
    """Flush ``stream``; a closed pipe raises :class:`OutputClosed`."""
    try:
        stream.flush()
    except BrokenPipeError:
        raise OutputClosed from None
    except (OSError, ValueError):  # closed or detached stream: nothing left to deliver
        return


def silence_closed_output(stream: TextIO | None = None) -> None:
    """Point the closed output (default: the process's standard output) at ``/dev/null``.

    Whatever is still buffered is dropped; the interpreter's flush at exit then
    succeeds instead of printing a traceback. A stream without a file descriptor
    (tests pass ``StringIO``) is left alone.
    """
    target = sys.stdout if stream is None else stream
    try:
        fd = target.fileno()
    except (AttributeError, OSError, ValueError):
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(devnull, fd)
    except OSError:
        pass
    finally:
        os.close(devnull)


def print_json(ctx: Context, value: Mapping[str, Any]) -> None:
    """Print one JSON object (sorted keys, indent 2)."""
    ctx.out(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False))


def print_result(ctx: Context, result: Result, *, as_json: bool, title: str = "") -> int:
    """Print ``result`` as JSON or as readable lines; return its exit code."""
    if as_json:
        print_json(ctx, result.to_json())
    else:
        head = f"{title}: {result.verdict}" if title else result.verdict
        ctx.out(head)
        for reason in result.reasons:
            ctx.out(f"  - {reason.code}: {reason.message}")
            if reason.hint:
                ctx.out(f"    hint: {reason.hint}")
    return int(result.exit_code)
