"""The week's support (tests/support/team.py) on its own: the terminal, the forge, the runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.team import (
    FORGE_ENV,
    PullRequest,
    Remote,
    _Context,
    _read_outputs,
    commands_a_screen_asks_for,
    converse,
    documented_workflow,
    files_a_screen_asks_for,
)

ASKS = (
    "import sys\n"
    "print('Type SETUP to write them: ', end='', flush=True)\n"
    "answer = sys.stdin.readline().strip()\n"
    "print('got', answer)\n"
    "sys.exit(0 if answer == 'SETUP' else 1)\n"
)


def test_converse_answers_a_prompt_at_a_terminal(tmp_path: Path) -> None:
    talk = converse(
        [sys.executable, "-c", ASKS],
        cwd=tmp_path,
        env=dict(os.environ),
        answers=[(r"Type SETUP", "SETUP")],
    )
    assert talk.returncode == 0, talk.describe()
    assert talk.answered == [("Type SETUP to write them:", "SETUP")]
    assert "got SETUP" in talk.screen


def test_converse_never_answers_an_unknown_question(tmp_path: Path) -> None:
    talk = converse(
        [sys.executable, "-c", ASKS],
        cwd=tmp_path,
        env=dict(os.environ),
        answers=[("nothing", "y")],
        give_up_after=1.0,
    )
    assert talk.returncode != 0
    assert "UNANSWERED PROMPT 'Type SETUP to write them:'" in talk.screen
    assert talk.answered == []


def test_the_forge_merges_with_a_merge_commit(tmp_path: Path) -> None:
    remote = Remote(tmp_path / "origin.git")
    work = tmp_path / "work"
    env = FORGE_ENV | {"HOME": str(tmp_path)}
    script = (
        f"git init -q -b main {work} && cd {work} && echo a > a && git add a && "
        "git commit -qm a && git push -q origin main && git switch -qc feature && echo b > b && "
        "git add b && git commit -qm b && git push -q origin feature"
    )
    subprocess.run(["bash", "-ec", script.replace("origin", str(remote.path))], env=env, check=True)
    pr = remote.open_pull_request("b", "feature", "alice")
    merged = remote.merge(pr)
    assert remote.sha("main") == merged
    parents = subprocess.run(
        ["git", "rev-list", "--parents", "-n1", merged],
        cwd=remote.path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[1:]
    assert parents == [pr.base_sha, pr.head_sha]


def _context(tmp_path: Path) -> _Context:
    pr = PullRequest(7, "t", "feature", head_sha="a" * 40, base_sha="b" * 40)
    event = pr.event(Remote(tmp_path / "r.git"))
    context = _Context(event, tmp_path, tmp_path)
    context.steps["plangate"] = {"outputs": {"verdict": "HUMAN_REQUIRED"}}
    return context


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("github.event.pull_request.head.sha", "a" * 40),
        ("steps.plangate.outputs.verdict == 'HUMAN_REQUIRED'", True),
        ("always() && steps.plangate.outputs.verdict == 'REJECTED'", False),
        ("!(steps.plangate.outputs.verdict != 'HUMAN_REQUIRED') || false", True),
    ],
)
def test_expressions_read_the_event_and_step_outputs(
    tmp_path: Path, expression: str, value: object
) -> None:
    assert _context(tmp_path).evaluate(expression) == value


def test_a_step_after_a_failure_runs_only_when_its_condition_says_so(tmp_path: Path) -> None:
    context = _context(tmp_path)
    context.failed = True
    assert context.condition(None) is False
    assert context.condition("steps.plangate.outputs.verdict == 'HUMAN_REQUIRED'") is False
    assert context.condition("${{ always() }}") is True


def test_step_outputs_are_read_as_github_writes_them(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_text("verdict=ACCEPTED\nnotes<<EOF\none\ntwo\nEOF\nexit-code=0\n")
    assert _read_outputs(path) == {"verdict": "ACCEPTED", "notes": "one\ntwo", "exit-code": "0"}


def test_the_documented_workflow_runs_plangate_on_pull_requests() -> None:
    page, workflow = documented_workflow()
    assert page.startswith("docs/")
    assert "pull_request" in json.dumps(workflow.get("on", workflow.get(True)))


def test_hash_files_is_empty_until_the_file_exists(tmp_path: Path) -> None:
    context = _context(tmp_path)
    condition = "${{ !cancelled() && hashFiles('plangate.sarif') != '' }}"
    assert context.condition(condition) is False
    (tmp_path / "plangate.sarif").write_text("{}")
    assert context.condition(condition) is True
    context.failed = True  # a failed check still uploads its SARIF
    assert context.condition(condition) is True


def test_an_unknown_function_is_never_guessed(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="does not know fromJSON"):
        _context(tmp_path).evaluate("fromJSON('{}')")


SETUP_SCREEN = """written  .gitignore

No .plangate/policy.toml: every pull request needs an approved task. A common set to start
from (write it to that file and commit it with the adoption):
    # what a pull request without a task may change

    [[taskless]]
    name = "docs"
Next: pre-commit install --hook-type pre-commit --hook-type pre-push, then plangate doctor
"""


def test_a_person_writes_the_file_a_screen_asks_for() -> None:
    screen = SETUP_SCREEN.replace("task. A common set to start\nfrom", "task. A common set from")
    assert files_a_screen_asks_for(screen) == {
        ".plangate/policy.toml": (
            '# what a pull request without a task may change\n\n[[taskless]]\nname = "docs"\n'
        )
    }
    assert files_a_screen_asks_for("nothing asked\n") == {}


def test_a_person_runs_the_commands_a_screen_asks_for() -> None:
    assert commands_a_screen_asks_for(SETUP_SCREEN + SETUP_SCREEN) == [
        "pre-commit install --hook-type pre-commit --hook-type pre-push"
    ]
