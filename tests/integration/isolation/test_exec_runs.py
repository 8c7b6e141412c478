"""What ``plangate exec`` says and keeps, and ``plangate runs`` over what it kept.

Real bubblewrap boxes on real repositories with an approved task whose plan
allows ``src/greet.py`` only: the run names the uncommitted work it leaves
out, ends with one verdict, says when its command never started, survives
parallel first runs, and a refused run's in-scope part can be listed, shown,
applied by a person (recorded) and pruned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from plangate.ledger import open_ledger
from support.boxes import backend_or_fail
from support.delivery import define_surfaces
from support.plan_tasks import REVIEWERS, approve_task, write_package
from support.repo import commit_all, git

PY = os.path.realpath(sys.executable)
TASK = "TASK-0001"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap boxes exist on Linux only"
)


def _approved(repo: Path, run_cli) -> str:
    backend_or_fail()
    (repo / "CLAUDE.md").write_text("# rules the agent must not change\n")
    (repo / "src").mkdir()
    (repo / "src" / "keep.py").write_text("KEEP = 1\n")
    commit_all(repo, "rules and code")
    define_surfaces(repo)
    return approve_task(repo, run_cli)


def _py(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


WRITES_IN_AND_OUT = _py("""
    import pathlib
    pathlib.Path("src/greet.py").write_text("print('hello')\\n")
    pathlib.Path("src/keep.py").write_text("KEEP = 2  # a stray line out of scope\\n")
    pathlib.Path("docs").mkdir(exist_ok=True)
    pathlib.Path("docs/extra.md").write_text("also out of scope\\n")
