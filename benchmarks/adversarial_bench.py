"""Worst-case inputs against normal ones: the parsers and matchers that see untrusted text.

Each line times one function on an adversarial input and on a normal input of the
same kind, in the same run, and prints the ratio. A linear implementation keeps the
ratio near the size ratio of the two inputs (printed beside it); a backtracking or
quadratic one shows it as a ratio that explodes with the input.

- glob: ten ``**`` segments against a 30-segment path that almost matches
  (an exponential backtracker took 28 s here), against one ``**`` pattern;
- plan heading: a 32 KiB heading line in ``plan.md`` (a quadratic heading scan took
  14 s in ``loopspec``), against a normal plan, through the one scope derivation;
- shell: a sed script with thousands of backslashes in the hook's classifier,
  against a short sed script.

Goal: every ratio stays within 20x of the input-size ratio (linear work).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))


def best_of(fn: Callable[[], object], rounds: int = 5) -> float:
    """The fastest of ``rounds`` runs, in seconds (the least disturbed by the machine)."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples)


def glob_case() -> tuple[str, Callable[[], object], Callable[[], object], float]:
    from plangate.paths import glob_match

    path = "/".join(f"s{i}" for i in range(30)) + "/x.py"
    hostile = "/".join(["**"] * 10) + "/nomatch.py"
    normal = "**/nomatch.py"
    return ("glob: 10x '**' vs 30 segments", lambda: glob_match(hostile, path),
            lambda: glob_match(normal, path), len(hostile) / len(normal))


def heading_case() -> tuple[str, Callable[[], object], Callable[[], object], float]:
    from plangate.plan.scope import derive_scope

    body = "## Files / Components to Touch\n- `src/app.py`\n\n## Testing Strategy\n- pytest\n"
    normal = ("# Plan\n\n## Goal\nA change.\n\n" + body).encode()
    hostile = ("# Plan\n\n## " + "#" * 16384 + " x" * 8192 + "\n\n" + body).encode()
    return ("plan heading: 32 KiB heading line", lambda: derive_scope(hostile),
            lambda: derive_scope(normal), len(hostile) / len(normal))


def shell_case() -> tuple[str, Callable[[], object], Callable[[], object], float] | None:
    try:
        from plangate.hooks.shell.classify import analyse as classify
    except ImportError:
        return None
    hostile = "sed -e 's/" + "\\\\" * 4000 + "x/y/' notes.txt"
    normal = "sed -e 's/a/b/' notes.txt"
    return ("shell: sed script with 8000 backslashes", lambda: classify(hostile),
            lambda: classify(normal), len(hostile) / len(normal))


def main() -> int:
    """Print one line per case: the time ratio and the input-size ratio."""
    cases = [glob_case(), heading_case()]
    shell = shell_case()
    if shell is not None:
        cases.append(shell)
    print(f"{'case':<42} {'hostile':>10} {'normal':>10} {'ratio':>8} {'size ratio':>11}  goal")
    met_all = True
    for name, hostile, normal, size_ratio in cases:
        hostile_s = best_of(hostile)
        normal_s = statistics.median([best_of(normal) for _ in range(3)])
        ratio = hostile_s / normal_s if normal_s > 0 else float("inf")
        met = ratio <= 20 * max(size_ratio, 1.0)
        met_all &= met
        print(f"{name:<42} {hostile_s * 1e3:>8.2f}ms {normal_s * 1e3:>8.3f}ms {ratio:>7.1f}x "
              f"{size_ratio:>10.1f}x  {'met' if met else 'NOT MET'}")
    print("goal: every ratio within 20x of its size ratio (linear work):",
          "met" if met_all else "not met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
