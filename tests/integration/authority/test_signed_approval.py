"""The signed journey: reviews and record signed with real keys, verified against the trust root.

Each forgery the acceptor must refuse is built the way an attacker would build it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import run_cli_in
from support.keys import Key, allowed_signers, make_key, sign_bytes, trust_toml
from support.repo import commit_all, git
from support.taskkit import make_task, sha, task_dir

T = "TASK-0001"


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Key]:
    d = tmp_path / "keys"
    return {
        "alice": make_key(d, "alice@example.com"),
        "bob": make_key(d, "bob@example.com", "ecdsa"),
        "carol": make_key(d, "carol@example.com"),
        "mallory": make_key(d, "mallory@example.com"),
    }


def _trust_root(repo: Path, team: dict[str, Key], require: bool = True) -> None:
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate/trust.toml").write_bytes(
        trust_toml(["alice@example.com", "bob@example.com"], ["carol@example.com"], require=require)
    )
    (repo / ".plangate/allowed_signers").write_bytes(
        allowed_signers(team["alice"], team["bob"], team["carol"])
    )
    commit_all(repo, "trust root")


def _evidence(repo: Path) -> tuple[str, str]:
    (repo / "reviews").mkdir(exist_ok=True)
    refs = []
    for name in ("model-a", "model-b"):
        data = f"# {name} review\n\nApprove.\n".encode()
        (repo / f"reviews/{name}.md").write_bytes(data)
        refs.append(f"reviews/{name}.md#{sha(data)}")
    return refs[0], refs[1]


def _reviewers(tmp_path: Path, ref_a: str, ref_b: str) -> Path:
    path = tmp_path / "reviewers.json"
    path.write_text(
        json.dumps(
            {
                "model_a": {"verdict": "approve", "evidence_ref": ref_a},
                "model_b": {"verdict": "approve", "evidence_ref": ref_b},
            }
        )
    )
    return path


def _review(repo: Path, key: Key, which: str) -> None:
    flag, verdict = ("--c1", "PASS") if which == "c1" else ("--c2", "approve")
    result = run_cli_in(repo, "review", "mark", T, flag, verdict, "--sign", str(key.path))
    assert result.code == 0, result.err


def _issue(repo: Path, tmp_path: Path, key: Key | None, refs: tuple[str, str]) -> None:
    args = [
        "c3",
        "issue",
        T,
        "--target-sha",
        git(repo, "rev-parse", "HEAD"),
        "--reviewers",
        str(_reviewers(tmp_path, *refs)),
        "--decision",
        "AUTO_APPROVED",
        "--policy-ref",
        "plangate-arbiter@v1",
        "--force",
    ]
    if key is not None:
        args += ["--sign", str(key.path)]
    result = run_cli_in(repo, *args)
    assert result.code == 0, result.out + result.err


def _verify(repo: Path) -> tuple[int, list[str], dict]:
    result = run_cli_in(repo, "c3", "verify", T, "--json")
    out = json.loads(result.out)
    return result.code, [r["code"] for r in out["reasons"]], out["facts"]


def _signed_task(
    repo: Path,
    tmp_path: Path,
    team: dict[str, Key],
    reviewers: tuple[str, str] = ("alice", "bob"),
    approver: str = "carol",
) -> tuple[str, str]:
    _trust_root(repo, team)
    make_task(repo, commit=False)
    refs = _evidence(repo)
    commit_all(repo, "plan package and evidence")
    _review(repo, team[reviewers[0]], "c1")
    _review(repo, team[reviewers[1]], "c2")
    commit_all(repo, "signed reviews")
    _issue(repo, tmp_path, team[approver], refs)
    return refs


def test_a_properly_signed_task_is_accepted(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(git_repo, tmp_path, team)
    code, codes, facts = _verify(git_repo)
    assert (code, codes) == (0, [])
    assert facts["authority"]["approved_by"] == "carol@example.com"
    assert facts["authority"]["reviewed_by"] == {"c1": "alice@example.com", "c2": "bob@example.com"}
    # The signature is checkable outside PlanGate with ssh-keygen itself.
    tdir = task_dir(git_repo)
    import subprocess

    proc = subprocess.run(
        [
            "ssh-keygen",
            "-Y",
            "verify",
            "-f",
            str(git_repo / ".plangate/allowed_signers"),
            "-I",
            "carol@example.com",
            "-n",
            "plangate-c3",
            "-s",
            str(tdir / "approvals/c3.json.sig"),
        ],
        input=(tdir / "approvals/c3.json").read_bytes(),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0


def test_without_a_trust_root_approvals_are_unauthenticated(git_repo: Path) -> None:
    from support.taskkit import approve_task

    make_task(git_repo)
    approve_task(git_repo)
    code, _codes, facts = _verify(git_repo)
    assert code == 0 and facts["authority"] == "unauthenticated"


def test_a_root_that_does_not_require_signatures_changes_nothing(
    git_repo: Path, team: dict[str, Key]
) -> None:
    from support.taskkit import approve_task

    _trust_root(git_repo, team, require=False)
    make_task(git_repo)
    approve_task(git_repo)
    assert _verify(git_repo)[0] == 0


def test_an_unsigned_record_is_rejected(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(git_repo, tmp_path, team)
    (task_dir(git_repo) / "approvals/c3.json.sig").unlink()
    code, codes, _ = _verify(git_repo)
    assert code == 1 and codes == ["C3_SIGNATURE_MISSING"]


@pytest.mark.parametrize("where", ["deleted", "a directory"])
def test_the_trust_branch_counts_when_the_working_tree_has_no_trust_file(
    git_repo: Path, tmp_path: Path, team: dict[str, Key], where: str
) -> None:
    # Without a trust.toml in the working tree, verify answers "no trust root" from one
    # git lookup of the trust files on the trust branch: files there must still count.
    _signed_task(git_repo, tmp_path, team)
    (task_dir(git_repo) / "approvals/c3.json.sig").unlink()
    (git_repo / ".plangate/trust.toml").unlink()
    if where == "a directory":
        (git_repo / ".plangate/trust.toml").mkdir()
    # Whatever the working tree holds in its place, the trust branch's root is in force.
    code, codes, _ = _verify(git_repo)
    assert code == 1 and codes == ["C3_SIGNATURE_MISSING"]


def test_an_unreadable_trust_branch_is_a_refusal_not_an_unsigned_accept(
    git_repo: Path, team: dict[str, Key]
) -> None:
    from support.taskkit import approve_task

    _trust_root(git_repo, team)
    make_task(git_repo)
    approve_task(git_repo)  # unsigned: the committed trust root requires signatures
    code, codes, _ = _verify(git_repo)
    assert code == 1 and "C3_SIGNATURE_MISSING" in codes
    # The trust files leave the working tree, and the trust branch's .plangate tree object
    # is deleted: git can no longer say which trust files the branch holds.
    for name in ("trust.toml", "allowed_signers"):
        (git_repo / ".plangate" / name).unlink()
    tree = git(git_repo, "rev-parse", "main:.plangate").strip()
    (git_repo / ".git/objects" / tree[:2] / tree[2:]).unlink()
    code, codes, facts = _verify(git_repo)
    assert code == 1 and codes == ["GIT_FAILED"], codes
    assert facts.get("authority") != "unauthenticated"


def test_without_any_trust_file_a_tag_or_unknown_source_is_still_refused(
    git_repo: Path,
) -> None:
    from support.taskkit import approve_task

    make_task(git_repo)
    approve_task(git_repo)
    assert _verify(git_repo)[:2] == (0, [])
    record = task_dir(git_repo) / "approvals/c3.json"
    source = json.loads(record.read_bytes())["source_sha"]
    git(git_repo, "tag", "-a", "-m", "a tag", "v1", source)
    tag = git(git_repo, "rev-parse", "v1").strip()
    for other, expected in ((tag, "C3_SOURCE_SHA_UNKNOWN"), ("f" * 40, "C3_SOURCE_SHA_UNKNOWN")):
        record.write_bytes(record.read_bytes().replace(source.encode(), other.encode()))
        code, codes, _ = _verify(git_repo)
        assert code == 1 and expected in codes, (other, codes)
        record.write_bytes(record.read_bytes().replace(other.encode(), source.encode()))


def test_a_record_signed_by_an_unlisted_key(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(git_repo, tmp_path, team)
    tdir = task_dir(git_repo)
    forged = sign_bytes(team["mallory"], "plangate-c3", (tdir / "approvals/c3.json").read_bytes())
    (tdir / "approvals/c3.json.sig").write_bytes(forged)
    assert _verify(git_repo)[1] == ["C3_SIGNER_UNKNOWN"]


def test_a_reviewer_acting_as_approver(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(git_repo, tmp_path, team)
    tdir = task_dir(git_repo)
    by_alice = sign_bytes(team["alice"], "plangate-c3", (tdir / "approvals/c3.json").read_bytes())
    (tdir / "approvals/c3.json.sig").write_bytes(by_alice)
    assert _verify(git_repo)[1] == ["C3_SIGNER_NOT_AUTHORISED"]


def test_an_edited_record_no_longer_verifies(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(git_repo, tmp_path, team)
    path = task_dir(git_repo) / "approvals/c3.json"
    path.write_bytes(path.read_bytes().replace(b"plangate-arbiter@v1", b"plangate-arbiter@v2"))
    assert _verify(git_repo)[1] == ["C3_SIGNATURE_INVALID"]


def test_one_reviewer_signing_both_reviews(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(git_repo, tmp_path, team, reviewers=("alice", "alice"))
    assert _verify(git_repo)[1] == ["C3_REVIEWERS_NOT_DISTINCT"]


def test_a_review_statement_signed_by_someone_else(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(git_repo, tmp_path, team)
    tdir = task_dir(git_repo)
    data = (tdir / "approvals/review-c2.json").read_bytes()
    (tdir / "approvals/review-c2.json.sig").write_bytes(
        sign_bytes(team["alice"], "plangate-review", data)
    )
    codes = _verify(git_repo)[1]
    assert codes == ["REVIEW_STATEMENT_PRINCIPAL_MISMATCH", "C3_REVIEWERS_NOT_DISTINCT"]
    # A statement signed under the record's namespace is refused for its namespace.
    (tdir / "approvals/review-c2.json.sig").write_bytes(
        sign_bytes(team["bob"], "plangate-c3", data)
    )
    assert _verify(git_repo)[1] == ["REVIEW_SIGNATURE_NAMESPACE"]


def test_a_plan_change_after_the_reviews(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    refs = _signed_task(git_repo, tmp_path, team)
    tdir = task_dir(git_repo)
    # The plan changes; the markers are rewritten without signatures; the approver re-signs.
    with (tdir / "plan.md").open("a") as handle:
        handle.write("\n- `src/secret.py`\n")
    from support.taskkit import write_markers

    write_markers(git_repo)
    commit_all(git_repo, "plan change")
    _issue(git_repo, tmp_path, team["carol"], refs)
    assert _verify(git_repo)[1] == ["REVIEW_STATEMENT_STALE", "REVIEW_STATEMENT_STALE"]


def test_record_not_in_its_source_tree(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    refs = _signed_task(git_repo, tmp_path, team)
    # todo.md changes after the commit the record names: the record binds bytes that are
    # not at its source_sha.
    (task_dir(git_repo) / "todo.md").write_text("- [ ] write greet()\n- [ ] and more\n")
    _issue(git_repo, tmp_path, team["carol"], refs)
    codes = _verify(git_repo)[1]
    assert codes == ["C3_NOT_IN_SOURCE_TREE"]


def test_evidence_refs_must_name_committed_files(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(git_repo, tmp_path, team)
    _issue(
        git_repo, tmp_path, team["carol"], ("reviews/model-a.md", f"reviews/nowhere.md#{sha(b'x')}")
    )
    codes = _verify(git_repo)[1]
    assert codes == ["C3_EVIDENCE_REF_NOT_IN_TREE", "C3_EVIDENCE_REF_NOT_IN_TREE"]


def test_source_sha_must_be_on_the_judged_history(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(git_repo, tmp_path, team)
    source = git(git_repo, "rev-parse", "HEAD")
    git(git_repo, "checkout", "-q", "--orphan", "elsewhere")
    commit_all(git_repo, "unrelated history with the same files")
    result = run_cli_in(git_repo, "c3", "verify", T, "--json")
    codes = [r["code"] for r in json.loads(result.out)["reasons"]]
    assert "C3_SOURCE_NOT_ANCESTOR" in codes, (source, codes)


def test_review_mark_refuses_an_unlisted_key_before_writing(
    git_repo: Path, team: dict[str, Key]
) -> None:
    _trust_root(git_repo, team)
    make_task(git_repo)
    before = (task_dir(git_repo) / "review-self.md").read_bytes()
    result = run_cli_in(
        git_repo, "review", "mark", T, "--c1", "PASS", "--sign", str(team["mallory"].path)
    )
    assert result.code == 1 and "AUTH_SIGNER_NOT_LISTED" in result.err
    assert (task_dir(git_repo) / "review-self.md").read_bytes() == before


def test_an_agents_branch_cannot_name_itself_the_trust_branch(
    git_repo: Path, team: dict[str, Key]
) -> None:
    from support.signed import commit_trust_root
    from support.taskkit import approve_task

    commit_trust_root(git_repo, team)  # on main: signatures required
    git(git_repo, "checkout", "-q", "-b", "feature")
    (git_repo / ".plangate/trust.toml").write_bytes(
        trust_toml(["alice@example.com", "bob@example.com"], ["carol@example.com"],
                   require=False, extra='trust_branch = "feature"')
    )
    commit_all(git_repo, "the agent's own trust root, naming its own branch")
    make_task(git_repo)
    approve_task(git_repo)  # an unsigned self-approval
    commit_all(git_repo, "self-approval")
    code, codes, _ = _verify(git_repo)
    assert code == 1 and "C3_SIGNATURE_MISSING" in codes, codes


def test_signed_reviews_bind_the_derived_scope_the_record_approves(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    from plangate.plan.scope import derive_scope

    _signed_task(git_repo, tmp_path, team)
    tdir = task_dir(git_repo)
    digest = derive_scope((tdir / "plan.md").read_bytes()).digest
    for review in ("c1", "c2"):
        statement = json.loads((tdir / "approvals" / f"review-{review}.json").read_text())
        assert (statement["version"], statement["scope_digest"]) == (2, digest)
    record = json.loads((tdir / "approvals" / "c3.json").read_text())
    assert record["scope_digest"] == digest
