"""``plangate exec --no-isolation``: a signed statement where a trust root is in force.

Real repositories, real ssh-keygen keys and signatures. carol holds the
``override`` role (and ``approver``), alice reviews, mallory is listed nowhere.
A faked terminal (``script -qec ... /dev/null``) with the agent markers taken
out of the environment is what an agent can reach; it runs only with a valid
statement, and every wrong statement is refused with its own reason code
before the command starts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from plangate.agents import agent_markers_present
from plangate.authority.optout import OptOut, opt_out_bytes, statement_relpath
from plangate.authority.root import NAMESPACE_EXEC_OPT_OUT
from plangate.canonical import command_digest
from plangate.clock import format_utc
from plangate.ledger import open_ledger
from support.keys import Key, allowed_signers, make_key, sign_bytes
from support.plan_tasks import approve_task
from support.repo import commit_all, git

PY = sys.executable
TASK = "TASK-0001"
PLANGATE = shutil.which("plangate") or str(Path(sys.executable).with_name("plangate"))

TRUST = b"""version = 1
require_signatures = false
humans = ["alice@example.com", "bob@example.com", "carol@example.com"]

[roles]
reviewer = ["alice@example.com", "bob@example.com"]
approver = ["carol@example.com"]
override = ["carol@example.com"]
"""


def _team(tmp_path: Path) -> dict[str, Key]:
    return {
        name: make_key(tmp_path / "keys", f"{name}@example.com")
        for name in ("alice", "bob", "carol", "mallory")
    }


def _repo_with_root(repo: Path, tmp_path: Path, run_cli) -> dict[str, Key]:
    team = _team(tmp_path)
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate/trust.toml").write_bytes(TRUST)
    (repo / ".plangate/allowed_signers").write_bytes(
        allowed_signers(team["alice"], team["bob"], team["carol"])
    )
    commit_all(repo, "trust root")
    approve_task(repo, run_cli)
    return team


def _command(marker: Path) -> list[str]:
    return [PY, "-c", f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"]


def _clean_env() -> dict[str, str]:
    """The environment an agent gets by taking its markers out (``env -u ...``)."""
    env = dict(os.environ)
    for name in agent_markers_present(env):
        env.pop(name)
    return env


def _sign_cli(repo: Path, run_cli, key: Key, command: list[str], *extra: str):
    return run_cli(
        repo, "trust", "opt-out", TASK, "--sign", str(key.path), *extra, "--", *command, tty=True
    )


def _exec(repo: Path, run_cli, command: list[str]):
    return run_cli(
        repo, "exec", TASK, "--no-isolation", "--json", "--", *command, tty=True, env=_clean_env()
    )


def _script_exec(repo: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """``script -qec 'plangate exec ... --no-isolation -- ...' /dev/null``: a faked terminal."""
    line = shlex.join([PLANGATE, "exec", TASK, "--no-isolation", "--", *command])
    return subprocess.run(
        ["script", "-qec", line, "/dev/null"],
        cwd=repo,
        env=_clean_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )


def _write_statement(repo: Path, key: Key, statement: OptOut) -> bytes:
    data = opt_out_bytes(statement)
    rel = statement_relpath(TASK)
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_bytes(data)
    (repo / (rel + ".sig")).write_bytes(sign_bytes(key, NAMESPACE_EXEC_OPT_OUT, data))
    return data


def _statement(repo: Path, command: list[str], **changes: str) -> OptOut:
    now = datetime.now(UTC).replace(microsecond=0)
    base = OptOut(
        TASK,
        command_digest(command),
        git(repo, "rev-parse", "HEAD"),
        "carol@example.com",
        format_utc(now - timedelta(minutes=1)),
        format_utc(now + timedelta(minutes=14)),
    )
    return base._replace(**changes)


def _entries(repo: Path, kind: str) -> list[dict]:
    with open_ledger(repo, {}, create=False) as ledger:
        assert ledger.verify().accepted
        return [dict(e.payload) for e in ledger.entries(kind=kind)]


# -- a faked terminal is no evidence of a person ------------------------------------------


def test_faked_terminal_without_a_statement_is_refused(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    proc = _script_exec(git_repo, _command(marker))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "EXEC_OPT_OUT_STATEMENT_MISSING" in proc.stdout + proc.stderr
    assert not marker.exists()
    assert _entries(git_repo, "exec_unisolated") == []
    refused = _entries(git_repo, "exec_refused")
    assert refused[-1]["reasons"] == ["EXEC_OPT_OUT_STATEMENT_MISSING"]


def test_faked_terminal_with_a_valid_statement_runs_and_records_the_signer(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    signed = _sign_cli(git_repo, run_cli, team["carol"], command, "--minutes", "10")
    assert signed.code == 0, signed.err
    proc = _script_exec(git_repo, command)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert marker.read_text() == "ran"
    [entry] = _entries(git_repo, "exec_unisolated")
    assert entry["authority"] == "signed"
    assert entry["principal"] == "carol@example.com"
    assert entry["role"] == "override"
    assert entry["statement"]["command_digest"] == command_digest(command)
    assert entry["statement"]["head"] == git(git_repo, "rev-parse", "HEAD")
    assert entry["signature"].startswith("-----BEGIN SSH SIGNATURE-----")
    assert "terminal" not in entry["by"]
    data = (git_repo / statement_relpath(TASK)).read_bytes()
    assert entry["statement_digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
    run_log = [
        json.loads(line)
        for line in (git_repo / f"docs/working/{TASK}/run.ndjson").read_text().splitlines()
    ]
    unisolated = [line for line in run_log if line.get("event") == "exec_unisolated"]
    assert unisolated[0]["principal"] == "carol@example.com"
    assert unisolated[0]["statement_digest"] == entry["statement_digest"]
    # the statement never shows up as a change to commit
    assert git(git_repo, "status", "--porcelain", "--", ".plangate/opt-out") == ""


def test_a_statement_counts_once(git_repo: Path, tmp_path: Path, run_cli) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    assert _sign_cli(git_repo, run_cli, team["carol"], command).code == 0
    assert _exec(git_repo, run_cli, command).code == 0
    marker.unlink()
    again = _exec(git_repo, run_cli, command)
    assert again.code == 3, again.err
    assert json.loads(again.out)["reasons"][0]["code"] == "EXEC_OPT_OUT_ALREADY_USED"
    assert not marker.exists()


# -- every wrong statement is refused with its own code -----------------------------------


def _refused(repo: Path, run_cli, command: list[str], marker: Path, code: str) -> None:
    result = _exec(repo, run_cli, command)
    assert result.code == 3, result.err
    report = json.loads(result.out)
    assert report["verdict"] == "HUMAN_REQUIRED"
    assert report["reasons"][0]["code"] == code, report["reasons"]
    assert not marker.exists()
    assert _entries(repo, "exec_unisolated") == []
    assert _entries(repo, "exec_refused")[-1]["reasons"] == [code]


def test_expired_statement_is_refused(git_repo: Path, tmp_path: Path, run_cli) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    past = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    _write_statement(
        git_repo,
        team["carol"],
        _statement(
            git_repo,
            command,
            issued_at=format_utc(past),
            expires_at=format_utc(past + timedelta(minutes=30)),
        ),
    )
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_EXPIRED")


def test_statement_valid_longer_than_an_hour_is_refused(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    now = datetime.now(UTC).replace(microsecond=0)
    _write_statement(
        git_repo,
        team["carol"],
        _statement(git_repo, command, expires_at=format_utc(now + timedelta(days=30))),
    )
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_VALIDITY_TOO_LONG")


def test_statement_for_another_command_is_refused(git_repo: Path, tmp_path: Path, run_cli) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    assert _sign_cli(git_repo, run_cli, team["carol"], [PY, "-c", "pass"]).code == 0
    _refused(git_repo, run_cli, _command(marker), marker, "EXEC_OPT_OUT_OTHER_COMMAND")


def test_statement_for_another_task_is_refused(git_repo: Path, tmp_path: Path, run_cli) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    _write_statement(git_repo, team["carol"], _statement(git_repo, command, task_id="TASK-0002"))
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_OTHER_TASK")


def test_statement_for_another_head_is_refused(git_repo: Path, tmp_path: Path, run_cli) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    earlier = git(git_repo, "rev-parse", "HEAD~1")
    _write_statement(git_repo, team["carol"], _statement(git_repo, command, head=earlier))
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_OTHER_HEAD")


def test_statement_signed_by_a_principal_without_override_is_refused(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    assert _sign_cli(git_repo, run_cli, team["alice"], command).code == 0
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_SIGNER_NOT_AUTHORISED")


def test_statement_signed_by_an_unlisted_key_is_refused(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    _write_statement(git_repo, team["mallory"], _statement(git_repo, command))
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_SIGNER_UNKNOWN")


def test_tampered_statement_is_refused(git_repo: Path, tmp_path: Path, run_cli) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    _write_statement(git_repo, team["carol"], _statement(git_repo, command, head="0" * 40))
    # The agent rewrites the signed statement to name this HEAD; the signature stays.
    rel = git_repo / statement_relpath(TASK)
    rel.write_bytes(opt_out_bytes(_statement(git_repo, command)))
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_SIGNATURE_INVALID")


def test_statement_signed_for_another_namespace_is_refused(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    data = _write_statement(git_repo, team["carol"], _statement(git_repo, command))
    sig = sign_bytes(team["carol"], "plangate-review", data)
    (git_repo / (statement_relpath(TASK) + ".sig")).write_bytes(sig)
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_SIGNATURE_NAMESPACE")


def test_statement_naming_another_principal_is_refused(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    _write_statement(
        git_repo, team["carol"], _statement(git_repo, command, principal="bob@example.com")
    )
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_PRINCIPAL_MISMATCH")


def test_malformed_statement_is_refused(git_repo: Path, tmp_path: Path, run_cli) -> None:
    _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    rel = git_repo / statement_relpath(TASK)
    rel.parent.mkdir(parents=True)
    rel.write_bytes(b'{"kind": "plangate-exec-opt-out"}\n')
    _refused(git_repo, run_cli, _command(marker), marker, "EXEC_OPT_OUT_STATEMENT_MALFORMED")


def test_unsigned_statement_is_refused(git_repo: Path, tmp_path: Path, run_cli) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    marker = tmp_path / "ran"
    command = _command(marker)
    _write_statement(git_repo, team["carol"], _statement(git_repo, command))
    (git_repo / (statement_relpath(TASK) + ".sig")).unlink()
    _refused(git_repo, run_cli, command, marker, "EXEC_OPT_OUT_SIGNATURE_MISSING")


# -- signing, and no trust root ------------------------------------------------------------


def test_signing_is_refused_under_agent_markers(git_repo: Path, tmp_path: Path, run_cli) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    result = run_cli(
        git_repo, "trust", "opt-out", TASK, "--sign", str(team["carol"].path), "--", "true",
        tty=True, env={**_clean_env(), "CLAUDECODE": "1"},
    )
    assert result.code == 3
    assert "EXEC_OPT_OUT_SIGN_AGENT_ENVIRONMENT" in result.err
    assert not (git_repo / statement_relpath(TASK)).exists()


@pytest.mark.parametrize("minutes", ["0", "61"])
def test_signing_refuses_a_validity_outside_one_to_sixty_minutes(
    git_repo: Path, tmp_path: Path, run_cli, minutes: str
) -> None:
    team = _repo_with_root(git_repo, tmp_path, run_cli)
    result = _sign_cli(git_repo, run_cli, team["carol"], ["true"], "--minutes", minutes)
    assert result.code == 2
    assert "EXEC_OPT_OUT_VALIDITY_TOO_LONG" in result.err
    assert not (git_repo / statement_relpath(TASK)).exists()


def test_without_a_trust_root_the_opt_out_is_recorded_as_unauthenticated(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    approve_task(git_repo, run_cli)
    marker = tmp_path / "ran"
    result = _exec(git_repo, run_cli, _command(marker))
    assert result.code == 0, result.err
    assert marker.exists()
    [entry] = _entries(git_repo, "exec_unisolated")
    assert entry["authority"] == "unauthenticated"
    assert entry["by"].startswith("unauthenticated")
    assert "human at a terminal" not in json.dumps(entry)
    assert json.loads(result.out)["isolation"]["authority"] == "unauthenticated"


def test_faked_terminal_without_a_trust_root_runs_but_is_recorded_as_unauthenticated(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    approve_task(git_repo, run_cli)
    marker = tmp_path / "ran"
    proc = _script_exec(git_repo, _command(marker))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert marker.exists()
    assert "unauthenticated" in proc.stdout + proc.stderr
    [entry] = _entries(git_repo, "exec_unisolated")
    assert entry["authority"] == "unauthenticated"
    assert "principal" not in entry
