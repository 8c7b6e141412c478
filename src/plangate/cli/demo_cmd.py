"""``plangate demo``: the whole journey on a bundled example, in a temporary repository."""

from __future__ import annotations

import argparse
import importlib
import shutil
import tempfile
from pathlib import Path

from plangate.cli.context import Context
from plangate.cli.demo import STEP_MODULES, Demo, console_scripts_on_path, demo_env


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plangate demo",
        description=(
            "Build a temporary git repository from bundled resources and walk the plan-first "
            "journey (init, reviews, c3 issue, verify, exec, a stale plan), the arbiter, the "
            "ledger, delivery and RunEvidence, the evaluation trust boundary and the hooks, "
            "printing each step and its verdict. Exit 0 when every step gave the verdict it shows."
        ),
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary repository")
    parser.add_argument(
        "--only", action="append", metavar="STEP", help="run only these step modules (by suffix)"
    )
    return parser


def _write_reports(demo: Demo, base: Path) -> None:
    """The last step: a report of each demo repository, written where it outlives the demo."""
    demo.step("plangate report: one self-contained page of what was decided")
    target = Path(tempfile.mkdtemp(prefix="plangate-demo-report-"))
    for name in ("repo", "harness-improve"):
        if not (base / name / ".git").exists():
            continue
        out = target / f"{name}.html"
        # The charts' library is a dependency of PlanGate: the HTML page always has its charts.
        code, _out, err = demo.cli("-C", str(base / name), "report", "-o", str(out))
        if code != 0:
            demo.show(err.rstrip())
        demo.expect(code, 0, f"report of the {name} repository written")
        demo.show(f"    report: {out}")


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate demo``."""
    args = _parser().parse_args(argv[1:])
    base = Path(tempfile.mkdtemp(prefix="plangate-demo-"))
    repo = base / "repo"
    repo.mkdir()
    demo = Demo(repo=repo, out=ctx.stdout, env=demo_env(ctx.env))
    demo.show(f"PlanGate demo in {repo}")
    with console_scripts_on_path():
        return _run_steps(demo, base, args)


def _run_steps(demo: Demo, base: Path, args: argparse.Namespace) -> int:
    """Every step group in order, then the reports; the demo's directory goes afterwards."""
    try:
        demo.git("init", "-q", "-b", "main")
        demo.git("config", "user.name", "Demo")
        demo.git("config", "user.email", "demo@example.invalid")
        demo.git("config", "commit.gpgsign", "false")
        for name in STEP_MODULES:
            short = name.rsplit(".", 1)[-1]
            if args.only and short not in args.only:
                continue
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name != name:
                    raise
                demo.show(f"\n(step group {short!r} is not available in this build)")
                continue
            module.run_steps(demo)
        _write_reports(demo, base)
        demo.show("\nDemo complete: every step produced the verdict shown.")
        return 0
    finally:
        if args.keep:
            demo.show(f"(kept {base})")
        else:
            shutil.rmtree(base, ignore_errors=True)
