"""``plangate setup [--claude] [--codex] [--cursor] [--git] [--all] [--approver NAME=KEY.pub]...``.

Switches PlanGate on in one idempotent step (:mod:`plangate.hooks.setup`): the
repository's protected surfaces (shown first), the trust root when keys are given
(asking whether signatures are required from now on), ``.gitignore`` entries for
local state, PlanGate's entry in an existing ``.pre-commit-config.yaml``, this
clone's ledger and the hooks of the hosts asked for; every precondition is checked
before the first write. Then prints the order of the first commits, or a teammate's
next steps on a clone of an adopted repository. A human runs it: it refuses under agent or
automation markers and without an interactive terminal, and asks the human to type
``SETUP`` before it changes the surfaces or the trust root.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.errors import PlanGateError
from plangate.hooks.hookd import DEFAULT_IDLE_SECONDS

if TYPE_CHECKING:
    from plangate.hooks.setup import Principal

CONFIRM_WORD = "SETUP"
HOSTS = ("claude", "codex", "cursor", "git")


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Switch PlanGate on in this repository: write the protected surfaces "
        "from the bundled template (after showing them), the trust root when keys are given, "
        ".gitignore entries for local state (ledger, locks, task sessions, exec runs, run logs, "
        "local settings), this clone's own ledger and the hooks of the hosts named (--codex: "
        "trusted for this clone through 'codex app-server'; setup fails when it cannot, "
        "naming 'plangate hooks trust --codex' to run later; --git beside a "
        ".pre-commit-config.yaml: PlanGate's 'repo: local' entry in it, the framework keeps "
        "git's hooks). Every precondition is checked before the first write: a refusal "
        "writes nothing. Then print the order of the first commits, or on a clone of a "
        "repository that already adopted PlanGate a teammate's next steps. "
        "Idempotent; a human runs it in a terminal.",
    )
    for host in HOSTS:
        parser.add_argument(f"--{host}", action="store_true", help=f"install the {host} hooks")
    parser.add_argument("--all", action="store_true", help="every host")
    parser.add_argument(
        "--approver",
        action="append",
        default=[],
        metavar="NAME=KEY.pub",
        help="a human approver and their public key (repeatable)",
    )
    parser.add_argument(
        "--reviewer",
        action="append",
        default=[],
        metavar="NAME=KEY.pub",
        help="a human reviewer and their public key (repeatable)",
    )
    parser.add_argument(
        "--require-signatures",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="require signed approvals from now on (needs two reviewers and an approver in "
        "the trust root); without either flag, setup asks when an approver is given "
        "(default yes)",
    )
    parser.add_argument(
        "--local-python",
        action="store_true",
        help="with --claude: this machine's interpreter into "
        ".claude/settings.local.json (git-ignored)",
    )
    parser.add_argument("--python", help="interpreter for the git hooks and --local-python")
    parser.add_argument(
        "--hookd",
        action="store_true",
        help="then start this repository's hook helper and link its native client, as "
        "'plangate hookd start' does (each agent hook call answered in a few milliseconds "
        "instead of a new interpreter's start; docs/hookd.md). Without it, setup offers it",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate setup``."""
    from plangate.authority.service import require_human
    from plangate.errors import HumanRequired, UsageError
    from plangate.git import Git
    from plangate.hooks import setup

    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    hosts = [h for h in HOSTS if args.all or getattr(args, h)]
    if args.local_python and "claude" not in hosts:
        raise UsageError(
            "HOOKS_LOCAL_PYTHON_NEEDS_CLAUDE",
            "--local-python writes Claude Code's local settings file",
            "pass --claude (or --all) with --local-python",
        )
    try:
        require_human(ctx.env, ctx.stdin)
    except HumanRequired as exc:
        code = exc.code.replace("TRUST_", "SETUP_")
        raise HumanRequired(
            code,
            exc.message,
            "a human runs 'plangate setup' in their own terminal, outside any agent session",
        ) from None
    root = Git(ctx.cwd).toplevel()
    principals = setup.parse_keys(args.approver, "approver") + setup.parse_keys(
        args.reviewer, "reviewer"
    )
    require = _ask_signatures(ctx, root, principals, args.require_signatures)
    plan = setup.preview(root, principals, require_signatures=require, hosts=hosts, env=ctx.env,
                         local_python=args.local_python)
    if plan.changes_authority:
        _show(ctx, plan)
        ctx.stdout.write(f"Type {CONFIRM_WORD} to write them: ")
        ctx.stdout.flush()
        answer = ctx.stdin.readline().decode("utf-8", "replace").strip()
        if answer != CONFIRM_WORD:
            raise UsageError(
                "SETUP_NOT_CONFIRMED",
                "not confirmed; nothing was written",
                f"type {CONFIRM_WORD} exactly",
            )
    steps = setup.apply_setup(
        root, ctx.env, plan, hosts, python=args.python, local_python=args.local_python
    )
    trust = None
    if "codex" in hosts:
        from plangate.hooks.codex_trust import record_trust

        # Codex skips an untrusted hook without a word: setup does not succeed without
        # trust (the refusal names 'plangate hooks trust --codex' for later).
        trust = record_trust(root, ctx.env)
    title, order = setup.next_steps(root, plan, steps)
    helper = _helper(ctx, hosts, start=args.hookd)
    if args.json:
        print_json(
            ctx,
            {
                "verdict": "ACCEPTED",
                "reasons": [],
                "steps": [s._asdict() for s in steps],
                "adopted": plan.adopted,
                "next_steps": order,
                **({} if plan.adopted else {"first_commits": order}),
                **({"codex_trust": {"trusted": list(trust.trusted),
                                    "already_trusted": list(trust.already),
                                    "config": trust.config}} if trust is not None else {}),
                **({"hookd": helper} if helper is not None else {}),
            },
        )
        return 0
    for step in steps:
        ctx.out(f"{step.action:9} {step.path}  ({step.what})")
    if trust is not None:
        ctx.out(f"{'trusted':9} {trust.config}  (PlanGate's Codex hooks of this clone: "
                f"{len(trust.trusted)} new, {len(trust.already)} already; Codex confirms)")
    ctx.out("")
    ctx.out(title)
    for number, line in enumerate(order, 1):
        ctx.out(f"  {number}. {line}")
    _suggest_policy(ctx, root)
    _say_helper(ctx, helper)
    return 0


