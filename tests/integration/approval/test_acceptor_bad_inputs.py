"""The acceptor against real records in real git repositories: every bad input is
rejected with a reason code, never a traceback, never an accept.

Adversarial review: forged c3-prime records that used to be ACCEPTED.

Each record below is a valid, producer-issued record with one field forged;
every one must be rejected with a reason code by ``verify_task`` and by
``plangate c3 verify``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plangate.approval.service import verify_task
from support.repo import commit_all, git
from support.taskkit import approve_task, load_record, make_task, save_record, sha, task_dir

TASK = "TASK-0001"


@pytest.fixture
def approved(git_repo: Path) -> tuple[Path, str]:
    make_task(git_repo)
    head = approve_task(git_repo)
    return git_repo, head


def record_path(repo: Path) -> Path:
    return task_dir(repo) / "approvals" / "c3.json"


def codes(repo: Path, expected_sha: str | None = None) -> tuple[str, tuple[str, ...]]:
    result = verify_task(repo, TASK, expected_sha=expected_sha)
    return result.verdict, result.codes


def test_valid_record_is_accepted_statically_and_at_head(approved: tuple[Path, str]) -> None:
    repo, head = approved
    assert codes(repo) == ("ACCEPTED", ())
    assert codes(repo, head) == ("ACCEPTED", ())


RAW_RECORDS = {
    "duplicate key": b'{"task_id": "TASK-0001", "task_id": "TASK-0001"}',
    "NaN": b'{"task_id": NaN}',
    "BOM": b"\xef\xbb\xbf{}",
    "trailing garbage": b"{} x",
    "array top": b"[]",
    "string top": b'"c3"',
    "not utf-8": b'{"task_id": "\xff"}',
    "empty file": b"",
}


@pytest.mark.parametrize("raw", RAW_RECORDS.values(), ids=RAW_RECORDS.keys())
def test_malformed_record_bytes_are_rejected(approved: tuple[Path, str], raw: bytes) -> None:
    repo, _ = approved
    record_path(repo).write_bytes(raw)
    verdict, found = codes(repo)
    assert verdict == "REJECTED"
    assert found[0] in ("C3_RECORD_MALFORMED", "C3_RECORD_NOT_OBJECT")


def test_pretty_printed_duplicate_key_inside_reviewers_is_rejected(
    approved: tuple[Path, str],
) -> None:
    repo, _ = approved
    text = record_path(repo).read_text()
    text = text.replace('"model_b": {', '"model_b": {\n      "verdict": "approve",', 1)
    record_path(repo).write_text(text)
    assert codes(repo) == ("REJECTED", ("C3_RECORD_MALFORMED",))


Mutation = Callable[[dict], None]


def _set(path: tuple[str, ...], value: object) -> Mutation:
    def apply(record: dict) -> None:
        target = record
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return apply


def _delete(key: str) -> Mutation:
    return lambda record: record.pop(key)


MUTATIONS: dict[str, tuple[Mutation, str]] = {
    "c3_status added": (_set(("c3_status",), "APPROVED"), "C3_STATUS_FORBIDDEN"),
    "unknown top-level key": (_set(("evil",), "x"), "C3_UNKNOWN_KEYS"),
    "unknown artifact_hashes key": (
        _set(("artifact_hashes", "evil.md"), "sha256:" + "0" * 64),
        "C3_ARTIFACT_HASHES_KEYS",
    ),
    "extra reviewer": (_set(("reviewers", "model_c"), {}), "C3_REVIEWERS_KEYS"),
    "snapshot sixth key": (
        _set(("reviewers", "model_a", "evil"), "x"),
        "C3_REVIEWER_SNAPSHOT_KEYS",
    ),
    "snapshot empty value": (
        _set(("reviewers", "model_b", "evidence_ref"), ""),
        "C3_REVIEWER_SNAPSHOT_EMPTY",
    ),
    "annotation not a string": (_set(("_note",), 123), "C3_ANNOTATION_NOT_STRING"),
    "task_id is a list": (_set(("task_id",), ["TASK-0001"]), "C3_FIELD_TYPE"),
    "decision is a bool": (_set(("decision",), True), "C3_FIELD_TYPE"),
    "phase is a number": (_set(("phase",), 3), "C3_FIELD_TYPE"),
    "task_id other task": (_set(("task_id",), "TASK-0002"), "C3_TASK_ID_MISMATCH"),
    "task_id malformed": (_set(("task_id",), "TASK-99"), "C3_TASK_ID_INVALID"),
    "phase typographic apostrophe": (_set(("phase",), "C-3\u2019"), "C3_PHASE_INVALID"),
    "phase legacy": (_set(("phase",), "C-3"), "C3_PHASE_INVALID"),
    "issued_at with fraction": (
        _set(("issued_at",), "2026-12-01T09:00:00.5Z"),
        "C3_ISSUED_AT_INVALID",
    ),
    "issued_at with offset": (
        _set(("issued_at",), "2026-12-01T09:00:00+00:00"),
        "C3_ISSUED_AT_INVALID",
    ),
    "issued_at impossible date": (
        _set(("issued_at",), "2026-02-30T09:00:00Z"),
        "C3_ISSUED_AT_INVALID",
    ),
    "policy_ref empty": (_set(("policy_ref",), ""), "C3_FIELD_EMPTY"),
    "issued_by blank": (_set(("issued_by",), "  "), "C3_FIELD_EMPTY"),
    "task_id removed": (_delete("task_id"), "C3_MISSING_KEYS"),
    "reviewers removed": (_delete("reviewers"), "C3_MISSING_KEYS"),
    "decision unknown": (_set(("decision",), "APPROVED"), "C3_DECISION_INVALID"),
    "decision blocked": (_set(("decision",), "BLOCKED"), "C3_DECISION_NOT_APPROVED"),
    "model_a verdict flipped": (
        _set(("reviewers", "model_a", "verdict"), "reject"),
        "C3_DECISION_VERDICT_INCONSISTENT",
    ),
    "verdict vocabulary": (
        _set(("reviewers", "model_a", "verdict"), "maybe"),
        "C3_REVIEWER_VERDICT_INVALID",
    ),
    "model_b plan_hash replaced": (
        _set(("reviewers", "model_b", "plan_hash"), "sha256:" + "1" * 64),
        "C3_REVIEWER_TRIO_MISMATCH",
    ),
    "same evidence": (
        _set(("reviewers", "model_b", "evidence_ref"), "reviews/model-a.md"),
        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    ),
    "same evidence after ./ normalisation": (
        _set(("reviewers", "model_b", "evidence_ref"), " ./reviews//model-a.md "),
        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    ),
    "same evidence in another case": (
        _set(("reviewers", "model_b", "evidence_ref"), "Reviews/Model-A.md"),
        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    ),
    "same evidence through ..": (
        _set(("reviewers", "model_b", "evidence_ref"), "x/../reviews/model-a.md"),
        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    ),
    "plan_package_hash forged": (
        _set(("plan_package_hash",), "sha256:" + "2" * 64),
        "C3_PLAN_PACKAGE_HASH_MISMATCH",
    ),
    "plan_hash uppercase hex": (
        lambda r: r.update(plan_hash=r["plan_hash"].upper().replace("SHA256", "sha256")),
        "C3_PLAN_HASH_STALE",
    ),
    "source_sha not hex": (_set(("source_sha",), "XYZ"), "C3_SOURCE_SHA_INVALID"),
    "source_sha unknown": (_set(("source_sha",), "f" * 40), "C3_SOURCE_SHA_UNKNOWN"),
    "derived_loopspec_hash malformed": (
        _set(("derived_loopspec_hash",), "sha256:XYZ"),
        "C3_LOOPSPEC_HASH_INVALID",
    ),
}


@pytest.mark.parametrize("mutation,code", MUTATIONS.values(), ids=MUTATIONS.keys())
def test_forged_record_is_rejected_with_its_reason(
    approved: tuple[Path, str], mutation: Mutation, code: str
) -> None:
    repo, _ = approved
    record = load_record(repo)
    mutation(record)
    save_record(repo, record)
    verdict, found = codes(repo)
    assert verdict == "REJECTED"
    assert code in found


@pytest.mark.parametrize("kind", ["", None, [], 123, "c3-double-prime", "C3-PRIME"])
def test_unknown_approval_kind_is_rejected_never_legacy(
    approved: tuple[Path, str], kind: object
) -> None:
    repo, _ = approved
    record = load_record(repo)
    record["approval_kind"] = kind
    save_record(repo, record)
    assert codes(repo) == ("REJECTED", ("C3_APPROVAL_KIND_UNKNOWN",))


def test_human_escalated_record_maps_to_human_and_blocked_to_rejected(git_repo: Path) -> None:
    make_task(git_repo)
    approve_task(git_repo, decision="HUMAN_ESCALATED", b="reject")
    assert codes(git_repo) == ("HUMAN_ESCALATED", ("C3_DECISION_NOT_APPROVED",))
    record = load_record(git_repo)
    record["decision"] = "BLOCKED"
    save_record(git_repo, record)
    assert codes(git_repo) == ("REJECTED", ("C3_DECISION_NOT_APPROVED",))


def test_tampered_human_escalated_record_is_rejected_not_escalated(git_repo: Path) -> None:
    make_task(git_repo)
    approve_task(git_repo, decision="HUMAN_ESCALATED", b="reject")
    (task_dir(git_repo) / "todo.md").write_text("changed\n")
    verdict, found = codes(git_repo)
    assert verdict == "REJECTED"
    assert "C3_ARTIFACT_STALE" in found


@pytest.mark.parametrize(
    "name", ["pbi-input.md", "todo.md", "test-cases.md", "review-external.md", "review-self.md"]
)
def test_appending_to_any_artifact_makes_the_record_stale_naming_it(
    approved: tuple[Path, str], name: str
) -> None:
    repo, _ = approved
    path = task_dir(repo) / name
    path.write_bytes(path.read_bytes() + b"x")
    result = verify_task(repo, TASK)
    assert result.verdict == "REJECTED"
    stale = [r for r in result.reasons if r.code == "C3_ARTIFACT_STALE"]
    assert stale and name in stale[0].message


def test_editing_plan_md_is_stale_through_markers_and_plan_hash(approved: tuple[Path, str]) -> None:
    repo, _ = approved
    (task_dir(repo) / "plan.md").write_text("# Plan\n\n## Goal\nSomething else.\n")
    _, found = codes(repo)
    assert {"EVIDENCE_C1_STALE", "EVIDENCE_C2_STALE", "C3_PLAN_HASH_STALE"} <= set(found)


MARKER_LINES = {
    "CRLF": "C1-VERDICT: PASS plan={h}\r",
    "trailing space": "C1-VERDICT: PASS plan={h} ",
    "full-width colon": "C1-VERDICT\uff1a PASS plan={h}",
    "uppercase hex": "C1-VERDICT: PASS plan={H}",
    "lowercase prefix": "c1-verdict: PASS plan={h}",
    "indented": "  C1-VERDICT: PASS plan={h}",
    "short hash": "C1-VERDICT: PASS plan=sha256:deadbeef",
    "extra token": "C1-VERDICT: PASS plan={h} extra",
}


@pytest.mark.parametrize("line", MARKER_LINES.values(), ids=MARKER_LINES.keys())
def test_malformed_c1_marker_rejects_the_record(approved: tuple[Path, str], line: str) -> None:
    repo, _ = approved
    plan_hash = sha((task_dir(repo) / "plan.md").read_bytes())
    upper = "sha256:" + plan_hash.removeprefix("sha256:").upper()
    text = "# Self review\n\n" + line.format(h=plan_hash, H=upper) + "\n"
    (task_dir(repo) / "review-self.md").write_bytes(text.encode())
    _, found = codes(repo)
    assert any(code.startswith("EVIDENCE_C1_") for code in found), found


def test_crlf_marker_message_says_so(approved: tuple[Path, str]) -> None:
    repo, _ = approved
    plan_hash = sha((task_dir(repo) / "plan.md").read_bytes())
    (task_dir(repo) / "review-self.md").write_bytes(
        f"r\r\nC1-VERDICT: PASS plan={plan_hash}\r\n".encode()
    )
    result = verify_task(repo, TASK)
    messages = " ".join(r.message for r in result.reasons)
    assert "carriage return" in messages


@pytest.mark.parametrize(
    "body,code",
    [
        ("no marker at all\n\u5224\u5b9a: PASS\n", "EVIDENCE_C1_MARKER_MISSING"),
        ("C1-VERDICT: PASS plan={h}\nC1-VERDICT: PASS plan={h}\n", "EVIDENCE_C1_MARKER_DUPLICATE"),
        ("see: C1-VERDICT: PASS plan={h}\n", "EVIDENCE_C1_MARKER_MISSING"),
        ("C1-VERDICT: FAIL plan={h}\n\u5224\u5b9a: **PASS**\n", "EVIDENCE_C1_NOT_ACCEPTED"),
        ("C1-VERDICT: PASS plan=sha256:" + "a" * 64 + "\n", "EVIDENCE_C1_STALE"),
    ],
    ids=["zero", "twice", "inside a longer line", "FAIL plus prose PASS", "stale"],
)
def test_marker_failures(approved: tuple[Path, str], body: str, code: str) -> None:
    repo, _ = approved
    plan_hash = sha((task_dir(repo) / "plan.md").read_bytes())
    (task_dir(repo) / "review-self.md").write_text("# r\n" + body.format(h=plan_hash))
    assert code in codes(repo)[1]


def test_artifact_replaced_by_symlink_inside_the_task_is_rejected(
    approved: tuple[Path, str],
) -> None:
    repo, _ = approved
    tdir = task_dir(repo)
    target = tdir / "todo-copy.md"
    target.write_bytes((tdir / "todo.md").read_bytes())
    (tdir / "todo.md").unlink()
    os.symlink("todo-copy.md", tdir / "todo.md")
    assert "ARTIFACT_SYMLINK" in codes(repo)[1]


def test_fifo_in_place_of_an_artifact_does_not_hang(approved: tuple[Path, str]) -> None:
    repo, _ = approved
    tdir = task_dir(repo)
    (tdir / "test-cases.md").unlink()
    os.mkfifo(tdir / "test-cases.md")
    assert "ARTIFACT_NOT_REGULAR" in codes(repo)[1]


def test_directory_empty_and_huge_artifacts(approved: tuple[Path, str]) -> None:
    repo, _ = approved
    tdir = task_dir(repo)
    (tdir / "todo.md").unlink()
    (tdir / "todo.md").mkdir()
    (tdir / "pbi-input.md").write_bytes(b"")
    (tdir / "test-cases.md").write_bytes(b"x" * (1024 * 1024 + 1))
    found = set(codes(repo)[1])
    assert {"ARTIFACT_NOT_REGULAR", "ARTIFACT_EMPTY", "ARTIFACT_TOO_LARGE"} <= found


def test_record_symlink_and_approvals_symlink_are_rejected(
    approved: tuple[Path, str], tmp_path: Path
) -> None:
    repo, _ = approved
    real = tmp_path / "elsewhere.json"
    real.write_bytes(record_path(repo).read_bytes())
    record_path(repo).unlink()
    os.symlink(real, record_path(repo))
    assert codes(repo) == ("REJECTED", ("C3_RECORD_SYMLINK",))
    record_path(repo).unlink()
    approvals = task_dir(repo) / "approvals"
    approvals.rmdir()
    other = tmp_path / "approvals"
    other.mkdir()
    (other / "c3.json").write_bytes(real.read_bytes())
    os.symlink(other, approvals)
    assert codes(repo) == ("REJECTED", ("C3_RECORD_SYMLINK",))


def test_abbreviated_source_sha_is_resolved_and_compared_in_full(
    approved: tuple[Path, str],
) -> None:
    repo, head = approved
    record = load_record(repo)
    short = head[:10]
    record["source_sha"] = short
    for model in ("model_a", "model_b"):
        record["reviewers"][model]["source_sha"] = short
    save_record(repo, record)
    assert codes(repo, head) == ("ACCEPTED", ())
    other = commit_all(repo, "another commit")
    verdict, found = codes(repo, other)
    assert verdict == "REJECTED" and "C3_SOURCE_SHA_MISMATCH" in found


def _import_many_commits(repo: Path, count: int) -> None:
    """Create ``count`` deterministic commits fast (fixed dates => fixed ids)."""
    lines = []
    for i in range(count):
        msg = f"bulk {i}\n".encode()
        lines.append(b"commit refs/heads/bulk\n")
        lines.append(b"committer Bulk <bulk@example.invalid> 1700000000 +0000\n")
        lines.append(b"data %d\n" % len(msg) + msg)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(lines), check=True)


def test_ambiguous_source_sha_is_rejected(approved: tuple[Path, str]) -> None:
    repo, _ = approved
    _import_many_commits(repo, 40000)
    commits = git(repo, "rev-list", "bulk").split()
    by_prefix: dict[str, str] = {}
    prefix = None
    for sha_full in commits:
        key = sha_full[:7]
        if key in by_prefix:
            prefix = key
            break
        by_prefix[key] = sha_full
    assert prefix is not None, "the deterministic bulk history contains a 7-hex collision"
    record = load_record(repo)
    record["source_sha"] = prefix
    for model in ("model_a", "model_b"):
        record["reviewers"][model]["source_sha"] = prefix
    save_record(repo, record)
    verdict, found = codes(repo)
    assert verdict == "REJECTED"
    assert "C3_SOURCE_SHA_AMBIGUOUS" in found


def test_record_bound_to_another_commit_is_rejected_at_head(approved: tuple[Path, str]) -> None:
    repo, _ = approved
    new_head = commit_all(repo, "later work")
    verdict, found = codes(repo, new_head)
    assert verdict == "REJECTED" and "C3_SOURCE_SHA_MISMATCH" in found


def test_not_a_git_repository_rejects(tmp_path: Path) -> None:
    repo = tmp_path / "plain"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    make_task_dir = task_dir(repo)
    make_task_dir.mkdir(parents=True)
    # Copy a valid package and record from a real repo, then remove .git.
    import shutil

    shutil.rmtree(repo / ".git")
    (make_task_dir / "approvals").mkdir()
    (make_task_dir / "approvals" / "c3.json").write_text(
        '{"approval_kind": "c3-prime", "source_sha": "abcdef1"}'
    )
    verdict, found = codes(repo)
    assert verdict == "REJECTED"
    # The trust root is read from git before anything else: outside a repository
    # nothing can be verified, and the reason says so.
    assert found == ("NOT_A_GIT_REPOSITORY",)


def test_legacy_records(git_repo: Path) -> None:
    make_task(git_repo)
    plan_hash = sha((task_dir(git_repo) / "plan.md").read_bytes())
    legacy = {
        "task_id": TASK,
        "phase": "C-3",
        "c3_status": "APPROVED",
        "approved_by": "human",
        "approved_at": "2026-12-01T09:00:00Z",
        "plan_hash": plan_hash,
        "_note": {"any": "value"},
    }
    (task_dir(git_repo) / "approvals").mkdir()
    save_record(git_repo, legacy)
    result = verify_task(git_repo, TASK)
    assert (result.verdict, result.facts["kind"]) == ("ACCEPTED", "legacy")
    save_record(git_repo, legacy | {"c3_status": "CONDITIONAL", "conditions": "add tests"})
    assert codes(git_repo)[0] == "HUMAN_ESCALATED"
    save_record(git_repo, legacy | {"c3_status": "REJECTED", "rejection_reason": "no"})
    assert codes(git_repo) == ("REJECTED", ("LEGACY_REJECTED",))
    save_record(git_repo, legacy | {"plan_hash": "sha256:" + "0" * 64})
    assert codes(git_repo) == ("REJECTED", ("LEGACY_PLAN_HASH_STALE",))
    stale = verify_task(git_repo, TASK).reasons[0]
    # the plan changed after approval: a new review and approval, never an edited record
    assert "changed after it was approved" in stale.hint
    assert "new human approval" in stale.hint and "never edit" in stale.hint
    assert "fix approvals/c3.json" not in stale.hint
    save_record(git_repo, legacy | {"evil": 1})
    assert "LEGACY_UNKNOWN_KEYS" in codes(git_repo)[1]
    save_record(git_repo, legacy | {"task_id": "TASK-0009"})
    assert "LEGACY_TASK_ID_MISMATCH" in codes(git_repo)[1]






def _record_path(repo: Path) -> Path:
    return task_dir(repo) / "approvals" / "c3.json"


def _forge(repo: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = _record_path(repo)
    record = json.loads(path.read_bytes())
    change(record)
    path.write_text(json.dumps(record, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def _set_ref(model: str, ref: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["reviewers"][model]["evidence_ref"] = ref

    return change


SAME_EVIDENCE = {
    "zero-width space": "reviews/model-a.md\u200b",
    "empty fragment": "reviews/model-a.md#",
    "full-width letter": "reviews/model-\uff41.md",
    "soft hyphen": "reviews/model\u00ad-a.md",
    "windows separator": "reviews\\model-a.md",
    "Hangul filler": "reviews/model-a.md\u3164",
}


@pytest.mark.parametrize("ref", SAME_EVIDENCE.values(), ids=SAME_EVIDENCE.keys())
def test_one_piece_of_evidence_disguised_as_two_is_rejected(
    approved: tuple[Path, str], ref: str
) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_b", ref))
    result = verify_task(repo, TASK, expected_sha=head)
    assert result.verdict == "REJECTED"
    assert result.codes == ("C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",)


def test_decomposed_and_composed_accents_are_one_file(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_a", "reviews/\u00e9.md"))
    _forge(repo, _set_ref("model_b", "reviews/e\u0301.md"))
    assert verify_task(repo, TASK, expected_sha=head).codes == (
        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    )


def test_same_anchor_in_another_case_is_not_independent(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_a", "pr/12#Review"))
    _forge(repo, _set_ref("model_b", "pr/12#review"))
    assert verify_task(repo, TASK, expected_sha=head).codes == (
        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    )


def test_distinct_anchors_stay_independent(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_a", "pr/12#comment-1"))
    _forge(repo, _set_ref("model_b", "pr/12#comment-2"))
    assert verify_task(repo, TASK, expected_sha=head).verdict == "ACCEPTED"


@pytest.mark.parametrize("key", ["policy_ref", "issued_by", "c1_evidence_ref", "c2_evidence_ref"])
@pytest.mark.parametrize("value", ["\u200b", "\ufeff\u2060", "\x00"])
def test_invisible_only_fields_are_empty(approved: tuple[Path, str], key: str, value: str) -> None:
    repo, head = approved
    _forge(repo, lambda r: r.__setitem__(key, value))
    result = verify_task(repo, TASK, expected_sha=head)
    assert result.verdict == "REJECTED"
    assert "C3_FIELD_EMPTY" in result.codes


def test_invisible_only_evidence_ref_is_empty(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_b", "\u200b\u200c"))
    result = verify_task(repo, TASK, expected_sha=head)
    assert result.codes == ("C3_REVIEWER_SNAPSHOT_EMPTY",)


def _set_source(sha: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["source_sha"] = sha
        for model in ("model_a", "model_b"):
            record["reviewers"][model]["source_sha"] = sha

    return change


def test_annotated_tag_id_as_source_sha_is_rejected(approved: tuple[Path, str]) -> None:
    # The tag peels to HEAD, but a tag object id is not the commit the
    # reviews bound; an abbreviated tag id was already refused.
    repo, head = approved
    git(repo, "tag", "-a", "-m", "release", "v1")
    tag_id = git(repo, "rev-parse", "v1")
    assert tag_id != head
    for tag_sha in (tag_id, tag_id[:12]):
        _forge(repo, _set_source(tag_sha))
        result = verify_task(repo, TASK, expected_sha=head)
        assert result.verdict == "REJECTED", sha
        assert result.codes == ("C3_SOURCE_SHA_UNKNOWN",)


def test_tree_id_as_source_sha_is_rejected(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_source(git(repo, "rev-parse", "HEAD^{tree}")))
    assert verify_task(repo, TASK, expected_sha=head).codes == ("C3_SOURCE_SHA_UNKNOWN",)


def test_cli_verify_rejects_a_tag_id(approved: tuple[Path, str], run_cli: Any) -> None:
    repo, head = approved
    git(repo, "tag", "-a", "-m", "release", "v1")
    _forge(repo, _set_source(git(repo, "rev-parse", "v1")))
    assert run_cli(repo, "c3", "verify", TASK).code == 1
    assert run_cli(repo, "c3", "verify", TASK, "--expected-sha", head).code == 1


def test_visible_helpers() -> None:
    from plangate.approval.acceptor import is_blank, normalise_evidence_ref

    assert is_blank("\u200b \u3000")
    assert not is_blank("a\u200b")
    assert normalise_evidence_ref(" A.md# ") == "a.md"
    assert normalise_evidence_ref("x/../a.md#S") == "a.md#s"
    assert normalise_evidence_ref("a.md#s1") != normalise_evidence_ref("a.md#s2")


def _legacy(repo: Path, approved_by: str) -> None:
    from support.taskkit import sha

    record = {
        "task_id": TASK,
        "phase": "C-3",
        "c3_status": "APPROVED",
        "approved_by": approved_by,
        "approved_at": "2026-12-01T09:00:00Z",
        "plan_hash": sha((task_dir(repo) / "plan.md").read_bytes()),
    }
    _record_path(repo).write_text(json.dumps(record, ensure_ascii=False))


def test_legacy_record_with_an_invisible_approver_is_rejected(
    approved: tuple[Path, str],
) -> None:
    repo, head = approved
    _legacy(repo, "alice")
    assert verify_task(repo, TASK, expected_sha=head).verdict == "ACCEPTED"
    _legacy(repo, "\u200b\u2060")
    result = verify_task(repo, TASK, expected_sha=head)
    assert result.verdict == "REJECTED"
    assert result.codes == ("LEGACY_FIELD_INVALID",)
