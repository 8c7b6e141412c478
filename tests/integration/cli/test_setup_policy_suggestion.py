"""``plangate setup`` suggests the common policy for a pull request without a task (printed,
never written), at a real pseudo-terminal."""

from __future__ import annotations

from pathlib import Path

from plangate.delivery.pr_policy import parse_policy
from support.terminal import at_terminal


def test_setup_prints_a_policy_that_parses_and_writes_none(git_repo: Path) -> None:
    proc = at_terminal(git_repo, "setup", "--claude", typed="SETUP\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    text = proc.stdout.replace("\r\n", "\n")
    assert "No .plangate/policy.toml: every pull request needs an approved task" in text
    shown = text[text.index("No .plangate/policy.toml"):].split("\n")[1:]
    suggested = "\n".join(line[4:] for line in shown if line.startswith("    "))
    policy = parse_policy(suggested.encode())
    assert [(r.name, r.human) for r in policy.taskless] == [
        ("docs", False), ("dependencies", True)]
    assert not (git_repo / ".plangate" / "policy.toml").exists()  # a person decides


def test_setup_suggests_nothing_when_the_repository_has_a_policy(git_repo: Path) -> None:
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate" / "policy.toml").write_text("")
    proc = at_terminal(git_repo, "setup", "--claude", typed="SETUP\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "policy.toml" not in proc.stdout
