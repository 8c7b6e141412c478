"""``plangate hooks install|uninstall [--claude] [--codex] [--cursor] [--git] [--all]``."""

from __future__ import annotations

import argparse

from plangate.cli.context import Context
from plangate.cli.output import print_json

HOSTS = ("claude", "codex", "cursor", "git")


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Merge PlanGate's hook entries into each host's configuration (marked "
        "'plangate-managed'; other entries are never touched), or remove them again.",
    )
    parser.add_argument("action", choices=("install", "uninstall"))
    for host in HOSTS:
        parser.add_argument(f"--{host}", action="store_true", help=f"the {host} hooks")
    parser.add_argument("--all", action="store_true", help="every host")
    parser.add_argument("--python", help="interpreter for the hook commands (default: this one)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate hooks``."""
    from plangate.errors import UsageError
    from plangate.git import Git
    from plangate.hooks.install import apply

    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    hosts = [h for h in HOSTS if args.all or getattr(args, h)]
    if not hosts:
        raise UsageError("HOOKS_NO_HOST", "name at least one host",
                         "pass --claude, --codex, --cursor, --git or --all")
    root = Git(ctx.cwd).toplevel()
    changes = apply(root, hosts, install=args.action == "install", python=args.python,
                    env=ctx.env)
    if args.json:
        print_json(ctx, {
            "verdict": "ACCEPTED", "reasons": [], "action": args.action,
            "changes": [{"host": c.host, "path": c.path, "action": c.action} for c in changes],
        })
        return 0
    for change in changes:
        ctx.out(f"{change.host}: {change.action} {change.path}")
    if args.action == "install":
        ctx.out("next: run 'plangate doctor' to prove the hooks deny")
        if "codex" in hosts:
            ctx.out("codex: enable hooks in .codex/config.toml ([features] codex_hooks = true) "
                    "and trust them in Codex (/hooks)")
    return 0
