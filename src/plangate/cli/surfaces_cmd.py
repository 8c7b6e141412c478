"""``plangate surfaces``: show the resolved protected surfaces and explain paths."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.paths import PathRejected
from plangate.snapshot import find_repo_root
from plangate.surfaces import ResolvedSurfaces, bundled_template_bytes, resolve_surfaces
from plangate.verdict import ExitCode


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Resolve the protected-surface definition (explicit --surfaces FILE, else "
        ".plangate/protected-surfaces.toml, else the bundled template) and show its "
        "provenance. Exit 0 when resolved, 3 when a human must define or fix it.",
    )
    parser.add_argument("--surfaces", metavar="FILE", help="explicit definition (no fallback)")
    parser.add_argument("--explain", metavar="PATH", nargs="+", default=[],
                        help="show which entries protect each repository-relative PATH")
    parser.add_argument("--template", action="store_true",
                        help="print the bundled template (to start your own definition)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def explain_paths(resolved: ResolvedSurfaces, paths: list[str]) -> list[dict[str, Any]]:
    """For each path: whether it is canonical, protected, and by which entries."""
    out: list[dict[str, Any]] = []
    for path in paths:
        try:
            entries = resolved.explain(path)
        except PathRejected as exc:
            out.append({"path": path, "canonical": False, "protected": True,
                        "code": exc.code, "message": exc.message,
                        "note": "non-canonical paths are refused before matching"})
            continue
        out.append({"path": path, "canonical": True, "protected": bool(entries),
                    "entries": [e.to_json() for e in entries]})
    return out


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate surfaces``."""
    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    if args.template:
        ctx.stdout.write(bundled_template_bytes().decode("utf-8"))
        return int(ExitCode.ACCEPTED)
    explicit = (ctx.cwd / args.surfaces) if args.surfaces is not None else None
    repo_root = find_repo_root(ctx.cwd)
    resolved = resolve_surfaces(repo_root, Path(explicit) if explicit is not None else None)
    verdict = "ACCEPTED" if resolved.resolved else "HUMAN_ESCALATED"
    explained = explain_paths(resolved, args.explain)
    if args.json:
        reasons = [resolved.problem.to_json()] if resolved.problem else []
        print_json(ctx, {"verdict": verdict, "reasons": reasons, "surfaces": resolved.to_json(),
                         "explain": explained})
    else:
        ctx.out(f"protected surfaces: {verdict}")
        ctx.out(f"  provenance:    {resolved.provenance}")
        ctx.out(f"  path:          {resolved.path}")
        ctx.out(f"  digest:        {resolved.digest}")
        ctx.out(f"  pattern_count: {resolved.pattern_count}")
        if resolved.problem:
            ctx.out(f"  - {resolved.problem.code}: {resolved.problem.message}")
            if resolved.problem.hint:
                ctx.out(f"    hint: {resolved.problem.hint}")
        if not args.explain:
            for entry in resolved.entries:
                ctx.out(f"  {entry.pattern}  [{entry.cls}]  {entry.reason}")
        for item in explained:
            if not item["canonical"]:
                ctx.out(f"{item['path']}: refused ({item['code']}: {item['message']})")
            elif not item["protected"]:
                ctx.out(f"{item['path']}: not protected by this definition")
            else:
                for entry in item["entries"]:
                    ctx.out(f"{item['path']}: protected by {entry['pattern']} "
                            f"[{entry['class']}, {entry['family']}]: {entry['reason']}")
    return int(ExitCode.ACCEPTED if resolved.resolved else ExitCode.HUMAN)
