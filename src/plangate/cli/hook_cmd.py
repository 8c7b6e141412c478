"""``plangate hook claude|codex|cursor|git-pre-commit|git-pre-push``: hook entry points.

These speak their host's protocol, not the CLI's exit codes: every outcome,
including a crash, is the host's allow or deny form (docs/agents.md). The
installer writes the lighter ``python -m plangate.hooks <host>``; both run
:func:`plangate.hooks.entry.run_host` and print the same bytes.
"""

from __future__ import annotations

from plangate.cli.context import Context
from plangate.hooks.entry import HOSTS, run_host
from plangate.hooks.protocol import MAX_PAYLOAD_BYTES


def _read_stdin(ctx: Context) -> bytes:
    try:
        return ctx.stdin.read(MAX_PAYLOAD_BYTES + 1)
    except (OSError, ValueError):
        return b""


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate hook``."""
    host = argv[1] if len(argv) == 2 else ""
    data = b"" if host in ("git-pre-commit", "") or host not in HOSTS else _read_stdin(ctx)
    output = run_host(host, data, ctx.cwd, ctx.env)
    ctx.stdout.write(output.stdout)
    ctx.stderr.write(output.stderr)
    ctx.stdout.flush()
    ctx.stderr.flush()
    return output.exit_code
