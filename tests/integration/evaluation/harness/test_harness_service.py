"""HarnessManifest and harness definition read from git objects in real repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plangate.evaluation.harness.definition import DefinitionRejected
from plangate.evaluation.harness.manifest import load_manifest_bytes
from plangate.evaluation.harness.service import build_manifest
from plangate.git import Git
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


def test_same_commit_gives_same_bytes_and_ignores_the_work_tree(hr: HarnessRepo) -> None:
    first = hr.cli("harness", "manifest", "--commit", hr.baseline)
    (hr.repo / "harness" / "prompts" / "builder.md").write_text("dirty work tree\n")
    (hr.repo / ".plangate" / "harness.toml").write_text("garbage")
    second = hr.cli("harness", "manifest", "--commit", hr.baseline[:12])
    assert first.code == second.code == 0
    assert first.out == second.out
    manifest = json.loads(first.out)
    assert manifest["source_commit"] == hr.baseline
    assert manifest["harness_id"] == hr.manifest_ref
    assert manifest["verifier_set"] == ["verifier:deterministic-tests"]
    by_id = {c["id"]: c for c in manifest["components"]}
    assert by_id["eval:fixtures"]["files"] == sorted(
        f"eval/fixtures/{n}.json"
        for n in ("control", "known-bad", "mutant-1", "neg-1", "pos-1", "regression-1")
    )
    # registered = installed and (in registry.enabled or a verifier_set stage)
    assert by_id["verifier:deterministic-tests"]["registered"] is True
    assert by_id["verifier:completion-evidence"]["registered"] is True
    assert by_id["eval:grader"]["registered"] is False
    assert all(c["installed"] for c in manifest["components"])


def test_manifest_out_file_verifies_and_tamper_is_detected(hr: HarnessRepo) -> None:
    res = hr.cli("harness", "manifest", "--commit", hr.baseline, "--out", "../m.json")
    assert res.code == 0
    data = (hr.repo.parent / "m.json").read_bytes()
    assert load_manifest_bytes(data).harness_id == hr.manifest_ref
    assert hr.cli("harness", "verify", "../m.json").code == 0
    tampered = json.loads(data)
    tampered["components"][0]["installed"] = False
    (hr.repo.parent / "t.json").write_text(json.dumps(tampered))
    bad = hr.cli("harness", "verify", "../t.json")
    assert bad.code == 1
    assert "HARNESS_ID_MISMATCH" in bad.err
    tampered["surprise"] = 1
    (hr.repo.parent / "u.json").write_text(json.dumps(tampered))
    assert "HARNESS_MANIFEST_INVALID" in hr.cli("harness", "verify", "../u.json").err


def test_content_changes_change_the_identity(hr: HarnessRepo) -> None:
    git(hr.repo, "update-index", "--chmod=+x", "harness/prompts/builder.md")
    git(hr.repo, "commit", "-q", "-m", "mode only")
    after = hr.manifest(git(hr.repo, "rev-parse", "HEAD"))
    before = hr.manifest(hr.baseline)
    assert after["harness_id"] != before["harness_id"]
    changed = [
        a["id"]
        for a, b in zip(after["components"], before["components"], strict=True)
        if a["content_sha"] != b["content_sha"]
    ]
    assert changed == ["prompt:builder"]
    assert after["distribution_digest"] != before["distribution_digest"]
    assert after["verifier_set_sha"] == before["verifier_set_sha"]


def test_policy_profile_sha_covers_protected_surfaces(hr: HarnessRepo) -> None:
    surfaces = hr.repo / ".plangate" / "protected-surfaces.toml"
    surfaces.write_text(surfaces.read_text() + "\n# comment\n")
    head = commit_tracked(hr.repo, "touch surfaces")
    assert hr.manifest(head)["policy_profile_sha"] != hr.manifest(hr.baseline)["policy_profile_sha"]


def test_component_matching_nothing_is_an_error(hr: HarnessRepo) -> None:
    git(hr.repo, "rm", "-q", "harness/skills/review.md")
    head = commit_tracked(hr.repo, "drop skill files")
    res = hr.cli("harness", "manifest", "--commit", head)
    assert res.code == 1
    assert "HARNESS_COMPONENT_UNMATCHED" in res.err
    assert res.out == ""


def test_partially_present_component_is_not_installed(hr: HarnessRepo) -> None:
    definition = hr.repo / ".plangate" / "harness.toml"
    definition.write_text(
        definition.read_text().replace(
            'paths = ["harness/skills/review.md"]', 'paths = ["harness/skills/review.md", "x.md"]'
        )
    )
    head = commit_tracked(hr.repo, "declare a missing path")
    by_id = {c["id"]: c for c in hr.manifest(head)["components"]}
    assert by_id["skill:review"]["installed"] is False
    assert by_id["skill:review"]["registered"] is False


def test_missing_definition_and_missing_surfaces_are_errors(hr: HarnessRepo) -> None:
    git(hr.repo, "rm", "-q", ".plangate/protected-surfaces.toml")
    head = commit_tracked(hr.repo, "no surfaces")
    res = hr.cli("harness", "manifest", "--commit", head)
    assert res.code == 1
    assert "HARNESS_POLICY_FILE_MISSING" in res.err
    git(hr.repo, "rm", "-q", ".plangate/harness.toml")
    head = commit_tracked(hr.repo, "no definition")
    res = hr.cli("harness", "manifest", "--commit", head)
    assert res.code == 1
    assert "HARNESS_DEFINITION_UNREADABLE" in res.err
    with pytest.raises(DefinitionRejected) as info:
        build_manifest(Git(hr.repo), head, "elsewhere/harness.toml")
    assert info.value.code == "HARNESS_DEFINITION_UNREADABLE"


def test_unknown_commit_is_refused(hr: HarnessRepo) -> None:
    res = hr.cli("harness", "manifest", "--commit", "0" * 40)
    assert res.code == 1
    assert "GIT_COMMIT_UNKNOWN" in res.err
