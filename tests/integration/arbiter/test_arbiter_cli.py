"""``plangate surfaces``, ``loopspec`` and ``arbiter`` on real git repositories.

Adversarial review: arbiter inputs that used to end in AUTO_APPROVED (fail open).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plangate.plan.loopspec import derive_loopspec, loopspec_hash
from plangate.surfaces import REPO_SURFACES_RELPATH, bundled_template_bytes
from support.repo import commit_all, git
from support.taskkit import make_task, reviewers_file, task_dir

SURFACES = b"""version = 1

[[surface]]
pattern = "**/CLAUDE.md"
class = "rules"
reason = "agent rules"

[[surface]]
pattern = "**/approvals/**"
class = "approval"
reason = "approval records"

[[surface]]
pattern = ".plangate/**"
class = "settings"
reason = "plangate configuration"
"""
TS = "2026-12-01T10:00:00Z"


def write_surfaces(repo: Path, data: bytes = SURFACES) -> None:
    path = repo / REPO_SURFACES_RELPATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# --- plangate surfaces -----------------------------------------------------------


def test_surfaces_bundled_template_only_escalates(git_repo: Path, run_cli) -> None:
    res = run_cli(git_repo, "surfaces", "--json")
    assert res.code == 3
    doc = json.loads(res.out)
    assert doc["verdict"] == "HUMAN_ESCALATED"
    assert doc["surfaces"]["provenance"] == "bundled_template"
    assert doc["reasons"][0]["code"] == "HO_BOUNDARY_UNDEFINED"


def test_surfaces_downstream_and_explain(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo)
    res = run_cli(git_repo, "surfaces", "--json", "--explain", "docs/CLAUDE.md", "src/a.py", "./x")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["surfaces"]["provenance"] == "downstream"
    assert doc["surfaces"]["pattern_count"] == 3
    explained = {e["path"]: e for e in doc["explain"]}
    assert explained["docs/CLAUDE.md"]["entries"][0]["class"] == "rules"
    assert explained["src/a.py"]["protected"] is False
    assert explained["./x"]["canonical"] is False
    text = run_cli(git_repo, "surfaces", "--explain", "docs/CLAUDE.md")
    assert "protected by **/CLAUDE.md" in text.out


def test_surfaces_explicit_missing_never_falls_back(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo)
    res = run_cli(git_repo, "surfaces", "--surfaces", "nope.toml", "--json")
    assert res.code == 3
    doc = json.loads(res.out)
    assert doc["surfaces"]["provenance"] == "explicit"
    assert doc["reasons"][0]["code"] == "SURFACES_UNREADABLE"


def test_surfaces_copied_template_escalates(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo, bundled_template_bytes())
    res = run_cli(git_repo, "surfaces", "--json")
    assert res.code == 3
    assert json.loads(res.out)["surfaces"]["provenance"] == "bundled_template"


def test_surfaces_template_flag_prints_the_template(git_repo: Path, run_cli) -> None:
    res = run_cli(git_repo, "surfaces", "--template")
    assert res.code == 0
    assert res.out.encode() == bundled_template_bytes()


# --- plangate loopspec -------------------------------------------------------------


def test_loopspec_prints_normalised_yaml_and_hash(git_repo: Path, run_cli) -> None:
    make_task(git_repo)
    res = run_cli(git_repo, "loopspec", "TASK-0001", "--maker", "impl", "--checker", "qa")
    assert res.code == 0, res.err
    plan = (task_dir(git_repo) / "plan.md").read_bytes()
    expected = loopspec_hash(derive_loopspec(plan, "TASK-0001", "impl", "qa"))
    assert f"derived_loopspec_hash: {expected}" in res.err
    assert res.out.startswith("loop:\n")
    as_json = run_cli(
        git_repo, "loopspec", "TASK-0001", "--maker", "impl", "--checker", "qa", "--format", "json"
    )
    assert json.loads(as_json.out)["loop"]["scope"]["allowed_paths"] == [
        "src/app.py",
        "tests/test_app.py",
    ]


def test_loopspec_maker_equals_checker_fails(git_repo: Path, run_cli) -> None:
    make_task(git_repo)
    res = run_cli(git_repo, "loopspec", "TASK-0001", "--maker", "x", "--checker", "x")
    assert res.code == 1
    assert "LOOPSPEC_ACTORS_IDENTICAL" in res.err


def test_loopspec_incomplete_package_fails(git_repo: Path, run_cli) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "todo.md").write_bytes(b"")
    res = run_cli(git_repo, "loopspec", "TASK-0001", "--maker", "a", "--checker", "b")
    assert res.code == 1
    assert "LOOPSPEC_PACKAGE_INCOMPLETE" in res.err


def test_loopspec_check_against_the_record(git_repo: Path, run_cli, tmp_path: Path) -> None:
    make_task(git_repo)
    head = git(git_repo, "rev-parse", "HEAD")
    missing = run_cli(
        git_repo, "loopspec", "TASK-0001", "--maker", "impl", "--checker", "qa", "--check", "--json"
    )
    assert missing.code == 1
    assert json.loads(missing.out)["reasons"][0]["code"] == "LOOPSPEC_RECORD_MISSING"
    rev = reviewers_file(tmp_path / "rev.json")
    issued = run_cli(
        git_repo,
        "c3",
        "issue",
        "TASK-0001",
        "--target-sha",
        head,
        "--reviewers",
        str(rev),
        "--decision",
        "AUTO_APPROVED",
        "--policy-ref",
        "plangate-arbiter@v1",
        "--issued-at",
        TS,
        "--loopspec-actors",
        "impl,qa",
    )
    assert issued.code == 0, issued.out + issued.err
    ok = run_cli(git_repo, "loopspec", "TASK-0001", "--maker", "impl", "--checker", "qa", "--check")
    assert ok.code == 0, ok.out
    other = run_cli(
        git_repo,
        "loopspec",
        "TASK-0001",
        "--maker",
        "impl",
        "--checker",
        "qa2",
        "--check",
        "--json",
    )
    assert other.code == 1
    assert json.loads(other.out)["reasons"][0]["code"] == "LOOPSPEC_HASH_MISMATCH"


def test_loopspec_check_without_recorded_hash(git_repo: Path, run_cli, tmp_path: Path) -> None:
    make_task(git_repo)
    head = git(git_repo, "rev-parse", "HEAD")
    rev = reviewers_file(tmp_path / "rev.json")
    issued = run_cli(
        git_repo,
        "c3",
        "issue",
        "TASK-0001",
        "--target-sha",
        head,
        "--reviewers",
        str(rev),
        "--decision",
        "AUTO_APPROVED",
        "--policy-ref",
        "plangate-arbiter@v1",
        "--issued-at",
        TS,
    )
    assert issued.code == 0, issued.out + issued.err
    res = run_cli(
        git_repo, "loopspec", "TASK-0001", "--maker", "a", "--checker", "b", "--check", "--json"
    )
    assert res.code == 1
    assert json.loads(res.out)["reasons"][0]["code"] == "LOOPSPEC_HASH_NOT_RECORDED"


# --- plangate arbiter --input ---------------------------------------------------------


def clean_input() -> dict:
    return {
        "changed_files": ["src/app.py"],
        "allowed_paths": ["src/**"],
        "lite": {
            "size_ok": True,
            "no_new_design": True,
            "follows_pattern": True,
            "reversible": True,
        },
        "class": "no-merge",
        "verdicts": {"model_a": "approve", "model_b": "approve", "reject_category": None},
        "target_sha": "a" * 40,
        "gates": {"c1": "PASS", "breakdown": "pass"},
    }


def arbiter_input(run_cli, repo: Path, doc: dict | bytes, *extra: str):
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return run_cli(repo, "arbiter", "--input", "-", "--timestamp", TS, "--json", *extra, stdin=data)


def test_arbiter_input_auto_approved_and_ledgered(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo)
    res = arbiter_input(run_cli, git_repo, clean_input())
    assert res.code == 0, res.err
    record = json.loads(res.out)
    assert record["decision"] == "AUTO_APPROVED"
    assert record["timestamp"] == TS
    assert record["surfaces"]["provenance"] == "downstream"
    from plangate.ledger import open_ledger

    with open_ledger(git_repo, {}) as ledger:
        entries = ledger.entries(kind="arbiter_decision")
    assert len(entries) == 1
    assert entries[0].payload["decision"] == "AUTO_APPROVED"


def test_arbiter_input_file_and_human_output(git_repo: Path, run_cli, tmp_path: Path) -> None:
    write_surfaces(git_repo)
    path = tmp_path / "in.json"
    path.write_text(json.dumps(clean_input()))
    res = run_cli(git_repo, "arbiter", "--input", str(path), "--timestamp", TS, "--no-ledger")
    assert res.code == 0
    assert res.out.startswith("arbiter: AUTO_APPROVED (priority 6: VERDICTS_APPROVED)")
    assert not (git_repo / ".plangate" / "ledger.sqlite3").exists()


def test_arbiter_input_same_input_is_byte_identical(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo)
    a = arbiter_input(run_cli, git_repo, clean_input(), "--no-ledger")
    b = arbiter_input(run_cli, git_repo, clean_input(), "--no-ledger")
    assert a.out == b.out


def test_arbiter_input_protected_escalates(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo)
    doc = clean_input()
    doc["changed_files"] = ["CLAUDE.md"]
    doc["allowed_paths"] = ["CLAUDE.md"]
    res = arbiter_input(run_cli, git_repo, doc)
    assert res.code == 3
    assert json.loads(res.out)["decided_by"]["code"] == "TOUCHES_PROTECTED_SURFACE"


def test_arbiter_input_blocked_exits_1(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo)
    doc = clean_input()
    doc["verdicts"]["model_a"] = "reject"
    res = arbiter_input(run_cli, git_repo, doc)
    assert res.code == 1
    assert json.loads(res.out)["decision"] == "BLOCKED"


def test_arbiter_input_without_definition_escalates(git_repo: Path, run_cli) -> None:
    res = arbiter_input(run_cli, git_repo, clean_input())
    assert res.code == 3
    assert json.loads(res.out)["decided_by"]["code"] == "HO_BOUNDARY_UNDEFINED"


def test_arbiter_input_explicit_missing_surfaces_escalates(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo)
    res = arbiter_input(run_cli, git_repo, clean_input(), "--surfaces", "missing.toml")
    assert res.code == 3
    record = json.loads(res.out)
    assert record["decided_by"]["code"] == "SURFACES_UNREADABLE"
    assert record["surfaces"]["provenance"] == "explicit"


@pytest.mark.parametrize("data", [b"{", b"[]", json.dumps({"changed_files": []}).encode()])
def test_arbiter_malformed_input_exits_1(git_repo: Path, run_cli, data: bytes) -> None:
    write_surfaces(git_repo)
    res = arbiter_input(run_cli, git_repo, data)
    assert res.code == 1
    assert res.out == ""
    assert "plangate: " in res.err


def test_arbiter_unsafe_path_exits_1(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo)
    doc = clean_input()
    doc["changed_files"] = ["./CLAUDE.md"]
    res = arbiter_input(run_cli, git_repo, doc)
    assert res.code == 1
    assert "ARBITER_INPUT_PATH_UNSAFE" in res.err


def test_arbiter_missing_input_file_exits_1(git_repo: Path, run_cli) -> None:
    res = run_cli(git_repo, "arbiter", "--input", "nope.json")
    assert res.code == 1
    assert "ARBITER_INPUT_UNREADABLE" in res.err


@pytest.mark.parametrize("argv", [["--timestamp", "2026-01-01 10:00"], []])
def test_arbiter_usage_errors_exit_2(git_repo: Path, run_cli, argv: list[str]) -> None:
    extra = ["--input", "-"] if argv else []
    res = run_cli(git_repo, "arbiter", *extra, *argv, stdin=json.dumps(clean_input()).encode())
    assert res.code == 2


def test_arbiter_ledger_failure_warns_and_keeps_the_decision(git_repo: Path, run_cli) -> None:
    write_surfaces(git_repo)
    (git_repo / ".plangate" / "ledger.sqlite3").mkdir(parents=True)
    doc = clean_input()
    doc["class"] = "merge"
    res = arbiter_input(run_cli, git_repo, doc)
    assert res.code == 3
    assert "ARBITER_LEDGER_UNAVAILABLE" in res.err
    assert json.loads(res.out)["decision"] == "HUMAN_ESCALATED"
    ok = arbiter_input(run_cli, git_repo, clean_input())
    assert ok.code == 0
    assert "ARBITER_LEDGER_UNAVAILABLE" in ok.err


# --- plangate arbiter TASK -----------------------------------------------------------


def setup_task_repo(repo: Path, surfaces: bytes | None = SURFACES) -> str:
    """Commit surfaces + a valid package; return the base commit."""
    if surfaces is not None:
        write_surfaces(repo, surfaces)
    make_task(repo)
    return git(repo, "rev-parse", "HEAD")


def implement(repo: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return commit_all(repo, "implement")


def arbiter_task(run_cli, repo: Path, base: str, target: str, rev: Path, *extra: str):
    return run_cli(
        repo,
        "arbiter",
        "TASK-0001",
        "--target-sha",
        target,
        "--base",
        base,
        "--reviewers",
        str(rev),
        "--loopspec-actors",
        "impl,qa",
        "--class",
        "no-merge",
        "--lite",
        "all",
        "--breakdown",
        "pass",
        "--timestamp",
        TS,
        "--json",
        *extra,
    )


def test_task_form_clean_change_auto_approves_and_issues(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    base = setup_task_repo(git_repo)
    target = implement(git_repo, {"src/app.py": "def greet():\n    return 'hi'\n"})
    rev = reviewers_file(tmp_path / "rev.json")
    res = arbiter_task(run_cli, git_repo, base, target, rev, "--issue")
    assert res.code == 0, res.out + res.err
    record = json.loads(res.out)
    assert record["decision"] == "AUTO_APPROVED"
    assert record["changed_files"] == ["src/app.py"]
    assert record["surfaces"]["provenance"] == "downstream"
    assert record["surfaces"]["path"].startswith(".plangate/protected-surfaces.toml@")
    assert record["plan_package"]["source_sha"] == target
    assert record["issue"]["verdict"] == "ACCEPTED"
    c3 = json.loads((task_dir(git_repo) / "approvals" / "c3.json").read_text())
    assert c3["decision"] == "AUTO_APPROVED"
    assert c3["policy_ref"] == "plangate-arbiter@v1"
    assert c3["derived_loopspec_hash"] == record["derived_loopspec_hash"]
    verify = run_cli(git_repo, "c3", "verify", "TASK-0001", "--expected-sha", target)
    assert verify.code == 0, verify.out


def test_task_form_protected_change_escalates_and_records_it(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    base = setup_task_repo(git_repo)
    target = implement(git_repo, {"src/app.py": "x = 1\n", "CLAUDE.md": "be nice\n"})
    rev = reviewers_file(tmp_path / "rev.json")
    res = arbiter_task(run_cli, git_repo, base, target, rev, "--issue")
    assert res.code == 3, res.out + res.err
    record = json.loads(res.out)
    assert record["decided_by"]["code"] == "TOUCHES_PROTECTED_SURFACE"
    assert record["issue"]["verdict"] == "ACCEPTED"
    c3 = json.loads((task_dir(git_repo) / "approvals" / "c3.json").read_text())
    assert c3["decision"] == "HUMAN_ESCALATED"
    verify = run_cli(git_repo, "c3", "verify", "TASK-0001", "--expected-sha", target)
    assert verify.code == 3  # a human must decide


def test_task_form_out_of_scope_escalates(git_repo: Path, run_cli, tmp_path: Path) -> None:
    base = setup_task_repo(git_repo)
    target = implement(git_repo, {"lib/extra.py": "x = 1\n"})
    res = arbiter_task(run_cli, git_repo, base, target, reviewers_file(tmp_path / "r.json"))
    assert res.code == 3
    assert json.loads(res.out)["decided_by"]["code"] == "SCOPE_VIOLATION"


def test_task_form_judges_with_the_definition_committed_at_base(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    base = setup_task_repo(git_repo, surfaces=None)
    target = implement(git_repo, {"src/app.py": "x = 1\n"})
    write_surfaces(git_repo)  # present in the work tree, not at base
    res = arbiter_task(run_cli, git_repo, base, target, reviewers_file(tmp_path / "r.json"))
    assert res.code == 3
    record = json.loads(res.out)
    assert record["decided_by"]["code"] == "HO_BOUNDARY_UNDEFINED"
    assert record["surfaces"]["provenance"] == "bundled_template"


def test_task_form_change_cannot_weaken_its_own_definition(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    base = setup_task_repo(git_repo)
    weakened = b'version = 1\n[[surface]]\npattern = "nothing/**"\nclass = "hook"\nreason = "x"\n'
    write_surfaces(git_repo, weakened)
    target = implement(git_repo, {"CLAUDE.md": "x\n"})
    res = arbiter_task(run_cli, git_repo, base, target, reviewers_file(tmp_path / "r.json"))
    assert res.code == 3
    record = json.loads(res.out)
    assert record["decided_by"]["code"] == "TOUCHES_PROTECTED_SURFACE"
    assert {h["path"] for h in record["protected_hits"]} == {
        "CLAUDE.md",
        ".plangate/protected-surfaces.toml",
    }


def test_task_form_stale_evidence_escalates_at_16(git_repo: Path, run_cli, tmp_path: Path) -> None:
    base = setup_task_repo(git_repo)
    target = implement(git_repo, {"src/app.py": "x = 1\n"})
    plan = task_dir(git_repo) / "plan.md"
    plan.write_text(plan.read_text() + "\nOne more line.\n")  # markers are now stale
    res = arbiter_task(run_cli, git_repo, base, target, reviewers_file(tmp_path / "r.json"))
    assert res.code == 3
    record = json.loads(res.out)
    assert record["decided_by"]["code"] == "PLAN_PACKAGE_MISSING"
    assert record["plan_package_problems"]
    assert record["gates"]["c1"] != "PASS"
    assert "plan_package" not in record


def test_task_form_reviewer_reject_blocks(git_repo: Path, run_cli, tmp_path: Path) -> None:
    base = setup_task_repo(git_repo)
    target = implement(git_repo, {"src/app.py": "x = 1\n"})
    rev = reviewers_file(tmp_path / "r.json", a="reject")
    res = arbiter_task(run_cli, git_repo, base, target, rev)
    assert res.code == 1
    assert json.loads(res.out)["decided_by"]["code"] == "VERDICTS_REJECTED"


def test_task_form_base_must_be_an_ancestor(git_repo: Path, run_cli, tmp_path: Path) -> None:
    base = setup_task_repo(git_repo)
    target = implement(git_repo, {"src/app.py": "x = 1\n"})
    res = arbiter_task(run_cli, git_repo, target, base, reviewers_file(tmp_path / "r.json"))
    assert res.code == 1
    assert "ARBITER_BASE_NOT_ANCESTOR" in res.err


def test_task_form_missing_arguments_is_usage(git_repo: Path, run_cli) -> None:
    res = run_cli(git_repo, "arbiter", "TASK-0001", "--target-sha", "HEAD")
    assert res.code == 2
    assert "--base" in res.err


def test_task_form_input_replays_through_input_form(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    base = setup_task_repo(git_repo)
    target = implement(git_repo, {"src/app.py": "x = 1\n"})
    rev = reviewers_file(tmp_path / "r.json")
    built = arbiter_task(run_cli, git_repo, base, target, rev, "--print-input")
    assert built.code == 0
    doc = json.loads(built.out)
    assert doc["production"] is True
    assert doc["gates"] == {"c1": "PASS", "breakdown": "pass"}
    replay = arbiter_input(run_cli, git_repo, doc, "--no-ledger")
    assert replay.code == 0, replay.out + replay.err


def test_task_form_plan_edited_in_the_change_cannot_widen_its_scope(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    from support.taskkit import PLAN_MD, write_markers

    base = setup_task_repo(git_repo)
    plan = task_dir(git_repo) / "plan.md"
    plan.write_text(PLAN_MD.replace("- `tests/test_app.py`", "- `tests/test_app.py`\n- `lib/**`"))
    write_markers(git_repo)  # markers re-bound to the widened plan
    target = implement(git_repo, {"lib/extra.py": "x = 1\n"})
    res = arbiter_task(run_cli, git_repo, base, target, reviewers_file(tmp_path / "r.json"))
    assert res.code == 3
    record = json.loads(res.out)
    assert record["allowed_paths"] == ["src/app.py", "tests/test_app.py"]
    assert "lib/extra.py" in record["scope_violations"]
    assert "plan_package" not in record
    codes = [p["code"] for p in record["plan_package_problems"]]
    assert "ARBITER_PLAN_CHANGED_SINCE_BASE" in codes


def test_task_form_run_and_cost_cap(git_repo: Path, run_cli, tmp_path: Path) -> None:
    base = setup_task_repo(git_repo)
    target = implement(git_repo, {"src/app.py": "x = 1\n"})
    rev = reviewers_file(tmp_path / "r.json")
    over = arbiter_task(
        run_cli,
        git_repo,
        base,
        target,
        rev,
        "--run-id",
        "run-1",
        "--round-index",
        "4",
        "--cost-cap",
        "3",
    )
    assert over.code == 3
    record = json.loads(over.out)
    assert record["decided_by"]["code"] == "COST_CAP_EXCEEDED"
    assert record["run"]["task_id"] == "TASK-0001"
    partial = arbiter_task(run_cli, git_repo, base, target, rev, "--cost-cap", "3")
    assert partial.code == 2


APPROVALS_SURFACES = b"""version = 1

