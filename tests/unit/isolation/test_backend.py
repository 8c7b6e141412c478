"""Backend choice (pure) and the probes' refusals on this machine."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from plangate.isolation.backend import (
    BUBBLEWRAP,
    SEATBELT,
    Backend,
    BackendStatus,
    choose,
    probe_bubblewrap,
    probe_seatbelt,
    trusted_binary,
)
from plangate.verdict import Reason


def test_choose_takes_the_first_available_backend() -> None:
    statuses = (
        BackendStatus(BUBBLEWRAP, False, "missing"),
        BackendStatus(SEATBELT, True, "ok", "/usr/bin/sandbox-exec"),
    )
    assert choose(statuses) == Backend(SEATBELT, "/usr/bin/sandbox-exec")


def test_choose_refuses_with_every_reason_when_none_works() -> None:
    statuses = (
        BackendStatus(BUBBLEWRAP, False, "bwrap is not installed"),
        BackendStatus(SEATBELT, False, "macOS only"),
    )
    chosen = choose(statuses)
    assert isinstance(chosen, Reason)
    assert chosen.code == "SANDBOX_UNAVAILABLE"
    assert "bwrap is not installed" in chosen.message
    assert "macOS only" in chosen.message
    assert isinstance(choose(()), Reason)


def test_an_available_status_without_a_path_is_not_a_backend() -> None:
    assert isinstance(choose((BackendStatus(BUBBLEWRAP, True, "?"),)), Reason)


def test_other_platforms_have_no_backend() -> None:
    assert not probe_bubblewrap("freebsd14").available
    assert not probe_seatbelt("win32").available
    assert "Linux only" in probe_bubblewrap("darwin").detail
    assert "macOS only" in probe_seatbelt("linux").detail


def test_a_binary_others_can_write_or_not_owned_by_root_is_not_trusted(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text('#!/bin/sh\nexec "$@"\n')
    fake.chmod(0o777)
    problem = trusted_binary(str(fake))
    assert problem is not None
    if os.getuid() == 0:
        assert "writable" in problem
    fake.chmod(0o755)
    if os.getuid() == 0:
        assert trusted_binary(str(fake)) is None
        os.chown(fake, 65534, 65534)
    assert "not owned by root" in (trusted_binary(str(fake)) or "")
    assert "not a regular file" in (trusted_binary(str(tmp_path)) or "")
    assert trusted_binary(str(tmp_path / "missing")) is not None


def test_bubblewrap_probe_on_this_machine() -> None:
    status = probe_bubblewrap()
    if sys.platform.startswith("linux") and Path("/usr/bin/bwrap").exists():
        assert status.available, status.detail
        assert status.path is not None
