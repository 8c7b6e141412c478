"""A team's first day, end to end, in fresh repositories with two developers (two homes,
two virtual environments at different paths) and a CI runner:

setup at a terminal, the adoption pull request (``HUMAN_REQUIRED``), a task planned and
approved, an agent run through ``plangate exec`` that calls the committed hook, a teammate's
hook call on the same committed configuration (allowed in scope, denied outside), a human
commit with no environment variable, and the task's pull request checked by the action's
script under GitHub's ``bash -e -o pipefail``.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from support.hooks import developer_bin

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "scripts" / "ci-action.sh"
AGENT_PREFIXES = ("CLAUDE", "CURSOR", "CODEX", "PLANGATE_TASK", "CI", "GITHUB_ACTIONS")


class Developer:
    """One person: a home, a virtual environment on PATH, a clone."""

    def __init__(self, tmp: Path, name: str, *, light: bool) -> None:
        self.name = name
        self.home = tmp / name / "home"
        self.home.mkdir(parents=True)
        self.bin = developer_bin(tmp / name / "venvs" / f"{name}-env" / "bin", light=light)
        developer_bin(self.bin, light=not light)
        self.clone = tmp / name / "work"
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(AGENT_PREFIXES) and k != "PYTHONPATH"
        }
        self.env = base | {
            "HOME": str(self.home),
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": f"{name}@example.invalid",
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": f"{name}@example.invalid",
            "GIT_CONFIG_NOSYSTEM": "1",
        }

    def sh(
        self,
        script: str,
        *,
        cwd: Path | None = None,
        typed: str = "",
        env: dict[str, str] | None = None,
        ok: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``script`` in this developer's terminal (a real pseudo-terminal)."""
        master, slave = pty.openpty()
        try:
            if typed:
                os.write(master, typed.encode())
            proc = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", script],
                cwd=cwd or self.clone,
                stdin=slave,
                capture_output=True,
                text=True,
                env=env or self.env,
                timeout=600,
                check=False,
            )
        finally:
            os.close(slave)
            os.close(master)
        if ok:
            assert proc.returncode == 0, f"{self.name}: {script}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def hook(self, command: str, payload: dict[str, object]) -> subprocess.CompletedProcess[bytes]:
        """Run a committed hook command as the host does, in this developer's environment."""
        return subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=self.clone,
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=self.env,
            timeout=120,
            check=False,
        )


def _pre_tool_use(clone: Path, path: str) -> dict[str, object]:
    return {
        "session_id": "s",
        "cwd": str(clone),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": path, "content": "x"},
    }


def _claude_command(clone: Path) -> str:
    config = json.loads((clone / ".claude" / "settings.json").read_text())
    return str(config["hooks"]["PreToolUse"][0]["hooks"][0]["command"])


def _ci(runner: Developer, origin: Path, branch: str, tmp: Path, name: str) -> tuple[int, dict]:
    """The CI runner: a fresh clone at the pull request's head, the action's script under
    GitHub's own shell flags; returns its exit code and outputs."""
    clone = tmp / name
    runner.sh(
        f"git clone -q {origin} {clone} && cd {clone} && git checkout -q origin/{branch}", cwd=tmp
    )
    output = tmp / f"{name}.out"
    output.write_text("")
    env = runner.env | {
        "BASE": "origin/main",
        "HEAD": "HEAD",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(tmp / f"{name}.md"),
        "CI": "true",
    }
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(ACTION)],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
    return proc.returncode, outputs | {"log": proc.stdout + proc.stderr}


