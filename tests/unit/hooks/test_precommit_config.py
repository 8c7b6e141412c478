"""PlanGate's entry in a pre-commit configuration: where the framework runs PlanGate, and
the append setup makes only when it reads back as the old configuration plus that entry."""

from __future__ import annotations

import pytest
import yaml

from plangate.errors import InputRejected
from plangate.hooks.precommit import (
    HOOK_IDS,
    judge_config,
    local_entry,
    planned_config,
    skipped_by_env,
)

TEAM = b"""\
# the team's hooks
repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.6.9
    hooks:
      - id: ruff
"""


def test_the_entry_is_appended_and_everything_else_is_kept() -> None:
    after = planned_config(TEAM)
    assert after is not None
    assert after.startswith(TEAM)
    value = yaml.safe_load(after)
    assert value["repos"][0]["hooks"] == [{"id": "ruff"}]
    assert value["repos"][1]["repo"] == "local"
    assert judge_config(after).stages == {
        "pre-commit": "plangate hook git-pre-commit",
        "pre-push": "plangate hook git-pre-push",
    }
    assert planned_config(after) is None  # a second run changes nothing


@pytest.mark.parametrize("indent", ["", "    "])
def test_the_list_s_own_indentation_is_followed(indent: str) -> None:
    text = f"repos:\n{indent}- repo: local\n{indent}  hooks: []\n".encode()
    after = planned_config(text)
    assert after is not None
    assert f"\n{indent}- repo: local\n{indent}  hooks:\n" in after.decode()[len(text) - 1:]
    assert len(yaml.safe_load(after)["repos"]) == 2


def test_a_file_without_a_final_newline_is_completed() -> None:
    after = planned_config(TEAM.rstrip(b"\n"))
    assert after is not None and len(yaml.safe_load(after)["repos"]) == 2


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (TEAM + b"default_stages: [pre-commit]\n", "not the last block"),
        (b"repos: []\n", "not the last block"),
        (b"repos:\n\t- repo: local\n", "not valid YAML"),
        (b"not: [a, list\n", "not valid YAML"),
        (b"hooks: []\n", "no list 'repos'"),
        (TEAM + b"  - repo: local\n    hooks:\n      - id: plangate-pre-commit\n"
                b"        entry: plangate hook git-pre-commit\n        language: system\n"
                b"        stages: [pre-commit]\n", "at pre-commit only"),
    ],
)
def test_what_cannot_be_appended_safely_is_refused_with_the_entry_to_add(
    text: bytes, why: str
) -> None:
    with pytest.raises(InputRejected) as info:
        planned_config(text)
    assert info.value.code == "SETUP_PRE_COMMIT_CONFIG_UNEDITABLE"
    assert why in info.value.message
    assert local_entry() in info.value.hint


def test_the_published_hook_ids_count_from_a_remote_repository() -> None:
    text = b"""repos:
  - repo: https://example.invalid/plangate
    rev: abc
    hooks:
      - id: plangate-pre-commit
      - id: plangate-pre-push
"""
    assert set(judge_config(text).stages) == {"pre-commit", "pre-push"}


@pytest.mark.parametrize(
    ("stages", "found"),
    [
        ("", {"pre-commit", "pre-push"}),  # no stages: every stage
        ("stages: [commit]", {"pre-commit"}),  # the framework's legacy name
        ("stages: [manual]", set()),
    ],
)
def test_a_hook_s_stages_decide_where_plangate_runs(stages: str, found: set[str]) -> None:
    text = f"""repos:
  - repo: local
    hooks:
      - id: mine
        entry: plangate hook git-pre-commit
        language: system
        {stages}
      - id: mine-too
        entry: plangate hook git-pre-push
        language: system
        {stages}
""".encode()
    assert set(judge_config(text).stages) == found


def test_a_local_hook_that_does_not_call_plangate_does_not_count() -> None:
    text = b"""repos:
  - repo: local
    hooks:
      - id: plangate-pre-commit
        entry: true git-pre-commit
        language: system
"""
    assert judge_config(text).stages == {}


def test_skip_names_plangate_s_hooks_only_when_it_lists_them() -> None:
    assert skipped_by_env({"SKIP": "ruff,plangate-pre-commit"}) == [HOOK_IDS["pre-commit"]]
    assert skipped_by_env({"SKIP": "ruff"}) == []
    assert skipped_by_env({"SKIP": " plangate-pre-push "}) == [HOOK_IDS["pre-push"]]
    assert skipped_by_env({}) == []


def test_the_local_entry_runs_what_the_published_hooks_run() -> None:
    """The ``repo: local`` item setup writes and ``.pre-commit-hooks.yaml`` agree on every
    hook's id, name, entry, stage and flags (only the language differs: ``system``)."""
    from pathlib import Path

    published = yaml.safe_load(
        (Path(__file__).resolve().parents[3] / ".pre-commit-hooks.yaml").read_text("utf-8")
    )
    local = yaml.safe_load("repos:\n" + local_entry())["repos"][0]["hooks"]
    keys = ("id", "name", "entry", "pass_filenames", "always_run", "require_serial", "stages")
    assert [{k: h[k] for k in keys} for h in local] == [
        {k: h[k] for k in keys} for h in published
    ]
    assert {h["language"] for h in local} == {"system"}