AGENT_HOSTS = ("claude", "codex", "cursor")
"""The hosts whose hook calls the helper answers (git's hooks run once per commit)."""


def _helper(ctx: Context, hosts: list[str], *, start: bool) -> dict[str, object] | None:
    """With ``--hookd``, the helper started (or found running) with its native client;
    otherwise, when an agent host's hooks were installed, whether one runs, and the offer.
    None when no agent host was asked for and no start either."""
    from plangate.hooks import hookd

    if start:
        state = hookd.start_helper(str(ctx.cwd), ctx.env)
        native = state.get("launcher_native")
        return {"running": bool(state["running"]), "started": bool(state["started"]),
                "launcher_native": native}
    if not any(host in AGENT_HOSTS for host in hosts):
        return None
    try:
        running = bool(hookd.describe(hookd.locate(str(ctx.cwd), ctx.env))["running"])
    except PlanGateError:
        running = False
    return {"running": running, "started": False,
            **({} if running else {"offer": "plangate hookd start"})}


def _say_helper(ctx: Context, helper: dict[str, object] | None) -> None:
    if helper is None:
        return
    ctx.out("")
    if helper["started"]:
        native = helper.get("launcher_native")
        linked = f"; native client: {native['code']}" if isinstance(native, dict) else ""
        ctx.out(f"Hook helper: started for this repository{linked} (it stops after "
                f"{int(DEFAULT_IDLE_SECONDS)} s without a request; 'plangate hookd start' again "
                "after a pause).")
    elif helper["running"]:
        ctx.out("Hook helper: already running for this repository.")
    else:
        ctx.out("Hook helper: not running. Each agent hook call now starts a Python process "
                "and decides in it (tens of milliseconds); the helper answers the same "
                "decisions in a few: run 'plangate hookd start' in this repository when you "
                "start working (or pass --hookd to setup). docs/hookd.md")


