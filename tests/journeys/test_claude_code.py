"""Claude Code (the pinned version) with PlanGate's hooks, driven by a scripted model.

Each test runs one real ``claude -p`` session in a fresh repository where PlanGate is
switched on and TASK-0001 (``src/app.py``, ``tests/test_app.py``) is started, and checks
both sides: what happened on disk, and what the model was told in the tool result (a
hook's deny arrives as a ``tool_result`` with ``is_error`` and the reason code).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from support.journey import IN_SCOPE, IN_SCOPE_NEW, TASK, Journey, Session
from support.model_server import Turn, call, say, tool_results


def _denied(session: Session, code: str, index: int = 0) -> None:
    """Tool call ``index`` was denied by PlanGate with ``code``, and the model was told."""
    result = session.tool_results()[index]
    assert result.is_error, session.describe()
    assert "PlanGate denied" in result.text and code in result.text, session.describe()


def test_in_scope_write_is_allowed_and_written(journey: Journey) -> None:
    target = journey.repo / IN_SCOPE_NEW
    session = journey.claude(
        [call("Write", file_path=str(target), content="def test_greet():\n    pass\n"), say("ok")]
    )
    assert session.returncode == 0, session.describe()
    assert target.read_text() == "def test_greet():\n    pass\n"
    assert not session.tool_results()[0].is_error, session.describe()


def test_in_scope_edit_after_read_is_allowed_and_written(journey: Journey) -> None:
    target = journey.repo / IN_SCOPE
    session = journey.claude(
        [
            call("Read", file_path=str(target)),
            call("Edit", file_path=str(target), old_string='"hi"', new_string='"hello"'),
            say("ok"),
        ]
    )
    assert 'return "hello"' in target.read_text(), session.describe()
    assert [r.is_error for r in session.tool_results()] == [False, False], session.describe()


def test_out_of_scope_write_is_denied_and_the_model_is_told(journey: Journey) -> None:
    target = journey.repo / "notes.md"
    session = journey.claude([call("Write", file_path=str(target), content="x\n"), say("ok")])
    assert not target.exists()
    _denied(session, "HOOK_OUTSIDE_SCOPE")
    assert "notes.md" in session.result_text(0)


def test_bash_redirect_out_of_scope_is_denied(journey: Journey) -> None:
    session = journey.claude([call("Bash", command="echo x > notes.md"), say("ok")])
    assert not (journey.repo / "notes.md").exists()
    _denied(session, "HOOK_OUTSIDE_SCOPE")


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("CLAUDE.md", "HOOK_PROTECTED_SURFACE"),
        (".plangate/session/forged.json", "HOOK_PLANGATE_STATE"),
        (".claude/settings.json", "HOOK_CONFIG_FILE"),
        (".git/hooks/pre-commit", "HOOK_GIT_INTERNALS"),
    ],
)
def test_write_to_a_guarded_path_is_denied_with_its_reason(
    journey: Journey, path: str, code: str
) -> None:
    target = journey.repo / path
    before = target.read_bytes() if target.exists() else None
    # Claude Code refuses to overwrite a file the session has not read: read it first.
    reads = [call("Read", file_path=str(target))] if before is not None else []
    session = journey.claude(
        [*reads, call("Write", file_path=str(target), content="{}\n"), say("ok")]
    )
    after = target.read_bytes() if target.exists() else None
    assert after == before, session.describe()
    _denied(session, code, index=len(reads))


def test_entering_a_new_worktree_is_denied(journey: Journey) -> None:
    """EnterWorktree creates a git worktree: a write of git's internal directory."""
    session = journey.claude([call("EnterWorktree", name="side"), say("ok")])
    assert not (journey.repo / ".git" / "worktrees").exists(), session.describe()
    _denied(session, "HOOK_GIT_INTERNALS")


def test_a_commit_that_skips_the_git_hooks_is_denied(journey: Journey) -> None:
    head = journey.sh("git rev-parse HEAD").stdout
    command = "git commit --no-verify --allow-empty -m 'skip the hooks'"
    session = journey.claude([call("Bash", command=command), say("ok")])
    assert journey.sh("git rev-parse HEAD").stdout == head, session.describe()
    _denied(session, "HOOK_SHELL_SKIPS_HOOKS")


def test_no_active_task_denies_a_write(switched_on: Journey) -> None:
    switched_on.approve()  # approved, but no session started and no exec run
    target = switched_on.repo / IN_SCOPE_NEW
    session = switched_on.claude([call("Write", file_path=str(target), content="x\n"), say("ok")])
    assert not target.exists()
    _denied(session, "HOOK_NO_ACTIVE_TASK")


