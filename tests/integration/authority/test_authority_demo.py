"""The demo shows one signed approval accepted and one forged approval rejected."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import run_cli_in
from support.fakessh import fake_path, use_fakes


def test_the_authority_demo_accepts_the_signed_approval_and_rejects_the_forgeries(
    tmp_path: Path,
) -> None:
    result = run_cli_in(tmp_path, "demo", "--only", "authority")
    assert result.code == 0, result.out + result.err
    out = result.out
    assert "UNEXPECTED" not in out and "Demo complete" in out
    assert "APPROVED BY" in out and "carol@example.com" in out
    assert "C3_SIGNER_UNKNOWN" in out and "C3_SIGNATURE_MISSING" in out
    assert out.count("[ok]") >= 7


def test_without_ssh_keygen_the_demo_says_why_it_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fakes(monkeypatch, fake_path(tmp_path / "bin"))
    result = run_cli_in(tmp_path, "demo", "--only", "authority")
    assert "authority steps skipped: AUTH_SSH_KEYGEN_MISSING" in result.out
    assert "UNEXPECTED" not in result.out
