"""``plangate exec TASK [--json] [--no-network] [--no-isolation] -- COMMAND [ARGS]``.

Parses the arguments, picks the runner
(:func:`plangate.execution.isolated.choose_runner`: a box on a workspace by
default), calls :func:`plangate.execution.service.execute` and prints the
outcome; the rules are in :mod:`plangate.execution.preflight`,
:mod:`plangate.execution.apply` and docs/isolation.md.

The run ends with one verdict line (:func:`plangate.execution.preflight.run_verdict`):
``ACCEPTED``, ``REJECTED`` or ``HUMAN_REQUIRED``; ``command exited N`` is printed only
for a command that started.

Exit code: the preflight's (1 or 3) when it fails; 1 when no sandbox works
(``SANDBOX_UNAVAILABLE``), the isolated result was refused or the approval no
longer holds after the run, 3 when it needs a human (a protected surface); else
the command's own
(127 when it cannot be found, 126 when it cannot be executed, 128+N when it
died of signal N). If ``exec_ended`` cannot be recorded, a command that
succeeded exits 1 instead (the run is not fully accounted for).

plangate's own messages go to stderr, so the command's stdout stays its own;
``--json`` prints one JSON object on stdout after the command has finished.
"""

from __future__ import annotations

import argparse
from typing import Any

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.errors import UsageError
from plangate.execution.preflight import PreparedRun
from plangate.execution.service import Completion, Refusal, execute
from plangate.verdict import Reason

EXIT_HELP = (
    "exit codes: the command's own exit code when the run's verdict is ACCEPTED; 1 REJECTED "
    "(no HEAD, lock held, record not accepted, ledger or run log not writable, no sandbox "
    "backend, the command not started, the result out of scope or touching a plan package, "
    "the approval no longer holding after the run); 3 HUMAN_REQUIRED, a human must decide "
    "(HUMAN_ESCALATED, legacy CONDITIONAL, a protected surface changed by the run, "
    "--no-isolation without a terminal, under agent markers, or, where a trust root is in "
    "force, without a valid opt-out statement signed by an override holder: "
    "'plangate trust opt-out TASK --sign KEY -- COMMAND'); 2 usage error (missing '--' "
    "or command)"
)


def _parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="plangate exec",
        usage="plangate exec TASK [--json] [--no-network] [--no-isolation] -- COMMAND [ARGS...]",
        description="Verify the task's approval against HEAD under a lock, record the run "
        "in the ledger and run.ndjson, run COMMAND in a sandbox on a workspace made from the "
        "approved commit, then judge the diff with ci check's rules: in scope, it is committed "
        "on branch plangate/runs/<run id> (and the current branch is fast-forwarded when it "
        "is still at the approved commit, clean, and COMMAND succeeded); otherwise nothing "
        "reaches the repository and the patch is kept ('plangate runs apply RUN --in-scope' "
        "lands its in-scope part). Uncommitted and untracked files of the working tree are "
        "not in the run: exec names them. Re-verify, record drift, end with one verdict.",
        epilog=EXIT_HELP,
    )
    parser.add_argument("task", help="task id, e.g. TASK-0001")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    parser.add_argument("--no-network", dest="network", action="store_const", const=False,
                        default=None, help="no network inside the box, not even through the egress "
                        "proxy (default: only through the proxy, to the allowlisted "
                        "endpoints, or the 'network' setting of .plangate/isolation.toml)")
    parser.add_argument("--no-isolation", action="store_true",
                        help="run in the working tree without a sandbox. Where a trust root "
                        "is in force it needs a statement signed by an override holder for "
                        "this task, this exact command and HEAD, valid for at most an hour "
                        "(plangate trust opt-out); without a trust root it is an "
                        "unauthenticated opt-out. Refused without a terminal or under agent "
                        "markers; recorded in the ledger and run.ndjson")
    if "--" not in argv:
        if any(a in ("-h", "--help") for a in argv):
            parser.parse_args(argv)
        raise UsageError(
            "EXEC_COMMAND_MISSING",
            "no command given: put it after '--'",
            "plangate exec TASK-0001 -- make test",
        )
    split = argv.index("--")
    own, command = argv[:split], argv[split + 1 :]
    args = parser.parse_args(own)
    if not command or command[0] == "":
        raise UsageError(
            "EXEC_COMMAND_MISSING",
            "no command after '--'",
            "plangate exec TASK-0001 -- make test",
        )
    return args, command


