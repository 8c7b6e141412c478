"""What an agent trial copies out of a side's tree: regular files only, never through a
link (a tree under test could otherwise point a harness path at any file here)."""

from __future__ import annotations

from pathlib import Path

from plangate.evaluation.run.trials import tree_files


def _tree(tmp: Path) -> Path:
    root = tmp / "side"
    (root / ".claude" / "skills" / "review").mkdir(parents=True)
    (root / ".claude" / "skills" / "review" / "SKILL.md").write_text("review\n")
    (root / "CLAUDE.md").write_text("rules\n")
    return root


def test_files_and_directories_are_copied_as_regular_files(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert tree_files(root, "CLAUDE.md", 1024) == [("CLAUDE.md", b"rules\n")]
    assert tree_files(root, ".claude/skills", 1024) == [
        (".claude/skills/review/SKILL.md", b"review\n")
    ]
    assert tree_files(root, "missing.md", 1024) == []


def test_nothing_is_read_through_a_link(tmp_path: Path) -> None:
    secret = tmp_path / "outside"
    (secret / "prompts").mkdir(parents=True)
    (secret / "prompts" / "builder.md").write_text("the evaluator's secret\n")
    (secret / "skills").mkdir()
    (secret / "skills" / "x.md").write_text("the evaluator's secret\n")
    root = tmp_path / "side"
    root.mkdir()
    (root / "harness").symlink_to(secret)  # a directory link committed by the candidate
    (root / ".claude").symlink_to(secret)
    (root / "CLAUDE.md").symlink_to(secret / "prompts" / "builder.md")
    assert tree_files(root, "harness/prompts/builder.md", 1024) == []
    assert tree_files(root, ".claude/skills", 1024) == []
    assert tree_files(root, "CLAUDE.md", 1024) == []
    (root / "real").mkdir()
    (root / "real" / "inner").symlink_to(secret)
    assert tree_files(root, "real", 1024) == []
