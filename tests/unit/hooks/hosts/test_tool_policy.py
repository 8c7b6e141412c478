"""The tool policy (.plangate/tools.toml): exact names and globs declare MCP tools
read-only; anything unexpected declares nothing and says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.hooks.hosts.tool_policy import load_policy, parse_policy


def test_exact_names_and_globs_declare_read_only() -> None:
    policy = parse_policy(b'[mcp]\nread_only = ["mcp__docs__search", "mcp__gh__get_*", "q?"]\n')
    assert policy.problem == ""
    assert policy.declares_read_only("mcp__docs__search")
    assert policy.declares_read_only("mcp__gh__get_issue")
    assert policy.declares_read_only("q1")
    assert not policy.declares_read_only("mcp__docs__searchx")
    assert not policy.declares_read_only("mcp__gh__create_issue")
    assert not policy.declares_read_only("q12")


def test_matching_is_case_sensitive() -> None:
    assert not parse_policy(b'[mcp]\nread_only = ["mcp__a__b"]\n').declares_read_only("MCP__A__B")


@pytest.mark.parametrize(
    "text",
    [
        b"not toml = =",
        b"\xff\xfe",
        b'[mcp]\nread_only = "mcp__a__b"\n',
        b'[mcp]\nread_only = [1]\n',
        b'[mcp]\nread_only = [""]\n',
        b'[mcp]\nread_only = ["mcp__[ab]__x"]\n',
        b'[mcp]\nread_only = ["*"]\nwrite = ["*"]\n',
        b'mcp = 3\n',
        b'[tools]\nread_only = ["*"]\n',
    ],
)
def test_unusable_policies_declare_nothing_and_say_why(text: bytes) -> None:
    policy = parse_policy(text)
    assert policy.problem
    assert not policy.declares_read_only("mcp__a__b")


def test_missing_file_declares_nothing_without_a_problem(tmp_path: Path) -> None:
    policy = load_policy(str(tmp_path))
    assert policy.problem == ""
    assert not policy.declares_read_only("mcp__a__b")


def test_a_linked_policy_file_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / ".plangate").mkdir()
    (tmp_path / "elsewhere.toml").write_text('[mcp]\nread_only = ["*"]\n')
    (tmp_path / ".plangate" / "tools.toml").symlink_to(tmp_path / "elsewhere.toml")
    policy = load_policy(str(tmp_path))
    assert policy.problem
    assert not policy.declares_read_only("mcp__a__b")


def test_a_policy_reached_through_a_linked_directory_is_a_problem(tmp_path: Path) -> None:
    """``.plangate`` swapped for a link to a directory holding a permissive policy: that policy
    is not read (the link is never followed), and nothing is declared."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "tools.toml").write_text('[mcp]\nread_only = ["*"]\n')
    (tmp_path / ".plangate").symlink_to(tmp_path / "elsewhere")
    policy = load_policy(str(tmp_path))
    assert "symbolic link" in policy.problem
    assert not policy.declares_read_only("mcp__a__b")
