"""``plangate trust init|add|require|show``: manage and inspect the trust root.

::

    plangate trust init [--trust-branch main] [--force]
    plangate trust add PRINCIPAL --key KEY.pub [--role reviewer|approver|override|evaluator]...
                       [--human | --agent] [--namespaces NS,...]
                       [--valid-after YYYYMMDDZ] [--valid-before YYYYMMDDZ]
    plangate trust require on|off
    plangate trust show [--json]
    plangate trust continue TASK --base REF --sign KEY
    plangate trust opt-out TASK --sign KEY [--minutes N] -- COMMAND [ARGS...]

``continue`` writes a continuation statement signed by an approver: it lets a
pull request starting at the merge base of REF and HEAD use TASK, whose
approval is already on the base (see docs/authority.md).

``opt-out`` writes ``.plangate/opt-out/TASK.json`` and its signature (namespace
``plangate-exec-opt-out``) by a principal holding ``override``: it lets
``plangate exec TASK --no-isolation -- COMMAND`` run this exact command unboxed
at the current HEAD, once, for at most an hour (see docs/isolation.md).

``init``, ``add`` and ``require`` write the working tree's
``.plangate/trust.toml`` and ``.plangate/allowed_signers``; they are human
actions (refused, exit 3, under agent markers or without a terminal). The
root in force is the one committed on the trust branch (locally) or on the
pull request's base (in CI): ``show`` prints that one and says whether the
working tree differs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from plangate.agents import HumanOnly, refuse_unless_human
from plangate.authority.trustfile import ROLES
from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.git import Git


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Manage the trust root: who holds which role, with which SSH key. "
        "Changes take effect once committed on the trust branch (CI: on the base).",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    init = sub.add_parser("init", help="write an empty trust root (signatures not yet required)")
    init.add_argument("--trust-branch", default="main", help="where local checks read the root")
    init.add_argument("--force", action="store_true", help="replace existing trust files")
    add = sub.add_parser("add", help="add a principal, its public key and its roles")
    add.add_argument("principal")
    add.add_argument("--key", required=True, metavar="KEY.pub", help="the principal's public key")
    add.add_argument(
        "--role",
        action="append",
        default=[],
        choices=ROLES,
        help="a role (repeat for several)",
    )
    kind = add.add_mutually_exclusive_group()
    kind.add_argument("--human", action="store_true", help="the principal is a person")
    kind.add_argument("--agent", action="store_true", help="an agent's principal: signs nothing")
    add.add_argument("--namespaces", help="restrict the key, e.g. plangate-review")
    add.add_argument("--valid-after", metavar="YYYYMMDD[HHMM[SS]]Z")
    add.add_argument("--valid-before", metavar="YYYYMMDD[HHMM[SS]]Z")
    require = sub.add_parser("require", help="require signatures on approvals (on) or not (off)")
    require.add_argument("state", choices=("on", "off"))
    show = sub.add_parser("show", help="the trust root in force (the trust branch's tip)")
    show.add_argument("--json", action="store_true")
    cont = sub.add_parser(
        "continue",
        help="sign that a pull request may use a task already approved on its base",
        description="Write approvals/continuation.json and its signature (namespace "
        "plangate-continue): the task, its plan, its approval's source_sha and the merge base "
        "of --base and HEAD, signed by an approver. ci check then lets this pull request use "
        "the task although its approval is already on the base.",
    )
    cont.add_argument("task", metavar="TASK")
    cont.add_argument("--base", required=True, help="the pull request's base branch or commit")
    cont.add_argument("--sign", required=True, metavar="KEY", help="the approver's key")
    opt = sub.add_parser(
        "opt-out",
        usage="plangate trust opt-out TASK --sign KEY [--minutes N] -- COMMAND [ARGS...]",
        help="sign that one exec command may run without isolation",
        description="Write .plangate/opt-out/TASK.json and its signature (namespace "
        "plangate-exec-opt-out): the task, the digest of the exact COMMAND, HEAD and a validity "
        "of N minutes (at most 60), signed by a principal holding override. plangate exec TASK "
        "--no-isolation -- COMMAND then runs it unboxed, once; the ledger records the statement "
        "and its signer. Refused under agent markers or without a terminal.",
    )
    opt.add_argument("task", metavar="TASK")
    opt.add_argument("--sign", required=True, metavar="KEY", help="the override holder's key")
    opt.add_argument(
        "--minutes", type=int, default=15, help="how long the statement is valid (1-60, default 15)"
    )
    return parser


OPT_OUT_SIGNING = HumanOnly(
    "EXEC_OPT_OUT_SIGN_AGENT_ENVIRONMENT",
    "EXEC_OPT_OUT_SIGN_NOT_INTERACTIVE",
    "trust opt-out refused",
    "sign it yourself in your own terminal, outside the agent session",
)
"""How ``trust opt-out`` refuses an agent or a caller without a terminal."""


def _split_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``opt-out``'s own arguments and the command after ``--`` (None: not an opt-out)."""
    if len(argv) < 2 or argv[1] != "opt-out" or "--" not in argv:
        return argv, None
    split = argv.index("--")
    return argv[:split], argv[split + 1 :]


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate trust``."""
    from plangate.authority import service

    own, command = _split_command(argv)
    args = _parser(f"plangate {argv[0]}").parse_args(own[1:])
    git = Git(ctx.cwd)
    top = git.toplevel()
    if args.action == "opt-out":
        return _opt_out(ctx, top, args, command)
    if args.action == "show":
        return _show(ctx, git, top, as_json=args.json)
    if args.action == "continue":
        from plangate.authority.signing import sign_continuation
        from plangate.snapshot import check_task_id

        path = sign_continuation(top, check_task_id(args.task), args.base, Path(ctx.cwd, args.sign))
        ctx.out(f"wrote {path} and its signature: commit both on this branch")
        return 0
    service.require_human(ctx.env, ctx.stdin)
    if args.action == "init":
        service.init(top, trust_branch=args.trust_branch, force=args.force)
        ctx.out("wrote .plangate/trust.toml and .plangate/allowed_signers (no principals yet)")
    elif args.action == "add":
        from plangate.authority.sshkeygen import public_key_of

        public = public_key_of(Path(ctx.cwd, args.key))
        service.add(
            top,
            args.principal,
            public,
            roles=args.role,
            human=args.human,
            agent=args.agent,
            namespaces=args.namespaces.split(",") if args.namespaces else None,
            valid_after=args.valid_after,
            valid_before=args.valid_before,
        )
        ctx.out(f"added {args.principal} ({', '.join(args.role) or 'no role'})")
    else:
        service.set_required(top, args.state == "on")
        ctx.out(f"require_signatures = {'true' if args.state == 'on' else 'false'}")
    ctx.out("commit it on the trust branch; in CI it counts once merged into the base")
    return 0


def _opt_out(
    ctx: Context, top: Path, args: argparse.Namespace, command: list[str] | None
) -> int:
    from plangate.authority.signing import sign_opt_out
    from plangate.errors import UsageError
    from plangate.snapshot import check_task_id

    if not command or command[0] == "":
        raise UsageError(
            "EXEC_COMMAND_MISSING",
            "no command given: put the exact command exec will run after '--'",
            "plangate trust opt-out TASK-0001 --sign KEY -- make deploy",
        )
    refuse_unless_human(ctx.env, ctx.stdin, OPT_OUT_SIGNING)
    key = Path(ctx.cwd, args.sign)
    path = sign_opt_out(top, check_task_id(args.task), command, key, minutes=args.minutes)
    ctx.out(
        f"wrote {path} and its signature: 'plangate exec {args.task} --no-isolation -- ...' "
        f"with this exact command may run once at this HEAD within {args.minutes} minutes"
    )
    return 0


def _show(ctx: Context, git: Git, top: Path, *, as_json: bool) -> int:
    from plangate.authority.source import local_root

    local = local_root(git, top)
    facts: dict[str, object] = {
        "trust_branch": local.branch,
        "worktree_has_root": local.worktree_has_root,
        "root": local.root.summary() if local.root is not None else None,
    }
    if as_json:
        print_json(ctx, facts)
        return 0
    if local.root is None:
        ctx.out(f"no trust root on {local.branch}: approvals are unauthenticated")
        if local.worktree_has_root:
            ctx.out("the working tree has one: commit it on the trust branch")
        return 0
    root = local.root
    ctx.out(f"trust root at {local.branch} ({root.commit[:12]}, {root.digest[:19]})")
    ctx.out(f"require_signatures = {str(root.require_signatures).lower()}")
    for role in ROLES:
        ctx.out(f"  {role}: {', '.join(root.config.holders(role)) or '(nobody)'}")
    if root.config.agents:
        ctx.out(f"  agents (sign nothing): {', '.join(root.config.agents)}")
    for entry in root.signers.entries:
        revoked = " REVOKED" if entry.key in root.revoked else ""
        ctx.out(f"  key {entry.principal}: {entry.key_type}{revoked}")
    return 0
