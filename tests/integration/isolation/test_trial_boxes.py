"""Evaluation trials in real boxes: hostile harness code under test cannot reach the judges.

The runner below executes the candidate's harness module (``harness/attack.py``) in-process,
as a real runner does. Each attack targets something the trial must not change or see; the
host is compared before and after.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from plangate.canonical import sha256_digest
from plangate.evaluation.run.protocol import CommandSpec, TrialSpec, TrialStatus
from plangate.evaluation.run.trials import LocalPoolExecutor, TrialBox, execute_trial
from support.boxes import SRC, backend_or_fail, shared_dir
from support.cli import RunCli
from support.evalrun import GOOD_VERIFIER, build_harness_repo

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap boxes exist on Linux only"
)

PY = os.path.realpath(sys.executable)

RUNNER = """
import argparse, json, pathlib, runpy, sys
p = argparse.ArgumentParser()
for n in ("--trial-id", "--harness-dir", "--fixture", "--out"):
    p.add_argument(n, required=True)
a = p.parse_args()
runpy.run_path(str(pathlib.Path(a.harness_dir, "attack.py")), run_name="attack")
doc = {"protocol": "plangate-trial/2", "trial_id": a.trial_id,
       "outcome": "MERGE_READY", "stop_reasons": [],
       "metrics": {}, "activation": {}, "detections": {}}
pathlib.Path(a.out, "result.json").write_text(json.dumps(doc))
"""

GRADER = """
import argparse, json, pathlib
p = argparse.ArgumentParser()
for n in ("--side", "--fixture", "--fixture-id", "--role", "--result", "--out"):
    p.add_argument(n, required=True)
p.add_argument("--trial", type=int, required=True)
a = p.parse_args()
pathlib.Path(a.out, "grade.json").write_text(json.dumps({
    "protocol": "plangate-grade/1", "side": a.side, "fixture_id": a.fixture_id,
    "role": a.role, "trial": a.trial, "judgement": "stopped"}))
"""


def _hash_tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _spec(tmp: Path, attack: str, name: str = "t1") -> TrialSpec:
    base = tmp / "baseline"
    base.mkdir(exist_ok=True)
    (base / "runner.py").write_text(RUNNER)
    (base / "grader.py").write_text(GRADER)
    harness = tmp / "candidate"
    harness.mkdir(exist_ok=True)
    (harness / "attack.py").write_text(textwrap.dedent(attack))
    fixture = tmp / "fixture.json"
    fixture.write_text("{}")
    pins = ((str(base / "grader.py"), sha256_digest(GRADER.encode())),)
    return TrialSpec(
        side="candidate",
        fixture_id="kb",
        role="known_bad",
        trial=1,
        runner=CommandSpec((PY, "runner.py"), str(base), 30.0, ()),
        grader=CommandSpec((PY, "grader.py"), str(base), 30.0, pins),
        harness_dir=str(harness),
        fixture_source=str(fixture),
        fixture_digest=sha256_digest(b"{}"),
        work_dir=str(tmp / name),
    )


@pytest.fixture
def box() -> TrialBox:
    backend_or_fail()
    return TrialBox.here()


def test_a_harmless_candidate_completes_in_a_box(tmp_path: Path, box: TrialBox) -> None:
    outcome = execute_trial(_spec(tmp_path, "x = 1\n"), box)
    assert outcome.status is TrialStatus.COMPLETED, outcome
    assert outcome.judgement == "stopped"


@pytest.mark.parametrize(
    "target",
    ["baseline/grader.py", "baseline/evil.py", "candidate/attack.py", "fixture.json", "other/x"],
)
def test_candidate_code_cannot_write_outside_its_output(
    tmp_path: Path, box: TrialBox, target: str
) -> None:
    (tmp_path / "other").mkdir()
    spec = _spec(
        tmp_path,
        f"""
        import pathlib
        pathlib.Path({str(tmp_path / target)!r}).write_text("import os; os._exit(0)  # forged")
    """,
    )
    before = _hash_tree(tmp_path)
    outcome = execute_trial(spec, box)
    if target.startswith(("baseline/", "candidate/")):  # read-only mounts: the write fails
        assert outcome.status is TrialStatus.CRASHED, outcome
        assert outcome.error_code == "TRIAL_RUNNER_CRASHED"
    # Elsewhere the box's /tmp is private: whatever happens inside, the host is unchanged.
    after = {k: v for k, v in _hash_tree(tmp_path).items() if not k.startswith("t1/")}
    assert after == before


def test_candidate_code_sees_no_repository_ledger_or_other_trials(
    tmp_path: Path, box: TrialBox, git_repo: Path
) -> None:
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate" / "ledger.sqlite3").write_bytes(b"ledger")
    home = Path(os.environ["HOME"])
    (home / "secret").write_text("s")
    sibling = tmp_path / "t0" / "out"
    sibling.mkdir(parents=True)
    (sibling / "result.json").write_text("{}")
    spec = _spec(
        tmp_path,
        f"""
        import os, socket
        seen = []
        for path in ({str(git_repo)!r}, {str(git_repo / ".plangate")!r}, {str(sibling)!r},
                     {SRC!r}, {str(home)!r}):
            if os.path.exists(path) and os.listdir(path):
                seen.append(path)
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=3)
            seen.append("network")
        except OSError:
            pass
        if seen:
            raise SystemExit("SAW " + repr(seen))
    """,
    )
    outcome = execute_trial(spec, box)
    assert outcome.status is TrialStatus.COMPLETED, outcome.detail


def test_an_output_flood_is_a_crashed_trial(tmp_path: Path, box: TrialBox) -> None:
    spec = _spec(
        tmp_path,
        """
        import sys
        while True:
            sys.stderr.write("x" * 65536)
    """,
    )
    outcome = execute_trial(spec, box)
    assert outcome.status is TrialStatus.CRASHED
    assert outcome.error_code == "TRIAL_RUNNER_OUTPUT_FLOOD"


def test_a_runaway_candidate_times_out_in_its_box(tmp_path: Path, box: TrialBox) -> None:
    spec = _spec(tmp_path, "import time\ntime.sleep(600)\n")
    spec = TrialSpec(
        **{**spec.__dict__, "runner": CommandSpec((PY, "runner.py"), spec.runner.cwd, 1.0, ())}
    )
    outcome = execute_trial(spec, box)
    assert outcome.status is TrialStatus.TIMEOUT
    assert outcome.error_code == "TRIAL_RUNNER_TIMEOUT"


def test_the_pool_runs_boxed_trials_in_parallel(tmp_path: Path, box: TrialBox) -> None:
    specs = [_spec(tmp_path, "x = 1\n", name=f"t{i}") for i in range(4)]
    outcomes = LocalPoolExecutor(2, box=box).run(specs)
    assert [o.status for o in outcomes] == [TrialStatus.COMPLETED] * 4


VERIFIER = "harness/verifiers/completion_evidence.py"
GRADER_PATH_ATTACK = (
    GOOD_VERIFIER
    + """

