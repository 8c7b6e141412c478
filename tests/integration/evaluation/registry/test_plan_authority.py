"""Who registers evaluation plans: the evaluator role of the trust root, never the candidate.

Real git repositories, real OpenSSH keys and signatures, the CLI in-process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plangate.cli.demo.harness import render_plan
from plangate.ledger import open_ledger
from support.cli import RunCli
from support.gate import HarnessRepo, make_harness_repo
from support.keys import allowed_signers, sign_bytes, trust_toml
from support.repo import commit_all, git
from support.signed import make_team

NAMESPACE = "plangate-eval-plan"


@pytest.fixture
def hr(tmp_path: Path, run_cli: RunCli) -> HarnessRepo:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))}
    made = make_harness_repo(repo, run_cli, register=False)
    made.env = {k: v for k, v in env.items() if k not in ("CI", "GITHUB_ACTIONS")}
    return made


def _plan_entries(hr: HarnessRepo) -> list[dict[str, object]]:
    with open_ledger(hr.repo, {}) as ledger:
        return [dict(e.payload) for e in ledger.entries(kind="eval_plan_registered")]


def _with_trust_root(hr: HarnessRepo, tmp_path: Path) -> dict[str, object]:
    """alice and bob review, carol approves and evaluates (all human); re-baseline."""
    team = make_team(tmp_path / "keys")
    people = ["alice@example.com", "bob@example.com", "carol@example.com"]
    (hr.repo / ".plangate/trust.toml").write_bytes(
        trust_toml(people[:2], people[2:], humans=people) + b'evaluator = ["carol@example.com"]\n'
    )
    (hr.repo / ".plangate/allowed_signers").write_bytes(
        allowed_signers(team["alice"], team["bob"], team["carol"])
    )
    commit_all(hr.repo, "trust root")
    hr.baseline = git(hr.repo, "rev-parse", "HEAD")
    hr.manifest_ref = hr.manifest(hr.baseline)["harness_id"]
    return dict(team)


def test_an_agent_cannot_register_the_plan_that_judges_it(hr: HarnessRepo) -> None:
    hr.env = {**hr.env, "CLAUDECODE": "1"}
    res = hr.register_plan()
    assert res.code != 0
    assert "EVAL_PLAN_AGENT_ENVIRONMENT" in res.err
    assert "CLAUDECODE" in res.err
    assert _plan_entries(hr) == []


def test_without_a_trust_root_a_plan_is_recorded_as_unauthenticated(hr: HarnessRepo) -> None:
    res = hr.register_plan()
    assert res.code == 0, res.err
    [entry] = _plan_entries(hr)
    assert entry["authority"] == "unauthenticated"


def test_with_a_trust_root_an_unsigned_plan_is_refused(hr: HarnessRepo, tmp_path: Path) -> None:
    _with_trust_root(hr, tmp_path)
    res = hr.register_plan()
    assert res.code != 0
    assert "EVAL_PLAN_SIGNATURE_MISSING" in res.err
    assert _plan_entries(hr) == []


def test_a_plan_signed_by_a_non_evaluator_is_refused(hr: HarnessRepo, tmp_path: Path) -> None:
    team = _with_trust_root(hr, tmp_path)
    text = render_plan(hr.baseline, hr.manifest_ref).encode()
    plan_file = hr.repo.parent / "plan.yaml"
    (hr.repo.parent / "plan.yaml.sig").write_bytes(sign_bytes(team["alice"], NAMESPACE, text))  # type: ignore[arg-type]
    plan_file.write_bytes(text)
    res = hr.cli("eval", "plan", "register", str(plan_file))
    assert res.code != 0
    assert "EVAL_PLAN_SIGNER_NOT_AUTHORISED" in res.err
    assert "evaluator" in res.err
    assert _plan_entries(hr) == []


def test_a_plan_signed_by_an_evaluator_registers_with_its_principal(
    hr: HarnessRepo, tmp_path: Path
) -> None:
    team = _with_trust_root(hr, tmp_path)
    text = render_plan(hr.baseline, hr.manifest_ref).encode()
    plan_file = hr.repo.parent / "plan.yaml"
    plan_file.write_bytes(text)
    (hr.repo.parent / "plan.yaml.sig").write_bytes(sign_bytes(team["carol"], NAMESPACE, text))  # type: ignore[arg-type]
    res = hr.cli("eval", "plan", "register", str(plan_file), "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["verdict"] == "ACCEPTED"
    [entry] = _plan_entries(hr)
    assert entry["authority"] == "signed:carol@example.com"


def test_a_signature_over_other_bytes_is_refused(hr: HarnessRepo, tmp_path: Path) -> None:
    team = _with_trust_root(hr, tmp_path)
    text = render_plan(hr.baseline, hr.manifest_ref).encode()
    plan_file = hr.repo.parent / "plan.yaml"
    plan_file.write_bytes(text.replace(b"trials: 2", b"trials: 3"))
    (hr.repo.parent / "plan.yaml.sig").write_bytes(sign_bytes(team["carol"], NAMESPACE, text))  # type: ignore[arg-type]
    res = hr.cli("eval", "plan", "register", str(plan_file))
    assert res.code != 0
    assert "EVAL_PLAN_SIGNATURE_INVALID" in res.err


def _candidate_commit(hr: HarnessRepo, name: str, rel: str) -> str:
    hr.start_candidate(name)
    target = hr.repo / rel
    target.write_text(target.read_text() + "\n# change\n")
    git(hr.repo, "commit", "-q", "-am", name)
    commit = git(hr.repo, "rev-parse", "HEAD")
    git(hr.repo, "checkout", "-q", "--detach", hr.baseline)
    return commit


def test_a_candidate_cannot_name_an_older_more_lenient_plan(hr: HarnessRepo) -> None:
    lenient_text = render_plan(hr.baseline, hr.manifest_ref).replace(
        "trials: 2\n", 'trials: 1\ntrials_reason: "deterministic"\n'
    )
    assert hr.register_plan(lenient_text).code == 0
    lenient = hr.plan_digest
    assert hr.register_plan().code == 0
    strict = hr.plan_digest
    commit = _candidate_commit(hr, "prompt", "harness/prompts/builder.md")
    named = hr.register_candidate(
        hr.candidate_doc(commit, ["harness/prompts/**"]) | {"evaluation_plan_digest": lenient}
    )
    assert named.code != 0
    assert "CANDIDATE_PLAN_NOT_SELECTED" in named.err
    assert strict in named.err
    doc = hr.candidate_doc(commit, ["harness/prompts/**"])
    del doc["evaluation_plan_digest"]
    chosen = hr.register_candidate(doc)
    assert chosen.code == 0, chosen.err
    with open_ledger(hr.repo, {}) as ledger:
        [entry] = ledger.entries(kind="eval_candidate_registered")
    assert entry.payload["evaluation_plan_digest"] == strict


def test_paths_no_plan_covers_are_refused_naming_them(hr: HarnessRepo) -> None:
    text = render_plan(hr.baseline, hr.manifest_ref).replace(
        'covers: ["**"]', 'covers: ["harness/prompts/**"]'
    )
    assert hr.register_plan(text).code == 0
    commit = _candidate_commit(hr, "skill", "harness/skills/review.md")
    doc = hr.candidate_doc(commit, ["harness/skills/**"])
    del doc["evaluation_plan_digest"]
    res = hr.register_candidate(doc)
    assert res.code != 0
    assert "CANDIDATE_PATHS_NOT_COVERED" in res.err
    assert "harness/skills/review.md" in res.err
    with open_ledger(hr.repo, {}) as ledger:
        assert ledger.entries(kind="eval_candidate_registered") == []
