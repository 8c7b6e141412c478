"""PlanGate's hooks inside ``plangate exec``'s box: they decide, record locally, and exec imports.

Every test runs a real bubblewrap box on a real repository with an approved task
whose plan allows ``src/greet.py`` only. The command in the box calls the Claude
Code hook (``python -m plangate.hooks claude``) with real payloads, as an agent's
host would; the repository's isolation settings show this checkout's ``src`` in
the box so the hook can run there.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from plangate.ledger import open_ledger
from support.boxes import SRC, backend_or_fail
from support.delivery import define_surfaces
from support.hooks import claude_payload
from support.plan_tasks import approve_task
from support.repo import commit_all, git

PY = os.path.realpath(sys.executable)
TASK = "TASK-0001"
RUN_ID = "TASK-0001-20261203T093100Z-4bf50be3"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap boxes exist on Linux only"
)


def _approved(repo: Path, run_cli) -> str:
    backend_or_fail()
    (repo / "CLAUDE.md").write_text("# rules the agent must not change\n")
    (repo / "src").mkdir()
    (repo / "src" / "keep.py").write_text("KEEP = 1\n")
    commit_all(repo, "rules and code")
    define_surfaces(repo)
    (repo / ".plangate" / "isolation.toml").write_text(
        f'read_only = ["{SRC}"]\npass_env = ["PYTHONPATH"]\n'
    )
    commit_all(repo, "isolation settings: this checkout's PlanGate is visible in the box")
    return approve_task(repo, run_cli)


def _calls(repo: Path) -> dict[str, bytes]:
    root = str(repo)
    return {
        "write_in_scope": claude_payload(
            "PreToolUse", root, "Write", {"file_path": f"{root}/src/greet.py", "content": "x"}
        ),
        "write_out_of_scope": claude_payload(
            "PreToolUse", root, "Write", {"file_path": f"{root}/src/keep.py", "content": "x"}
        ),
        "write_protected": claude_payload(
            "PreToolUse", root, "Edit",
            {"file_path": f"{root}/CLAUDE.md", "old_string": "#", "new_string": "x"},
        ),
        "runs_code": claude_payload("PreToolUse", root, "Bash", {"command": "pytest -q"}),
        "commit": claude_payload("PreToolUse", root, "Bash", {"command": "git commit -qm x"}),
    }


def _hook_script(
    calls: dict[str, bytes], extra: str = "", env: dict[str, str] | None = None, prelude: str = ""
) -> str:
    """Python source that calls the hook for each payload and prints one JSON line per call."""
    payloads = {name: data.decode() for name, data in calls.items()}
    return textwrap.dedent(prelude) + textwrap.dedent(f"""
        import json, os, subprocess
        for name, payload in {payloads!r}.items():
            proc = subprocess.run([{PY!r}, "-P", "-m", "plangate.hooks", "claude"],
                                  input=payload.encode(), capture_output=True,
                                  env=dict(os.environ, **{env or {}!r}))
            print("HOOK " + json.dumps([name, proc.returncode, proc.stdout.decode(),
                                        proc.stderr.decode()]))
    """) + textwrap.dedent(extra)


def _answers(out: str) -> dict[str, tuple[int, str]]:
    found = {}
    for line in out.splitlines():
        if line.startswith("HOOK "):
            name, code, stdout, stderr = json.loads(line[5:])
            found[name] = (code, stdout + stderr)
    return found


def _exec(repo: Path, run_cli, script: str):
    return run_cli(repo, "exec", TASK, "--", PY, "-c", script, env=dict(os.environ, PYTHONPATH=SRC))


def _tree_hash(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if any(rel == s or rel.startswith(s + "/") for s in skip):
            continue
        if path.is_file() and not path.is_symlink():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _repo_state(repo: Path) -> tuple[dict[str, str], dict[str, str]]:
    work = _tree_hash(
        repo,
        (".git", ".plangate/ledger.sqlite3", ".plangate/locks", ".plangate/runs",
         f"docs/working/{TASK}/run.ndjson"),
    )
    return work, _tree_hash(repo / ".git", ("index",))


def _ledger(repo: Path) -> list[tuple[str, str, dict[str, Any]]]:
    with open_ledger(repo, {}, create=False) as ledger:
        assert ledger.verify().accepted
        return [(e.kind, e.subject, dict(e.payload)) for e in ledger.entries()]


def test_hooks_in_the_box_decide_by_the_task_scope_and_land_in_the_ledger_after_the_run(
    git_repo: Path, run_cli, capfd: pytest.CaptureFixture[str]
) -> None:
    approved = _approved(git_repo, run_cli)
    before = _repo_state(git_repo)
    ledger_before = _ledger(git_repo)
    result = _exec(git_repo, run_cli, _hook_script(_calls(git_repo)))
    answers = _answers(capfd.readouterr().out)
    assert result.code == 0, result.err
    assert set(answers) == {
        "write_in_scope", "write_out_of_scope", "write_protected", "runs_code", "commit"
    }
    assert all("HOOK_LEDGER_MISSING" not in text for _, text in answers.values()), answers
    assert answers["write_in_scope"][0] == 0, answers
    assert answers["runs_code"][0] == 0, answers  # the box confines it, and the hook sees the box
    assert answers["write_out_of_scope"][0] == 2
    assert "HOOK_OUTSIDE_SCOPE" in answers["write_out_of_scope"][1]
    assert answers["write_protected"][0] == 2
    assert "HOOK_PROTECTED_SURFACE" in answers["write_protected"][1]
    assert answers["commit"][0] == 2  # the workspace's .git is read-only in the box
    assert "HOOK_BOX_COMMIT" in answers["commit"][1]
    # Nothing changed: the repository, its .git and the earlier ledger entries are as before.
    assert _repo_state(git_repo) == before
    assert git(git_repo, "rev-parse", "HEAD") == approved
    entries = _ledger(git_repo)
    assert entries[: len(ledger_before)] == ledger_before
    run_id = next(p["run_id"] for k, _, p in entries if k == "exec_result")
    box = [p for k, _, p in entries if k == "exec_box_entry"]
    assert [(p["entry"]["verdict"], p["entry"]["tool"]) for p in box] == [
        ("ALLOW", "Write"), ("DENY", "Write"), ("DENY", "Edit"), ("ALLOW", "Bash"),
        ("DENY", "Bash"),
    ]
    assert {(p["run_id"], p["task_id"], p["reported_from"]) for p in box} == {
        (run_id, TASK, "exec_box")
    }
    assert [p["box_seq"] for p in box] == [1, 2, 3, 4, 5]
    assert box[3]["entry"]["task_id"] == TASK
    summary = [p for k, _, p in entries if k == "exec_box_ledger"]
    assert [(s["status"], s["imported"], s["run_id"]) for s in summary] == [("INTACT", 5, run_id)]
    kinds = [k for k, _, _ in entries[len(ledger_before):]]
    assert kinds == ["exec_started", *["exec_box_entry"] * 5, "exec_box_ledger", "exec_result",
                     "exec_ended"]
    assert "hook_decision" not in kinds  # the box's decisions are observations of their own kind


def test_runs_code_is_denied_outside_the_box_with_the_variables_set_by_hand(
    git_repo: Path, run_cli
) -> None:
    import subprocess

    _approved(git_repo, run_cli)
    env = dict(
        os.environ,
        PYTHONPATH=SRC,
        PLANGATE_TASK=TASK,
        PLANGATE_BOX=RUN_ID,
        PLANGATE_BOX_LEDGER="/run/plangate-box/ledger.sqlite3",
    )
    proc = subprocess.run(
        [PY, "-P", "-m", "plangate.hooks", "claude"],
        input=_calls(git_repo)["runs_code"],
        capture_output=True,
        env=env,
        cwd=git_repo,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert b"HOOK_SHELL_RUNS_CODE" in proc.stdout
    # Recorded in the repository's own ledger: the variables redirected nothing.
    decisions = [p for k, _, p in _ledger(git_repo) if k == "hook_decision"]
    assert decisions[-1]["codes"] == ["HOOK_SHELL_RUNS_CODE"]


def test_a_box_ledger_tampered_into_garbage_is_recorded_as_such(
    git_repo: Path, run_cli, capfd: pytest.CaptureFixture[str]
) -> None:
    _approved(git_repo, run_cli)
    ledger_before = _ledger(git_repo)
    tamper = """
        import glob, os
        for path in glob.glob("/run/plangate-box/ledger.sqlite3*"):
            os.unlink(path)
        with open("/run/plangate-box/ledger.sqlite3", "wb") as handle:
            handle.write(b"not a ledger" * 1000)
        open("src/greet.py", "w").write("print('hi')\\n")
    """
    calls = {"write_in_scope": _calls(git_repo)["write_in_scope"]}
    result = _exec(git_repo, run_cli, _hook_script(calls, tamper))
    answers = _answers(capfd.readouterr().out)
    assert answers["write_in_scope"][0] == 0, answers
    assert result.code == 0, result.err  # exec still judged, applied and recorded its result
    assert "box ledger MALFORMED" in result.err
    assert "Traceback" not in result.err
    entries = _ledger(git_repo)
    assert entries[: len(ledger_before)] == ledger_before
    new = entries[len(ledger_before):]
    assert "exec_box_entry" not in [k for k, _, _ in new]
    summary = [p for k, _, p in new if k == "exec_box_ledger"]
    assert [(s["status"], s["imported"]) for s in summary] == [("MALFORMED", 0)]
    assert summary[0]["digest"].startswith("sha256:")
    recorded = [p for k, _, p in new if k == "exec_result"]
    assert recorded[0]["verdict"] == "ACCEPTED"
    assert recorded[0]["box_ledger"]["status"] == "MALFORMED"


def test_inside_the_box_the_ledger_variable_is_not_taken_elsewhere_and_git_is_read_only(
    git_repo: Path, run_cli, capfd: pytest.CaptureFixture[str]
) -> None:
    _approved(git_repo, run_cli)
    calls = {"write_in_scope": _calls(git_repo)["write_in_scope"]}
    commit = """
        import subprocess
        proc = subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit",
                               "-q", "--allow-empty", "-m", "agent"], capture_output=True)
        print("COMMIT", proc.returncode, b"Read-only file system" in proc.stderr)
    """
    script = _hook_script(calls, commit, env={"PLANGATE_BOX_LEDGER": "/tmp/mine.sqlite3"})
    result = _exec(git_repo, run_cli, script)
    out = capfd.readouterr().out
    answers = _answers(out)
    assert result.code == 0, result.err
    assert answers["write_in_scope"][0] == 2
    assert "HOOK_BOX_LEDGER_INVALID" in answers["write_in_scope"][1]
    assert "COMMIT 128 True" in out, out
    entries = _ledger(git_repo)
    assert "exec_box_ledger" not in [k for k, _, _ in entries]  # intact and empty: nothing to say
    recorded = [p for k, _, p in entries if k == "exec_result"]
    assert recorded[0]["box_ledger"]["status"] == "INTACT"
    assert recorded[0]["box_ledger"]["imported"] == 0


def test_effect_checks_in_the_box_see_the_workspace_changes(
    git_repo: Path, run_cli, capfd: pytest.CaptureFixture[str]
) -> None:
    approved = _approved(git_repo, run_cli)
    prelude = """
        open("src/greet.py", "w").write("print('hi')\\n")
        open("src/keep.py", "w").write("KEEP = 2\\n")
    """
    calls = {"stop": claude_payload("Stop", str(git_repo), stop_hook_active=False)}
    result = _exec(git_repo, run_cli, _hook_script(calls, prelude=prelude))
    answers = _answers(capfd.readouterr().out)
    assert "HOOK_OUTSIDE_SCOPE" in answers["stop"][1], answers
    assert "src/keep.py" in answers["stop"][1]
    assert result.code == 1, result.err  # and exec, outside the box, refuses the result itself
    assert "CI_OUTSIDE_SCOPE" in result.err
    assert git(git_repo, "rev-parse", "HEAD") == approved
    box = [p for k, _, p in _ledger(git_repo) if k == "exec_box_entry"]
    assert [(p["entry"]["event"], p["entry"]["verdict"]) for p in box] == [("stop", "DENY")]
