"""Codex CLI (the pinned version) with PlanGate's hooks, driven by a scripted model.

Codex offers the model ``exec_command``; its hooks see every such call as
``tool_name: "Bash"`` with the command line, and an ``apply_patch <<'EOF'`` heredoc
sent through ``exec_command`` is intercepted as a patch (still ``Bash`` to the hook).
The repository's hooks are trusted first, as a person does in Codex's ``/hooks``.
"""

from __future__ import annotations

from support.journey import Journey
from support.model_server import call, say


def test_shell_write_outside_scope_is_denied(journey: Journey) -> None:
    session = journey.codex([call("exec_command", cmd="echo x > notes.md"), say("ok")])
    assert session.returncode == 0, session.describe()
    assert not (journey.repo / "notes.md").exists(), session.describe()
    assert "HOOK_OUTSIDE_SCOPE" in session.result_text(0), session.describe()
