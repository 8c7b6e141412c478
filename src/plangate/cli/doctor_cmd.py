"""``plangate doctor [--json]``: run canaries through every installed hook command."""

from __future__ import annotations

import argparse
from typing import Any

from plangate.cli.context import Context
from plangate.cli.output import print_result


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate doctor``."""
    from plangate.git import Git
    from plangate.hooks.doctor import run_doctor
    from plangate.isolation.backend import probe_all

    parser = argparse.ArgumentParser(
        prog=f"plangate {argv[0]}",
        description="Feed canary payloads through each installed hook command and report "
        "which ones really deny and which allowed write really passes; check the ledger, "
        "machine paths in committed hook files, host settings that turn hooks off (Claude "
        "Code managed settings, Codex trust and switches), that every host event is installed, "
        "whether a timed-out hook blocks and whether an installed host (claude, codex on "
        "PATH) is newer than the version PlanGate's tool vocabulary was checked against; say "
        "which sandbox backend works here and why the others do not.")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv[1:])
    root = Git(ctx.cwd).toplevel()
    result = run_doctor(root)
    sandboxes = probe_all()
    helper = _hookd_state(str(root), ctx)
    from plangate.hooks.hookd_client import launcher_route

    route = launcher_route(ctx.env)
    result = result._replace(facts={**result.facts, "hookd": helper, "hook_route": route,
                                    "sandbox": [s.to_json() for s in sandboxes]})
    if not args.json:
        for probe in result.facts.get("probes", []):
            if probe.get("expect") == "allow":
                mark = "allowed" if not probe["denied"] else "NOT ALLOWED"
            else:
                mark = "denied" if probe["denied"] else "NOT DENIED"
            ctx.out(f"{probe['host']:7} {probe['event']:22} {probe['canary']:14} {mark} "
                    f"({probe['detail']})")
        for skipped in result.facts.get("skipped", []):
            ctx.out(f"{skipped['host']:7} {skipped['event']:22} skipped ({skipped['reason']})")
        for finding in result.facts.get("findings", []):
            level = "FAIL" if finding["fails"] else "warn"
            ctx.out(f"{level:7} {finding['check']:22} {finding['code']}: {finding['message']}")
        for status in sandboxes:
            state = "works" if status.available else "unavailable"
            ctx.out(f"sandbox {status.name:14} {state}: {status.detail}")
        ctx.out(_hookd_line(helper))
        ctx.out(_route_line(route, helper))
        from plangate.cli.hookd_cmd import native_line

        for client in result.facts.get("native_clients", []):
            ctx.out(f"native  {native_line(client)}")
    return print_result(ctx, result, as_json=args.json, title="plangate doctor")


def _hookd_state(root: str, ctx: Context) -> dict[str, Any]:
    """The hook helper of this repository as a hook would see it (never a failure)."""
    from plangate.errors import PlanGateError
    from plangate.hooks.hookd import describe, locate

    try:
        return describe(locate(root, ctx.env))
    except PlanGateError as exc:
        return {"running": False, "problem": f"{exc.code}: {exc.message}"}


def _hookd_line(state: dict[str, Any]) -> str:
    if "problem" in state:
        return f"hookd   not usable: {state['problem']}"
    owner = "-" if state["socket_owner"] is None else state["socket_owner"]
    where = (f"socket {state['socket']} (owner {owner}, mode {state['socket_mode'] or '-'}, "
             f"{'trusted' if state['socket_trusted'] else 'not trusted'})")
    if not state["running"]:
        return f"hookd   not running (hooks decide in-process); {where}"
    same = "same as installed" if state["same_package"] else "NOT the installed package"
    return (f"hookd   running, pid {state['pid']}, package {state['package_digest']} "
            f"({same}); {where}")


def _route_line(route: dict[str, str | None], helper: dict[str, Any]) -> str:
    """Which way the committed line's ``plangate-hook`` takes a call (docs/hookd.md, "The
    launcher")."""
    if route["route"] == "not-found":
        return "route   plangate-hook is not on PATH (committed hook lines use 'plangate hook')"
    asked = helper.get("running") and helper.get("same_package")
    if route["route"] == "launcher":
        how = ("the running helper answers, else in-process" if asked
               else "in-process (no helper of this package running)")
        if route["native"]:
            return (f"route   plangate-hook {route['command']}: launcher, native client "
                    f"{route['native']}: {how}")
        return (f"route   plangate-hook {route['command']}: launcher, {route['interpreter']} "
                f"-S -I: {how}, in one process")
    how = "asks the running helper, else in-process" if asked else "in-process"
    return (f"route   plangate-hook {route['command']}: Python entry point (site and the "
            f"plangate import first; {route['reason']}): {how}")
