"""Codex CLI (the pinned version) with PlanGate's hooks, driven by a scripted model.

Codex offers the model ``exec_command``; its hooks see every such call as
``tool_name: "Bash"`` with the command line, and an ``apply_patch <<'EOF'`` heredoc
sent through ``exec_command`` is intercepted as a patch (still ``Bash`` to the hook).
A hook's deny reaches the model as "Command blocked by PreToolUse hook: <reason>".
The repository's hooks are trusted first, as a person does in Codex's ``/hooks``.
"""

from __future__ import annotations

import json
import re

import pytest

from support.journey import CODEX_KNOWN_MODEL, IN_SCOPE, IN_SCOPE_NEW, TASK, Journey, Session
from support.model_server import Turn, call, freeform, say, tool_results


def _patch(*sections: str) -> str:
    """An ``apply_patch`` heredoc command, as Codex's model writes it."""
    body = "".join(sections)
    return f"apply_patch <<'EOF'\n*** Begin Patch\n{body}*** End Patch\nEOF\n"


def _add(path: str, line: str) -> str:
    return f"*** Add File: {path}\n+{line}\n"


def _denied(session: Session, code: str, index: int = 0) -> None:
    """Tool call ``index`` was blocked by PlanGate's hook with ``code``; the model was told."""
    text = session.result_text(index)
    assert "blocked by PreToolUse hook" in text, session.describe()
    assert "PlanGate denied" in text and code in text, session.describe()


def test_shell_write_outside_scope_is_denied(journey: Journey) -> None:
    session = journey.codex([call("exec_command", cmd="echo x > notes.md"), say("ok")])
    assert session.returncode == 0, session.describe()
    assert not (journey.repo / "notes.md").exists(), session.describe()
    _denied(session, "HOOK_OUTSIDE_SCOPE")


def test_shell_write_in_scope_is_allowed_and_written(journey: Journey) -> None:
    session = journey.codex(
        [call("exec_command", cmd=f"mkdir -p tests && echo 'x = 1' > {IN_SCOPE_NEW}"), say("ok")]
    )
    assert (journey.repo / IN_SCOPE_NEW).read_text() == "x = 1\n", session.describe()
    assert "blocked" not in session.result_text(0)


def test_read_only_shell_is_allowed(journey: Journey) -> None:
    session = journey.codex([call("exec_command", cmd=f"cat {IN_SCOPE}"), say("ok")])
    assert 'return "hi"' in session.result_text(0), session.describe()


def test_apply_patch_in_scope_is_allowed_and_written(journey: Journey) -> None:
    session = journey.codex(
        [call("exec_command", cmd=_patch(_add(IN_SCOPE_NEW, "x = 1"))), say("ok")]
    )
    assert (journey.repo / IN_SCOPE_NEW).read_text() == "x = 1\n", session.describe()


def test_apply_patch_outside_scope_is_denied(journey: Journey) -> None:
    session = journey.codex([call("exec_command", cmd=_patch(_add("notes.md", "x"))), say("ok")])
    assert not (journey.repo / "notes.md").exists()
    _denied(session, "HOOK_OUTSIDE_SCOPE")


def test_apply_patch_with_one_file_outside_scope_writes_nothing(journey: Journey) -> None:
    command = _patch(_add(IN_SCOPE_NEW, "x = 1"), _add("notes.md", "x"))
    session = journey.codex([call("exec_command", cmd=command), say("ok")])
    assert not (journey.repo / "notes.md").exists()
    assert not (journey.repo / IN_SCOPE_NEW).exists()
    _denied(session, "HOOK_OUTSIDE_SCOPE")


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("AGENTS.md", "HOOK_PROTECTED_SURFACE"),
        (".plangate/session/forged.json", "HOOK_PLANGATE_STATE"),
        (".codex/hooks.json", "HOOK_CONFIG_FILE"),
    ],
)
def test_shell_write_to_a_guarded_path_is_denied(journey: Journey, path: str, code: str) -> None:
    target = journey.repo / path
    before = target.read_bytes() if target.exists() else None
    session = journey.codex([call("exec_command", cmd=f"echo '{{}}' > {path}"), say("ok")])
    assert (target.read_bytes() if target.exists() else None) == before, session.describe()
    _denied(session, code)


def test_apply_patch_to_host_configuration_is_denied(journey: Journey) -> None:
    hooks = journey.repo / ".codex" / "hooks.json"
    before = hooks.read_bytes()
    patch = _patch("*** Delete File: .codex/hooks.json\n")
    session = journey.codex([call("exec_command", cmd=patch), say("ok")])
    assert hooks.read_bytes() == before
    _denied(session, "HOOK_CONFIG_FILE")


