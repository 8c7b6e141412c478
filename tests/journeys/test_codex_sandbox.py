"""Codex's ``workspace-write`` sandbox as ``plangate task start --sandbox codex`` writes it,
with the real ``codex exec`` on Linux and a scripted model.

The settings must be ones the sandbox accepts: a ``writable_roots`` entry for a missing
directory makes bubblewrap fail every command. And the sandbox must confine: ``git add``
of an in-scope file is a command the hook allows, and it writes ``.git/index``, which
``workspace-write`` keeps read-only. That check is the sandbox's alone.
"""

from __future__ import annotations

import hashlib
import tomllib

from support.journey import IN_SCOPE, TASK, Journey
from support.model_server import call, say


def _command_runs(session_events: list[dict[str, object]]) -> list[tuple[str, object, str]]:
    out = []
    for event in session_events:
        item = event.get("item")
        if event.get("type") == "item.completed" and isinstance(item, dict) \
                and item.get("type") == "command_execution":
            out.append((str(item["command"]), item.get("exit_code"),
                        str(item.get("aggregated_output"))))
    return out


def test_workspace_write_starts_commands_and_keeps_git_read_only(
    switched_on: Journey,
) -> None:
    journey = switched_on
    journey.approve()
    # .codex/config.toml is the file task start writes; it must not be committable.
    (journey.repo / ".git" / "info" / "exclude").write_text("/.codex/config.toml\n")
    journey.plangate("task", "start", TASK, "--sandbox", "codex")
    config = tomllib.loads((journey.repo / ".codex" / "config.toml").read_text())
    assert config["sandbox_mode"] == "workspace-write"
    # tests/ (in the task's scope) does not exist yet: it is not a writable root.
    roots = config["sandbox_workspace_write"]["writable_roots"]
    assert roots == [f"{journey.repo}/src"]
    index = hashlib.sha256((journey.repo / ".git" / "index").read_bytes()).hexdigest()
    session = journey.codex(
        [
            call("exec_command", cmd=f"echo changed > {IN_SCOPE}"),
            call("exec_command", cmd=f"git add {IN_SCOPE} 2>> {IN_SCOPE}"),
            say("ok"),
        ]
    )
    assert session.returncode == 0, session.describe()
    runs = _command_runs(session.events)
    assert runs and runs[0][1] == 0, session.describe()  # bubblewrap started the command
    assert "bwrap" not in " ".join(output for _c, _e, output in runs), session.describe()
    written = (journey.repo / IN_SCOPE).read_text()
    assert written.startswith("changed\n"), written
    assert ".git/index.lock': Read-only file system" in written, written
    assert hashlib.sha256((journey.repo / ".git" / "index").read_bytes()).hexdigest() == index
