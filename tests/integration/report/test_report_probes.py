"""doctor's canaries are probes, marked where they are recorded, never counted as refusals.

``plangate doctor`` runs every installed hook command with canary payloads; the hook
records each decision in the ledger like any other. The hook marks the decisions made
for doctor (doctor tells it so through its environment) and the report counts them apart;
an agent's own refusal, recorded by the same hook command, is still a refusal.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from plangate.hooks.install import apply, installed_commands
from support.cli import run_cli_in
from support.hooks import claude_payload, hook_env, ledger_decisions


def _claude_pre_command(repo: Path) -> str:
    return next(c for h, e, c in installed_commands(repo) if h == "claude" and "pre" in e.lower())


def _report(repo: Path, tmp_path: Path, fmt: str) -> str:
    out = tmp_path / f"report.{fmt}"
    result = run_cli_in(repo, "report", "--format", fmt, "-o", str(out))
    assert result.code == 0, result.err
    return out.read_text()


def test_doctor_probes_are_not_counted_as_refusals(git_repo: Path, tmp_path: Path) -> None:
    apply(git_repo, ["claude"], install=True)
    doctor = run_cli_in(git_repo, "doctor", "--json")
    assert json.loads(doctor.out)["verdict"] == "PASS", doctor.out
    decisions = ledger_decisions(git_repo)
    denied = [d for d in decisions if d["verdict"] == "DENY"]
    assert denied, "doctor's deny canaries were recorded"
    assert all(d.get("probe") == "doctor" for d in decisions)  # marked at the source

    markdown = _report(git_repo, tmp_path, "markdown")
    assert "### Denials: 0" in markdown
    assert f"{len(decisions)} doctor probe(s) not counted as refusals." in markdown
    page = _report(git_repo, tmp_path, "html")
    assert "No hook or exec refusals in this period." in page
    assert f"{len(decisions)} hook decision(s) of plangate doctor" in page


def test_an_agents_refusal_by_the_same_hook_is_counted(git_repo: Path, tmp_path: Path) -> None:
    apply(git_repo, ["claude"], install=True)
    assert run_cli_in(git_repo, "doctor", "--json").code == 0
    probes = len(ledger_decisions(git_repo))
    # The agent writes a protected file through the very command doctor probed.
    payload = claude_payload("PreToolUse", git_repo, "Write",
                             {"file_path": str(git_repo / ".plangate" / "trust.toml"),
                              "content": "x"})
    proc = subprocess.run(_claude_pre_command(git_repo), shell=True, cwd=git_repo,  # noqa: S602
                          input=payload, capture_output=True, env=hook_env(), check=False)
    assert proc.returncode != 0 or b"deny" in proc.stdout
    agent = [d for d in ledger_decisions(git_repo) if "probe" not in d]
    assert [d["verdict"] for d in agent] == ["DENY"]
    markdown = _report(git_repo, tmp_path, "markdown")
    assert "### Denials: 1" in markdown
    assert f"{probes} doctor probe(s) not counted as refusals." in markdown


def test_a_probe_mark_from_the_environment_never_changes_the_decision(
    git_repo: Path,
) -> None:
    apply(git_repo, ["claude"], install=True)
    payload = claude_payload("PreToolUse", git_repo, "Write",
                             {"file_path": str(git_repo / ".plangate" / "trust.toml"),
                              "content": "x"})
    for env in (hook_env(), hook_env(PLANGATE_DOCTOR_PROBE="1")):
        subprocess.run(_claude_pre_command(git_repo), shell=True, cwd=git_repo,  # noqa: S602
                       input=payload, capture_output=True, env=env, check=False)
    first, second = ledger_decisions(git_repo)
    assert first["verdict"] == second["verdict"] == "DENY"
    assert first["codes"] == second["codes"]
    assert "probe" not in first and second["probe"] == "doctor"
