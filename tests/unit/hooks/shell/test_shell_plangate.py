"""``plangate`` in the shell: its read-only subcommands are readers, everything else
changes PlanGate's state and runs as project code."""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse


@pytest.mark.parametrize(
    "command",
    [
        "plangate c3 verify TASK-0001",
        "plangate c3 verify TASK-0001 --json",
        "plangate c3 verify TASK-0001 --expected-sha abc",
        "plangate c3 verify TASK-0001 --expected-sha=abc",
        "plangate status",
        "plangate status TASK-0001 --json",
        "plangate ledger verify",
        "plangate ledger log --kind hook_decision --json",
        "plangate plan lint TASK-0001",
        "plangate surfaces --json",
        "plangate trust show",
        "plangate task show",
        "plangate --version",
        "plangate --help",
        "plangate status --help",
    ],
)
def test_read_only_subcommands_are_readers(command: str) -> None:
    analysis = analyse(command)
    assert analysis.kind == ShellKind.READ_ONLY, analysis
    assert analysis.runs_code == ()
    assert "plangate" in analysis.programs  # still resolved on PATH by the hook


@pytest.mark.parametrize(
    "command",
    [
        "plangate c3 issue TASK-0001 --target-sha HEAD",
        "plangate exec TASK-0001 -- make",
        "plangate override grant --paths x",
        "plangate hooks uninstall --all",
        "plangate setup",
        "plangate task start TASK-0001",
        "plangate ledger export --jsonl out.jsonl",
        "plangate ledger verify --jsonl x",
        "plangate -C /elsewhere status",
        "plangate status --output x",
        "plangate c3 verify TASK-0001 --force",
        "plangate trust",
        "plangate",
        "plangate --version --help",
    ],
)
def test_other_invocations_run_code(command: str) -> None:
    analysis = analyse(command)
    assert analysis.kind != ShellKind.READ_ONLY
    assert analysis.runs_code


def test_a_redirect_after_a_read_only_subcommand_is_still_a_write() -> None:
    analysis = analyse("plangate status > notes.txt")
    assert [w.path for w in analysis.writes] == ["notes.txt"]


def test_a_non_literal_word_is_not_read_only() -> None:
    assert analyse('plangate status "$X"').kind != ShellKind.READ_ONLY
