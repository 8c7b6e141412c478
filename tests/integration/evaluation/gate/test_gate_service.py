"""The policy gate in real git repositories: candidates that try to narrow the authority judging
them through identity, plans, scope and protected surfaces."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.canonical import digest
from plangate.evaluation.harness.manifest import compute_harness_id
from plangate.ledger import open_ledger
from support.cli import RunCli
from support.gate import (  # noqa: F401 -- harness_template is a fixture
    HarnessRepo,
    codes,
    commit_tracked,
    copy_template,
    harness_template,
    make_harness_repo,
)
from support.repo import git

PROMPT = "harness/prompts/builder.md"


@pytest.fixture
def hr(tmp_path: Path, harness_template: Path, run_cli: RunCli) -> HarnessRepo:  # noqa: F811
    return copy_template(harness_template, tmp_path, run_cli)


def _edit(repo: Path, rel: str, extra: str = "more\n") -> None:
    path = repo / rel
    path.write_text(path.read_text() + extra)


def test_good_candidate_is_auto_approved_and_recorded(hr: HarnessRepo) -> None:
    hr.start_candidate("good")
    _edit(hr.repo, PROMPT)
    commit = commit_tracked(hr.repo, "better prompt")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 0
    assert verdict["verdict"] == "AUTO_APPROVED"
    facts = verdict["facts"]
    assert facts["observed_diff"] == [PROMPT]
    assert facts["required_independence"] == "I1"
    assert facts["baseline_commit"] == hr.baseline
    assert facts["matched_surfaces"] == []
    with open_ledger(hr.repo, {}) as ledger:
        entries = ledger.entries(kind="eval_gate_verdict")
    assert [e.payload["verdict"] for e in entries] == ["AUTO_APPROVED"]
    assert entries[0].subject == facts["candidate_digest"]


def test_declared_scope_with_sealed_fixture_is_denied(hr: HarnessRepo) -> None:
    # allowed_paths names a sealed fixture.
    hr.start_candidate("declared")
    _edit(hr.repo, PROMPT)
    commit = commit_tracked(hr.repo, "prompt")
    code, verdict = hr.gate(commit, ["harness/prompts/**", "eval/fixtures/known-bad.json"])
    assert code == 1
    assert verdict["verdict"] == "DENIED"
    assert "DECLARED_SCOPE_INTERSECTS_PROTECTED_AUTHORITY" in codes(verdict)


def test_observed_diff_touching_surfaces_definition_is_denied(hr: HarnessRepo) -> None:
    # declares only harness/prompts/** but changes protected_surfaces.
    hr.start_candidate("sneaky")
    _edit(hr.repo, PROMPT)
    _edit(hr.repo, ".plangate/protected-surfaces.toml", "\n# harmless comment\n")
    commit = commit_tracked(hr.repo, "prompt and surfaces")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 1
    assert verdict["verdict"] == "DENIED"
    got = codes(verdict)
    # Protected is reported before scope.
    assert got.index("PROTECTED_AUTHORITY_CHANGED") < got.index(
        "ACTUAL_DELTA_OUTSIDE_ALLOWED_PATHS"
    )
    paths = {m["path"] for m in verdict["facts"]["matched_surfaces"]}
    assert paths == {".plangate/protected-surfaces.toml"}


def test_diff_outside_allowed_paths_is_human_required(hr: HarnessRepo) -> None:
    # excess that touches nothing protected.
    hr.start_candidate("wide")
    _edit(hr.repo, PROMPT)
    (hr.repo / "docs").mkdir()
    (hr.repo / "docs" / "notes.md").write_text("notes\n")
    commit = commit_tracked(hr.repo, "prompt and notes", "docs/notes.md")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 3
    assert verdict["verdict"] == "HUMAN_REQUIRED"
    assert codes(verdict) == ["ACTUAL_DELTA_OUTSIDE_ALLOWED_PATHS"]
    assert verdict["facts"]["outside_allowed_paths"] == ["docs/notes.md"]


def test_scope_matching_is_case_sensitive_but_protection_is_not(hr: HarnessRepo) -> None:
    hr.start_candidate("case")
    (hr.repo / "EVAL").mkdir()
    (hr.repo / "EVAL" / "grader.py").write_text("print('shadow')\n")
    commit = commit_tracked(hr.repo, "shadow grader", "EVAL/grader.py")
    code, verdict = hr.gate(commit, ["EVAL/**"])
    assert code == 1
    assert "PROTECTED_AUTHORITY_CHANGED" in codes(verdict)
    assert "DECLARED_SCOPE_INTERSECTS_PROTECTED_AUTHORITY" in codes(verdict)


def test_candidate_commit_missing_is_inconclusive(hr: HarnessRepo) -> None:
    # the diff cannot be computed; nothing is substituted.
    hr.start_candidate("gone")
    _edit(hr.repo, PROMPT)
    commit = commit_tracked(hr.repo, "prompt")
    reg = hr.register_candidate(hr.candidate_doc(commit, ["harness/prompts/**"]))
    assert reg.code == 0
    git(hr.repo, "checkout", "-q", "main")
    git(hr.repo, "branch", "-D", "gone")
    git(hr.repo, "reflog", "expire", "--expire=now", "--all")
    git(hr.repo, "gc", "-q", "--prune=now")
    res = hr.cli("eval", "gate", reg.out.strip(), "--json")
    assert res.code == 4
    assert "CANDIDATE_COMMIT_UNKNOWN" in res.out


def test_baseline_commit_missing_is_inconclusive(git_repo: Path, run_cli: RunCli) -> None:
    # baseline identity unobtainable -> INCONCLUSIVE.
    git(git_repo, "checkout", "-q", "-b", "base")
    hr = make_harness_repo(git_repo, run_cli)
    git(git_repo, "checkout", "-q", "--orphan", "other")
    commit = commit_tracked(git_repo, "orphan candidate")
    reg = hr.register_candidate(hr.candidate_doc(commit, ["harness/prompts/**"]))
    assert reg.code == 0
    git(git_repo, "branch", "-D", "base")
    git(git_repo, "branch", "-D", "main")
    git(git_repo, "reflog", "expire", "--expire=now", "--all")
    git(git_repo, "gc", "-q", "--prune=now")
    res = hr.cli("eval", "gate", reg.out.strip(), "--json")
    assert res.code == 4
    assert "BASELINE_MANIFEST_UNOBTAINABLE" in res.out


def test_forged_plan_baseline_ref_is_recomputed_not_trusted(hr: HarnessRepo) -> None:
    # a plan whose baseline_manifest_ref does not match the rebuilt manifest.
    hr.start_candidate("forged")
    _edit(hr.repo, PROMPT)
    commit = commit_tracked(hr.repo, "prompt")
    with open_ledger(hr.repo, {}) as ledger:
        entry = ledger.entries(kind="eval_plan_registered")[0]
        manifest = dict(entry.payload["baseline_manifest"])
        manifest["verifier_set_sha"] = digest("forged")
        manifest["harness_id"] = compute_harness_id(manifest)
        plan = dict(entry.payload["plan"])
        plan["baseline_manifest_ref"] = manifest["harness_id"]
        forged = digest(plan)
        ledger.append(
            "eval_plan_registered",
            forged,
            {
                "plan_digest": forged,
                "plan": plan,
                "baseline_manifest": manifest,
                "source_file_sha256": digest("x"),
            },
        )
    hr.plan_digest = forged
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 4
    assert codes(verdict) == ["BASELINE_MANIFEST_BINDING"]


def test_plan_not_in_ledger_is_inconclusive(hr: HarnessRepo) -> None:
    hr.start_candidate("noplan")
    _edit(hr.repo, PROMPT)
    commit = commit_tracked(hr.repo, "prompt")
    doc = hr.candidate_doc(commit, ["harness/prompts/**"])
    doc["evaluation_plan_digest"] = digest("never registered")
    # Registration refuses it ...
    assert hr.register_candidate(doc).code == 1
    # ... and a candidate smuggled into the ledger is INCONCLUSIVE at the gate.
    cdigest = digest(doc)
    with open_ledger(hr.repo, {}) as ledger:
        ledger.append(
            "eval_candidate_registered",
            cdigest,
            {
                "candidate_digest": cdigest,
                "candidate": doc,
                "evaluation_plan_digest": doc["evaluation_plan_digest"],
            },
        )
    res = hr.cli("eval", "gate", cdigest, "--json")
    assert res.code == 4
    assert "EVAL_PLAN_NOT_REGISTERED" in res.out


def test_rename_of_protected_fixture_into_scope_is_caught_at_old_path(hr: HarnessRepo) -> None:
    hr.start_candidate("rename")
    git(hr.repo, "mv", "eval/fixtures/known-bad.json", "harness/prompts/known-bad.json")
    commit = commit_tracked(hr.repo, "move fixture")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 1
    facts = verdict["facts"]
    assert "eval/fixtures/known-bad.json" in facts["observed_diff"]
    assert "harness/prompts/known-bad.json" in facts["observed_diff"]
    assert "eval/fixtures/known-bad.json" in {m["path"] for m in facts["matched_surfaces"]}


def test_candidate_redefining_surfaces_is_judged_by_baseline(
    git_repo: Path, run_cli: RunCli
) -> None:
    # the candidate drops harness/skills/** from its own surfaces file.
    extra = (
        '\n[[surface]]\npattern = "harness/skills/**"\nclass = "execution-skill"\n'
        'reason = "skills are protected here"\n'
    )

    def protect_skills(repo: Path) -> None:
        surfaces = repo / ".plangate" / "protected-surfaces.toml"
        surfaces.write_text(surfaces.read_text() + extra)

    hr = make_harness_repo(git_repo, run_cli, prepare=protect_skills)
    hr.start_candidate("redefine")
    surfaces = git_repo / ".plangate" / "protected-surfaces.toml"
    surfaces.write_text(surfaces.read_text().replace(extra, "\n"))
    _edit(git_repo, "harness/skills/review.md")
    commit = commit_tracked(git_repo, "unprotect skills")
    code, verdict = hr.gate(commit, ["harness/skills/**"])
    assert code == 1
    matched = {(m["path"], m["pattern"]) for m in verdict["facts"]["matched_surfaces"]}
    assert ("harness/skills/review.md", "harness/skills/**") in matched
    sources = {m["source"] for m in verdict["facts"]["matched_surfaces"]}
    assert f"{hr.baseline}:.plangate/protected-surfaces.toml" in sources


def test_mode_only_change_of_grader_is_denied(hr: HarnessRepo) -> None:
    hr.start_candidate("mode")
    git(hr.repo, "update-index", "--chmod=+x", "eval/grader.py")
    git(hr.repo, "commit", "-q", "-m", "chmod grader")
    commit = git(hr.repo, "rev-parse", "HEAD")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 1
    assert verdict["facts"]["observed_diff"] == ["eval/grader.py"]
    assert "PROTECTED_AUTHORITY_CHANGED" in codes(verdict)


def test_symlink_to_protected_file_is_denied(hr: HarnessRepo) -> None:
    hr.start_candidate("symlink")
    os.symlink("../../eval/grader.py", hr.repo / "harness" / "prompts" / "grader-link.py")
    commit = commit_tracked(hr.repo, "link", "harness/prompts/grader-link.py")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 1
    assert "PROTECTED_AUTHORITY_CHANGED" in codes(verdict)
    vias = {m["via"] for m in verdict["facts"]["matched_surfaces"]}
    assert "symlink->eval/grader.py" in vias


def test_symlink_to_protected_directory_and_outside_repo_are_denied(hr: HarnessRepo) -> None:
    hr.start_candidate("symlink-dir")
    os.symlink("../../eval", hr.repo / "harness" / "prompts" / "eval-dir")
    os.symlink("../../../outside", hr.repo / "harness" / "prompts" / "escape")
    commit = commit_tracked(hr.repo, "links", "harness/prompts/eval-dir", "harness/prompts/escape")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 1
    assert "PROTECTED_AUTHORITY_CHANGED" in codes(verdict)
    assert "SYMLINK_TARGET_UNSAFE" in codes(verdict)


def test_harmless_symlink_inside_scope_is_allowed(hr: HarnessRepo) -> None:
    hr.start_candidate("symlink-ok")
    os.symlink("builder.md", hr.repo / "harness" / "prompts" / "alias.md")
    commit = commit_tracked(hr.repo, "alias", "harness/prompts/alias.md")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 0, verdict


def test_submodule_pointer_at_protected_path_is_denied(hr: HarnessRepo) -> None:
    hr.start_candidate("submodule")
    git(hr.repo, "update-index", "--add", "--cacheinfo", f"160000,{hr.baseline},eval/vendor")
    git(hr.repo, "commit", "-q", "-m", "submodule pointer")
    commit = git(hr.repo, "rev-parse", "HEAD")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 1
    assert verdict["facts"]["observed_diff"] == ["eval/vendor"]
    assert "PROTECTED_AUTHORITY_CHANGED" in codes(verdict)


def test_participating_verifier_change_is_denied(hr: HarnessRepo) -> None:
    hr.start_candidate("tests-verifier")
    _edit(hr.repo, "harness/verifiers/deterministic_tests.py", "# tweak\n")
    commit = commit_tracked(hr.repo, "tweak participating verifier")
    code, verdict = hr.gate(commit, ["harness/verifiers/**"])
    assert code == 1
    assert "PARTICIPATING_VERIFIER_CHANGED" in codes(verdict)
    row = verdict["facts"]["participation"][0]
    assert row["component"] == "verifier:deterministic-tests"
    assert row["participating"] is True
    assert verdict["facts"]["required_independence"] == "I3"


def test_non_participating_verifier_goes_to_verifier_procedure(hr: HarnessRepo) -> None:
    hr.start_candidate("completion")
    path = hr.repo / "harness" / "verifiers" / "completion_evidence.py"
    path.write_text(path.read_text().replace("ENFORCE_MISSING = False", "ENFORCE_MISSING = True"))
    commit = commit_tracked(hr.repo, "enforce completion evidence")
    code, verdict = hr.gate(
        commit,
        ["harness/verifiers/completion_evidence.py"],
        target_components=["verifier:completion-evidence"],
    )
    assert code == 0
    facts = verdict["facts"]
    assert facts["requires_verifier_candidate_procedure"] is True
    assert "VERIFIER_CANDIDATE_PROCEDURE_REQUIRED" in codes(verdict)
    assert facts["participation"] == [
        {
            "component": "verifier:completion-evidence",
            "type": "verifier",
            "changed": True,
            "in_plan_verifier_set": False,
            "in_baseline_verifier_set": False,
            "participating": False,
            "basis": "not in the plan's verifier set",
        }
    ]
    assert facts["required_independence"] == "I3"


def test_relaxing_a_blocking_rule_is_human_required(hr: HarnessRepo) -> None:
    hr.start_candidate("relax")
    definition = hr.repo / ".plangate" / "harness.toml"
    definition.write_text(definition.read_text().replace('blocking = "block"', 'blocking = "warn"'))
    commit = commit_tracked(hr.repo, "relax")
    code, verdict = hr.gate(commit, [".plangate/harness.toml"])
    assert code == 3
    assert "GATE_OR_VERIFIER_WEAKENED" in codes(verdict)
    assert any("blocking block -> warn" in w for w in verdict["facts"]["weakened"])


def test_deleting_a_non_stage_verifier_is_human_required(hr: HarnessRepo) -> None:
    hr.start_candidate("delete")
    git(hr.repo, "rm", "-q", "harness/verifiers/completion_evidence.py")
    definition = hr.repo / ".plangate" / "harness.toml"
    text = definition.read_text().replace(
        '[[components]]\nid = "verifier:completion-evidence"\ntype = "verifier"\n'
        'paths = ["harness/verifiers/completion_evidence.py"]\n',
        "",
    )
    text = text.replace(', "verifier:completion-evidence"]', "]")
    definition.write_text(text)
    commit = commit_tracked(hr.repo, "delete verifier")
    code, verdict = hr.gate(commit, ["harness/verifiers/**", ".plangate/harness.toml"])
    assert code == 3, verdict
    assert "GATE_OR_VERIFIER_WEAKENED" in codes(verdict)
    assert "verifier:completion-evidence: component removed" in verdict["facts"]["weakened"]


def test_unreadable_candidate_definition_is_human_required(hr: HarnessRepo) -> None:
    hr.start_candidate("broken-def")
    (hr.repo / ".plangate" / "harness.toml").write_text("not [valid toml")
    _edit(hr.repo, PROMPT)
    commit = commit_tracked(hr.repo, "break definition")
    code, verdict = hr.gate(commit, ["harness/prompts/**", ".plangate/harness.toml"])
    assert code == 3
    assert "HARNESS_DEFINITION_UNREADABLE_AT_CANDIDATE" in codes(verdict)


def test_declared_evaluation_harness_change_routes_to_i4(hr: HarnessRepo) -> None:
    hr.start_candidate("meta")
    _edit(hr.repo, PROMPT)
    commit = commit_tracked(hr.repo, "prompt")
    code, verdict = hr.gate(commit, ["harness/prompts/**"], changes_evaluation_harness=True)
    assert code == 3
    assert codes(verdict) == ["EVALUATION_HARNESS_CHANGE_I4_ONLY"]
    assert verdict["facts"]["required_independence"] == "I4"
    assert verdict["facts"]["route"] == "I4_ONLY"


def test_no_delta_is_inconclusive(hr: HarnessRepo) -> None:
    # nothing to evaluate.
    code, verdict = hr.gate(hr.baseline, ["harness/prompts/**"])
    assert code == 4
    assert codes(verdict) == ["NO_OBSERVED_HARNESS_DELTA"]


def test_gate_text_output_and_exit_codes(hr: HarnessRepo) -> None:
    hr.start_candidate("text")
    _edit(hr.repo, "eval/grader.py", "# lenient\n")
    commit = commit_tracked(hr.repo, "grader")
    reg = hr.register_candidate(hr.candidate_doc(commit, ["harness/prompts/**"]))
    res = hr.cli("eval", "gate", reg.out.strip())
    assert res.code == 1
    assert "policy gate: DENIED" in res.out
    assert "protected: eval/grader.py" in res.out
    # by candidate_id as well
    res2 = hr.cli("eval", "gate", f"candidate:{commit[:8]}")
    assert res2.code == 1


def test_protected_surfaces_template_copy_at_baseline_is_inconclusive(
    git_repo: Path, run_cli: RunCli
) -> None:
    from plangate.surfaces import bundled_template_bytes

    def use_template(repo: Path) -> None:
        (repo / ".plangate" / "protected-surfaces.toml").write_bytes(bundled_template_bytes())

    hr = make_harness_repo(git_repo, run_cli, prepare=use_template)
    hr.start_candidate("t")
    _edit(git_repo, PROMPT)
    commit = commit_tracked(git_repo, "prompt")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 4
    assert codes(verdict) == ["PROTECTED_SURFACES_UNRESOLVED"]


def test_deleting_verifier_files_alone_is_human_required(hr: HarnessRepo) -> None:
    # The definition still declares the verifier; only its file is gone.
    hr.start_candidate("delete-file")
    git(hr.repo, "rm", "-q", "harness/verifiers/completion_evidence.py")
    commit = commit_tracked(hr.repo, "delete verifier file")
    code, verdict = hr.gate(commit, ["harness/verifiers/**"])
    assert code == 3, verdict
    assert codes(verdict)[-1] == "GATE_OR_VERIFIER_WEAKENED"
    assert any("files deleted" in w for w in verdict["facts"]["weakened"])


def test_diff_that_git_cannot_compute_is_inconclusive(hr: HarnessRepo) -> None:
    # both commits resolve, but a tree the diff needs is gone (corruption);
    # the gate never substitutes a candidate-supplied diff.
    hr.start_candidate("corrupt")
    _edit(hr.repo, PROMPT)
    commit = commit_tracked(hr.repo, "prompt")
    reg = hr.register_candidate(hr.candidate_doc(commit, ["harness/prompts/**"]))
    assert reg.code == 0
    tree = git(hr.repo, "rev-parse", f"{commit}:harness/prompts")
    git(hr.repo, "checkout", "-q", "--detach", hr.baseline)
    (hr.repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    res = hr.cli("eval", "gate", reg.out.strip(), "--json")
    assert res.code == 4, res.out + res.err
    assert "ACTUAL_DIFF_UNAVAILABLE" in res.out


def test_a_two_link_chain_to_the_grader_is_denied(hr: HarnessRepo) -> None:
    # "a" reads as harness/prompts/eval/grader.py; through "up" (-> harness) it opens
    # eval/grader.py, the grader the plan pins.
    hr.start_candidate("chain")
    prompts = hr.repo / "harness" / "prompts"
    os.symlink("..", prompts / "up")
    os.symlink("up/../eval/grader.py", prompts / "a")
    commit = commit_tracked(hr.repo, "chain", "harness/prompts/up", "harness/prompts/a")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 1
    assert "PROTECTED_AUTHORITY_CHANGED" in codes(verdict)
    vias = {(m["path"], m["via"]) for m in verdict["facts"]["matched_surfaces"]}
    assert ("harness/prompts/a", "symlink->eval/grader.py") in vias


def test_a_path_that_is_not_utf8_is_a_recorded_inconclusive(hr: HarnessRepo) -> None:
    hr.start_candidate("latin1")
    raw = b"harness/prompts/caf\xe9.md"
    blob = git_bytes(hr.repo, b"hash-object", b"-w", b"--stdin", stdin=b"x\n").strip()
    git_bytes(hr.repo, b"update-index", b"--add", b"--cacheinfo", b"100644," + blob + b"," + raw)
    git(hr.repo, "commit", "-q", "-m", "latin-1 name")
    commit = git(hr.repo, "rev-parse", "HEAD")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 4
    assert codes(verdict) == ["CANDIDATE_PATH_NOT_UTF8"]
    assert "caf\\xe9.md" in verdict["reasons"][0]["message"]
    with open_ledger(hr.repo, {}) as ledger:
        entries = ledger.entries(kind="eval_gate_verdict")
    assert [e.payload["verdict"] for e in entries] == ["INCONCLUSIVE"]


def git_bytes(repo: Path, *args: bytes, stdin: bytes = b"") -> bytes:
    import subprocess

    from plangate.git import scrubbed_env

    return subprocess.run(
        [b"git", *args], cwd=repo, input=stdin, capture_output=True, check=True, env=scrubbed_env()
    ).stdout


# -- inputs a candidate controls that once narrowed the authority judging it -----


GITLINK_PATH = "eval/vendor"


OLD_POINTER = "1" * 40


NEW_POINTER = "2" * 40


def _baseline_with_gitlink(repo: Path, run_cli: RunCli) -> HarnessRepo:
    """The demo harness plus a submodule pointer inside protected authority (eval/**)."""
    hr = make_harness_repo(repo, run_cli, register=False)
    (repo / ".gitmodules").write_text(
        f'[submodule "vendor"]\n\tpath = {GITLINK_PATH}\n\turl = ./vendor\n'
    )
    git(repo, "add", ".gitmodules")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{OLD_POINTER},{GITLINK_PATH}")
    git(repo, "commit", "-q", "-m", "baseline with a vendored submodule")
    hr.baseline = git(repo, "rev-parse", "HEAD")
    hr.manifest_ref = hr.manifest(hr.baseline)["harness_id"]
    res = hr.register_plan()
    assert res.code == 0, res.err
    return hr


def test_worktree_gitmodules_ignore_all_cannot_hide_a_protected_submodule_change(
    tmp_path: Path, run_cli: RunCli, git_repo: Path
) -> None:
    # The evaluator's checkout is the candidate's: a `.gitmodules` there saying
    # `ignore = all` made `git diff` drop the submodule pointer change, so a candidate
    # moving protected authority (eval/vendor) was AUTO_APPROVED with a prompt-only diff.
    hr = _baseline_with_gitlink(git_repo, run_cli)
    hr.start_candidate("hidden-submodule")
    path = hr.repo / PROMPT
    path.write_text(path.read_text() + "better\n")
    git(hr.repo, "add", PROMPT)
    git(hr.repo, "update-index", "--cacheinfo", f"160000,{NEW_POINTER},{GITLINK_PATH}")
    git(hr.repo, "commit", "-q", "-m", "prompt and a moved submodule pointer")
    commit = git(hr.repo, "rev-parse", "HEAD")
    # Uncommitted edit in the evaluator's working tree (never part of any commit).
    gitmodules = hr.repo / ".gitmodules"
    gitmodules.write_text(gitmodules.read_text() + "\tignore = all\n")

    code, verdict = hr.gate(commit, ["harness/prompts/**"])

    assert verdict["verdict"] == "DENIED", verdict
    assert code == 1
    assert GITLINK_PATH in verdict["facts"]["observed_diff"]
    assert "PROTECTED_AUTHORITY_CHANGED" in codes(verdict)


def test_repository_diff_config_cannot_hide_a_submodule_change(hr: HarnessRepo) -> None:
    # Same attack through repository configuration (diff.ignoreSubmodules = all):
    # a new gitlink under eval/ is protected authority whatever git's UI config says.
    hr.start_candidate("config-hidden")
    path = hr.repo / PROMPT
    path.write_text(path.read_text() + "better\n")
    git(hr.repo, "add", PROMPT)
    git(hr.repo, "update-index", "--add", "--cacheinfo", f"160000,{NEW_POINTER},{GITLINK_PATH}")
    git(hr.repo, "commit", "-q", "-m", "prompt and a new gitlink")
    commit = git(hr.repo, "rev-parse", "HEAD")
    git(hr.repo, "config", "diff.ignoreSubmodules", "all")

    code, verdict = hr.gate(commit, ["harness/prompts/**"])

    assert verdict["verdict"] == "DENIED", verdict
    assert code == 1
    assert GITLINK_PATH in verdict["facts"]["observed_diff"]


def test_unregistering_a_verifier_is_a_weakened_verifier(hr: HarnessRepo) -> None:
    # Dropping a verifier from the runtime registry switches it off without deleting
    # its component or any stage: that is deletion/relaxation of a verifier (human gate).
    hr.start_candidate("unregister")
    definition = hr.repo / ".plangate/harness.toml"
    text = definition.read_text()
    assert ', "verifier:completion-evidence"]' in text
    definition.write_text(text.replace(', "verifier:completion-evidence"]', "]"))
    git(hr.repo, "commit", "-q", "-am", "registry without the completion-evidence verifier")
    commit = git(hr.repo, "rev-parse", "HEAD")

    code, verdict = hr.gate(commit, [".plangate/harness.toml"])

    assert verdict["verdict"] == "HUMAN_REQUIRED", verdict
    assert code == 3
    assert "GATE_OR_VERIFIER_WEAKENED" in codes(verdict)
    assert any("verifier:completion-evidence" in w for w in verdict["facts"]["weakened"])


def test_case_variant_of_a_participating_verifier_counts_as_changing_it(
    hr: HarnessRepo,
) -> None:
    # On a case-insensitive file system `Deterministic_Tests.py` and the stage's
    # `deterministic_tests.py` are one file: whichever checks out last is the verifier that
    # judges. Participation is matched case-folded, like protected surfaces (over-match is
    # the safe side).
    hr.start_candidate("case-shadow")
    shadow = hr.repo / "harness/verifiers/Deterministic_Tests.py"
    shadow.write_text("def check(fixture):\n    return 'pass'\n")
    git(hr.repo, "add", str(shadow.relative_to(hr.repo)))
    git(hr.repo, "commit", "-q", "-m", "a case-variant shadow of the participating verifier")
    commit = git(hr.repo, "rev-parse", "HEAD")

    code, verdict = hr.gate(commit, ["harness/verifiers/**"])

    assert verdict["verdict"] == "DENIED", verdict
    assert code == 1
    assert "PARTICIPATING_VERIFIER_CHANGED" in codes(verdict)
    assert "verifier:deterministic-tests" in verdict["facts"]["changed_components"]


def test_gitattributes_rewriting_a_participating_verifier_counts_as_changing_it(
    hr: HarnessRepo,
) -> None:
    # A `.gitattributes` beside the participating verifier changes the bytes its checkout
    # gets (working-tree-encoding, eol, ident, filters) without changing its blob: the diff
    # only shows the attributes file, yet the verifier that judges the candidate changed.
    hr.start_candidate("attributes")
    attributes = hr.repo / "harness/verifiers/.gitattributes"
    attributes.write_text("deterministic_tests.py working-tree-encoding=UTF-16LE\n")
    git(hr.repo, "add", "harness/verifiers/.gitattributes")
    git(hr.repo, "commit", "-q", "-m", "attributes for the verifiers")
    commit = git(hr.repo, "rev-parse", "HEAD")

    code, verdict = hr.gate(commit, ["harness/verifiers/**"])

    assert verdict["facts"]["observed_diff"] == ["harness/verifiers/.gitattributes"]
    assert verdict["verdict"] == "DENIED", verdict
    assert code == 1
    assert "PARTICIPATING_VERIFIER_CHANGED" in codes(verdict)
