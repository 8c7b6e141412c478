"""``plangate setup [--claude] [--codex] [--cursor] [--git] [--all] [--approver NAME=KEY.pub]...``.

Switches PlanGate on in one idempotent step (:mod:`plangate.hooks.setup`): the
repository's protected surfaces (shown first), the trust root when keys are given,
``.gitignore`` entries for local state and the hooks of the hosts asked for; then
prints the order of the first commits. A human runs it: it refuses under agent or
automation markers and without an interactive terminal, and asks the human to type
``SETUP`` before it changes the surfaces or the trust root.
"""

from __future__ import annotations

import argparse

from plangate.cli.context import Context
from plangate.cli.output import print_json

CONFIRM_WORD = "SETUP"
HOSTS = ("claude", "codex", "cursor", "git")


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Switch PlanGate on in this repository: write the protected surfaces "
        "from the bundled template (after showing them), the trust root when keys are given, "
        ".gitignore entries for local state (ledger, locks, task sessions, exec runs, run "
        "logs, local settings) and the hooks of the hosts named (--codex: trusted for this clone "
        "through 'codex app-server'; setup fails when it cannot, naming 'plangate hooks "
        "trust --codex' to run later); then print the order of the first commits. "
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
        action="store_true",
        help="require signed approvals from now on (needs an approver)",
    )
    parser.add_argument(
        "--local-python",
        action="store_true",
        help="with --claude: this machine's interpreter into "
        ".claude/settings.local.json (git-ignored)",
    )
    parser.add_argument("--python", help="interpreter for the git hooks and --local-python")
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
    plan = setup.preview(root, principals, require_signatures=args.require_signatures)
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
    order = setup.first_commits(root)
    if args.json:
        print_json(
            ctx,
            {
                "verdict": "ACCEPTED",
                "reasons": [],
                "steps": [s._asdict() for s in steps],
                "first_commits": order,
                **({"codex_trust": {"trusted": list(trust.trusted),
                                    "already_trusted": list(trust.already),
                                    "config": trust.config}} if trust is not None else {}),
            },
        )
        return 0
    for step in steps:
        ctx.out(f"{step.action:9} {step.path}  ({step.what})")
    if trust is not None:
        ctx.out(f"{'trusted':9} {trust.config}  (PlanGate's Codex hooks of this clone: "
                f"{len(trust.trusted)} new, {len(trust.already)} already; Codex confirms)")
    ctx.out("")
    ctx.out("The first commits, in this order:")
    for number, line in enumerate(order, 1):
        ctx.out(f"  {number}. {line}")
    return 0


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
        ctx.out("Trust root: approvals must be signed from now on.")
