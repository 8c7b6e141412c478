"""ci check judges authority under the base's trust root: signed passes, forgeries do not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.cli import run_cli_in
from support.keys import Key, allowed_signers, make_key, sign_bytes, trust_toml
from support.repo import commit_all, git
from support.taskkit import PLAN_MD, make_task, sha, task_dir

T = "TASK-0001"


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Key]:
    d = tmp_path / "keys"
    return {n: make_key(d, f"{n}@example.com") for n in ("alice", "bob", "carol", "mallory")}


@pytest.fixture
def base_repo(git_repo: Path, team: dict[str, Key]) -> Path:
    """main holds a trust root requiring signatures and a surfaces definition."""
    from importlib.resources import files

    template = files("plangate.resources").joinpath("protected-surfaces.template.toml")
    text = template.read_text().split("\n", 1)[1]  # adopted: the template marker line removed
    (git_repo / ".plangate").mkdir(exist_ok=True)
    (git_repo / ".plangate/protected-surfaces.toml").write_text(text)
    (git_repo / ".plangate/trust.toml").write_bytes(
        trust_toml(["alice@example.com", "bob@example.com"], ["carol@example.com"])
    )
    (git_repo / ".plangate/allowed_signers").write_bytes(
        allowed_signers(team["alice"], team["bob"], team["carol"])
    )
    commit_all(git_repo, "trust root")
    git(git_repo, "checkout", "-q", "-b", "feature")
    return git_repo


def _signed_task(
    repo: Path, tmp_path: Path, team: dict[str, Key], task: str = T, sign: bool = True
) -> None:
    make_task(repo, task, commit=False)
    refs = []
    for name in ("a", "b"):
        data = f"# {task} review {name}\n".encode()
        rel = f"docs/working/{task}/model-{name}.md"
        (repo / rel).write_bytes(data)
        refs.append(f"{rel}#{sha(data)}")
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src/app.py").write_text(f"def greet():\n    return 'hi {task}'\n")
    commit_all(repo, f"plan {task}")
    if sign:
        for flag, verdict, who in (("--c1", "PASS", "alice"), ("--c2", "approve", "bob")):
            result = run_cli_in(
                repo, "review", "mark", task, flag, verdict, "--sign", str(team[who].path)
            )
            assert result.code == 0, result.err
        commit_all(repo, "signed reviews")
    reviewers = tmp_path / f"reviewers-{task}.json"
    reviewers.write_text(
        json.dumps(
            {
                "model_a": {"verdict": "approve", "evidence_ref": refs[0]},
                "model_b": {"verdict": "approve", "evidence_ref": refs[1]},
            }
        )
    )
    args = [
        "c3",
        "issue",
        task,
        "--target-sha",
        git(repo, "rev-parse", "HEAD"),
        "--reviewers",
        str(reviewers),
        "--decision",
        "AUTO_APPROVED",
        "--policy-ref",
        "plangate-arbiter@v1",
    ]
    if sign:
        args += ["--sign", str(team["carol"].path)]
    assert run_cli_in(repo, *args).code == 0
    commit_all(repo, f"approve {task}")


def _ci(repo: Path) -> tuple[int, list[str], dict]:
    result = run_cli_in(repo, "ci", "check", "--base", "main", "--head", "HEAD", "--json")
    out = json.loads(result.out)
    return result.code, [r["code"] for r in out["reasons"]], out


def test_a_signed_pull_request_passes(
    base_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(base_repo, tmp_path, team)
    code, codes, out = _ci(base_repo)
    assert (code, codes) == (0, []), out
    assert out["facts"]["authority"]["trust_root"] == git(base_repo, "rev-parse", "main")


def test_the_forged_pull_request_is_rejected(
    base_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    # Markers written by hand, a record issued without any signature, code and README changed.
    _signed_task(base_repo, tmp_path, team, sign=False)
    (base_repo / "README.md").write_text("# changed\n")
    commit_all(base_repo, "and the README")
    code, codes, _ = _ci(base_repo)
    assert code == 1
    assert "CI_TASK_NOT_VERIFIED" in codes and "CI_OUTSIDE_SCOPE" in codes
    _, _, out = _ci(base_repo)
    assert "C3_SIGNATURE_MISSING" in json.dumps(out)


def test_a_pull_request_that_adds_its_own_key(
    base_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    # The PR lists mallory as approver and signs with mallory: the base's root does not know her.
    (base_repo / ".plangate/trust.toml").write_bytes(
        trust_toml(["alice@example.com", "bob@example.com"], ["mallory@example.com"])
    )
    (base_repo / ".plangate/allowed_signers").write_bytes(
        allowed_signers(team["alice"], team["bob"], team["mallory"])
    )
    commit_all(base_repo, "mallory approves now")
    _signed_task(base_repo, tmp_path, team, sign=True)
    record = task_dir(base_repo) / "approvals/c3.json"
    (task_dir(base_repo) / "approvals/c3.json.sig").write_bytes(
        sign_bytes(team["mallory"], "plangate-c3", record.read_bytes())
    )
    commit_all(base_repo, "signed by mallory")
    code, codes, out = _ci(base_repo)
    assert code == 1
    assert "CI_TRUST_ROOT_CHANGED" in codes and "CI_TASK_NOT_VERIFIED" in codes
    assert "C3_SIGNER_UNKNOWN" in json.dumps(out)


def test_a_replayed_task_scope_is_refused(
    base_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    _signed_task(base_repo, tmp_path, team)
    git(base_repo, "checkout", "-q", "main")
    git(base_repo, "merge", "-q", "--no-ff", "-m", "merge TASK-0001", "feature")
    git(base_repo, "checkout", "-q", "-b", "second")
    # A new PR touches the merged task's directory to borrow its scope for new code.
    with (task_dir(base_repo) / "todo.md").open("a") as handle:
        handle.write("- [ ] more\n")
    shutil.copy(task_dir(base_repo) / "todo.md", tmp_path / "todo.md")
    (base_repo / "src/app.py").write_text("def greet():\n    return 'pwned'\n")
    commit_all(base_repo, "borrow the scope")
    code, codes, _ = _ci(base_repo)
    assert code == 1 and "CI_APPROVAL_NOT_FRESH" in codes
    assert PLAN_MD  # the plan itself is unchanged: only freshness refuses
