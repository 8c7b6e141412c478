"""``plangate hook claude|codex|cursor|git-pre-commit|git-pre-push``: hook entry points.

These speak their host's protocol, not the CLI's exit codes: every outcome,
including a crash, is the host's allow or deny form (docs/agents.md). The
installer writes the lighter ``python -m plangate.hooks <host>``; both run
:func:`plangate.hooks.entry.run_host` and print the same bytes.
"""

from __future__ import annotations

from plangate.cli.context import Context
from plangate.hooks.entry import HOSTS, run_host
from plangate.hooks.hosts.protocol import MAX_PAYLOAD_BYTES


def _read_stdin(ctx: Context) -> bytes:
    try:
        return ctx.stdin.read(MAX_PAYLOAD_BYTES + 1)
    except (OSError, ValueError):
        return b""


HELP = """usage: plangate hook {claude|codex|cursor|git-pre-commit|git-pre-push} < payload

Agent hook entry points. Each reads its host's JSON payload on stdin (git hooks
read git's own arguments and stdin) and answers in the host's protocol:

  claude          Claude Code PreToolUse / PostToolUse / Stop
  codex           Codex CLI hooks (apply_patch patches and shell commands)
  cursor          Cursor hooks (.cursor/hooks.json, version 1)
  git-pre-commit  the staged changes against the active task and protected surfaces
  git-pre-push    the pushed range, the same checks

Every failure (malformed input, unknown event, unreadable record, missing
ledger, an exception) is the host's deny form, never an allow. Install them
with 'plangate hooks install'; see docs/agents.md for what each deny means."""


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate hook``."""
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        ctx.out(HELP)
        return 0
    host = argv[1] if len(argv) == 2 else ""
    data = b"" if host in ("git-pre-commit", "") or host not in HOSTS else _read_stdin(ctx)
    output = run_host(host, data, ctx.cwd, ctx.env)
    ctx.stdout.write(output.stdout)
    ctx.stderr.write(output.stderr)
    ctx.stdout.flush()
    ctx.stderr.flush()
    return output.exit_code
