"""``plangate hooks install|uninstall [--claude] [--codex] [--cursor] [--git] [--all]``
and ``plangate hooks trust --codex``."""

from __future__ import annotations

import argparse
from typing import Any

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.hooks.hosts.table import HOSTS as HOST_TABLE

HOSTS = tuple(HOST_TABLE)
"""Every host of the host table, each with its ``--NAME`` flag."""


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Merge PlanGate's hook entries into each host's configuration (marked "
        "'plangate-managed'; other entries are never touched), or remove them again. "
        "Installing --codex also trusts PlanGate's Codex hooks for this clone through "
        "'codex app-server' (Codex skips untrusted hooks without a word) and fails "
        "when it cannot; 'trust --codex' does only that, e.g. once Codex is installed.",
    )
    parser.add_argument("action", choices=("install", "uninstall", "trust"))
    for host in HOSTS:
        parser.add_argument(f"--{host}", action="store_true", help=f"the {host} hooks")
    parser.add_argument("--all", action="store_true", help="every host")
    parser.add_argument("--python", help="interpreter for the git hooks and --local-python "
                        "(default: this one)")
    parser.add_argument("--local-python", action="store_true",
                        help="with --claude: also write this machine's interpreter entries into "
                        ".claude/settings.local.json (git-ignored), for hosts that do not see "
                        "plangate on PATH")
    parser.add_argument("--hookd", action="store_true",
                        help="with --local-python: the local entries run the hook helper's "
                        "small client (native when it builds, else python -S -I), which asks "
                        "'plangate hookd' first and decides in-process when no usable helper "
                        "runs")
    parser.add_argument("--hookd-client", choices=("auto", "native", "python"), default=None,
                        help="with --hookd: 'native' builds the C client with this machine's "
                        "compiler (cc, or $CC when it is an absolute path) and refuses when it "
                        "cannot; 'python' writes the python -S -I client; 'auto' (default) the "
                        "native one when it builds, else the Python one")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _client(mode: str, root: str, ctx: Context, python: str | None) -> dict[str, Any]:
    """Build the native client when asked (``--hookd-client``); what the local line runs."""
    from plangate.hooks.native_build import choose

    built = choose(mode, root, ctx.env, python=python)
    if built is None:
        return {"client": "python", "path": None, "code": "HOOKD_CLIENT_PYTHON_ASKED",
                "detail": "--hookd-client python"}
    return {"client": "native" if built.ok else "python", "path": built.path,
            "code": built.code, "detail": built.detail}


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
    if args.local_python and not any(HOST_TABLE[h].local_config_file for h in hosts):
        raise UsageError("HOOKS_LOCAL_PYTHON_NEEDS_CLAUDE",
                         "--local-python writes Claude Code's local settings file",
                         "pass --claude (or --all) with --local-python")
    if args.hookd and not args.local_python:
        raise UsageError("HOOKS_HOOKD_NEEDS_LOCAL_PYTHON",
                         "--hookd changes the machine-local entries only",
                         "pass --claude --local-python --hookd")
    if args.hookd_client is not None and not args.hookd:
        raise UsageError("HOOKS_HOOKD_CLIENT_NEEDS_HOOKD",
                         "--hookd-client chooses the client --hookd writes",
                         "pass --claude --local-python --hookd --hookd-client ...")
    if args.action == "trust":
        return _trust(hosts, root, ctx, json_out=args.json)
    client: dict[str, Any] | None = None
    if args.hookd and args.action == "install":
        client = _client(args.hookd_client or "auto", str(root), ctx, args.python)
    changes = apply(root, hosts, install=args.action == "install", python=args.python,
                    env=ctx.env, local_python=args.local_python, helper=args.hookd,
                    native=client["path"] if client else None)
    for change in [] if args.json else changes:
        ctx.out(f"{change.host}: {change.action} {change.path}")
    trust = None
    if args.action == "install" and "codex" in hosts:
        from plangate.hooks.codex_trust import record_trust

        # Codex skips an untrusted hook without a word: no success without trust.
        trust = record_trust(root, ctx.env)
    if args.json:
        print_json(ctx, {
            "verdict": "ACCEPTED", "reasons": [], "action": args.action,
            "changes": [{"host": c.host, "path": c.path, "action": c.action} for c in changes],
            **({"hookd_client": client} if client else {}),
            **({"codex_trust": _trust_json(trust)} if trust is not None else {}),
        })
        return 0
    if args.action == "install":
        ctx.out("next: run 'plangate doctor' to prove the hooks allow in scope and deny")
        if any(HOST_TABLE[h].config_file for h in hosts):
            ctx.out("committed hook files call 'plangate-hook' or 'plangate' found on PATH: "
                    "every developer installs PlanGate (docs/getting-started.md)")
        if args.local_python:
            ctx.out("claude: .claude/settings.local.json names this machine's interpreter; "
                    "keep it out of git (plangate setup adds it to .gitignore)")
        if args.hookd:
            ctx.out("claude: the local entries ask the hook helper first; start it with "
                    "'plangate hookd start' (it stops by itself when idle)")
        if client is not None and client["client"] == "native":
            ctx.out(f"claude: native client {client['path']} ({client['detail']}); rebuild it "
                    "after upgrading or editing PlanGate by running this install again")
        elif client is not None:
            ctx.out(f"claude: Python client (python -S -I): {client['code']}: "
                    f"{client['detail']}")
        if trust is not None:
            ctx.out(_trust_line(trust))
    return 0


def _trust_json(trust: Any) -> dict[str, Any]:
    return {"trusted": list(trust.trusted), "already_trusted": list(trust.already),
            "config": trust.config, "app_server_seconds": [round(t, 3) for t in trust.timings]}


def _trust_line(trust: Any) -> str:
    return (f"codex: {len(trust.trusted)} hook(s) trusted, {len(trust.already)} already "
            f"trusted, in {trust.config} (Codex's app-server confirms; a changed command is "
            "untrusted again: run 'plangate hooks trust --codex' after reinstalling)")


def _trust(hosts: list[str], root: Any, ctx: Context, *, json_out: bool) -> int:
    """``plangate hooks trust --codex``: record Codex's trust for this clone's hooks."""
    from plangate.errors import UsageError
    from plangate.hooks.codex_trust import record_trust

    if hosts != ["codex"]:
        raise UsageError("HOOKS_TRUST_CODEX_ONLY", "only Codex keeps a trust record for hooks",
                         "run 'plangate hooks trust --codex'")
    trust = record_trust(root, ctx.env)
    if json_out:
        print_json(ctx, {"verdict": "ACCEPTED", "reasons": [], "action": "trust",
                         "codex_trust": _trust_json(trust)})
    else:
        ctx.out(_trust_line(trust))
    return 0
