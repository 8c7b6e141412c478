"""Every evaluation plan and candidate example in the docs registers and passes the gate.

The examples run against the bundled demo harness whose protected surfaces also hold
the bundled template's entries (adopted), so patterns such as ``**/.claude/**`` are in
force: a declared scope a person copies from the docs must not be DENIED.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import pytest
import yaml

from support.cli import RunCli
from support.gate import HarnessRepo, make_harness_repo
from support.repo import git

DOCS = Path(__file__).resolve().parents[3] / "docs"
PAGES = ("evaluation.md", "evaluation-formats.md")


def yaml_blocks(marker: str) -> list[tuple[str, str]]:
    """(page, block) of every fenced yaml block of the evaluation pages holding ``marker``."""
    found = []
    for page in PAGES:
        text = (DOCS / page).read_text()
        for block in re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL):
            if marker in block:
                found.append((page, block))
    return found


def _with_template_surfaces(repo: Path) -> None:
    template = files("plangate.resources").joinpath("protected-surfaces.template.toml")
    body = template.read_text().split("\nversion = 1\n", 1)[1]
    surfaces = repo / ".plangate/protected-surfaces.toml"
    own = surfaces.read_text()
    # Each surface once: the demo already protects its own surfaces definition.
    kept = [b for b in body.split("[[surface]]")[1:] if b.split("\n", 2)[1] not in own]
    surfaces.write_text(own + "".join("\n[[surface]]" + b for b in kept))


@pytest.fixture
def hr(tmp_path: Path, run_cli: RunCli) -> HarnessRepo:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    made = make_harness_repo(repo, run_cli, register=False, prepare=_with_template_surfaces)
    made.env = {k: v for k, v in made.env.items() if not k.startswith(("CLAUDE", "CODEX"))}
    return made


def _fill(block: str, **values: str) -> str:
    for key, value in values.items():
        block = re.sub(rf'^({key}:\s*)"[^"\n]*"', rf'\g<1>"{value}"', block, flags=re.MULTILINE)
    return block


def _register_docs_plan(hr: HarnessRepo) -> str:
    [(_page, block)] = yaml_blocks("plan_id:")
    text = _fill(block, baseline_commit=hr.baseline, baseline_manifest_ref=hr.manifest_ref)
    res = hr.register_plan(text)
    assert res.code == 0, res.err
    return res.out.strip()


def _first_file_under(hr: HarnessRepo, block: str) -> str:
    allowed = yaml.safe_load(block)["allowed_paths"]
    prefix = next(p for p in allowed if not p.startswith("!")).split("*", 1)[0]
    tracked = git(hr.repo, "ls-tree", "-r", "--name-only", hr.baseline).splitlines()
    return next(path for path in tracked if path.startswith(prefix))


def test_the_docs_name_a_plan_and_candidates() -> None:
    assert len(yaml_blocks("plan_id:")) == 1
    assert len(yaml_blocks("candidate_id:")) >= 2


@pytest.mark.parametrize(
    "example", yaml_blocks("candidate_id:"), ids=lambda e: f"{e[0]}:{e[1].splitlines()[1]}"
)
def test_a_docs_candidate_passes_the_gate(hr: HarnessRepo, example: tuple[str, str]) -> None:
    plan_digest = _register_docs_plan(hr)
    _page, block = example
    path = _first_file_under(hr, block)
    hr.start_candidate("docs-example")
    target = hr.repo / path
    target.write_text(target.read_text() + "\n# a small improvement\n")
    git(hr.repo, "commit", "-q", "-am", "docs example candidate")
    commit = git(hr.repo, "rev-parse", "HEAD")
    doc = _fill(block, candidate_commit=commit)
    candidate_file = hr.repo.parent / "candidate.yaml"
    candidate_file.write_text(doc)
    reg = hr.cli("eval", "candidate", "register", str(candidate_file), "--json")
    assert reg.code == 0, reg.err
    assert json.loads(reg.out)["evaluation_plan_digest"] == plan_digest
    gate = hr.cli("eval", "gate", json.loads(reg.out)["candidate_digest"], "--json")
    verdict = json.loads(gate.out)
    assert verdict["verdict"] == "AUTO_APPROVED", verdict["reasons"]


def test_without_the_exclusion_the_refusal_names_what_to_exclude(hr: HarnessRepo) -> None:
    _register_docs_plan(hr)
    hr.start_candidate("no-exclusion")
    target = hr.repo / "harness/prompts/builder.md"
    target.write_text(target.read_text() + "\n# more\n")
    git(hr.repo, "commit", "-q", "-am", "candidate")
    commit = git(hr.repo, "rev-parse", "HEAD")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert verdict["verdict"] == "DENIED"
    [reason] = [r for r in verdict["reasons"] if r["code"].startswith("DECLARED_SCOPE")]
    assert '"!**/.claude/**"' in reason["hint"]
    assert "!protected-anywhere" in reason["hint"]
    code, verdict = hr.gate(commit, ["harness/prompts/**", "!protected-anywhere"])
    assert verdict["verdict"] == "AUTO_APPROVED", verdict["reasons"]
    assert code == 0


def test_the_anywhere_exclusion_never_excludes_authority_at_a_fixed_place(
    hr: HarnessRepo,
) -> None:
    _register_docs_plan(hr)
    hr.start_candidate("grader")
    target = hr.repo / "harness/prompts/builder.md"
    target.write_text(target.read_text() + "\n# more\n")
    git(hr.repo, "commit", "-q", "-am", "candidate")
    commit = git(hr.repo, "rev-parse", "HEAD")
    _code, verdict = hr.gate(commit, ["harness/**", "eval/**", "!protected-anywhere"])
    assert verdict["verdict"] == "DENIED"
    hits = verdict["facts"]["declared_scope_hits"]
    assert {h["allowed_path"] for h in hits} == {"eval/**"}


def test_an_excluded_path_in_the_diff_is_outside_the_scope(hr: HarnessRepo) -> None:
    _register_docs_plan(hr)
    hr.start_candidate("excluded")
    for rel in ("harness/prompts/builder.md", "harness/skills/review.md"):
        target = hr.repo / rel
        target.write_text(target.read_text() + "\n# more\n")
    git(hr.repo, "commit", "-q", "-am", "candidate")
    commit = git(hr.repo, "rev-parse", "HEAD")
    _code, verdict = hr.gate(
        commit, ["harness/**", "!harness/skills/**", "!protected-anywhere"]
    )
    assert verdict["verdict"] == "HUMAN_REQUIRED"
    assert verdict["facts"]["outside_allowed_paths"] == ["harness/skills/review.md"]
