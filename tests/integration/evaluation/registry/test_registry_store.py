"""Plan registration and candidate registration in the ledger, in real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plangate.canonical import sha256_digest
from plangate.cli.demo.harness import render_plan
from plangate.ledger import open_ledger
from support.cli import RunCli
from support.gate import (  # noqa: F401 -- harness_template is a fixture
    HarnessRepo,
    commit_tracked,
    copy_template,
    harness_template,
    make_harness_repo,
)
from support.repo import git


@pytest.fixture
def hr(tmp_path: Path, harness_template: Path, run_cli: RunCli) -> HarnessRepo:  # noqa: F811
    return copy_template(harness_template, tmp_path, run_cli)


def test_registered_plan_pins_fixtures_and_is_in_the_ledger(hr: HarnessRepo) -> None:
    res = hr.cli("eval", "plan", "show", hr.plan_digest, "--json")
    assert res.code == 0
    plan = json.loads(res.out)["plan"]
    pinned = {f["id"]: f["digest"] for f in plan["fixtures"]}
    data = (hr.repo / "eval" / "fixtures" / "known-bad.json").read_bytes()
    assert pinned["known-bad-1"] == sha256_digest(data)
    assert plan["runner"]["files"][0]["path"] == "eval/runner.py"
    with open_ledger(hr.repo, {}) as ledger:
        entries = ledger.entries(kind="eval_plan_registered", subject=hr.plan_digest)
    assert len(entries) == 1
    # Re-registering the same plan does not append a second entry.
    again = hr.register_plan()
    assert again.code == 0
    assert again.out.strip() == hr.plan_digest
    with open_ledger(hr.repo, {}) as ledger:
        assert len(ledger.entries(kind="eval_plan_registered")) == 1


def test_fixtures_are_read_from_the_baseline_not_the_work_tree(hr: HarnessRepo) -> None:
    (hr.repo / "eval" / "fixtures" / "known-bad.json").write_text('{"edited": true}')
    res = hr.cli("eval", "plan", "show", hr.plan_digest, "--json")
    plan = json.loads(res.out)["plan"]
    committed = git(hr.repo, "show", f"{hr.baseline}:eval/fixtures/known-bad.json")
    assert {f["id"]: f["digest"] for f in plan["fixtures"]}["known-bad-1"] == sha256_digest(
        committed.encode() + b"\n"
    )


def test_plan_with_narrower_verifier_set_is_refused(hr: HarnessRepo) -> None:
    text = render_plan(hr.baseline, hr.manifest_ref).replace(
        'verifier_set: ["verifier:deterministic-tests"]',
        'verifier_set: ["verifier:completion-evidence"]',
    )
    res = hr.register_plan(text)
    assert res.code == 1
    assert "EVAL_PLAN_VERIFIER_SET_NARROWER" in res.err


def test_plan_naming_a_non_verifier_is_refused(hr: HarnessRepo) -> None:
    text = render_plan(hr.baseline, hr.manifest_ref).replace(
        'verifier_set: ["verifier:deterministic-tests"]',
        'verifier_set: ["verifier:deterministic-tests", "prompt:builder"]',
    )
    res = hr.register_plan(text)
    assert res.code == 1
    assert "EVAL_PLAN_VERIFIER_SET_UNKNOWN" in res.err


def test_plan_with_wrong_manifest_ref_is_refused(hr: HarnessRepo) -> None:
    res = hr.register_plan(render_plan(hr.baseline, "sha256:" + "0" * 64))
    assert res.code == 1
    assert "EVAL_PLAN_BASELINE_MANIFEST_MISMATCH" in res.err


def test_plan_with_wrong_fixture_digest_is_refused(hr: HarnessRepo) -> None:
    text = render_plan(hr.baseline, hr.manifest_ref).replace(
        "path: eval/fixtures/control.json}",
        f'path: eval/fixtures/control.json, digest: "sha256:{"1" * 64}"}}',
    )
    res = hr.register_plan(text)
    assert res.code == 1
    assert "EVAL_PLAN_FIXTURE_DIGEST_MISMATCH" in res.err


def test_plan_with_uncommitted_fixture_is_refused(hr: HarnessRepo) -> None:
    (hr.repo / "eval" / "fixtures" / "extra.json").write_text("{}")
    text = render_plan(hr.baseline, hr.manifest_ref).replace(
        "fixtures:\n",
        "fixtures:\n  - {id: extra, role: regression, path: eval/fixtures/extra.json}\n",
    )
    res = hr.register_plan(text)
    assert res.code == 1
    assert "EVAL_PLAN_FIXTURE_UNREADABLE" in res.err


def test_plan_missing_an_item_is_refused_naming_it(hr: HarnessRepo) -> None:
    text = render_plan(hr.baseline, hr.manifest_ref).replace('task_profile: "routine_fix"\n', "")
    res = hr.register_plan(text)
    assert res.code == 1
    assert "EVAL_PLAN_ITEM_MISSING" in res.err
    assert "task_profile" in res.err


def test_plan_show_unknown_digest(hr: HarnessRepo) -> None:
    res = hr.cli("eval", "plan", "show", "sha256:" + "2" * 64)
    assert res.code == 1
    assert "EVAL_PLAN_NOT_REGISTERED" in res.err


def test_candidate_needs_a_registered_plan_and_a_real_commit(hr: HarnessRepo) -> None:
    doc = hr.candidate_doc(hr.baseline, ["harness/prompts/**"])
    doc["evaluation_plan_digest"] = "sha256:" + "3" * 64
    res = hr.register_candidate(doc)
    assert res.code == 1
    # The evaluator selects the plan: naming any other digest is refused.
    assert "CANDIDATE_PLAN_NOT_SELECTED" in res.err
    assert hr.plan_digest in res.err
    doc = hr.candidate_doc("4" * 40, ["harness/prompts/**"])
    res = hr.register_candidate(doc)
    assert res.code == 1
    assert "CANDIDATE_COMMIT_UNKNOWN" in res.err


def test_candidate_carrying_the_plan_is_refused(hr: HarnessRepo) -> None:
    doc = hr.candidate_doc(
        hr.baseline, ["harness/prompts/**"], baseline_manifest_ref=hr.manifest_ref
    )
    res = hr.register_candidate(doc)
    assert res.code == 1
    assert "CANDIDATE_UNKNOWN_KEY" in res.err


def test_candidate_registration_is_recorded_once(hr: HarnessRepo) -> None:
    doc = hr.candidate_doc(hr.baseline, ["harness/prompts/**"])
    first = hr.register_candidate(doc)
    second = hr.register_candidate(doc)
    assert first.code == second.code == 0
    assert first.out == second.out
    with open_ledger(hr.repo, {}) as ledger:
        entries = ledger.entries(kind="eval_candidate_registered")
    assert len(entries) == 1
    assert set(entries[0].payload) == {
        "candidate_digest",
        "candidate",
        "evaluation_plan_digest",
        "candidate_tree",
    }
    # The tree of the candidate commit, from git objects (what the candidate's content is).
    commit = entries[0].payload["candidate"]["candidate_commit"]
    assert entries[0].payload["candidate_tree"] == git(hr.repo, "rev-parse", f"{commit}^{{tree}}")


def test_candidate_id_registered_twice_is_ambiguous(hr: HarnessRepo) -> None:
    doc = hr.candidate_doc(hr.baseline, ["harness/prompts/**"], candidate_id="candidate:same")
    assert hr.register_candidate(doc).code == 0
    doc2 = dict(doc, hypothesis="another")
    path = hr.repo.parent / "c2.json"
    path.write_text(json.dumps(doc2))
    assert hr.cli("eval", "candidate", "register", str(path)).code == 0
    res = hr.cli("eval", "gate", "candidate:same")
    assert res.code == 1
    assert "CANDIDATE_AMBIGUOUS" in res.err


def _schema(name: str) -> dict[str, object]:
    from importlib import resources

    text = resources.files("plangate").joinpath("schemas", name).read_text(encoding="utf-8")
    return dict(json.loads(text))


def test_outputs_validate_against_the_shipped_schemas(hr: HarnessRepo) -> None:
    import tomllib

    import jsonschema

    manifest = hr.manifest(hr.baseline)
    jsonschema.validate(manifest, _schema("harness-manifest.schema.json"))
    definition = tomllib.loads((hr.repo / ".plangate" / "harness.toml").read_text())
    jsonschema.validate(definition, _schema("harness-definition.schema.json"))
    plan = json.loads(hr.cli("eval", "plan", "show", hr.plan_digest, "--json").out)["plan"]
    jsonschema.validate(plan, _schema("evaluation-plan.schema.json"))
    git(hr.repo, "checkout", "-q", "-b", "s", hr.baseline)
    path = hr.repo / "eval" / "grader.py"
    path.write_text(path.read_text() + "# x\n")
    commit = commit_tracked(hr.repo, "grader")
    doc = hr.candidate_doc(commit, ["harness/prompts/**"])
    jsonschema.validate(doc, _schema("candidate.schema.json"))
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 1
    jsonschema.validate(verdict, _schema("policy-verdict.schema.json"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(manifest, extra=1), _schema("harness-manifest.schema.json"))
