"""``plangate`` entry point: ``main(argv) -> int`` and the one error boundary.

Subcommand modules are imported lazily, only the one that runs, so the hook
and exec hot paths do not pay for the rest of the CLI.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from plangate import __version__
from plangate.cli.context import Context
from plangate.cli.output import EXIT_OUTPUT_CLOSED, OutputClosed, flush, silence_closed_output
from plangate.errors import EnvironmentFailure, PlanGateError
from plangate.fsutil import working_directory, working_directory_unavailable
from plangate.verdict import ExitCode

# name -> (module, one-line summary). Each module defines
# ``run(argv: list[str], ctx: Context) -> int``.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("plangate.cli.plan_cmds", "scaffold docs/working/TASK-XXXX with the six artifacts"),
    "package": ("plangate.cli.plan_cmds", "hash the Plan Package and check both evidence markers"),
    "review": ("plangate.cli.plan_cmds", "write a C-1/C-2 evidence marker bound to plan.md"),
    "plan": ("plangate.cli.plan_cmds", "lint plan.md: what the scope derivation sees and fixes"),
    "c3": ("plangate.cli.c3_cmds", "issue or verify the c3-prime record approvals/c3.json"),
    "exec": ("plangate.cli.exec_cmd", "verify the approval against HEAD, then run a command"),
    "runs": ("plangate.cli.runs_cmd", "list, show, apply the in-scope part of, prune exec runs"),
    "status": ("plangate.cli.status_cmd", "show every task's package, markers and record verdict"),
    "surfaces": ("plangate.cli.surfaces_cmd", "show the resolved protected surfaces"),
    "loopspec": ("plangate.cli.loopspec_cmd", "derive the LoopSpec from plan.md"),
    "arbiter": ("plangate.cli.arbiter_cmd", "run the C-3' arbiter decision table"),
    "ledger": ("plangate.cli.ledger_cmd", "read, verify and export the decision ledger"),
    "delivery": ("plangate.cli.delivery_cmd", "assess merge readiness of a pull request"),
    "evidence": ("plangate.cli.evidence_cmd", "produce or verify RunEvidence"),
    "harness": ("plangate.cli.harness_cmd", "build a HarnessManifest from a commit"),
    "eval": ("plangate.cli.eval_cmd", "pre-register plans, register candidates, gate and run them"),
    "hook": ("plangate.cli.hook_cmd", "agent hook entry points (claude, codex, cursor, git)"),
    "hooks": ("plangate.cli.hooks_cmd", "install or uninstall the hooks in a repository"),
    "hookd": ("plangate.cli.hookd_cmd", "warm hook helper of a repository: start, stop, status"),
    "setup": ("plangate.cli.setup_cmd", "switch PlanGate on: surfaces, trust root, ignores, hooks"),
    "override": ("plangate.cli.override_cmd", "human-only, time-boxed, path-scoped override"),
    "task": ("plangate.cli.task_cmd", "start, stop or show the active task of every host's hooks"),
    "trust": ("plangate.cli.trust_cmd", "manage the trust root: roles, keys, required signatures"),
    "ci": ("plangate.cli.ci_cmd", "check a pull request's tasks, scope and protected surfaces"),
    "doctor": ("plangate.cli.doctor_cmd", "prove the installed hooks really deny"),
    "report": ("plangate.cli.report_cmd", "one page of tasks, ledger, denials and evaluations"),
    "demo": ("plangate.cli.demo_cmd", "walk the whole journey on a bundled example"),
}

USAGE = "usage: plangate [-C DIR] [--version] <command> [args...]"


def _directory_option(cwd: Path, value: str) -> Path:
    """``-C DIR`` relative to ``cwd``; a directory that cannot be reached is a reason."""
    target = cwd / value
    try:
        resolved = target.resolve(strict=True)
        if not resolved.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(target))
    except OSError as exc:
        raise working_directory_unavailable(str(target), exc) from None
    return resolved


def _help_text() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = [USAGE, "", "A fail-closed trust kernel for AI coding agents.", "", "commands:"]
    for name, (_module, summary) in COMMANDS.items():
        lines.append(f"  {name.ljust(width)}  {summary}")
    lines += [
        "",
        "exit codes: 0 accepted, 1 rejected, 2 usage error, 3 a human must decide,",
        "            4 could not evaluate (INCONCLUSIVE / partial), 5 internal error",
        "",
        "Run 'plangate <command> --help' for a command's options.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, ctx: Context | None = None) -> int:
    """Run one ``plangate`` command; return its exit code (never raises)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if ctx is None:
        ctx = Context(cwd=Path(), env=dict(os.environ))
        try:
            ctx.cwd = working_directory()
        except PlanGateError as exc:
            return _report_error(ctx, exc)
    try:
        while args and args[0] == "-C":
            if len(args) < 2:
                ctx.err(USAGE)
                return int(ExitCode.USAGE)
            ctx.cwd = _directory_option(ctx.cwd, args[1])
            args = args[2:]
        if not args or args[0] in ("-h", "--help", "help"):
            ctx.out(_help_text())
            return 0 if args else int(ExitCode.USAGE)
        if args[0] == "--version":
            ctx.out(f"plangate {__version__}")
            return 0
        name, rest = args[0], args[1:]
        entry = COMMANDS.get(name)
        if entry is None:
            ctx.err(f"plangate: unknown command {name!r}")
            ctx.err("  hint: run 'plangate --help' for the list of commands")
            return int(ExitCode.USAGE)
        module = importlib.import_module(entry[0])
        code: int = module.run([name, *rest], ctx)
        flush(ctx.stdout)
        return int(code)
    except (OutputClosed, BrokenPipeError):
        # The reader went away (``plangate ledger log | head -1``, or argparse's
        # help printed straight to sys.stdout): end quietly.
        silence_closed_output(ctx.stdout)
        return EXIT_OUTPUT_CLOSED
    except PlanGateError as exc:
        return _report_error(ctx, exc)
    except OSError as exc:
        # A file-system refusal no specific check turned into a reason (a
        # read-only or unsearchable directory, say): a rejection, never success.
        where = f" ({exc.filename})" if exc.filename else ""
        return _report_error(
            ctx,
            EnvironmentFailure(
                "FILESYSTEM_UNAVAILABLE",
                f"a file-system operation failed{where}: {exc.strerror or exc}",
                "check the permissions of the repository's directories and the free space",
            ),
        )
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else int(ExitCode.USAGE)
    except KeyboardInterrupt:
        ctx.err("plangate: interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 -- the one boundary: a bug is exit 5, never success
        return _report_internal(ctx, exc)


def _report_error(ctx: Context, exc: PlanGateError) -> int:
    try:
        ctx.err(f"plangate: {exc.code}: {_redacted(exc.message)}")
        if exc.hint:
            ctx.err(f"  hint: {_redacted(exc.hint)}")
    except OutputClosed:
        silence_closed_output(ctx.stderr)
    return int(exc.exit_code)


def _report_internal(ctx: Context, exc: Exception) -> int:
    try:
        ctx.err(f"plangate: INTERNAL_ERROR: {type(exc).__name__}: {_redacted(str(exc))}")
        ctx.err("  hint: this is a bug in plangate; rerun with PLANGATE_DEBUG=1 and report it")
        if ctx.env.get("PLANGATE_DEBUG") == "1":
            import traceback

            ctx.err(_redacted(traceback.format_exc()))
    except OutputClosed:
        silence_closed_output(ctx.stderr)
    return int(ExitCode.INTERNAL)


def _redacted(text: str) -> str:
    """``text`` without connection passwords (an error may quote a ledger URL)."""
    from plangate.ledger.credentials import redact_credentials

    return redact_credentials(text)


def entrypoint() -> None:
    """Console-script entry point."""
    from plangate.startup import tune_collector

    tune_collector()
    code = main()
    try:
        flush(sys.stdout)
    except OutputClosed:
        silence_closed_output()
        code = EXIT_OUTPUT_CLOSED
    sys.exit(code)
