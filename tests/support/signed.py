"""A team with real keys, a trust root committed on ``main`` and signed tasks, for tests.

``signed_task`` runs the journey a team runs: evidence committed, both reviews
marked and signed (``review mark --sign``), the record issued and signed
(``c3 issue --sign``) and committed.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import run_cli_in
from support.keys import Key, allowed_signers, make_key, trust_toml
from support.repo import commit_all, git
from support.taskkit import make_task, sha

TEAM = ("alice", "bob", "carol", "mallory")
"""alice and bob review, carol approves, mallory is listed nowhere."""


def make_team(directory: Path) -> dict[str, Key]:
    """One ed25519 key per team member (bob's is ECDSA)."""
    return {
        name: make_key(directory, f"{name}@example.com", "ecdsa" if name == "bob" else "ed25519")
        for name in TEAM
    }


def commit_trust_root(
    repo: Path, team: dict[str, Key], *, require: bool = True, humans: bool = True
) -> None:
    """Commit a trust root: alice and bob review, carol approves (all human unless told)."""
    (repo / ".plangate").mkdir(exist_ok=True)
    people = ["alice@example.com", "bob@example.com", "carol@example.com"]
    (repo / ".plangate/trust.toml").write_bytes(
        trust_toml(people[:2], people[2:], require=require, humans=people if humans else None)
    )
    (repo / ".plangate/allowed_signers").write_bytes(
        allowed_signers(team["alice"], team["bob"], team["carol"])
    )
    commit_all(repo, "trust root")


def write_evidence(repo: Path, task: str) -> tuple[str, str]:
    """Two committed-to-be review evidence files and their ``path#sha256:`` refs."""
    refs = []
    for name in ("a", "b"):
        data = f"# {task} review {name}\n\nApprove.\n".encode()
        rel = f"docs/working/{task}/model-{name}.md"
        (repo / rel).write_bytes(data)
        refs.append(f"{rel}#{sha(data)}")
    return refs[0], refs[1]


def issue(repo: Path, tmp_path: Path, task: str, refs: tuple[str, str], key: Key | None) -> None:
    """``c3 issue --sign KEY`` (unsigned when ``key`` is None) for HEAD."""
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
        "--force",
    ]
    if key is not None:
        args += ["--sign", str(key.path)]
    result = run_cli_in(repo, *args)
    assert result.code == 0, result.out + result.err


def signed_task(
    repo: Path,
    tmp_path: Path,
    team: dict[str, Key],
    task: str = "TASK-0001",
    *,
    reviewers: tuple[str, str] | None = ("alice", "bob"),
    approver: str | None = "carol",
    code: str | None = "src/app.py",
    commit_approval: bool = True,
) -> tuple[str, str]:
    """A task planned, reviewed, approved and committed; returns the evidence refs.

    ``reviewers=None`` writes the markers unsigned; ``approver=None`` issues an
    unsigned record; ``code`` is a file inside the plan's scope changed with it;
    ``commit_approval=False`` leaves the record uncommitted (HEAD stays the approved commit).
    """
    make_task(repo, task, commit=False)
    refs = write_evidence(repo, task)
    if code is not None:
        (repo / code).parent.mkdir(parents=True, exist_ok=True)
        (repo / code).write_text(f"def greet():\n    return 'hi {task}'\n")
    commit_all(repo, f"plan {task}")
    if reviewers is not None:
        for (flag, verdict), who in zip(
            (("--c1", "PASS"), ("--c2", "approve")), reviewers, strict=True
        ):
            result = run_cli_in(
                repo, "review", "mark", task, flag, verdict, "--sign", str(team[who].path)
            )
            assert result.code == 0, result.err
        commit_all(repo, f"signed reviews of {task}")
    issue(repo, tmp_path, task, refs, team[approver] if approver else None)
    if commit_approval:
        commit_all(repo, f"approve {task}")
    return refs


def adopt_surfaces(repo: Path) -> None:
    """Write the bundled protected-surfaces definition, adopted (its template marker removed)."""
    from importlib.resources import files

    template = files("plangate.resources").joinpath("protected-surfaces.template.toml")
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate/protected-surfaces.toml").write_text(template.read_text().split("\n", 1)[1])


def ci_check(repo: Path, *extra: str) -> tuple[int, dict]:
    """``ci check --base main --head HEAD --json``: exit code and the JSON object."""
    result = run_cli_in(repo, "ci", "check", "--base", "main", "--head", "HEAD", "--json", *extra)
    return result.code, json.loads(result.out)
