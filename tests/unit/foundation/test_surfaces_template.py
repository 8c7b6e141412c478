"""The bundled protected-surfaces template: what it protects, with which class, and what not.

The template is what a new team starts from and what the hooks use before a repository
defines its own surfaces, so it must cover every file through which an agent host or a
developer tool runs commands, loads instructions or changes what the hooks and CI enforce,
and leave ordinary source alone.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from plangate.surfaces import (
    TEMPLATE_MARKER,
    ResolvedSurfaces,
    bundled_template_bytes,
    load_surfaces_bytes,
    plain_toml,
)


def template() -> ResolvedSurfaces:
    """The template as the hooks see it (it carries its marker, so it is also unresolved)."""
    return load_surfaces_bytes(bundled_template_bytes(), "bundled_template", "template")


# (path, class, read at any depth): a host or tool that reads the file in any directory
# must be covered there too, so those paths are also checked two directories down.
COVERED: list[tuple[str, str, bool]] = [
    # Claude Code
    ("CLAUDE.md", "rules", True),
    ("CLAUDE.local.md", "rules", True),
    (".claude/CLAUDE.md", "rules", True),
    (".claude/rules/style.md", "rules", False),
    (".claude/commands/ship.md", "rules", False),
    (".claude/agents/reviewer.md", "rules", False),
    (".claude/skills/deploy/SKILL.md", "rules", True),
    (".claude/skills/deploy/scripts/run.sh", "rules", True),
    (".claude/settings.json", "settings", False),
    (".claude/settings.local.json", "settings", False),
    (".claude/hooks/guard.sh", "hook", False),
    (".claude/output-styles/terse.md", "settings", True),
    ("apps/web/.claude/settings.json", "settings", True),
    ("apps/web/.claude/commands/ship.md", "settings", True),
    (".mcp.json", "settings", True),
    (".claude-plugin/plugin.json", "plugin-dist", True),
    (".claude-plugin/marketplace.json", "plugin-dist", True),
    # Codex
    ("AGENTS.md", "rules", True),
    ("AGENTS.override.md", "rules", True),
    (".codex/config.toml", "settings", False),
    (".codex/hooks.json", "hook", False),
    (".codex/hooks/guard.sh", "hook", False),
    (".codex/agents/reviewer.toml", "settings", True),
    ("apps/web/.codex/config.toml", "settings", True),
    (".agents/skills/release/SKILL.md", "rules", True),
    (".agents/plugins/marketplace.json", "rules", True),
    (".codex-plugin/plugin.json", "plugin-dist", True),
    # Cursor
    (".cursor/rules/python.mdc", "rules", True),
    (".cursor/commands/review.md", "rules", True),
    (".cursorrules", "rules", False),
    (".cursor/mcp.json", "settings", False),
    (".cursor/hooks.json", "settings", False),
    (".cursor/environment.json", "settings", False),
    (".cursor/hooks/guard.sh", "hook", False),
    (".cursor/notes/anything.txt", "settings", True),
    # GitHub Copilot and Gemini CLI
    (".github/copilot-instructions.md", "rules", False),
    (".github/instructions/python.instructions.md", "rules", False),
    (".github/prompts/release.prompt.md", "rules", False),
    (".github/agents/reviewer.agent.md", "rules", False),
    (".github/skills/release/SKILL.md", "rules", False),
    ("GEMINI.md", "rules", True),
    (".gemini/settings.json", "settings", True),
    # what runs on a directory change, an opened folder or a commit
    (".envrc", "hook", True),
    (".env", "settings", True),
    (".vscode/tasks.json", "hook", True),
    (".vscode/settings.json", "settings", True),
    (".vscode/launch.json", "settings", True),
    (".vscode/mcp.json", "settings", True),
    ("team.code-workspace", "settings", False),
    (".devcontainer/devcontainer.json", "hook", True),
    (".devcontainer/python/devcontainer.json", "hook", True),
    (".devcontainer/Dockerfile", "hook", True),
    (".devcontainer.json", "hook", True),
    (".idea/watcherTasks.xml", "hook", True),
    (".pre-commit-config.yaml", "hook", False),
    (".husky/pre-commit", "hook", False),
    (".githooks/pre-push", "hook", False),
    ("lefthook.yml", "hook", False),
    ("lefthook-local.yml", "hook", False),
    (".lefthook.yml", "hook", False),
    (".lefthook/pre-commit/lint.sh", "hook", False),
    # git's own files that choose programs or code
    (".gitattributes", "settings", True),
    (".gitmodules", "settings", False),
    # CI
    (".github/workflows/ci.yml", "ci", False),
    (".github/workflows/nested/deploy.yaml", "ci", False),
    (".github/actions/setup/action.yml", "ci", False),
    (".gitlab-ci.yml", "ci", False),
    (".gitlab/ci/test.yml", "ci", False),
    (".circleci/config.yml", "ci", False),
    ("Jenkinsfile", "ci", True),
    ("services/api/Jenkinsfile", "ci", True),
    ("azure-pipelines.yml", "ci", True),
    ("azure-pipelines.yaml", "ci", True),
    (".azure-pipelines/build.yml", "ci", False),
    (".buildkite/pipeline.yml", "ci", False),
    ("bitbucket-pipelines.yml", "ci", False),
    (".travis.yml", "ci", False),
    (".drone.yml", "ci", False),
    (".woodpecker.yml", "ci", False),
    (".woodpecker/test.yml", "ci", False),
    ("appveyor.yml", "ci", False),
    (".appveyor.yml", "ci", False),
    (".cirrus.yml", "ci", False),
    (".forgejo/workflows/ci.yml", "ci", False),
    (".gitea/workflows/ci.yml", "ci", False),
    # who must approve
    (".github/CODEOWNERS", "approval", False),
    ("CODEOWNERS", "approval", False),
    ("docs/CODEOWNERS", "approval", False),
    (".gitlab/CODEOWNERS", "approval", False),
    # PlanGate's own files
    ("docs/working/TASK-0001/approvals/c3.json", "approval", True),
    (".plangate/protected-surfaces.toml", "surfaces-definition", False),
    (".plangate/trust.toml", "approval", False),
    (".plangate/allowed_signers", "approval", False),
    (".plangate/revoked_signers", "approval", False),
    (".plangate/ledger.sqlite3", "ledger", False),
    (".plangate/config.toml", "settings", False),
    (".plangate/harness.toml", "settings", False),
    (".plangate/tools.toml", "settings", False),
]


def _swapped(path: str) -> str:
    """Every other letter's case swapped: matching folds case, so this is still the file."""
    return "".join(c.swapcase() if i % 2 else c for i, c in enumerate(path))


