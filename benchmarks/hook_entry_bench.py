"""What the portable hook command costs: the committed line against the interpreter line.

The committed hook configuration calls PlanGate found on ``PATH``
(``plangate.hooks.install.portable_command``): ``plangate-hook claude`` when it is
there, else ``plangate hook claude`` (the full CLI). A developer's local file
(``--local-python``) holds the interpreter line instead
(``'<python>' -P -m plangate.hooks claude || exit 2``). This measures, in the same
run and interleaved call by call, each portable variant against the interpreter
line, all through ``/bin/sh -c`` as the host runs them, on the same payload (an
in-scope ``Write`` of an active task, a full decision recorded in the ledger).

Both ``plangate-hook`` and ``plangate`` are small scripts in a temporary
directory that ``exec`` the interpreter binary itself (no version-manager shim).

Usage: ``python3 benchmarks/hook_entry_bench.py [--calls 60] [--json]``. Prints
the medians of wall and CPU time (user + system of the hook process and its
children) of each side and their ratios.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench_common import REPO_ROOT, bench_env, git, load_average, real_python

sys.path.insert(0, str(REPO_ROOT / "src"))


def _script(directory: Path, name: str, python: str, run: str) -> None:
    path = directory / name
    path.write_text(f'#!/bin/sh\nexec {python} -P {run} "$@"\n')
    path.chmod(0o755)


def _once(command: str, cwd: Path, env: dict[str, str], payload: bytes) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=cwd,
        env=env,
        input=payload,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"hook exited {proc.returncode}: {proc.stderr[:300]!r}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _repo(base: Path) -> Path:
    from plangate.ledger import open_ledger

    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-qm", "i")
    with open_ledger(repo, {}) as ledger:
        ledger.append("hooks_installed", "-", {"hosts": ["claude"]})
    return repo


def main() -> int:
    """Run the comparison and print it."""
    from plangate.hooks.install import hook_command, portable_command

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = bench_env()
    python = real_python()
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="plangate-hook-entry-") as tmp:
        base = Path(tmp)
        repo = _repo(base)
        light, full = base / "light", base / "full"
        light.mkdir()
        full.mkdir()
        _script(light, "plangate-hook", python, "-m plangate.hooks")
        _script(
            full,
            "plangate",
            python,
            "-c 'import sys; from plangate.cli.main import entrypoint; entrypoint()'",
        )
        # A read-only tool call: a full decision, recorded in the ledger, with no task needed.
        payload = json.dumps(
            {
                "session_id": "s",
                "cwd": str(repo),
                "hook_event_name": "PreToolUse",
                "tool_name": "Read",
                "tool_input": {"file_path": "src/app.py"},
            }
        ).encode()
        system = "/usr/bin:/bin"
        sides = {
            "interpreter": (hook_command("claude", python), env | {"PATH": system}),
            "portable-light": (portable_command("claude"), env | {"PATH": f"{light}:{system}"}),
            "portable-full-cli": (portable_command("claude"), env | {"PATH": f"{full}:{system}"}),
        }
        walls: dict[str, list[float]] = {k: [] for k in sides}
        cpus: dict[str, list[float]] = {k: [] for k in sides}
        for command, side_env in sides.values():
            _once(command, repo, side_env, payload)  # warm caches
        for _ in range(args.calls):
            for name, (command, side_env) in sides.items():
                wall, cpu = _once(command, repo, side_env, payload)
                walls[name].append(wall)
                cpus[name].append(cpu)
    result: dict[str, object] = {
        "calls": args.calls,
        "load_before": load_before,
        "load_after": load_average(),
    }
    base_wall = statistics.median(walls["interpreter"])
    base_cpu = statistics.median(cpus["interpreter"])
    for name in sides:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        result[name] = {
            "wall_ms": wall * 1000,
            "cpu_ms": cpu * 1000,
            "ratio_wall": wall / base_wall,
            "ratio_cpu": cpu / max(base_cpu, 1e-9),
        }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"load before {load_before}, after {result['load_after']}")
        for name in sides:
            row = result[name]
            assert isinstance(row, dict)
            print(
                f"{name:18} wall {row['wall_ms']:7.1f} ms  cpu {row['cpu_ms']:7.1f} ms  "
                f"ratio wall {row['ratio_wall']:.2f}  cpu {row['ratio_cpu']:.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
