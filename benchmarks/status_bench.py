"""``plangate status`` over 1,000 generated tasks against ``sha256sum`` over the same files.

Goal: at most 2.0x in process (CPU) time, medians of interleaved runs, both
started directly (the interpreter binary, never a shim). Every task has the six
artifacts with valid markers and an AUTO_APPROVED c3-prime record bound to HEAD and
to the scope its plan derives (``scope_digest``), so every row is ACCEPTED: status runs
the full acceptor and the scope binding on each (7,000 files).

Usage: python3 benchmarks/status_bench.py [--tasks N] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _bench_common import (
    REPO_ROOT,
    bench_env,
    compare,
    git,
    importtime_report,
    load_average,
    real_python,
)

GOAL = 2.0


def build_fixture(root: Path, count: int) -> tuple[Path, list[str]]:
    """A repository with ``count`` approved tasks; returns it and the files status reads."""
    sys.path.insert(0, str(REPO_ROOT / "src"))
    from plangate.approval.record import ReviewerEvidence, build_record, serialize_record
    from plangate.canonical import sha256_digest
    from plangate.plan.markers import C1, C2, marker_line
    from plangate.plan.package import compute_package
    from plangate.plan.scope import derive_scope
    from plangate.snapshot import ARTIFACTS, RECORD_RELPATH, read_task_snapshot

    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    head = git(repo, "rev-parse", "HEAD")
    reviewers = {
        "model_a": ReviewerEvidence("approve", "review-self.md#PASS"),
        "model_b": ReviewerEvidence("approve", "review-external.md#approve"),
    }
    files: list[str] = []
    for index in range(count):
        task_id = f"TASK-{index:04d}"
        task = repo / "docs" / "working" / task_id
        task.mkdir(parents=True)
        plan = (
            f"# {task_id}\n\n## Goal\n\nGoal {index}.\n\n## Files / Components to Touch\n\n"
            f"- `src/mod{index}.py`\n\n## Testing Strategy\n\nVerification Automation: `true`\n"
        ).encode()
        plan_hash = sha256_digest(plan)
        contents = {
            "pbi-input.md": f"# pbi {index}\n" + "background text\n" * 20,
            "todo.md": f"# todo {index}\n" + "- [ ] step\n" * 10,
            "test-cases.md": f"# cases {index}\n" + "| AC | TC |\n" * 10,
            "review-self.md": f"# self review {index}\n\n{marker_line(C1, 'PASS', plan_hash)}\n",
            "review-external.md": (
                f"# external review {index}\n\n{marker_line(C2, 'approve', plan_hash)}\n"
            ),
        }
        (task / "plan.md").write_bytes(plan)
        for name, text in contents.items():
            (task / name).write_text(text)
        package = compute_package(read_task_snapshot(task))
        record = build_record(
            package, task_dir_name=task_id, source_sha=head, target_sha=head,
            reviewers=reviewers, decision="AUTO_APPROVED", policy_ref="bench@v1",
            issued_at="2026-01-01T00:00:00Z", issued_by="bench",
            scope_digest=derive_scope(plan).digest,
        )
        (task / "approvals").mkdir()
        (task / RECORD_RELPATH).write_bytes(serialize_record(record))
        files.extend(f"docs/working/{task_id}/{name}" for name in (*ARTIFACTS, RECORD_RELPATH))
    return repo, files


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    sha256sum = shutil.which("sha256sum")
    if sha256sum is None:
        raise SystemExit("sha256sum is not installed (coreutils)")
    python = real_python()
    env = bench_env()
    with tempfile.TemporaryDirectory(prefix="plangate-bench-") as tmp:
        repo, files = build_fixture(Path(tmp), args.tasks)
        subject = [python, "-m", "plangate", "status"]
        baseline = [sha256sum, *files]
        if sum(len(f) + 1 for f in files) > 1_000_000:
            # 70,000 paths do not fit on one command line (E2BIG): xargs hands them
            # over in batches, as benchmarks/run_all.py does (its own CPU, a few
            # milliseconds, counts as the baseline's).
            listing = Path(tmp) / "files.lst"
            listing.write_bytes(b"".join(os.fsencode(f) + b"\0" for f in files))
            baseline = ["xargs", "-0", "-a", str(listing), sha256sum]
        check = subprocess.run(
            [*subject, "--json"], cwd=repo, env=env, capture_output=True, check=False
        )
        summary = json.loads(check.stdout).get("summary") if check.returncode == 0 else None
        if summary != {"ACCEPTED": args.tasks}:
            raise SystemExit(f"the fixture's rows are not all ACCEPTED: {summary}")
        result = compare("status", subject, baseline, cwd=repo, runs=args.runs, env=env)
        print(f"status_bench: {args.tasks} tasks, {len(files)} files, interpreter {python}")
        print(f"  plangate status  median wall {result['subject_wall_ms']:8.1f} ms"
              f"  cpu {result['subject_cpu_ms']:8.1f} ms  ({args.runs} runs)")
        print(f"  sha256sum        median wall {result['baseline_wall_ms']:8.1f} ms"
              f"  cpu {result['baseline_cpu_ms']:8.1f} ms")
        # The goal is on process time (CPU, user + system, git child included),
        # as for c3_verify_bench; wall is shown for information.
        verdict = "met" if result["ratio_cpu"] <= GOAL else "MISSED"
        print(f"  ratio cpu {result['ratio_cpu']:.2f}x  (goal <= {GOAL}x: {verdict})"
              f"  wall {result['ratio_wall']:.2f}x")
        print(f"  {load_average()}")
        if result["ratio_cpu"] > GOAL:
            importtime_report(subject, repo, env, top=8)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
