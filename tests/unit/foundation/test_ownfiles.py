"""The files PlanGate never blames: one table, two checks, setup's ignore lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from plangate.hooks.setup import IGNORED
from plangate.ownfiles import (
    COMMITTED,
    HISTORY,
    LOCAL,
    OWN_FILES,
    WORKTREE,
    never_blamed,
    never_blamed_of,
    own_file,
    owned_directories,
    setup_ignore_lines,
)

LOCAL_EXAMPLES = {
    ".plangate/ledger.sqlite3": "the SQLite ledger",
    ".plangate/ledger.sqlite3-wal": "the ledger's journal files",
    ".plangate/locks/TASK-0001.lock": "lock files of exec, delivery and overrides",
    ".plangate/eval-plan-0123.lock": "lock files of evaluation runs",
    ".plangate/session/claude-1.json": "task sessions and their baselines",
    ".plangate/runs/TASK-0001-1/tree/src/app.py": "exec's isolated runs",
    ".plangate/doctor-canary": "doctor's canary",
    "docs/working/TASK-0001/run.ndjson": "exec's run log of a task",
}


@pytest.mark.parametrize("path", sorted(LOCAL_EXAMPLES))
def test_each_local_file_is_never_blamed_in_the_working_tree_only(path: str) -> None:
    row = own_file(path)
    assert row is not None and row.what == LOCAL_EXAMPLES[path] and row.kept == LOCAL
    assert never_blamed(path, WORKTREE)
    assert not never_blamed(path, HISTORY)


def test_claude_local_settings_are_the_hosts_and_local() -> None:
    row = own_file(".claude/settings.local.json")
    assert row is not None and row.writer == "host" and row.kept == LOCAL
    assert never_blamed(".claude/settings.local.json", WORKTREE)
    assert not never_blamed(".claude/settings.local.json", HISTORY)


@pytest.mark.parametrize(
    "path", [".plangate/.gitignore", "docs/working/TASK-0001/delivery/record.jsonl"]
)
def test_committed_files_plangate_writes_are_never_blamed(path: str) -> None:
    row = own_file(path)
    assert row is not None and row.kept == COMMITTED and row.ignore_line == ""
    assert never_blamed(path, WORKTREE)
    assert never_blamed(path, HISTORY)


@pytest.mark.parametrize(
    "path",
    [
        "CLAUDE.local.md",
        ".claude/settings.json",
        ".codex/config.toml",
        ".plangate/protected-surfaces.toml",
        ".plangate/trust.toml",
        ".plangate/config.toml",
        ".plangate/ledger-checkpoint.json",
        ".plangate/LEDGER.sqlite3",
        ".plangate/locks",
        "sub/.plangate/session/x",
        "docs/working/TASK-0001/approvals/c3.json",
        "docs/working/TASK-0001/sub/run.ndjson",
        "docs/working/TASK-0001/delivery/other.jsonl",
    ],
)
def test_nothing_else_is_listed(path: str) -> None:
    assert own_file(path) is None
    assert not never_blamed(path, WORKTREE)
    assert not never_blamed(path, HISTORY)


def test_owned_directories_are_the_whole_directory_rows() -> None:
    assert owned_directories() == (".plangate/locks", ".plangate/session", ".plangate/runs")


def test_setup_ignores_every_local_row(tmp_path: Path) -> None:
    """Every LOCAL row is ignored by the lines setup writes (git itself answers), and the
    committed row is not: local state cannot slip into a commit."""
    assert setup_ignore_lines() == IGNORED
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("\n".join(IGNORED) + "\n")
    committed = {".plangate/.gitignore", "docs/working/TASK-0001/delivery/record.jsonl"}
    examples = [*LOCAL_EXAMPLES, ".claude/settings.local.json", *sorted(committed)]
    proc = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=tmp_path, input="\n".join(examples), capture_output=True, text=True, check=False,
    )
    ignored = set(proc.stdout.split())
    assert ignored == set(examples) - committed
    assert {row.kept for row in OWN_FILES} == {LOCAL, COMMITTED}


def test_the_paths_never_blamed_are_picked_from_a_list_as_one_by_one() -> None:
    from plangate.paths import CanonicalPath

    listed = [*LOCAL_EXAMPLES, ".plangate/.gitignore", "src/app.py",
              "docs/working/TASK-0001/delivery/record.jsonl", "docs/working/TASK-0001/plan.md"]
    paths = [CanonicalPath(p) for p in listed]
    for check in (WORKTREE, HISTORY):
        assert never_blamed_of(paths, check) == [p for p in paths if never_blamed(p, check)]
    assert never_blamed_of(paths, HISTORY) == [
        ".plangate/.gitignore", "docs/working/TASK-0001/delivery/record.jsonl"]
