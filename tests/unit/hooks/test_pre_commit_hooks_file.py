"""The repository's .pre-commit-hooks.yaml: two hooks a pre-commit framework user adds,
one per stage, each calling a real PlanGate hook host with no file names."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from plangate.hooks.entry import HOSTS

FILE = Path(__file__).resolve().parents[3] / ".pre-commit-hooks.yaml"


def _hooks() -> dict[str, dict[str, object]]:
    data = yaml.safe_load(FILE.read_text("utf-8"))
    assert isinstance(data, list)
    return {hook["id"]: hook for hook in data}


def test_one_hook_per_stage_calling_the_matching_git_host() -> None:
    hooks = _hooks()
    assert set(hooks) == {"plangate-pre-commit", "plangate-pre-push"}
    for hook_id, stage, host in (
        ("plangate-pre-commit", "pre-commit", "git-pre-commit"),
        ("plangate-pre-push", "pre-push", "git-pre-push"),
    ):
        hook = hooks[hook_id]
        assert hook["stages"] == [stage]
        words = shlex.split(str(hook["entry"]))
        assert words == ["plangate", "hook", host]
        assert host in HOSTS


def test_hooks_judge_git_state_not_file_names() -> None:
    for hook in _hooks().values():
        # The framework must not pass file names (the hook reads the index or the range)
        # and must run the hook even when no file matches.
        assert hook["pass_filenames"] is False
        assert hook["always_run"] is True
        assert hook["language"] == "python"
        assert {"id", "name", "entry", "language"} <= set(hook)
