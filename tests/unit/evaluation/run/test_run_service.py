"""The runner and the grader always come from the baseline worktree; only the harness differs."""

from __future__ import annotations

import sys
from pathlib import Path

from plangate.evaluation.run.service import build_trials

D = "sha256:" + "1" * 64


def test_every_trial_runs_baseline_judges_against_its_sides_harness(tmp_path: Path) -> None:
    plan = {
        "trials": 3,
        "fixtures": [
            {"id": "kb", "role": "known_bad", "path": "eval/fixtures/kb.json", "digest": D},
            {"id": "nc", "role": "negative_control", "path": "eval/fixtures/nc.json", "digest": D},
        ],
        "runner": {
            "argv": ["python3", "eval/runner.py"],
            "files": [{"path": "eval/runner.py", "digest": D}],
            "timeout_seconds": 9,
        },
        "grader": {
            "argv": ["eval/grade"],
            "files": [{"path": "eval/grade", "digest": D}],
            "timeout_seconds": 7,
        },
    }
    base, cand = tmp_path / "baseline", tmp_path / "candidate"
    specs = build_trials(plan, base, cand, tmp_path / "work")
    assert len(specs) == 2 * 3 * 2
    assert {(s.fixture_id, s.trial, s.side) for s in specs} == {
        (f, n, side) for f in ("kb", "nc") for n in (1, 2, 3) for side in ("baseline", "candidate")
    }
    for spec in specs:
        assert spec.runner.cwd == spec.grader.cwd == str(base)
        assert spec.runner.argv == (sys.executable, "eval/runner.py")
        assert spec.grader.argv == ("eval/grade",)
        assert spec.runner.pinned_files == ((str(base / "eval/runner.py"), D),)
        assert spec.grader.pinned_files == ((str(base / "eval/grade"), D),)
        assert spec.fixture_source.startswith(str(base))
        assert spec.harness_dir == str(base if spec.side == "baseline" else cand)
        assert (spec.runner.timeout_seconds, spec.grader.timeout_seconds) == (9.0, 7.0)
    assert len({s.work_dir for s in specs}) == len(specs)


def test_gate_changes_name_what_was_rejudged() -> None:
    from plangate.evaluation.run.service import gate_changes
    from plangate.verdict import Result

    now = Result("AUTO_APPROVED", (), {"candidate_commit": "b" * 40, "observed_diff": ["x"]})
    assert gate_changes(None, now) == {"previous_verdict": None, "changed": []}
    before = {
        "verdict": "HUMAN_REQUIRED",
        "facts": {"candidate_commit": "a" * 40, "observed_diff": ["x"]},
    }
    assert gate_changes(before, now) == {
        "previous_verdict": "HUMAN_REQUIRED",
        "changed": ["candidate_commit", "verdict"],
    }
    same = {"verdict": "AUTO_APPROVED", "facts": dict(now.facts)}
    assert gate_changes(same, now)["changed"] == []