def _variants(path: str, any_depth: bool) -> list[str]:
    paths = [path, path.upper(), _swapped(path)]
    if any_depth:
        paths += [f"apps/web/{path}", f"Apps/Web/{path.upper()}"]
    return paths


@pytest.mark.parametrize(
    ("path", "cls", "any_depth"), COVERED, ids=[p for p, _c, _d in COVERED]
)
def test_the_template_protects_each_file_with_its_class(
    path: str, cls: str, any_depth: bool
) -> None:
    resolved = template()
    for variant in _variants(path, any_depth):
        hit = resolved.match(variant)
        assert hit is not None, f"{variant} is not protected by the template"
        assert hit.cls == cls, (variant, hit)
        assert hit.reason.strip(), variant


ORDINARY = [
    "src/app.py",
    "tests/test_app.py",
    "README.md",
    "docs/guide.md",
    "src/app/settings.py",
    "src/skills/loader.py",
    "config/settings.json",
    "tasks.json",
    "docs/devcontainer.md",
    "docs/ci.md",
    ".env.example",
    "src/env.py",
    ".gitignore",
    "pyproject.toml",
    "Makefile",
    "package.json",
    "src/workflows/run.py",
]


@pytest.mark.parametrize("path", ORDINARY)
def test_the_template_leaves_ordinary_source_unprotected(path: str) -> None:
    assert template().match(path) is None


def _sample(pattern: str) -> str:
    """A path the pattern covers: '**' as one segment 'x', '*' and '?' as 'x'."""
    return "/".join("x" if s == "**" else re.sub(r"[*?]", "x", s) for s in pattern.split("/"))


def test_every_template_entry_is_the_first_match_of_a_path_it_covers() -> None:
    # An entry shadowed by an earlier one never gives its class or reason: the order of
    # the file (specific entries before each directory's catch-all) is part of it.
    resolved = template()
    assert resolved.pattern_count > 70
    for entry in resolved.entries:
        sample = _sample(entry.pattern)
        hit = resolved.match(sample)
        assert hit is not None and hit.pattern == entry.pattern, (entry.pattern, sample, hit)


def test_the_template_stays_in_the_plain_form_the_hooks_read_without_tomllib() -> None:
    text = bundled_template_bytes().decode("utf-8")
    assert text.splitlines()[0].startswith("# " + TEMPLATE_MARKER)
    assert plain_toml(text) == tomllib.loads(text)
    assert plain_toml(text) is not None


def test_the_documentation_names_every_template_entry() -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "protected-surfaces.md").read_text()
    missing = [e.pattern for e in template().entries if f"`{e.pattern}`" not in doc]
    assert missing == [], "docs/protected-surfaces.md does not list these template entries"