""")


def _ledger(repo: Path, kind: str) -> list[dict]:
    with open_ledger(repo, {}, create=False) as ledger:
        assert ledger.verify().accepted
        return [dict(e.payload) for e in ledger.entries(kind=kind)]


def _refused_run(repo: Path, run_cli) -> tuple[str, str]:
    """A run that wrote one in-scope file and two out of scope."""
    approved = _approved(repo, run_cli)
    result = run_cli(repo, "exec", TASK, "--json", "--", *WRITES_IN_AND_OUT)
    assert result.code == 1, result.err
    report = json.loads(result.out)
    assert report["verdict"] == "REJECTED"
    return approved, report["isolation"]["run_id"]


# -- exec's own words ------------------------------------------------------------------


def test_exec_names_the_uncommitted_and_untracked_work_it_leaves_out(
    git_repo: Path, run_cli
) -> None:
    _approved(git_repo, run_cli)
    (git_repo / "src" / "keep.py").write_text("KEEP = 'my unfinished edit'\n")
    (git_repo / "notes.txt").write_text("my own notes\n")
    result = run_cli(
        git_repo, "exec", TASK, "--json", "--",
        *_py("import pathlib; pathlib.Path('src/greet.py').write_text('ok\\n')"),
    )
    assert result.code == 0, result.err
    assert "left out of the run: 2 uncommitted or untracked path(s)" in result.err
    assert "src/keep.py (modified)" in result.err
    assert "notes.txt (untracked)" in result.err
    left = json.loads(result.out)["isolation"]["left_out"]
    assert left == {"count": 2, "paths": ["notes.txt", "src/keep.py"]}
    # The caller's own work is untouched and was not in the box.
    assert (git_repo / "src" / "keep.py").read_text() == "KEEP = 'my unfinished edit'\n"


def test_a_clean_tree_leaves_nothing_out_and_says_nothing(git_repo: Path, run_cli) -> None:
    _approved(git_repo, run_cli)
    git(git_repo, "add", "docs/working")
    git(git_repo, "commit", "-q", "-m", "the approval record")
    # The record is committed now: HEAD descends from the approved commit in scope.
    result = run_cli(git_repo, "exec", TASK, "--json", "--", PY, "-c", "pass")
    assert result.code == 0, result.err
    assert "left out" not in result.err
    assert json.loads(result.out)["isolation"]["left_out"] == {"count": 0, "paths": []}


def test_a_refused_result_ends_with_one_verdict_never_an_accepted_one(
    git_repo: Path, run_cli
) -> None:
    _approved(git_repo, run_cli)
    result = run_cli(
        git_repo, "exec", TASK, "--",
        *_py("import pathlib; pathlib.Path('src/keep.py').write_text('stray\\n')"),
    )
    assert result.code == 1, result.err
    verdict_lines = [line for line in result.err.splitlines()
                     if line.startswith("plangate exec: ") and ": command exited" in line]
    assert verdict_lines == ["plangate exec: REJECTED: command exited 0"], result.err
    assert "ACCEPTED" not in result.err
    assert "result REJECTED" not in result.err
    assert "plangate runs apply" in result.err  # the way to salvage the in-scope part


def test_an_accepted_result_ends_with_accepted(git_repo: Path, run_cli) -> None:
    _approved(git_repo, run_cli)
    result = run_cli(
        git_repo, "exec", TASK, "--json", "--",
        *_py("import pathlib; pathlib.Path('src/greet.py').write_text('ok\\n')"),
    )
    assert result.code == 0, result.err
    assert json.loads(result.out)["verdict"] == "ACCEPTED"
    assert "REJECTED" not in result.err


def test_a_run_that_fails_before_its_command_starts_says_so(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    _approved(git_repo, run_cli)
    # .plangate/runs cannot be a directory: the workspace cannot be made.
    (git_repo / ".plangate" / "runs").write_text("not a directory\n")
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", TASK, "--json", "--", "touch", str(marker))
    assert result.code == 1, result.err
    assert not marker.exists()
    report = json.loads(result.out)
    assert report["verdict"] == "REJECTED"
    assert report["started"] is False
    assert report["command_exit_code"] is None
    assert report["isolation"]["error"] == "PATH_COMPONENT_NOT_DIRECTORY"
    text = run_cli(git_repo, "exec", TASK, "--", "touch", str(marker))
    assert "the command was not started" in text.err
    assert "command exited" not in text.err
    ended = _ledger(git_repo, "exec_ended")[-1]
    assert ended["started"] is False


def test_eight_parallel_first_runs_share_the_runs_ignore_file(git_repo: Path, run_cli) -> None:
    backend_or_fail()
    (git_repo / "src").mkdir()
    (git_repo / "src" / "keep.py").write_text("KEEP = 1\n")
    commit_all(git_repo, "code")
    define_surfaces(git_repo)
    tasks = [f"TASK-{n:04d}" for n in range(1, 9)]
    for task in tasks:
        write_package(git_repo, task)
    head = commit_all(git_repo, "eight plans")
    reviewers = git_repo.parent / "reviewers.json"
    reviewers.write_text(json.dumps(REVIEWERS))
    for task in tasks:
        issued = run_cli(git_repo, "c3", "issue", task, "--target-sha", head, "--reviewers",
                         str(reviewers), "--decision", "AUTO_APPROVED", "--policy-ref", "t@v1",
                         "--issued-at", "2026-01-02T03:04:05Z", "--issued-by", "tests")
        assert issued.code == 0, issued.err
    # The ledger exists before the race: the race under test is the runs directory's.
    assert not (git_repo / ".plangate" / "runs").exists()
    procs = [
        subprocess.Popen(
            [PY, "-m", "plangate", "exec", task, "--", PY, "-c", "pass"],
            cwd=git_repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        for task in tasks
    ]
    outcomes = [(p.wait(), p.stderr.read().decode()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    for code, err in outcomes:
        assert code == 0, err
        assert "FILE_EXISTS" not in err
    assert (git_repo / ".plangate" / "runs" / ".gitignore").read_bytes() == (
        b"# written by plangate: isolated runs are not source\n*\n"
    )


# -- plangate runs -----------------------------------------------------------------------


def test_runs_list_and_show_give_the_per_path_verdicts(git_repo: Path, run_cli) -> None:
    approved, run_id = _refused_run(git_repo, run_cli)
    listed = json.loads(run_cli(git_repo, "runs", "list", "--json").out)["runs"]
    assert [(r["run_id"], r["verdict"], r["directory"]) for r in listed] == [
        (run_id, "REJECTED", True)
    ]
    shown = run_cli(git_repo, "runs", "show", run_id, "--json")
    assert shown.code == 0, shown.err
    doc = json.loads(shown.out)
    assert doc["approved"] == approved
    verdicts = {p["path"]: (p["verdict"], p["reasons"]) for p in doc["paths"]}
    assert verdicts["src/greet.py"] == ("ACCEPTED", [])
    assert verdicts["src/keep.py"][0] == "REJECTED"
    assert "CI_OUTSIDE_SCOPE" in verdicts["src/keep.py"][1]
    assert verdicts["docs/extra.md"][0] == "REJECTED"
    assert "KEEP = 2" in doc["diff"]
    text = run_cli(git_repo, "runs", "show", run_id)
    assert f"plangate runs apply {run_id} --in-scope" in text.out


def test_a_person_applies_the_in_scope_part_and_the_ledger_names_what_was_left_out(
    git_repo: Path, run_cli
) -> None:
    approved, run_id = _refused_run(git_repo, run_cli)
    applied = run_cli(git_repo, "runs", "apply", run_id, "--in-scope", "--json", tty=True)
    assert applied.code == 0, applied.err
    doc = json.loads(applied.out)
    assert doc["applied_paths"] == ["src/greet.py"]
    assert sorted(p["path"] for p in doc["left_out"]) == ["docs/extra.md", "src/keep.py"]
    commit = doc["commit"]
    assert git(git_repo, "rev-parse", f"plangate/runs/{run_id}") == commit
    assert git(git_repo, "rev-parse", f"{commit}~1") == approved
    assert git(git_repo, "diff", "--name-only", approved, commit) == "src/greet.py"
    assert git(git_repo, "show", f"{commit}:src/greet.py") == "print('hello')"
    # The current branch was still at the approved commit with no tracked change: it is
    # fast-forwarded, as for an accepted run; the left-out files never reach the tree.
    assert git(git_repo, "rev-parse", "HEAD") == commit
    assert (git_repo / "src" / "greet.py").read_text() == "print('hello')\n"
    assert (git_repo / "src" / "keep.py").read_text() == "KEEP = 1\n"
    assert not (git_repo / "docs" / "extra.md").exists()
    partial = _ledger(git_repo, "exec_partial_apply")
    assert len(partial) == 1
    assert partial[0]["run_id"] == run_id
    assert partial[0]["applied_paths"] == ["src/greet.py"]
    assert {p["path"] for p in partial[0]["left_out"]} == {"docs/extra.md", "src/keep.py"}
    assert "person" in partial[0]["by"]
    again = run_cli(git_repo, "runs", "apply", run_id, "--in-scope", tty=True)
    assert again.code == 1
    assert "RUNS_ALREADY_APPLIED" in again.err


@pytest.mark.parametrize(
    ("env_extra", "tty", "code"),
    [
        ({"CLAUDECODE": "1"}, True, "RUNS_APPLY_AGENT_ENVIRONMENT"),
        ({}, False, "RUNS_APPLY_NOT_INTERACTIVE"),
    ],
)
def test_only_a_person_applies(git_repo: Path, run_cli, env_extra, tty, code) -> None:
    _, run_id = _refused_run(git_repo, run_cli)
    result = run_cli(git_repo, "runs", "apply", run_id, "--in-scope",
                     env={**os.environ, **env_extra}, tty=tty)
    assert result.code == 3
    assert code in result.err
    assert git(git_repo, "branch", "--list", "plangate/*") == ""
    assert _ledger(git_repo, "exec_partial_apply") == []


def test_apply_of_an_unknown_or_malformed_run_is_refused(git_repo: Path, run_cli) -> None:
    _approved(git_repo, run_cli)
    unknown = run_cli(git_repo, "runs", "apply", "TASK-0001-20260101T000000Z-0badc0de",
                      "--in-scope", tty=True)
    assert unknown.code == 1
    assert "RUNS_UNKNOWN" in unknown.err
    malformed = run_cli(git_repo, "runs", "show", "../../etc")
    assert malformed.code == 1
    assert "RUNS_ID_MALFORMED" in malformed.err


def test_a_result_changed_after_the_run_is_refused_by_its_hash(git_repo: Path, run_cli) -> None:
    approved, run_id = _refused_run(git_repo, run_cli)
    state = git_repo / ".plangate" / "runs" / run_id / "state.git"
    # Someone points the run's own ref at another commit that only touches src/greet.py:
    # the ref is never trusted; the ledger's commit id and patch digest are.
    blob = subprocess.run(["git", "-C", str(state), "hash-object", "-w", "--stdin"],
                          input=b"planted\n", capture_output=True, check=True).stdout.decode().strip()
    git(state, "read-tree", approved)
    git(state, "update-index", "--add", "--cacheinfo", f"100644,{blob},src/greet.py")
    tree = git(state, "write-tree")
    forged = subprocess.run(["git", "-C", str(state), "commit-tree", tree, "-p", approved],
                            input=b"forged\n", capture_output=True, check=True).stdout.decode().strip()
    git(state, "update-ref", "refs/heads/result", forged)
    applied = run_cli(git_repo, "runs", "apply", run_id, "--in-scope", "--json", tty=True)
    assert applied.code == 0, applied.err  # the recorded result, not the planted one
    commit = json.loads(applied.out)["commit"]
    assert git(git_repo, "show", f"{commit}:src/greet.py") == "print('hello')"


def test_a_rewritten_run_branch_is_reported_and_never_applied(git_repo: Path, run_cli) -> None:
    approved, run_id = _refused_run(git_repo, run_cli)
    git(git_repo, "branch", f"plangate/runs/{run_id}", approved)  # someone else's commit
    shown = json.loads(run_cli(git_repo, "runs", "show", run_id, "--json").out)
    assert shown["branch_problem"]["code"] == "RUNS_BRANCH_REWRITTEN"
    listed = json.loads(run_cli(git_repo, "runs", "list", "--json").out)["runs"]
    assert listed[0]["branch_state"] == "rewritten"
    applied = run_cli(git_repo, "runs", "apply", run_id, "--in-scope", tty=True)
    assert applied.code == 1
    assert "RUNS_BRANCH_REWRITTEN" in applied.err
    assert git(git_repo, "rev-parse", f"plangate/runs/{run_id}") == approved


def test_a_result_whose_objects_are_gone_is_refused(git_repo: Path, run_cli) -> None:
    _, run_id = _refused_run(git_repo, run_cli)
    objects = git_repo / ".plangate" / "runs" / run_id / "state.git" / "objects"
    for path in objects.rglob("*"):
        if path.is_file() and path.parent.name != "info":
            path.unlink()
    shown = run_cli(git_repo, "runs", "show", run_id)
    assert shown.code == 1
    assert "RUNS_RESULT_MISSING" in shown.err
    applied = run_cli(git_repo, "runs", "apply", run_id, "--in-scope", tty=True)
    assert applied.code == 1
    assert "RUNS_RESULT_MISSING" in applied.err


def test_a_diff_that_no_longer_hashes_to_the_recorded_patch_is_refused(
    git_repo: Path, run_cli
) -> None:
    _, run_id = _refused_run(git_repo, run_cli)
    # The run's repository now makes git show every file as binary: the diff PlanGate reads
    # is not the one whose digest the ledger recorded, so nothing is shown or applied.
    state = git_repo / ".plangate" / "runs" / run_id / "state.git"
    (state / "info" / "attributes").write_text("* -diff\n")
    shown = run_cli(git_repo, "runs", "show", run_id)
    assert shown.code == 1
    assert "RUNS_RESULT_MISMATCH" in shown.err
    applied = run_cli(git_repo, "runs", "apply", run_id, "--in-scope", tty=True)
    assert applied.code == 1
    assert "RUNS_RESULT_MISMATCH" in applied.err
    assert git(git_repo, "branch", "--list", "plangate/*") == ""


def test_prune_removes_finished_runs_but_never_one_in_progress(git_repo: Path, run_cli) -> None:
    from plangate.execution.runs import task_lock

    _, refused = _refused_run(git_repo, run_cli)
    accepted = run_cli(
        git_repo, "exec", TASK, "--json", "--",
        *_py("import pathlib; pathlib.Path('src/greet.py').write_text('ok\\n')"),
    )
    assert accepted.code == 0, accepted.err
    accepted_id = json.loads(accepted.out)["isolation"]["run_id"]
    runs_dir = git_repo / ".plangate" / "runs"
    # A run of the task in progress holds the task's lock: prune leaves every run of it.
    with task_lock(git_repo, TASK):
        held = run_cli(git_repo, "runs", "prune", "--json")
    assert held.code == 0, held.err
    doc = json.loads(held.out)
    assert doc["removed_dirs"] == [] and doc["removed_branches"] == []
    assert (runs_dir / refused).is_dir()
    # Young runs stay under --older-than.
    young = json.loads(run_cli(git_repo, "runs", "prune", "--older-than", "2w", "--json").out)
    assert young["removed_dirs"] == []
    # A dry run says what would go and removes nothing.
    dry = json.loads(run_cli(git_repo, "runs", "prune", "--dry-run", "--json").out)
    assert refused in dry["removed_dirs"]
    assert (runs_dir / refused).is_dir()
    assert git(git_repo, "branch", "--list", "plangate/*") != ""
    # The accepted run's branch was fast-forwarded into main: it goes with the directory.
    pruned = run_cli(git_repo, "runs", "prune", "--json")
    assert pruned.code == 0, pruned.err
    doc = json.loads(pruned.out)
    assert refused in doc["removed_dirs"]
    assert doc["removed_branches"] == [f"plangate/runs/{accepted_id}"]
    assert not (runs_dir / refused).exists()
    assert git(git_repo, "branch", "--list", "plangate/*") == ""
    assert (runs_dir / ".gitignore").is_file()
    assert _ledger(git_repo, "runs_pruned")[-1]["removed_branches"] == doc["removed_branches"]


def test_prune_keeps_a_branch_that_is_the_only_reference_to_its_work(
    git_repo: Path, run_cli
) -> None:
    approved, run_id = _refused_run(git_repo, run_cli)
    applied = run_cli(git_repo, "runs", "apply", run_id, "--in-scope", tty=True)
    assert applied.code == 0, applied.err
    git(git_repo, "reset", "-q", "--hard", approved)  # main no longer holds the work
    pruned = json.loads(run_cli(git_repo, "runs", "prune", "--json").out)
    assert pruned["removed_branches"] == []
    assert [k["run_id"] for k in pruned["kept"] if k["what"] == "branch"] == [run_id]
    assert git(git_repo, "branch", "--list", f"plangate/runs/{run_id}") != ""


def test_prune_refuses_a_malformed_age(git_repo: Path, run_cli) -> None:
    result = run_cli(git_repo, "runs", "prune", "--older-than", "soon")
    assert result.code == 2
    assert "RUNS_AGE_MALFORMED" in result.err


def test_an_in_scope_deletion_lands_as_a_deletion(git_repo: Path, run_cli) -> None:
    backend_or_fail()
    (git_repo / "src").mkdir()
    (git_repo / "src" / "greet.py").write_text("print('old')\n")
    (git_repo / "src" / "keep.py").write_text("KEEP = 1\n")
    commit_all(git_repo, "code")
    define_surfaces(git_repo)
    approved = approve_task(git_repo, run_cli)
    result = run_cli(git_repo, "exec", TASK, "--json", "--", *_py("""
        import pathlib
        pathlib.Path("src/greet.py").unlink()
        pathlib.Path("src/keep.py").write_text("stray\\n")
    """))
    assert result.code == 1, result.err
    run_id = json.loads(result.out)["isolation"]["run_id"]
    applied = run_cli(git_repo, "runs", "apply", run_id, "--in-scope", "--json", tty=True)
    assert applied.code == 0, applied.err
    commit = json.loads(applied.out)["commit"]
    assert git(git_repo, "diff", "--name-status", approved, commit) == "D\tsrc/greet.py"


def test_an_accepted_run_is_shown_from_the_repository_and_is_not_applied_twice(
    git_repo: Path, run_cli
) -> None:
    _approved(git_repo, run_cli)
    result = run_cli(git_repo, "exec", TASK, "--json", "--",
                     *_py("import pathlib; pathlib.Path('src/greet.py').write_text('ok\\n')"))
    assert result.code == 0, result.err
    run_id = json.loads(result.out)["isolation"]["run_id"]
    shown = json.loads(run_cli(git_repo, "runs", "show", run_id, "--json").out)
    assert shown["verdict"] == "ACCEPTED"
    assert [(p["path"], p["verdict"]) for p in shown["paths"]] == [("src/greet.py", "ACCEPTED")]
    assert shown["branch_problem"] is None
    applied = run_cli(git_repo, "runs", "apply", run_id, "--in-scope", tty=True)
    assert applied.code == 1
    assert "RUNS_ALREADY_APPLIED" in applied.err
