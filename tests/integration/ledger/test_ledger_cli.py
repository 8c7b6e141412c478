"""``plangate ledger`` driven in-process, against both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import RunCli
from support.ledger import Backend, backend_fixture  # noqa: F401 -- the fixture


def _fill_ledger(backend: Backend) -> list[str]:
    with backend.open() as ledger:
        return [
            ledger.append("c3_issue", "TASK-0001", {"decision": "AUTO_APPROVED"}).entry_hash,
            ledger.append("c3_issue_refused", "TASK-0002", {"marker": "C1"}).entry_hash,
            ledger.append("exec_started", "TASK-0001", {"digest": "sha256:" + "b" * 64}).entry_hash,
        ]


def test_log_lists_entries_and_filters(backend: Backend, run_cli: RunCli) -> None:
    _fill_ledger(backend)
    res = run_cli(backend.repo, "ledger", "log", env=backend.env)
    assert res.code == 0, res.err
    assert "c3_issue_refused" in res.out
    assert "exec_started" in res.out
    res = run_cli(backend.repo, "ledger", "log", "--kind", "c3_issue", "--json", env=backend.env)
    assert res.code == 0
    doc = json.loads(res.out)
    assert doc["count"] == 1
    assert doc["entries"][0]["subject"] == "TASK-0001"
    assert doc["entries"][0]["payload"] == {"decision": "AUTO_APPROVED"}
    assert doc["backend"] == backend.name
    res = run_cli(
        backend.repo, "ledger", "log", "--subject", "TASK-0001", "--json", env=backend.env
    )
    assert [e["seq"] for e in json.loads(res.out)["entries"]] == [1, 3]


def test_verify_exit_0_when_intact_and_1_with_the_first_bad_seq(
    backend: Backend, run_cli: RunCli
) -> None:
    _fill_ledger(backend)
    res = run_cli(backend.repo, "ledger", "verify", "--json", env=backend.env)
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["verdict"] == "INTACT"
    assert doc["facts"]["entries"] == 3
    rows = backend.raw_rows()
    rows[1] = (*rows[1][:2], "TASK-0009", *rows[1][3:])
    backend.rewrite(rows)
    res = run_cli(backend.repo, "ledger", "verify", "--json", env=backend.env)
    assert res.code == 1
    doc = json.loads(res.out)
    assert doc["verdict"] == "TAMPERED"
    assert doc["facts"]["first_bad_seq"] == 2
    assert doc["reasons"][0]["code"] == "LEDGER_ENTRY_HASH_MISMATCH"
    res = run_cli(backend.repo, "ledger", "verify", env=backend.env)
    assert res.code == 1
    assert "first bad seq: 2" in res.out


def test_export_then_verify_the_file_and_detect_edits(
    backend: Backend, run_cli: RunCli, tmp_path: Path
) -> None:
    hashes = _fill_ledger(backend)
    out = tmp_path / "archive.jsonl"
    res = run_cli(backend.repo, "ledger", "export", "--jsonl", str(out), env=backend.env)
    assert res.code == 0, res.err
    lines = out.read_bytes().splitlines()
    assert len(lines) == 4  # header and three entries
    res = run_cli(backend.repo, "ledger", "verify", "--jsonl", str(out), "--json")
    assert res.code == 0, res.out + res.err
    assert json.loads(res.out)["facts"]["head_hash"] == hashes[-1]
    # Refuses to overwrite without --force.
    res = run_cli(backend.repo, "ledger", "export", "--jsonl", str(out), env=backend.env)
    assert res.code == 1
    assert "FILE_EXISTS" in res.err
    # An edited copy fails with the first bad seq.
    edited = tmp_path / "edited.jsonl"
    edited.write_bytes(out.read_bytes().replace(b"AUTO_APPROVED", b"AUTO_APPROVEX"))
    res = run_cli(backend.repo, "ledger", "verify", "--jsonl", str(edited), "--json")
    assert res.code == 1
    assert json.loads(res.out)["facts"]["first_bad_seq"] == 1
    # A truncated copy (last entry dropped) fails against the header's count.
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_bytes(b"\n".join(lines[:-1]) + b"\n")
    res = run_cli(backend.repo, "ledger", "verify", "--jsonl", str(truncated), "--json")
    assert res.code == 1
    assert json.loads(res.out)["reasons"][0]["code"] == "LEDGER_HEAD_MISMATCH"


def test_export_refuses_a_tampered_ledger(
    backend: Backend, run_cli: RunCli, tmp_path: Path
) -> None:
    _fill_ledger(backend)
    rows = backend.raw_rows()
    backend.rewrite([rows[0], rows[2]])
    out = tmp_path / "archive.jsonl"
    res = run_cli(backend.repo, "ledger", "export", "--jsonl", str(out), env=backend.env)
    assert res.code == 1
    assert "LEDGER_TAMPERED" in res.err
    assert not out.exists()


def test_verify_with_anchor(backend: Backend, run_cli: RunCli) -> None:
    hashes = _fill_ledger(backend)
    res = run_cli(backend.repo, "ledger", "verify", "--anchor", hashes[1], env=backend.env)
    assert res.code == 0, res.out
    res = run_cli(
        backend.repo,
        "ledger",
        "verify",
        "--anchor",
        "sha256:" + "c" * 64,
        "--json",
        env=backend.env,
    )
    assert res.code == 1
    assert json.loads(res.out)["reasons"][0]["code"] == "LEDGER_ANCHOR_MISSING"
    res = run_cli(backend.repo, "ledger", "verify", "--anchor", "deadbeef", env=backend.env)
    assert res.code == 2
    assert "LEDGER_ANCHOR_INVALID" in res.err


def test_empty_ledger_verifies_and_logs_nothing_without_creating_files(
    git_repo: Path, run_cli: RunCli
) -> None:
    res = run_cli(git_repo, "ledger", "verify", env={})
    assert res.code == 0
    assert "0 entries" in res.out
    res = run_cli(git_repo, "ledger", "log", env={})
    assert res.code == 0
    assert "no entries" in res.out
    assert not (git_repo / ".plangate").exists()


def test_bad_configuration_fails_closed(git_repo: Path, run_cli: RunCli) -> None:
    res = run_cli(git_repo, "ledger", "verify", env={"PLANGATE_LEDGER_URL": "mysql://h/db"})
    assert res.code == 1
    assert "LEDGER_URL_INVALID" in res.err
    assert "hint:" in res.err
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate" / "config.toml").write_text('[ledger]\nurl = "redis://x"\n')
    res = run_cli(git_repo, "ledger", "log", env={})
    assert res.code == 1
    assert "LEDGER_URL_INVALID" in res.err


def test_usage_errors(git_repo: Path, run_cli: RunCli, tmp_path: Path) -> None:
    assert run_cli(git_repo, "ledger", env={}).code == 2
    assert run_cli(git_repo, "ledger", "export", env={}).code == 2
    assert run_cli(git_repo, "ledger", "frobnicate", env={}).code == 2
    res = run_cli(git_repo, "ledger", "verify", "--jsonl", str(tmp_path / "missing.jsonl"))
    assert res.code == 1
    assert "LEDGER_EXPORT_UNREADABLE" in res.err


def _closed_reader(cwd: Path, *argv: str) -> tuple[int, str]:
    """Run plangate with stdout on a pipe whose reader takes one line and leaves."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3] / "src")
    proc = subprocess.Popen(
        [sys.executable, "-m", "plangate", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as 'head -1' does
    err = proc.stderr.read().decode()
    return proc.wait(timeout=60), err


@pytest.mark.parametrize(
    "argv",
    [
        ("ledger", "log"),
        ("ledger", "log", "--json"),
        ("ledger", "verify"),
        ("ledger", "--help"),
        ("--help",),
    ],
)
def test_a_reader_that_leaves_early_ends_the_command_quietly(
    git_repo: Path, argv: tuple[str, ...]
) -> None:
    from plangate.ledger import open_ledger

    with open_ledger(git_repo, {}) as ledger:
        for i in range(500):  # more output than a pipe buffer holds
            ledger.append("c3_issue", "TASK-0001", {"i": i, "pad": "x" * 64})
    code, err = _closed_reader(git_repo, *argv)
    assert code in (0, 141), err
    assert "Traceback" not in err
    assert "INTERNAL_ERROR" not in err
    assert "BrokenPipe" not in err
    assert err == ""


def test_a_closed_output_inside_a_command_is_exit_141_without_a_message(
    git_repo: Path,
) -> None:
    import io

    from plangate.cli.context import Context
    from plangate.cli.main import main

    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    err = io.StringIO()
    with_entries = git_repo
    from plangate.ledger import open_ledger

    with open_ledger(with_entries, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"i": 1})
    ctx = Context(cwd=git_repo, stdout=ClosedPipe(), stderr=err, env={})
    assert main(["ledger", "log"], ctx) == 141
    assert err.getvalue() == ""
