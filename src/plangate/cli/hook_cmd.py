"""``plangate hook claude|codex|cursor|git-pre-commit|git-pre-push``: hook entry points.

These speak their host's protocol, not the CLI's exit codes: every outcome,
including a crash, is the host's allow or deny form (docs/agents.md). Nothing
here raises past :func:`run`.
"""

from __future__ import annotations

from plangate.cli.context import Context
from plangate.hooks.protocol import MAX_PAYLOAD_BYTES, HookOutput

HOSTS = ("claude", "codex", "cursor", "git-pre-commit", "git-pre-push")
USAGE = "usage: plangate hook {claude|codex|cursor|git-pre-commit|git-pre-push} < payload"


def _read_stdin(ctx: Context) -> bytes:
    try:
        return ctx.stdin.read(MAX_PAYLOAD_BYTES + 1)
    except (OSError, ValueError):
        return b""


def dispatch(host: str, data: bytes, ctx: Context) -> HookOutput:
    """Run the adapter of ``host`` on ``data``."""
    if host == "claude":
        from plangate.hooks.claude import handle

        return handle(data, ctx.env)
    if host == "codex":
        from plangate.hooks.codex import handle as handle_codex

        return handle_codex(data, ctx.env)
    if host == "cursor":
        from plangate.hooks.cursor import handle as handle_cursor

        return handle_cursor(data, ctx.env)
    if host == "git-pre-commit":
        from plangate.hooks.git_hooks import pre_commit

        return pre_commit(ctx.cwd, ctx.env)
    from plangate.hooks.git_hooks import pre_push

    return pre_push(ctx.cwd, data, ctx.env)


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate hook``."""
    if len(argv) != 2 or argv[1] not in HOSTS:
        # Exit 2 blocks in Claude Code and Codex; git treats any non-zero as a stop.
        ctx.stderr.write(f"plangate: HOOK_USAGE: {USAGE}\n")
        return 2
    data = b"" if argv[1] == "git-pre-commit" else _read_stdin(ctx)
    output = dispatch(argv[1], data, ctx)
    ctx.stdout.write(output.stdout)
    ctx.stderr.write(output.stderr)
    ctx.stdout.flush()
    ctx.stderr.flush()
    return output.exit_code