def _suggest_policy(ctx: Context, root: Path) -> None:
    """Print the common policy for a pull request without a task, when the repository has none
    (suggested, never written: a person decides what may change without a task)."""
    from plangate.delivery.pr_policy import POLICY_RELPATH, SUGGESTED_POLICY

    if (root / POLICY_RELPATH).exists() or (root / POLICY_RELPATH).is_symlink():
        return
    ctx.out("")
    ctx.out(f"No {POLICY_RELPATH}: every pull request needs an approved task, a README fix "
            "included. A common set to start from (write it to that file and commit it with "
            "the adoption; docs/agents.md, 'A pull request without a task'):")
    for line in SUGGESTED_POLICY.splitlines():
        ctx.out(f"    {line}" if line else "")


def _ask_signatures(
    ctx: Context, root: Path, principals: list[Principal], flag: bool | None
) -> bool:
    """Whether setup turns required signatures on: the flag when given; otherwise, when an
    approver is given and the trust root does not require them yet, the person's answer
    (default yes), asked only when the root would name the signers it needs."""
    from plangate.errors import UsageError
    from plangate.hooks import setup

    if flag is not None:
        return flag
    if not any(p.role == "approver" for p in principals) or setup.signatures_required(root):
        return False
    if not setup.signatures_can_be_required(root, principals):
        ctx.out("Signatures stay optional for now: requiring them needs two reviewers and an "
                "approver in the trust root (add them with --reviewer/--approver, then run "
                "'plangate setup --require-signatures').")
        return False
    ctx.stdout.write("Require signed approvals and reviews from now on "
                     "(require_signatures = true)? [Y/n] ")
    ctx.stdout.flush()
    answer = ctx.stdin.readline().decode("utf-8", "replace").strip().lower()
    if answer in ("", "y", "yes"):
        return True
    if answer in ("n", "no"):
        return False
    raise UsageError(
        "SETUP_NOT_CONFIRMED",
        f"answer {answer!r} is neither yes nor no; nothing was written",
        "answer y or n (or pass --require-signatures / --no-require-signatures)",
    )


def _show(ctx: Context, plan: object) -> None:
    from plangate.hooks.setup import SURFACES_RELPATH, Preview

    assert isinstance(plan, Preview)  # noqa: S101 -- one caller
    if plan.surfaces is not None:
        ctx.out(
            f"{SURFACES_RELPATH} will protect these paths: agents may not write them, "
            "and a pull request that changes one needs a human:"
        )
        for pattern, cls, reason in plan.surfaces_entries:
            ctx.out(f"  {pattern:40} {cls:12} {reason}")
        ctx.out("Review them against your repository after setup (docs/protected-surfaces.md).")
    if plan.trust_init:
        ctx.out("A trust root will be written: .plangate/trust.toml, .plangate/allowed_signers.")
    for principal in plan.principals:
        ctx.out(f"Trust root: {principal.name} becomes a human {principal.role}.")
    if plan.require_signatures:
        ctx.out("Trust root: approvals must be signed from now on (require_signatures = true).")
    if plan.pre_commit is not None:
        from plangate.hooks.precommit import CONFIG_RELPATH, local_entry

        ctx.out(f"{CONFIG_RELPATH} gets PlanGate's hooks beside yours (the framework keeps "
                "git's hooks):")
        for line in local_entry().splitlines():
            ctx.out(f"  {line}")