import pathlib as _p
_root = _p.Path(__file__).resolve().parents[3]
for _name in ("baseline/eval/grader.py", "baseline/eval/fixtures/pos-1.json"):
    try:
        (_root / _name).write_text("forged")
    except OSError:
        pass
"""
)


def test_eval_run_keeps_the_baseline_and_the_repository_intact(
    run_cli: RunCli, tmp_path: Path
) -> None:
    backend_or_fail()
    harness = build_harness_repo(tmp_path)
    digest, commit = harness.candidate("forge", {VERIFIER: GRADER_PATH_ATTACK})
    review = harness.review("candidate:forge:v1", commit)
    assert run_cli(harness.repo, "eval", "review", "add", digest, str(review)).code == 0
    before = _hash_tree(harness.repo / ".git")
    result = run_cli(harness.repo, "eval", "run", digest, "--json")
    body = json.loads(result.out)
    # The forging writes fail silently inside the box: the judges stay the baseline's own.
    codes = [r["code"] for r in body["reasons"]]
    assert "BASELINE_WORKTREE_MODIFIED" not in codes
    assert "EVAL_HARNESS_FILE_MUTATION" not in codes
    after = _hash_tree(harness.repo / ".git")
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert all(k.startswith(("worktrees", "index", "logs", "ORIG_HEAD")) for k in changed), changed


def test_without_a_sandbox_an_evaluation_is_inconclusive(run_cli: RunCli, tmp_path: Path) -> None:
    backend_or_fail()
    harness = build_harness_repo(tmp_path)
    digest, commit = harness.candidate("plain", {VERIFIER: GOOD_VERIFIER})
    review = harness.review("candidate:plain:v1", commit)
    assert run_cli(harness.repo, "eval", "review", "add", digest, str(review)).code == 0
    with shared_dir():
        argv = [
            "/usr/bin/bwrap",
            "--bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-user",
            "--disable-userns",
            "--chdir",
            str(harness.repo),
            "--",
            PY,
            "-m",
            "plangate",
            "eval",
            "run",
            digest,
            "--json",
        ]
        proc = subprocess.run(
            argv,
            capture_output=True,
            timeout=300,
            check=False,
            env=dict(os.environ, PYTHONPATH=SRC),
        )
    body = json.loads(proc.stdout)
    assert proc.returncode == 4, proc.stderr
    assert body["verdict"] == "INCONCLUSIVE"
    assert "SANDBOX_UNAVAILABLE" in [r["code"] for r in body["reasons"]]


def test_candidate_code_never_learns_what_is_measured(tmp_path: Path, box: TrialBox) -> None:
    spec = _spec(
        tmp_path,
        """
        import json, os, pathlib, sys
        seen = {"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd(),
                "fixture": pathlib.Path(sys.argv[sys.argv.index("--fixture") + 1]).read_text()}
        out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1])
        (out / "seen.json").write_text(json.dumps(seen))
    """,
    )
    spec = TrialSpec(**{**spec.__dict__, "fixture_id": "mutant-7", "role": "known_mutant"})
    outcome = execute_trial(spec, box)
    assert outcome.status is TrialStatus.COMPLETED, outcome.detail
    assert outcome.role == "known_mutant"  # the evaluator attributes the trial itself
    seen = (tmp_path / "t1" / "out" / "seen.json").read_text()
    for secret in ("mutant-7", "known_mutant", "known-mutant", "--role", "--fixture-id"):
        assert secret not in seen, secret
    argv = json.loads(seen)["argv"]
    trial_id = argv[argv.index("--trial-id") + 1]
    assert len(trial_id) == 32
    assert int(trial_id, 16) >= 0