def test_a_header_path_is_trimmed_as_codex_trims_it(journey: Journey) -> None:
    # Codex takes '*** Add File: PATH  ' as PATH (the blanks around it dropped): PlanGate
    # judges the same trimmed path, so the file it allowed is the file that is written, and
    # a guarded path with blanks after it is still the guarded path.
    written = journey.codex(
        [call("exec_command", cmd=_patch(f"*** Add File: {IN_SCOPE_NEW}  \t\n+x = 1\n")),
         say("ok")]
    )
    assert (journey.repo / IN_SCOPE_NEW).read_text() == "x = 1\n", written.describe()
    hooks = journey.repo / ".codex" / "hooks.json"
    before = hooks.read_bytes()
    denied = journey.codex(
        [call("exec_command", cmd=_patch("*** Delete File: .codex/hooks.json   \n")),
         say("ok")]
    )
    assert hooks.read_bytes() == before
    _denied(denied, "HOOK_CONFIG_FILE")


def test_no_active_task_denies_a_shell_write(switched_on: Journey) -> None:
    switched_on.approve()  # approved, but no session started and no exec run
    command = f"mkdir -p tests && echo 'x = 1' > {IN_SCOPE_NEW}"
    session = switched_on.codex([call("exec_command", cmd=command), say("ok")])
    assert not (switched_on.repo / IN_SCOPE_NEW).exists()
    _denied(session, "HOOK_NO_ACTIVE_TASK")


def test_ledger_and_report_show_the_session_decisions(journey: Journey) -> None:
    journey.codex(
        [
            call("exec_command", cmd=_patch(_add(IN_SCOPE_NEW, "x = 1"))),
            call("exec_command", cmd="echo x > notes.md"),
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


def test_a_shell_fed_through_write_stdin_cannot_write_outside_scope(journey: Journey) -> None:
    """``write_stdin`` types into a process an earlier ``exec_command`` started: an
    interactive shell fed that way must not write what the hook would deny as a command."""

    def type_into_the_shell(body: dict[str, object]) -> Turn:
        told = json.dumps(body.get("input"))
        found = re.search(r"session ID (\d+)", told)
        if found is None:  # the shell never started: nothing to type into
            return say("ok")
        return call("write_stdin", session_id=int(found.group(1)), chars="echo x > notes.md\n")

    session = journey.codex(
        [
            call("exec_command", cmd="sh", tty=True, yield_time_ms=500),
            type_into_the_shell,
            say("ok"),
        ]
    )
    assert not (journey.repo / "notes.md").exists(), session.describe()


SUBAGENT_TASK = "SUBAGENT-TASK: write notes.md"
MAIN_PROMPT = "MAIN-PROMPT: work on the task."


def test_a_subagent_shell_write_outside_scope_is_denied(journey: Journey) -> None:
    """``spawn_agent`` writes nothing itself; the subagent's own calls reach the same hooks.
    The model tells the two agents apart by their conversations: only the main agent's
    holds the session prompt, only the subagent's starts from the subagent's task."""

    def decide(body: dict[str, object]) -> Turn:
        conversation = json.dumps(body.get("input"))
        if "function_call_output" in conversation:
            return say("done")
        if SUBAGENT_TASK in conversation and MAIN_PROMPT not in conversation:
            return call("exec_command", cmd="echo x > notes.md")
        return call("multi_agent_v1.spawn_agent", message=SUBAGENT_TASK)

    session = journey.codex([decide] * 12, prompt=MAIN_PROMPT)
    assert not (journey.repo / "notes.md").exists(), session.describe()
    told = [r.text for turn in session.turns for r in tool_results(turn.body)]
    assert any("HOOK_OUTSIDE_SCOPE" in t and "notes.md" in t for t in told), session.describe()


# With a model it knows, Codex offers apply_patch as a freeform tool of its own; its
# hooks receive tool_name "apply_patch" with the patch text as tool_input.command.


def test_freeform_apply_patch_in_scope_is_allowed_and_written(journey: Journey) -> None:
    patch = f"*** Begin Patch\n{_add(IN_SCOPE_NEW, 'x = 1')}*** End Patch\n"
    session = journey.codex([freeform("apply_patch", patch), say("ok")], model=CODEX_KNOWN_MODEL)
    assert (journey.repo / IN_SCOPE_NEW).read_text() == "x = 1\n", session.describe()


def test_freeform_apply_patch_outside_scope_is_denied(journey: Journey) -> None:
    patch = f"*** Begin Patch\n{_add('notes.md', 'x')}*** End Patch\n"
    session = journey.codex([freeform("apply_patch", patch), say("ok")], model=CODEX_KNOWN_MODEL)
    assert not (journey.repo / "notes.md").exists()
    _denied(session, "HOOK_OUTSIDE_SCOPE")


def test_freeform_apply_patch_that_moves_a_file_out_of_scope_is_denied(journey: Journey) -> None:
    """A move writes its destination: an in-scope source does not make it allowed."""
    patch = (
        "*** Begin Patch\n"
        f"*** Update File: {IN_SCOPE}\n*** Move to: notes.py\n@@\n-    return \"hi\"\n"
        "+    return \"moved\"\n*** End Patch\n"
    )
    session = journey.codex([freeform("apply_patch", patch), say("ok")], model=CODEX_KNOWN_MODEL)
    assert not (journey.repo / "notes.py").exists()
    assert (journey.repo / IN_SCOPE).exists()
    _denied(session, "HOOK_OUTSIDE_SCOPE")