def test_read_only_bash_is_allowed(journey: Journey) -> None:
    session = journey.claude([call("Bash", command="cat src/app.py"), say("ok")])
    result = session.tool_results()[0]
    assert not result.is_error, session.describe()
    assert 'return "hi"' in result.text


def test_the_model_can_react_to_the_deny(journey: Journey) -> None:
    """A model that reads the deny reason and moves its work into scope: both the deny
    and the corrected write happen in one session."""
    inside = journey.repo / IN_SCOPE_NEW

    def retry_in_scope(body: dict[str, object]) -> Turn:
        told = json.dumps(body.get("messages"))
        assert "HOOK_OUTSIDE_SCOPE" in told  # the model is shown why
        return call("Write", file_path=str(inside), content="def test_greet():\n    pass\n")

    session = journey.claude(
        [call("Write", file_path=str(journey.repo / "notes.md"), content="x\n"), retry_in_scope]
    )
    assert not (journey.repo / "notes.md").exists()
    assert inside.exists(), session.describe()
    assert [r.is_error for r in session.tool_results()] == [True, False]


def test_ledger_and_report_show_the_session_decisions(journey: Journey) -> None:
    journey.claude(
        [
            call("Write", file_path=str(journey.repo / IN_SCOPE_NEW), content="x = 1\n"),
            call("Write", file_path=str(journey.repo / "notes.md"), content="x\n"),
            say("ok"),
        ]
    )
    log = json.loads(journey.plangate("ledger", "log", "--kind", "hook_decision", "--json").stdout)
    entries = log["entries"] if isinstance(log, dict) else log
    decisions = [json.dumps(e) for e in entries]
    assert any("notes.md" in d and "HOOK_OUTSIDE_SCOPE" in d for d in decisions), decisions
    assert any(IN_SCOPE_NEW in d and TASK in d for d in decisions), decisions
    report = journey.plangate("report", "--format", "markdown").stdout.replace("\\_", "_")
    assert "| HOOK_OUTSIDE_SCOPE | 1 |" in report, report


def test_a_session_that_stays_in_scope_ends_without_a_stop_deny(journey: Journey) -> None:
    """The Stop check judges the working tree: in-scope work and PlanGate's own ignored
    local state (the task session, the host sandbox) are no reason to block the end."""
    session = journey.claude(
        [call("Write", file_path=str(journey.repo / IN_SCOPE_NEW), content="x = 1\n"), say("ok")]
    )
    assert session.stop_feedback() == [], session.describe()


SUBAGENT_TASK = "SUBAGENT-TASK: write notes.md"


def _subagent_model(spawn: Turn, write: Turn) -> Callable[[dict[str, object]], Turn]:
    """A model for a main agent and one subagent at once: the main agent spawns the
    subagent and then ends; the subagent tries ``write`` once and then ends. It tells
    them apart by the subagent's task in its first message."""

    def decide(body: dict[str, object]) -> Turn:
        messages = body.get("messages")
        assert isinstance(messages, list)
        first = json.dumps(messages[0])
        rest = json.dumps(messages[1:])
        if SUBAGENT_TASK in first:  # the subagent
            return say("sub done") if "tool_result" in rest else write
        return say("main done") if SUBAGENT_TASK in rest else spawn

    return decide


def test_a_subagent_write_outside_scope_is_denied(journey: Journey) -> None:
    """The Agent tool writes nothing itself; the subagent's own calls reach the same hooks."""
    target = journey.repo / "notes.md"
    model = _subagent_model(
        call("Agent", description="notes", prompt=SUBAGENT_TASK, subagent_type="general-purpose"),
        call("Write", file_path=str(target), content="x\n"),
    )
    session = journey.claude([model] * 12)
    assert not target.exists(), session.describe()
    told = [r for turn in session.turns for r in tool_results(turn.body)]
    assert any(
        r.is_error and "HOOK_OUTSIDE_SCOPE" in r.text and "notes.md" in r.text for r in told
    ), session.describe()


def test_a_failed_command_that_wrote_outside_scope_is_reported_in_the_same_turn(
    journey: Journey,
) -> None:
    """Code the host sandbox confines to the task's directories may still write a file
    of those directories that the scope does not name. A command that then exits non-zero
    gets no PostToolUse from Claude Code, only PostToolUseFailure: the effect check must
    run there too, so the model learns of the write before its next step, not at Stop."""
    command = "python3 -c \"open('src/other.py', 'w').write('x = 1')\"; exit 1"
    session = journey.claude([call("Bash", command=command), say("ok")])
    assert (journey.repo / "src" / "other.py").exists(), session.describe()  # the premise
    next_request = session.turns[1].body["messages"][-1]
    told = json.dumps(next_request)
    assert "HOOK_OUTSIDE_SCOPE" in told and "src/other.py" in told, session.describe()