[[surface]]
pattern = "**/approvals/**"
class = "approval"
reason = "approval records"
"""
SHA = "a" * 40
P = "sha256:" + "1" * 64
PP = "sha256:" + "2" * 64


def _input(ref_a: str, ref_b: str) -> dict:
    def snap(ref: str) -> dict:
        return {"verdict": "approve", "plan_hash": P, "source_sha": SHA,
                "plan_package_hash": PP, "evidence_ref": ref}

    return {
        "changed_files": ["src/app.py"],
        "allowed_paths": ["src/**"],
        "lite": dict.fromkeys(("size_ok", "no_new_design", "follows_pattern", "reversible"), True),
        "class": "no-merge",
        "verdicts": {"model_a": "approve", "model_b": "approve"},
        "target_sha": SHA,
        "gates": {"c1": "PASS", "breakdown": "pass"},
        "production": True,
        "plan_package": {
            "plan_hash": P,
            "source_sha": SHA,
            "plan_package_hash": PP,
            "c1_evidence_ref": "review-self.md#PASS",
            "c2_evidence_ref": "review-external.md#approve",
            "reviewers": {"model_a": snap(ref_a), "model_b": snap(ref_b)},
        },
    }


def _decide(repo: Path, run_cli, doc: dict):
    path = repo.parent / "arbiter-input.json"
    path.write_text(json.dumps(doc))
    return run_cli(repo, "arbiter", "--input", str(path), "--timestamp", TS, "--json",
                   "--no-ledger")


@pytest.fixture
def repo(git_repo: Path) -> Path:
    target = git_repo / REPO_SURFACES_RELPATH
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(APPROVALS_SURFACES)
    return git_repo


def test_distinct_evidence_refs_auto_approve(repo, run_cli):
    result = _decide(repo, run_cli, _input("reviews/model-a.md", "reviews/model-b.md"))
    assert result.code == 0, result.out
    assert json.loads(result.out)["decision"] == "AUTO_APPROVED"


@pytest.mark.parametrize(
    "ref_b",
    ["./reviews/model-a.md", "reviews//model-a.md", " reviews/model-a.md ",
     "reviews/x/../model-a.md"],
)
def test_one_review_spelled_two_ways_is_not_independent(repo, run_cli, ref_b):
    """The acceptor normalises evidence refs; the arbiter compared raw strings and approved."""
    result = _decide(repo, run_cli, _input("reviews/model-a.md", ref_b))
    assert result.code == 1, result.out
    doc = json.loads(result.out)
    assert doc["decision"] == "BLOCKED"
    assert doc["decided_by"]["code"] == "PLAN_PACKAGE_INTEGRITY"
    assert "evidence_ref" in doc["reasons"][0]["message"]