class _Printer:
    """Notes on stderr while the run is in progress."""

    def __init__(self, ctx: Context, *, as_json: bool) -> None:
        self.ctx = ctx
        self.as_json = as_json

    def note(self, text: str) -> None:
        self.ctx.err(f"plangate exec: {text}")

    def starting(self, run: PreparedRun) -> None:
        if not self.as_json:
            self.ctx.err(f"plangate exec: {run.task_id} verified against HEAD {run.head[:12]}; "
                         f"running {run.program}")


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate exec``."""
    from plangate.errors import PlanGateError
    from plangate.execution.isolated import choose_runner
    from plangate.verdict import Result

    args, command = _parse(argv[1:])
    printer = _Printer(ctx, as_json=args.json)
    try:
        runner = choose_runner(ctx.cwd, args.task, ctx.env, ctx.stdin,
                               isolate=not args.no_isolation, network=args.network,
                               note=printer.note, command=command)
    except PlanGateError as exc:
        if isinstance(exc, UsageError):
            raise
        verdict = "HUMAN_REQUIRED" if exc.exit_code == 3 else "REJECTED"
        refusal = Refusal(Result(verdict, (Reason(exc.code, exc.message, exc.hint),),
                                 {"task_id": args.task, "started": False}))
        return _report_refusal(ctx, refusal, as_json=args.json)
    outcome = execute(ctx.cwd, args.task, command, ctx.env, printer, runner=runner)
    if isinstance(outcome, Refusal):
        return _report_refusal(ctx, outcome, as_json=args.json)
    return _report_completion(ctx, outcome, as_json=args.json, isolation=runner.report)


def _reason_json(reasons: tuple[Reason, ...]) -> list[dict[str, Any]]:
    return [r.to_json() for r in reasons]


def _report_refusal(ctx: Context, refusal: Refusal, *, as_json: bool) -> int:
    result = refusal.result
    code = refusal.exit_code
    if as_json:
        out = result.to_json()
        out["exit_code"] = code
        out["facts"] = {k: v for k, v in result.facts.items() if k != "record"}
        print_json(ctx, out)
    else:
        ctx.err(f"plangate exec: {result.verdict}: the command was not started")
        for reason in result.reasons:
            ctx.err(f"  - {reason.code}: {reason.message}")
            if reason.hint:
                ctx.err(f"    hint: {reason.hint}")
    return code


def _report_completion(
    ctx: Context, done: Completion, *, as_json: bool, isolation: dict[str, Any],
) -> int:
    before, after = done.run.verification, done.after
    started = done.command.started
    exit_code = done.command.exit_code
    verdict = done.verdict
    if done.command.error and (started or as_json):
        # Without --json, a command that did not start says why on its verdict line.
        ctx.err(f"plangate exec: {done.command.error}")
    if done.drift:
        ctx.err(f"plangate exec: WARNING: the approved package changed during the run: "
                f"{', '.join(done.drift)}")
    if as_json:
        facts = {k: v for k, v in before.facts.items() if k != "record"}
        facts.update({"head": done.run.head, "started": started, "head_after": done.head_after})
        print_json(ctx, {
            "verdict": verdict,
            "reasons": _reason_json(before.reasons),
            "facts": facts,
            "exit_code": done.exit_code,
            "started": started,
            "command_exit_code": exit_code if started else None,
            "error": done.command.error,
            "drift": done.drift,
            "post_verdict": after.verdict,
            "post_reasons": _reason_json(after.reasons),
            "recorded": done.recorded,
            "isolation": isolation,
        })
    else:
        ctx.err(f"plangate exec: {verdict}: {_outcome_text(done)}")
    return done.exit_code


def _outcome_text(done: Completion) -> str:
    """What the one verdict line says after the word: never 'command exited' for a command
    that was not started."""
    if not done.command.started:
        return f"the command was not started: {done.command.error or 'see the ledger'}"
    parts = [f"command exited {done.command.exit_code}"]
    if not done.after.accepted:
        codes = ", ".join(done.after.codes) or done.after.verdict
        parts.append(f"the approval no longer holds after the run ({codes})")
    if done.drift:
        parts.append(f"drift: {', '.join(done.drift)}")
    if not done.recorded:
        parts.append("the end of the run was not recorded")
    return "; ".join(parts)
