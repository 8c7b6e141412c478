"""Compare the scope every plan of a folder derives now with the scope an older reader derived.

Usage: ``python scripts/plan_reader_diff.py [TASKS_DIR] --base REV``. TASKS_DIR holds task
directories (``TASK-*/plan.md``; default: the shared compatibility corpus next to the
repository). The older reader is ``src/plangate/plan/files_section.py`` at git revision REV
(a revision before the CommonMark reader, for the line-based one), loaded from that
revision's text; the current one is the installed :func:`plangate.plan.scope.derive_scope`.

Prints one line per plan whose outcome differs (derives / fails, allowed, denied) and a
summary: how many plans derive under each reader and how many scopes changed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import types
from pathlib import Path

from plangate.plan.scope import derive_scope

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TASKS = ROOT.parent / "shared" / "corpus" / "upstream-plangate-tasks" / "docs" / "working"
READER = "src/plangate/plan/files_section.py"


def load_reader(revision: str) -> types.ModuleType:
    """The Files-section module as it was at ``revision`` (read through git show)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:{READER}"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("files_section_at_" + revision.replace("~", "_"))
    exec(compile(source, f"{revision}:{READER}", "exec"), module.__dict__)  # noqa: S102
    return module


Derived = tuple[tuple[str, ...], tuple[str, ...]] | str


def old_scope(reader: types.ModuleType, plan: bytes) -> Derived:
    """``(allowed, denied)`` under the older reader, or why it derives nothing."""
    try:
        section = reader.read_files_section(plan.decode("utf-8"))
    except UnicodeDecodeError:
        return "not UTF-8"
    if len(section.heading_lines) != 1:
        return "no single Files section"
    if section.problems:
        return f"{section.problems[0].code}: {section.problems[0].text!r}"
    if not section.allowed:
        return "no allowed path"
    return tuple(section.allowed), tuple(section.denied)


def new_scope(plan: bytes) -> Derived:
    """``(allowed, denied)`` under the current reader, or its problem."""
    scope = derive_scope(plan)
    if scope.patterns is None:
        return scope.problem_text
    return scope.patterns, scope.denied


def main(argv: list[str]) -> int:
    """Print the differences and the summary; exit status 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="?", type=Path, default=DEFAULT_TASKS)
    parser.add_argument("--base", required=True, help="git revision of the older reader")
    args = parser.parse_args(argv)
    reader = load_reader(args.base)
    plans = sorted(args.tasks.glob("*/plan.md"))
    counts = {"plans": len(plans), "old_derives": 0, "new_derives": 0, "changed": 0,
              "newly_failing": 0, "newly_deriving": 0}  # fmt: skip
    for path in plans:
        data = path.read_bytes()
        old, new = old_scope(reader, data), new_scope(data)
        counts["old_derives"] += not isinstance(old, str)
        counts["new_derives"] += not isinstance(new, str)
        if old == new or (isinstance(old, str) and isinstance(new, str)):
            continue
        counts["changed"] += 1
        name = path.parent.name
        if isinstance(new, str):
            counts["newly_failing"] += 1
            print(f"{name}: derived before, fails now: {new[:160]}")
        elif isinstance(old, str):
            counts["newly_deriving"] += 1
            print(f"{name}: failed before ({old}), derives now")
        else:
            for label, before, after in (("allowed", old[0], new[0]), ("denied", old[1], new[1])):
                gone = [p for p in before if p not in after]
                added = [p for p in after if p not in before]
                if gone or added:
                    print(f"{name}: {label} -{gone} +{added}")
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
