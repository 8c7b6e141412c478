"""``plangate trust init|add|require|show``: manage and inspect the trust root.

::

    plangate trust init [--trust-branch main] [--force]
    plangate trust add PRINCIPAL --key KEY.pub [--role reviewer|approver|override]...
                       [--human | --agent] [--namespaces NS,...]
                       [--valid-after YYYYMMDDZ] [--valid-before YYYYMMDDZ]
    plangate trust require on|off
    plangate trust show [--json]
    plangate trust continue TASK --base REF --sign KEY

``continue`` writes a continuation statement signed by an approver: it lets a
pull request starting at the merge base of REF and HEAD use TASK, whose
approval is already on the base (see docs/authority.md).

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
        choices=("reviewer", "approver", "override"),
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
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate trust``."""
    from plangate.authority import service

    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    git = Git(ctx.cwd)
    top = git.toplevel()
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
    for role in ("reviewer", "approver", "override"):
        ctx.out(f"  {role}: {', '.join(root.config.holders(role)) or '(nobody)'}")
    if root.config.agents:
        ctx.out(f"  agents (sign nothing): {', '.join(root.config.agents)}")
    for entry in root.signers.entries:
        revoked = " REVOKED" if entry.key in root.revoked else ""
        ctx.out(f"  key {entry.principal}: {entry.key_type}{revoked}")
    return 0
