"""Programs that run project code are never read-only."""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse

RUNS_CODE = [
    "pytest",
    "pytest -q tests",
    "pytest -ocache_dir=x",
    "python3 -c 'import json'",
    "python -m json.tool a",
    "python3.12 x.py",
    "ruff check",
    "ruff check --add-noqa",
    "ruff check --config 'fix = true'",
    "ruff format --check",
    "mypy src",
    "tox exec -- ls",
    "tox -x a=b",
    "nox",
    "make test",
    "npm install",
    "npx x",
    "pip install x",
    "uv run x",
    "cargo test",
    "go test ./...",
    "node x.js",
    "bash x.sh",
    "sh",
    "awk '{print}' f",
    "cd src && pytest",
    "ls && make",
    "timeout 60 pytest -q",
    "env LANG=C pytest",
    "plangate override grant",
]


@pytest.mark.parametrize("command", RUNS_CODE)
def test_project_code_runners_are_never_read_only(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.RUNS_CODE, result
    assert result.runs_code


def test_an_unreadable_part_still_makes_the_whole_unclassified() -> None:
    assert analyse("pytest; rm $X").kind == ShellKind.UNCLASSIFIED


def test_shell_c_script_is_judged_as_a_command() -> None:
    assert analyse("bash -c 'ls -la'").kind == ShellKind.READ_ONLY
    assert [w.path for w in analyse("sh -c 'echo x > f'").writes] == ["f"]
    assert analyse("bash -lc 'pytest -q'").kind == ShellKind.RUNS_CODE
    assert analyse('sh -c "sh -c \'sh -c \\"sh -c ls\\"\'"').kind == ShellKind.UNCLASSIFIED
