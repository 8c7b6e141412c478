"""``plangate package``: presence gate, hashes and marker states, in a real repository."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from plangate.canonical import sha256_digest
from plangate.layout import MAX_ARTIFACT_BYTES
from plangate.snapshot import ARTIFACTS
from support.plan_tasks import PLAN_MD, write_package

PLAN_HASH = sha256_digest(PLAN_MD.encode())


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
    upstream = json.dumps(expected, sort_keys=True, separators=(",", ":")).encode()
    assert doc["plan_package_hash"] == "sha256:" + hashlib.sha256(upstream).hexdigest()
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
