"""The compatibility corpus: 60 real task directories, run as a migrating team runs them.

The corpus lives outside the project (``../shared/corpus/`` next to the repository root) and
is copied into a temporary git repository at test time; it is never part of the project.
For every task the test asserts the outcome of the scope rules (does a scope derive, how many
allowed patterns, exactly which denied ones), that no path of a "not to touch" sub-section is
ever in scope, and that the commands a migrating user runs answer without a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from plangate.plan.files_section import heading
from plangate.plan.scope import derive_scope
from support.cli import run_cli_in
from support.repo import commit_all, git

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"
# the one collection of task directories the corpus holds: <collection>/docs/working/
_COLLECTIONS = sorted(CORPUS.glob("*/docs/working")) if CORPUS.is_dir() else []
TASKS = _COLLECTIONS[0] if len(_COLLECTIONS) == 1 else CORPUS / "missing" / "docs" / "working"

pytestmark = pytest.mark.skipif(
    not TASKS.is_dir(),
    reason=f"the compatibility corpus is not present at {CORPUS} (it lives outside the project)",
)

D, L, S = "DERIVES", "LOOPSPEC_UNDERIVABLE", "SCOPE_UNDERIVABLE"
AGENT_DOCS = (
    "CLAUDE.md",
    "AGENTS.md",
    ".claude/rules/**",
    ".claude/commands/**",
    ".claude/agents/**",
    "plugin/plangate/**",
)

# task: (lint verdict, number of allowed patterns, denied patterns in order)
EXPECTED: dict[str, tuple[str, int, tuple[str, ...]]] = {
    "TASK-0017": (L, 9, ()),
    "TASK-0018": (L, 11, ()),
    "TASK-0019": (L, 14, ()),
    "TASK-0020": (L, 4, ()),
    "TASK-0022": (
        L,
        6,
        ("docs/plangate.md", "docs/plangate-v6-roadmap.md", "docs/working/TASK-0021/pbi-input.md"),
    ),
    "TASK-0024": (L, 13, ()),
    "TASK-0025": (L, 9, ()),
    "TASK-0026": (L, 5, ()),
    "TASK-0027": (L, 5, ()),
    "TASK-0028": (L, 5, ()),
    "TASK-0030": (S, 0, ()),
    "TASK-0038": (
        L,
        14,
        (
            "workflows/*.yaml",
            ".claude/agents/**",
            ".claude/skills/**",
            "bin/plangate",
            "tests/**",
            "fixtures/**",
        ),
    ),
    "TASK-0039": (
        L,
        13,
        (
            "bin/**",
            "schemas/**",
            ".github/workflows/**",
            "docs/orchestrator-mode.md",
            "docs/plangate.md",
            "docs/plangate-v7-hybrid.md",
        ),
    ),
    "TASK-0040": (
        L,
        5,
        (
            *AGENT_DOCS[:5],
            "plugin/plangate/**",
            "bin/**",
            ".github/workflows/**",
            "schemas/*.schema.json",
        ),
    ),
    "TASK-0041": (
        L,
        5,
        (
            "CLAUDE.md",
            "AGENTS.md",
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".claude/hooks/**",
            "bin/**",
            ".github/workflows/**",
            "plugin/plangate/**",
        ),
    ),
    "TASK-0042": (L, 7, (*AGENT_DOCS, "schemas/*.schema.json")),
    "TASK-0043": (L, 14, (*AGENT_DOCS, ".github/workflows/**", "docs/ai/model-profiles.yaml")),
    "TASK-0044": (
        L,
        12,
        (*AGENT_DOCS, "docs/ai/*.md", "schemas/*.schema.json", ".github/workflows/**"),
    ),
    "TASK-0045": (S, 0, ()),
    "TASK-0059": (S, 0, ()),
    "TASK-0069": (L, 6, ("tests/run-tests.sh",)),
    "TASK-0070": (L, 5, ()),
    "TASK-0071": (L, 8, ()),
    "TASK-0072": (L, 5, ()),
    "TASK-0073": (L, 6, ()),
    "TASK-0074": (L, 3, ()),
    "TASK-0075": (L, 5, ()),
    "TASK-0076": (L, 2, ()),
    # a note paragraph in the Files section is neither a path list nor a deny form
    "TASK-0077": (S, 0, ()),
    "TASK-0078": (
        L,
        3,
        (
            "scripts/hooks/check-auth-preflight.sh",
            "scripts/hooks/check-delegation-commit-boundary.sh",
            "scripts/hooks/check-plan-hash.sh",
        ),
    ),
    "TASK-0079": (L, 2, ("docs/working/TASK-0077/**",)),
    "TASK-0080": (L, 6, ()),
    "TASK-0081": (
        L,
        2,
        (
            "orchestrator-mode.md",
            "working-context.md",
            "mode-classification.md",
            "docs/ai/settings-wiring-contract.md",
            "docs/working/TASK-0077/**",
        ),
    ),
    # "(... P4d非改変)" (full-width brackets) after an allowed path may say "not modified" in unrecognised words
    "TASK-0082": (S, 0, ()),
    "TASK-0083": (S, 0, ()),
    "TASK-0084": (S, 0, ()),
    "TASK-0085": (S, 0, ()),
    "TASK-0086": (S, 0, ()),
    "TASK-0087": (L, 2, ()),
    "TASK-0088": (S, 0, ()),
    "TASK-0089": (L, 5, ()),
    "TASK-0090": (L, 3, ()),
    "TASK-0091": (L, 4, ()),
    "TASK-0092": (L, 5, ()),
    "TASK-0093": (L, 5, ()),
    "TASK-0094": (L, 3, ()),
    "TASK-0095": (L, 3, ()),
    "TASK-0096": (L, 5, ()),
    "TASK-0097": (L, 5, ()),
    "TASK-0098": (L, 4, ()),
    "TASK-0099": (L, 2, ()),
    "TASK-0100": (L, 6, ()),
    "TASK-0101": (L, 1, ()),
    "TASK-0102": (L, 1, ()),
    "TASK-0103": (L, 2, ()),
    "TASK-0104": (L, 1, ()),
    "TASK-0105": (L, 3, ()),
    "TASK-0106": (L, 8, ()),
    "TASK-1025": (D, 3, ("bin/plangate", "c3.json")),  # its "### Out of Scope" denies
    "TASK-1101": (L, 6, ()),
}


@pytest.fixture(scope="module")
def corpus_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("corpus") / "repo"
    shutil.copytree(TASKS, repo / "docs" / "working")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Migrating Team")
    git(repo, "config", "user.email", "team@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    commit_all(repo, "bring the legacy tasks")
    return repo


def _plan(repo: Path, task: str) -> bytes:
    return (repo / "docs" / "working" / task / "plan.md").read_bytes()


# What the corpus's "not to touch" sub-section headings say, read independently of the rules.
CORPUS_DENY_WORDS = ("\u89e6\u3089\u306a\u3044", "forbidden", "\u53c2\u7167\u306e\u307f")


def _deny_subsection_spans(plan: str) -> list[str]:
    """Code spans under a level-3+ heading of the Files section that says not to touch."""
    spans: list[str] = []
    in_files = denying = False
    for line in plan.splitlines():
        head = heading(line)
        if head is not None and head[0] <= 2:
            in_files = head[1].startswith("Files / Components to Touch")
            denying = False
        elif head is not None and in_files:
            denying = any(word in head[1] for word in CORPUS_DENY_WORDS)
        elif in_files and denying:
            parts = line.split("`")
            spans.extend(parts[i] for i in range(1, len(parts) - 1, 2))
    return spans


def test_the_corpus_has_sixty_tasks_and_the_table_names_each() -> None:
    assert sorted(p.name for p in TASKS.iterdir()) == sorted(EXPECTED)
    # the oracle below sees the deny sub-sections of eight real plans
    with_deny = [t for t in EXPECTED if _deny_subsection_spans((TASKS / t / "plan.md").read_text())]
    assert len(with_deny) == 8


def test_lint_all_reports_every_task_with_the_outcome_of_the_rules(corpus_repo: Path) -> None:
    result = run_cli_in(corpus_repo, "plan", "lint", "--all", "--json")
    assert result.code == 1  # not every plan derives its LoopSpec
    doc = json.loads(result.out)
    got = {
        t["task_id"]: (t["verdict"], len(t["allowed_paths"]), tuple(t["denied_paths"]))
        for t in doc["tasks"]
    }
    assert got == EXPECTED
    assert doc["summary"] == {
        "tasks": 60,
        "derive_loopspec": 1,
        "derive_scope": 50,
        "scope_underivable": 10,
        "with_denied_paths": 13,
    }


@pytest.mark.parametrize("task", sorted(EXPECTED))
def test_no_path_of_a_deny_subsection_is_ever_in_scope(corpus_repo: Path, task: str) -> None:
    plan = _plan(corpus_repo, task)
    scope = derive_scope(plan)
    assert scope.defined == (EXPECTED[task][0] != S)
    for span in _deny_subsection_spans(plan.decode("utf-8")):
        probe = span.replace("**", "x/y").replace("*", "x")
        probe = probe + "x.md" if probe.endswith("/") else probe
        assert not scope.allows(probe), (task, span)
    for pattern in scope.denied:
        probe = pattern.replace("**", "x/y").replace("*", "x")
        assert not scope.allows(probe) and not scope.allows(probe.upper()), (task, pattern)


def test_forbidden_paths_and_non_path_spans_of_real_plans(corpus_repo: Path) -> None:
    t39 = derive_scope(_plan(corpus_repo, "TASK-0039"))
    assert not t39.allows("bin/plangate") and not t39.allows(".github/workflows/ci.yml")
    assert t39.allows("CLAUDE.md") and t39.allows(".claude/agents/implementer.md")
    t41 = derive_scope(_plan(corpus_repo, "TASK-0041"))
    assert not t41.allows(".claude/hooks/pre.sh") and not t41.allows("CLAUDE.md")
    t69 = derive_scope(_plan(corpus_repo, "TASK-0069"))
    assert "--fix/--dry-run/--yes" not in (t69.patterns or ())
    assert not t69.allows("tests/run-tests.sh") and t69.allows("scripts/doctor_fix.py")
    t106 = derive_scope(_plan(corpus_repo, "TASK-0106"))
    assert "os.replace" not in (t106.patterns or ())
    t22 = derive_scope(_plan(corpus_repo, "TASK-0022"))
    assert not t22.allows("docs/plangate.md")  # "reference only (do not rewrite)"


def test_annotated_headings_directories_and_bare_paths_of_real_plans(corpus_repo: Path) -> None:
    t73 = derive_scope(_plan(corpus_repo, "TASK-0073"))  # annotated heading, dir/, glob
    assert t73.allows("scripts/hooks/new-hook.sh") and t73.allows(".claude/settings.local.json")
    t17 = derive_scope(_plan(corpus_repo, "TASK-0017"))  # bare paths in a table's path column
    assert t17.allows("plugin/plangate/.claude-plugin/plugin.json")
    t105 = derive_scope(_plan(corpus_repo, "TASK-0105"))  # bare entries over two lines
    assert t105.patterns == (
        "scripts/hooks/check-plan-hash.sh",
        "tests/extras/ta-11-plan-hash-contract.sh",
        "docs/ai/hook-enforcement.md",
    )


def test_lint_names_the_smallest_edit_for_plans_that_do_not_derive(corpus_repo: Path) -> None:
    for task, heading_text in (
        ("TASK-0045", "\u5909\u66f4\u30d5\u30a1\u30a4\u30eb"),
        ("TASK-0059", "Files to Touch"),
        ("TASK-0084", "Files"),
    ):
        doc = json.loads(run_cli_in(corpus_repo, "plan", "lint", task, "--json").out)
        assert doc["verdict"] == S
        assert doc["edits"][0].endswith(
            f"rename '## {heading_text}' to '## Files / Components to Touch'"
        )
    doc = json.loads(run_cli_in(corpus_repo, "plan", "lint", "TASK-0040", "--json").out)
    assert {
        "allowed": "schemas/model-profile.schema.json",
        "denied_by": "schemas/*.schema.json",
    } in doc["conflicts"]
    doc = json.loads(run_cli_in(corpus_repo, "plan", "lint", "TASK-0039", "--json").out)
    assert doc["verification_subsection"] and "Verification Automation" in doc["edits"][-1]


def test_status_and_verify_follow_the_contract_on_every_legacy_record(corpus_repo: Path) -> None:
    result = run_cli_in(corpus_repo, "status", "--json")
    assert result.code == 0 and "Traceback" not in result.err
    rows = json.loads(result.out)["tasks"]
    legacy = [r for r in rows if r["record"] == "legacy"]
    approved = [r for r in legacy if r["decision"] == "APPROVED"]
    conditional = [r for r in legacy if r["decision"] == "CONDITIONAL"]
    assert len(approved) == 38 and len(conditional) == 7
    # A legacy record approved the plan's bytes, not a derived scope: where the plan derives
    # a scope, exec and status refuse it alike until it is approved again; where no scope
    # derives, the approval holds and allows nothing.
    complete = [r for r in approved if r["package"] == "6/6"]
    assert complete
    for row in complete:
        if EXPECTED[row["task"]][0] == S:
            assert row["verdict"] == "ACCEPTED", row["task"]
        else:
            assert (row["verdict"], row["first_reason"]) == ("REJECTED", "SCOPE_NOT_APPROVED")
    assert {r["verdict"] for r in complete} == {"ACCEPTED", "REJECTED"}
    assert {r["verdict"] for r in conditional} == {"HUMAN_ESCALATED"}
    for row in rows:  # the first reason is the verdict's own
        codes = [r["code"] for r in row["reasons"]]
        assert row["first_reason"] == (codes[0] if codes else "")
        if row["verdict"] == "ACCEPTED":
            assert row["first_reason"] == ""


def test_loopspec_check_json_prints_one_object_for_every_task(corpus_repo: Path) -> None:
    for task in sorted(EXPECTED):
        result = run_cli_in(
            corpus_repo, "loopspec", task, "--maker", "m", "--checker", "c", "--check", "--json"
        )
        doc = json.loads(result.out)  # one object, whatever the outcome
        assert result.code in (1, 3) and doc["verdict"] != "ACCEPTED"
        assert "Traceback" not in result.err

