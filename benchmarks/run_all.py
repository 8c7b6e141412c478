"""Run every ``benchmarks/*_bench.py`` with the interpreter binary itself, one after another.

Usage: python3 benchmarks/run_all.py [NAME ...]   (only the benchmarks whose file name
contains one of the NAMEs; each runs with its own default settings)
Exit code: 0 when every benchmark script ran (a missed goal is reported, not failed).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _bench_common import real_python


def main() -> int:
    """Run each benchmark script; return 1 if any of them failed to run."""
    here = Path(__file__).resolve().parent
    python = real_python()
    failed = []
    wanted = sys.argv[1:]
    for script in sorted(here.glob("*_bench.py")):
        if wanted and not any(name in script.name for name in wanted):
            continue
        print(f"==> {script.name}", flush=True)
        proc = subprocess.run([python, str(script)], cwd=here, check=False)
        if proc.returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"benchmarks that failed to run: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
