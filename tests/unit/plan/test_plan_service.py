"""``plangate init``: useful templates, never overwrites.

``plangate package``: presence gate, hashes and marker states, in a real repository.

``plangate review mark``: exactly one marker line bound to the current plan.md.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from plangate.canonical import sha256_digest
from plangate.errors import InputRejected
from plangate.layout import MAX_ARTIFACT_BYTES
from plangate.plan.loopspec import extract_allowed_paths
from plangate.plan.scope import derive_scope
from plangate.snapshot import ARTIFACTS
from support.plan_tasks import PLAN_MD, task_dir, write_package


def test_init_scaffolds_six_templates(git_repo: Path, run_cli) -> None:
    result = run_cli(git_repo, "init", "TASK-0042")
    assert result.code == 0, result.err
    task = task_dir(git_repo, "TASK-0042")
    assert sorted(p.name for p in task.iterdir()) == sorted(ARTIFACTS)
    for name in ARTIFACTS:
        text = (task / name).read_text()
        assert text.strip(), name
        assert "TASK-0042" in text
        assert "{task_id}" not in text
        assert f"docs/working/TASK-0042/{name}" in result.out
    plan = (task / "plan.md").read_text()
    for heading in ("## Goal", "## Files / Components to Touch", "## Testing Strategy"):
        assert f"\n{heading}\n" in plan
    assert "Verification Automation: `" in plan
    assert extract_allowed_paths(plan), "the example path must be extractable"


def test_templates_hold_no_valid_marker(git_repo: Path, run_cli) -> None:
    run_cli(git_repo, "init", "TASK-0001")
    out = run_cli(git_repo, "package", "TASK-0001", "--json")
    assert out.code == 1
    doc = json.loads(out.out)
    assert doc["complete"] is True
    assert doc["markers"]["c1"]["state"] == "missing"
    assert doc["markers"]["c2"]["state"] == "missing"
    for name in ("review-self.md", "review-external.md"):
        text = (task_dir(git_repo) / name).read_text()
        assert "plangate review mark" in text  # it explains how to write the marker


def test_init_refuses_an_existing_task(git_repo: Path, run_cli) -> None:
    assert run_cli(git_repo, "init", "TASK-0001").code == 0
    plan = task_dir(git_repo) / "plan.md"
    plan.write_text("my edited plan\n")
    again = run_cli(git_repo, "init", "TASK-0001")
    assert again.code == 1
    assert "TASK_EXISTS" in again.err
    assert plan.read_text() == "my edited plan\n"


def test_init_refuses_a_directory_with_any_file(git_repo: Path, run_cli) -> None:
    task = task_dir(git_repo)
    task.mkdir(parents=True)
    (task / "notes.txt").write_text("mine")
    result = run_cli(git_repo, "init", "TASK-0001")
    assert result.code == 1
    assert "TASK_EXISTS" in result.err
    assert sorted(p.name for p in task.iterdir()) == ["notes.txt"]


def test_init_fills_an_empty_directory(git_repo: Path, run_cli) -> None:
    task_dir(git_repo).mkdir(parents=True)
    assert run_cli(git_repo, "init", "TASK-0001").code == 0
    assert len(list(task_dir(git_repo).iterdir())) == 6


def test_init_refuses_a_symlinked_task_dir(git_repo: Path, tmp_path: Path, run_cli) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    task = task_dir(git_repo)
    task.parent.mkdir(parents=True)
    task.symlink_to(elsewhere)
    result = run_cli(git_repo, "init", "TASK-0001")
    assert result.code == 1
    assert "TASK_EXISTS" in result.err
    assert list(elsewhere.iterdir()) == []


def test_init_bad_task_id_is_usage(git_repo: Path, run_cli) -> None:
    for bad in ("task-0001", "TASK-1", "TASK-00011", "../TASK-0001"):
        result = run_cli(git_repo, "init", bad)
        assert result.code == 2, bad
        assert "TASK_ID_INVALID" in result.err
    assert not (git_repo / "docs").exists()


def test_init_json(git_repo: Path, run_cli) -> None:
    result = run_cli(git_repo, "init", "TASK-0007", "--json")
    assert result.code == 0
    doc = json.loads(result.out)
    assert doc["verdict"] == "CREATED"
    assert doc["reasons"] == []
    assert doc["created"] == [f"docs/working/TASK-0007/{n}" for n in ARTIFACTS]


def test_init_from_a_subdirectory_uses_the_repo_root(git_repo: Path, run_cli) -> None:
    sub = git_repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert run_cli(sub, "init", "TASK-0001").code == 0
    assert (git_repo / "docs" / "working" / "TASK-0001" / "plan.md").is_file()


PLAN_HASH = sha256_digest(PLAN_MD.encode())
SCOPE = derive_scope(PLAN_MD.encode()).digest  # what review mark binds besides the bytes


def _package(repo: Path, run_cli, task: str = "TASK-0001") -> tuple[int, dict]:
    result = run_cli(repo, "package", task, "--json")
    return result.code, json.loads(result.out)


def test_complete_package(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    code, doc = _package(git_repo, run_cli)
    assert code == 0
    assert doc["verdict"] == "COMPLETE"
    assert doc["reasons"] == []
    expected = {name: sha256_digest((task / name).read_bytes()) for name in ARTIFACTS}
    assert doc["artifact_hashes"] == expected
    assert doc["plan_hash"] == PLAN_HASH
    sorted_compact = json.dumps(expected, sort_keys=True, separators=(",", ":")).encode()
    assert doc["plan_package_hash"] == "sha256:" + hashlib.sha256(sorted_compact).hexdigest()
    assert doc["markers"]["c1"]["state"] == "valid"
    assert doc["markers"]["c2"]["state"] == "valid"
    human = run_cli(git_repo, "package", "TASK-0001")
    assert human.code == 0
    assert "COMPLETE" in human.out
    assert PLAN_HASH in human.out


def test_one_byte_in_todo_changes_package_hash_not_plan_hash(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    _, before = _package(git_repo, run_cli)
    with (task / "todo.md").open("a") as fh:
        fh.write("x")
    code, after = _package(git_repo, run_cli)
    assert code == 0
    assert after["plan_hash"] == before["plan_hash"]
    assert after["plan_package_hash"] != before["plan_package_hash"]


@pytest.mark.parametrize("name", ARTIFACTS)
def test_each_missing_artifact_fails(git_repo: Path, run_cli, name: str) -> None:
    task = write_package(git_repo)
    (task / name).unlink()
    code, doc = _package(git_repo, run_cli)
    assert code == 1
    assert doc["verdict"] == "INCOMPLETE"
    assert doc["complete"] is False
    assert any(r["code"] == "ARTIFACT_MISSING" and name in r["message"] for r in doc["reasons"])


def test_empty_artifact_is_an_integrity_failure(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    (task / "todo.md").write_bytes(b"")
    code, doc = _package(git_repo, run_cli)
    assert code == 1
    assert [r["code"] for r in doc["presence"]] == ["ARTIFACT_EMPTY"]
    assert doc["plan_package_hash"] is None


def test_symlink_inside_the_task_is_refused(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    (task / "todo.md").unlink()
    (task / "todo.md").symlink_to("plan.md")
    code, doc = _package(git_repo, run_cli)
    assert code == 1
    assert [r["code"] for r in doc["presence"]] == ["ARTIFACT_SYMLINK"]


def test_fifo_does_not_hang(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    (task / "test-cases.md").unlink()
    os.mkfifo(task / "test-cases.md")
    code, doc = _package(git_repo, run_cli)
    assert code == 1
    assert [r["code"] for r in doc["presence"]] == ["ARTIFACT_NOT_REGULAR"]


def test_directory_and_too_large(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    (task / "pbi-input.md").unlink()
    (task / "pbi-input.md").mkdir()
    (task / "todo.md").write_bytes(b"x" * (MAX_ARTIFACT_BYTES + 1))
    code, doc = _package(git_repo, run_cli)
    assert code == 1
    assert [r["code"] for r in doc["presence"]] == ["ARTIFACT_NOT_REGULAR", "ARTIFACT_TOO_LARGE"]


def _set_marker(task: Path, name: str, lines: str) -> None:
    (task / name).write_bytes(f"# review\n\nprose\n{lines}".encode())


@pytest.mark.parametrize(
    ("marker_text", "state"),
    [
        (f"C1-VERDICT: PASS plan={PLAN_HASH}\r\n", "malformed"),  # CRLF
        (f"C1-VERDICT: PASS plan={PLAN_HASH} \n", "malformed"),  # trailing space
        (f"C1-VERDICT\uff1a PASS plan={PLAN_HASH}\n", "malformed"),  # full-width colon
        (f"C1-VERDICT: PASS plan={PLAN_HASH.upper().replace('SHA256', 'sha256')}\n", "malformed"),
        (f"C1-VERDICT:  PASS plan={PLAN_HASH}\n", "malformed"),  # two spaces
        (f"c1-verdict: PASS plan={PLAN_HASH}\n", "malformed"),  # lower case prefix
        (f"C1-VERDICT: PASS plan={PLAN_HASH}\nC1-VERDICT: PASS plan={PLAN_HASH}\n", "duplicate"),
        (f"C1-VERDICT: FAIL plan={PLAN_HASH}\n\u5224\u5b9a: **PASS**\n", "not_accepted"),
        (f"see: C1-VERDICT: PASS plan={PLAN_HASH}\n", "missing"),  # inside a longer line
        ("\u5224\u5b9a: PASS\n", "missing"),  # free text is never parsed
        ("C1-VERDICT: PASS plan=sha256:" + "0" * 64 + "\n", "stale"),
        (f"C1-VERDICT: PASS plan={PLAN_HASH}\n", "valid"),
    ],
)
def test_c1_marker_states(git_repo: Path, run_cli, marker_text: str, state: str) -> None:
    task = write_package(git_repo)
    _set_marker(task, "review-self.md", marker_text)
    code, doc = _package(git_repo, run_cli)
    assert doc["markers"]["c1"]["state"] == state
    assert doc["markers"]["c2"]["state"] == "valid"
    assert code == (0 if state == "valid" else 1)
    if state != "valid":
        assert doc["markers"]["c1"]["reason"]["code"].startswith("EVIDENCE_C1_")


def test_crlf_message_says_so(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    _set_marker(task, "review-self.md", f"C1-VERDICT: PASS plan={PLAN_HASH}\r\n")
    human = run_cli(git_repo, "package", "TASK-0001")
    assert "CRLF" in human.out


@pytest.mark.parametrize(
    ("verdict", "state"),
    [("approve", "valid"), ("reject", "not_accepted"), ("PASS", "not_accepted")],
)
def test_c2_verdicts(git_repo: Path, run_cli, verdict: str, state: str) -> None:
    task = write_package(git_repo)
    _set_marker(task, "review-external.md", f"C2-VERDICT: {verdict} plan={PLAN_HASH}\n")
    _code, doc = _package(git_repo, run_cli)
    assert doc["markers"]["c2"]["state"] == state


def test_editing_plan_makes_both_markers_stale(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    with (task / "plan.md").open("a") as fh:
        fh.write("\nmore\n")
    code, doc = _package(git_repo, run_cli)
    assert code == 1
    assert doc["markers"]["c1"]["state"] == "stale"
    assert doc["markers"]["c2"]["state"] == "stale"
    codes = [r["code"] for r in doc["reasons"]]
    assert codes == ["EVIDENCE_C1_STALE", "EVIDENCE_C2_STALE"]


def test_mtime_is_irrelevant(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    os.utime(task / "review-self.md", (946684800, 946684800))  # 2000-01-01
    assert _package(git_repo, run_cli)[0] == 0


def test_missing_task_dir(git_repo: Path, run_cli) -> None:
    result = run_cli(git_repo, "package", "TASK-0404")
    assert result.code == 1
    assert "TASK_DIR_INVALID" in result.err
    assert "Traceback" not in result.err


def test_bad_task_id_is_usage(git_repo: Path, run_cli) -> None:
    assert run_cli(git_repo, "package", "TASK-1").code == 2




def _marker_lines(path: Path, prefix: str) -> list[str]:
    return [ln for ln in path.read_text().split("\n") if ln.upper().startswith(prefix)]


def test_mark_writes_one_marker_bound_to_plan(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert result.code == 0, result.err
    lines = _marker_lines(task / "review-self.md", "C1-VERDICT")
    assert lines == [f"C1-VERDICT: PASS plan={PLAN_HASH} scope={SCOPE}"]
    assert (task / "review-self.md").read_text().startswith("# review-self.md of TASK-0001")
    assert run_cli(git_repo, "review", "mark", "TASK-0001", "--c2", "approve").code == 0
    assert _marker_lines(task / "review-external.md", "C2-VERDICT") == [
        f"C2-VERDICT: approve plan={PLAN_HASH} scope={SCOPE}"
    ]
    assert run_cli(git_repo, "package", "TASK-0001").code == 0


def test_mark_prints_the_scope_the_marker_approves(git_repo: Path, run_cli) -> None:
    write_package(git_repo, markers=False)
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    scope = derive_scope(PLAN_MD.encode())
    assert f"  scope {SCOPE}" in result.out.splitlines()
    assert f"    allowed: {', '.join(scope.patterns or ())}" in result.out.splitlines()
    doc = json.loads(run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS",
                             "--json").out)  # fmt: skip
    assert doc["scope"] == {"allowed": list(scope.patterns or ()), "denied": list(scope.denied),
                            "digest": SCOPE, "problem": None}  # fmt: skip


def test_mark_replaces_every_earlier_marker_line(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    (task / "review-self.md").write_text(
        "# review\n"
        "C1-VERDICT: FAIL plan=sha256:" + "0" * 64 + "\n"
        "prose that stays\n"
        "C1-VERDICT: PASS plan=short\r\n"
        "  c1-verdict: PASS plan=x\n"
    )
    assert run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS").code == 0
    text = (task / "review-self.md").read_text()
    assert "prose that stays" in text
    assert [ln for ln in text.split("\n") if "VERDICT" in ln.upper()] == [
        f"C1-VERDICT: PASS plan={PLAN_HASH} scope={SCOPE}"
    ]
    _, doc = 0, json.loads(run_cli(git_repo, "package", "TASK-0001", "--json").out)
    assert doc["markers"]["c1"]["state"] == "valid"


def test_mark_is_idempotent(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    first = (task / "review-self.md").read_bytes()
    run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert (task / "review-self.md").read_bytes() == first


def test_remark_after_plan_edit_clears_stale(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    (task / "plan.md").write_text(PLAN_MD + "\nchanged\n")
    assert run_cli(git_repo, "package", "TASK-0001").code == 1
    run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    run_cli(git_repo, "review", "mark", "TASK-0001", "--c2", "approve")
    doc = json.loads(run_cli(git_repo, "package", "TASK-0001", "--json").out)
    assert doc["verdict"] == "COMPLETE"
    assert doc["plan_hash"] == sha256_digest((PLAN_MD + "\nchanged\n").encode())


def test_fail_verdict_is_recorded_but_not_accepted(git_repo: Path, run_cli) -> None:
    write_package(git_repo, markers=False)
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "FAIL")
    assert result.code == 0
    assert "only PASS" in result.out
    doc = json.loads(run_cli(git_repo, "package", "TASK-0001", "--json").out)
    assert doc["markers"]["c1"]["state"] == "not_accepted"


def test_missing_evidence_file_is_created(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    (task / "review-external.md").unlink()
    assert run_cli(git_repo, "review", "mark", "TASK-0001", "--c2", "reject").code == 0
    assert (task / "review-external.md").read_text() == f"C2-VERDICT: reject plan={PLAN_HASH} scope={SCOPE}\n"


@pytest.mark.parametrize("damage", ["missing", "empty", "symlink", "directory"])
def test_refuses_when_plan_is_unusable(git_repo: Path, run_cli, damage: str) -> None:
    task = write_package(git_repo, markers=False)
    before = (task / "review-self.md").read_bytes()
    plan = task / "plan.md"
    plan.unlink()
    if damage == "empty":
        plan.write_bytes(b"")
    elif damage == "symlink":
        plan.symlink_to("todo.md")
    elif damage == "directory":
        plan.mkdir()
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert result.code == 1
    assert "REVIEW_PLAN_UNREADABLE" in result.err
    assert (task / "review-self.md").read_bytes() == before


def test_refuses_a_symlinked_evidence_file(git_repo: Path, tmp_path: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    outside = tmp_path / "outside.md"
    outside.write_text("keep\n")
    (task / "review-self.md").unlink()
    (task / "review-self.md").symlink_to(outside)
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert result.code == 1
    assert "REVIEW_EVIDENCE_INVALID" in result.err
    assert outside.read_text() == "keep\n"


def test_refuses_non_utf8_evidence(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    (task / "review-self.md").write_bytes(b"# review \xff\xfe\n")
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert result.code == 1
    assert "REVIEW_EVIDENCE_NOT_UTF8" in result.err
    assert (task / "review-self.md").read_bytes() == b"# review \xff\xfe\n"


@pytest.mark.parametrize(
    "argv",
    [
        ("--c1", "approve"),
        ("--c2", "PASS"),
        ("--c1", "pass"),
        ("--c1", "PASS", "--c2", "approve"),
        (),
    ],
)
def test_usage_errors(git_repo: Path, run_cli, argv: tuple[str, ...]) -> None:
    write_package(git_repo, markers=False)
    assert run_cli(git_repo, "review", "mark", "TASK-0001", *argv).code == 2


def test_review_json(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c2", "approve", "--json")
    doc = json.loads(result.out)
    assert doc["marker"] == f"C2-VERDICT: approve plan={PLAN_HASH} scope={SCOPE}"
    assert doc["evidence_sha256"] == sha256_digest((task / "review-external.md").read_bytes())


# --- the services themselves ---------------------------------------------------------


def test_the_review_evidence_size_bound_is_the_artifact_bound(git_repo: Path, run_cli) -> None:
    from plangate.plan.markers import C1, marker_line

    task = write_package(git_repo, markers=False)
    line = marker_line(C1, "PASS", PLAN_HASH, SCOPE)
    # The rewritten file is the kept text, a blank line, the marker line and a newline.
    fits = b"x" * (MAX_ARTIFACT_BYTES - len(line) - 3)
    (task / "review-self.md").write_bytes(fits)
    res = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert res.code == 0, res.err
    assert len((task / "review-self.md").read_bytes()) == MAX_ARTIFACT_BYTES

    one_more = fits + b"x"
    (task / "review-self.md").write_bytes(one_more)
    res = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert res.code == 1
    assert "REVIEW_EVIDENCE_TOO_LARGE" in res.err
    assert (task / "review-self.md").read_bytes() == one_more  # nothing written


def test_marked_evidence_is_pure_over_the_snapshot(git_repo: Path) -> None:
    from plangate.plan.service import marked_evidence, read_task

    task = write_package(git_repo, markers=False)
    before = (task / "review-external.md").read_bytes()
    updated, line, plan_hash = marked_evidence(read_task(git_repo, "TASK-0001"), "c2", "approve")
    assert plan_hash == PLAN_HASH
    assert line == f"C2-VERDICT: approve plan={PLAN_HASH} scope={SCOPE}"
    assert updated.endswith((line + "\n").encode())
    assert (task / "review-external.md").read_bytes() == before


def test_init_task_returns_the_created_paths(git_repo: Path) -> None:
    from plangate.plan.service import init_task

    created = init_task(git_repo, "TASK-0007")
    assert created == [f"docs/working/TASK-0007/{name}" for name in ARTIFACTS]
    with pytest.raises(InputRejected) as refused:
        init_task(git_repo, "TASK-0007")
    assert refused.value.code == "TASK_EXISTS"


def test_the_loopspec_comes_from_the_snapshot_it_returns(git_repo: Path) -> None:
    from plangate.plan.loopspec import derive_loopspec, loopspec_hash
    from plangate.plan.service import derive_task_loopspec

    write_package(git_repo)
    derived = derive_task_loopspec(git_repo, "TASK-0001", "maker", "checker")
    plan = derived.snapshot.artifact("plan.md")
    assert plan is not None
    assert derived.hash == loopspec_hash(derive_loopspec(plan, "TASK-0001", "maker", "checker"))
