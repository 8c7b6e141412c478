"""Claude Code (the pinned version) with PlanGate's hooks, driven by a scripted model.

Each test runs one real ``claude -p`` session in a fresh repository where PlanGate is
switched on and TASK-0001 (``src/app.py``, ``tests/test_app.py``) is started, and checks
both sides: what happened on disk, and what the model was told in the tool result.
"""

from __future__ import annotations

from support.journey import IN_SCOPE_NEW, Journey
from support.model_server import call, say


def test_in_scope_write_is_allowed_and_written(journey: Journey) -> None:
    target = journey.repo / IN_SCOPE_NEW
    session = journey.claude(
        [call("Write", file_path=str(target), content="def test_greet():\n    pass\n"), say("ok")]
    )
    assert session.returncode == 0, session.describe()
    assert target.read_text() == "def test_greet():\n    pass\n"
    result = session.tool_results()[0]
    assert not result.is_error, session.describe()
