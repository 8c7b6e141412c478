"""One dispatcher for every hook host, shared by ``plangate hook`` and ``python -m plangate.hooks``.

``python -m plangate.hooks <host>`` is the entry point the installer writes:
it skips the general CLI (its argument parsing, error boundary and output
helpers), so a hook process imports only what its own decision needs. Both
entry points produce byte-identical output.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from plangate.hooks.hosts.protocol import MAX_PAYLOAD_BYTES, HookOutput
from plangate.hooks.hosts.table import ENTRY_POINTS

HOSTS = tuple(ENTRY_POINTS)
"""Every entry point ``plangate hook NAME`` answers (the host table's)."""
USAGE = f"usage: plangate hook {{{'|'.join(HOSTS)}}} < payload"


def run_host(host: str, data: bytes, cwd: Path, env: Mapping[str, str]) -> HookOutput:
    """Run the adapter of entry point ``host``; an unknown one is a blocking usage error
    (exit 2)."""
    found = ENTRY_POINTS.get(host)
    if found is None:
        # Exit 2 blocks in Claude Code and Codex; git treats any non-zero as a stop.
        return HookOutput("", f"plangate: HOOK_USAGE: {USAGE}\n", 2)
    return found.load().answer(host, data, cwd, env)


def main(argv: list[str] | None = None) -> int:
    """``python -m plangate.hooks <host>`` / ``plangate-hook-python <host>``: the running hook
    helper's answer when it passes every check (:mod:`plangate.hooks.hookd_client`),
    else :func:`run_in_process`."""
    from plangate.startup import tune_collector

    tune_collector()
    return run_in_process(argv, use_helper=True)


def run_in_process(
    argv: list[str] | None = None, *, use_helper: bool = False, payload: bytes | None = None
) -> int:
    """Read stdin, decide in this process, print, exit (the helper only with ``use_helper``,
    and only for the agent hosts). ``payload``: standard input as the launcher already read
    it (:func:`plangate.hooks.hookd_client.launch`)."""
    args = sys.argv[1:] if argv is None else argv
    host = args[0] if len(args) == 1 else ""
    found = ENTRY_POINTS.get(host)
    data = b""
    if found is not None and host not in found.entries_without_stdin:
        data = _read_stdin() if payload is None else payload
    try:
        cwd = Path.cwd()
    except OSError as exc:
        # A deleted or unreachable working directory: the git hosts need it and
        # block; the agent hosts read the directory from their payload.
        if found is not None and not found.agent:
            return _emit(
                HookOutput(
                    "", f"plangate: WORKING_DIRECTORY_UNAVAILABLE: {exc.strerror or exc}\n", 2
                )
            )
        cwd = Path("/")
    if use_helper:
        from plangate.hooks.hookd_client import ask_helper

        if found is not None and found.agent and sys.stdout is not None and sys.stderr is not None:
            answer = ask_helper(host, data, os.environ, str(cwd))
            if answer is not None:
                return _emit_bytes(*answer)
    return _emit(run_host(host, data, cwd, dict(os.environ)))


def _read_stdin() -> bytes:
    """Standard input up to one byte past the limit; a closed one reads as empty."""
    try:
        return sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1) if sys.stdin else b""
    except (OSError, ValueError):
        return b""


def _emit_bytes(out: bytes, err: bytes, code: int) -> int:
    """Print an answer the helper encoded for this process's own streams."""
    sys.stdout.flush()
    sys.stderr.flush()
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    sys.stdout.buffer.flush()
    sys.stderr.buffer.flush()
    return code


def _emit(output: HookOutput) -> int:
    """Print ``output``; exit 2 (a block) when a stream it needs is closed: an answer that
    cannot be delivered (a deny in JSON on standard output) must never read as an allow."""
    undeliverable = False
    for text, stream in ((output.stdout, sys.stdout), (output.stderr, sys.stderr)):
        if stream is None:
            undeliverable |= bool(text)
            continue
        stream.write(text)
        stream.flush()
    return 2 if undeliverable else output.exit_code