def test_a_teams_first_day(tmp_path: Path) -> None:
    alice = Developer(tmp_path, "alice", light=True)
    bob = Developer(tmp_path, "bob", light=False)
    origin = tmp_path / "origin.git"
    alice.sh(f"git init -q --bare -b main {origin}", cwd=tmp_path)
    alice.sh(
        f"git clone -q {origin} {alice.clone} 2>/dev/null; cd {alice.clone}; "
        "echo '# project' > README.md; git add README.md; "
        "git -c commit.gpgsign=false commit -q -m 'first commit'; git push -q origin main",
        cwd=tmp_path,
    )

    # 1. Alice switches PlanGate on at her terminal and commits the adoption.
    setup = alice.sh("plangate setup --claude --cursor --git", typed="SETUP\n")
    assert "The first commits, in this order:" in setup.stdout
    alice.sh(
        "git switch -q -c adopt-plangate && "
        "git add .plangate/protected-surfaces.toml .plangate/.gitignore .gitignore .claude/settings.json "
        ".cursor/hooks.json && git commit -q -m 'Adopt PlanGate' && "
        "git push -q origin adopt-plangate"
    )
    committed = (alice.clone / ".claude" / "settings.json").read_text()
    assert str(alice.bin) not in committed and sys.executable not in committed

    # 2. The adoption pull request: a human must review it, never REJECTED; the step passes
    # and hands the decision to GitHub's human gate (the human_required output).
    code, out = _ci(alice, origin, "adopt-plangate", tmp_path, "ci-adopt")
    assert code == 0, out["log"]
    assert (out["verdict"], out["human_required"]) == ("HUMAN_REQUIRED", "true")
    assert "CI_ADOPTS_PLANGATE" in out["log"]
    # A human reviewed and merged it (on the server, where no git hook of Alice's runs).
    alice.sh(f"git -C {origin} update-ref refs/heads/main refs/heads/adopt-plangate", cwd=tmp_path)

    # 3. A task is planned, reviewed and approved; the session lets Alice commit it.
    alice.sh(
        "git switch -q main && git pull -q origin main && git switch -q -c task-0001 && "
        "plangate init TASK-0001 >/dev/null && "
        "plangate review mark TASK-0001 --c1 PASS >/dev/null && "
        "plangate review mark TASK-0001 --c2 approve >/dev/null && "
        "git add docs/working/TASK-0001 && git commit -q -m 'Plan TASK-0001'"
    )
    reviewers = tmp_path / "reviewers.json"
    reviewers.write_text(
        json.dumps(
            {
                "model_a": {
                    "verdict": "approve",
                    "evidence_ref": "docs/working/TASK-0001/review-self.md",
                },
                "model_b": {
                    "verdict": "approve",
                    "evidence_ref": "docs/working/TASK-0001/review-external.md",
                },
            }
        )
    )
    alice.sh(
        f"plangate c3 issue TASK-0001 --target-sha HEAD --reviewers {reviewers} "
        "--decision AUTO_APPROVED --policy-ref plangate-arbiter@v1 >/dev/null && "
        "plangate task start TASK-0001 >/dev/null && "
        "git add docs/working/TASK-0001/approvals && git commit -q -m 'Approve TASK-0001'"
    )

    # 4. An agent run through exec (in its sandbox, on a workspace of the approved commit):
    # its in-scope work lands on a run branch. The agent's own hook calls use the committed
    # command with the task exec gives it: in scope allowed, a protected surface denied.
    code = (
        "import pathlib; p = pathlib.Path('src/example/module.py'); "
        "p.parent.mkdir(parents=True, exist_ok=True); "
        "p.write_text('def answer():\\n    return 42\\n')"
    )
    run = alice.sh(f'plangate exec TASK-0001 -- python3 -c "{code}"', ok=False)
    assert run.returncode == 0, run.stdout + run.stderr
    runs = alice.sh("git branch --list 'plangate/runs/*'").stdout
    assert "plangate/runs/" in runs
    command = _claude_command(alice.clone)
    agent_env = alice.env | {"PLANGATE_TASK": "TASK-0001"}
    in_scope = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=alice.clone,
        env=agent_env,
        input=json.dumps(_pre_tool_use(alice.clone, "src/example/module.py")).encode(),
        capture_output=True,
        check=False,
    )
    assert in_scope.returncode == 0, in_scope.stderr
    protected = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=alice.clone,
        env=agent_env,
        input=json.dumps(_pre_tool_use(alice.clone, "CLAUDE.md")).encode(),
        capture_output=True,
        check=False,
    )
    assert protected.returncode == 2 and b"HOOK_PROTECTED_SURFACE" in protected.stderr

    # 5. Alice commits in-scope work herself: no environment variable needed.
    (alice.clone / "src" / "example").mkdir(parents=True, exist_ok=True)
    (alice.clone / "src" / "example" / "module.py").write_text("def answer():\n    return 6 * 7\n")
    alice.sh(
        "git add src/example/module.py && git commit -q -m 'Answer' && git push -q origin task-0001"
    )
    outside = alice.sh("echo x > notes.md && git add notes.md && git commit -q -m notes", ok=False)
    assert outside.returncode == 1
    assert "PlanGate stopped this commit" in outside.stderr
    alice.sh("git reset -q HEAD notes.md && rm notes.md && plangate task stop >/dev/null")

    # 6. Bob, another home and another virtual environment, on the same committed files.
    bob.sh(
        f"git clone -q {origin} {bob.clone} && cd {bob.clone} && "
        "git checkout -q -b task-0001 origin/task-0001",
        cwd=tmp_path,
    )
    # A fresh clone of a repository with approved tasks: setup starts his clone's own
    # ledger with no recovery command, asks nothing and says what a teammate does next.
    setup = bob.sh("plangate setup --claude --git")
    assert "PlanGate is already adopted here" in setup.stdout
    assert "this clone's own ledger" in setup.stdout
    assert "adopt-plangate" not in setup.stdout
    bob.sh("plangate task start TASK-0001 >/dev/null")
    command = _claude_command(bob.clone)
    allowed = bob.hook(command, _pre_tool_use(bob.clone, "src/example/module.py"))
    assert allowed.returncode == 0, allowed.stderr
    denied = bob.hook(command, _pre_tool_use(bob.clone, "lib/elsewhere.py"))
    assert denied.returncode == 2 and b"HOOK_OUTSIDE_SCOPE" in denied.stderr
    doctor = bob.sh("plangate doctor --json", ok=False)
    report = json.loads(doctor.stdout)
    assert report["verdict"] == "PASS", report
    assert any(p["expect"] == "allow" and p["ok"] for p in report["facts"]["probes"])

    # 7. The task's pull request, checked by the action's script under bash -e.
    code, out = _ci(alice, origin, "task-0001", tmp_path, "ci-task")
    assert code == 0, out["log"]
    assert out["verdict"] == "ACCEPTED"
