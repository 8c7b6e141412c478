"""The box's private home: what is copied in (and what never is), what the box changed."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure
from plangate.isolation import home as home_module
from plangate.isolation.home import discard_home, home_changes, prepare_home


def _host(tmp_path: Path) -> Path:
    host = tmp_path / "host-home"
    (host / ".claude" / "agents").mkdir(parents=True)
    (host / ".claude" / "settings.json").write_text('{"a": 1}\n')
    (host / ".claude" / "agents" / "r.md").write_text("reviewer\n")
    (host / ".ssh").mkdir()
    (host / ".ssh" / "id_ed25519").write_text("KEY\n")
    return host


def test_only_granted_paths_are_copied_and_links_are_not_followed(tmp_path: Path) -> None:
    host = _host(tmp_path)
    (host / ".claude" / "key-link").symlink_to(host / ".ssh" / "id_ed25519")
    run = tmp_path / "run"
    run.mkdir()
    box = prepare_home(run, str(host), ("~/.claude", "~/.codex/config.toml"))
    assert box.copied == ("~/.claude",)  # ~/.codex does not exist on the host
    assert (box.directory / ".claude" / "settings.json").read_text() == '{"a": 1}\n'
    assert not (box.directory / ".ssh").exists()
    link = box.directory / ".claude" / "key-link"
    assert link.is_symlink()
    assert os.readlink(link) == str(host / ".ssh" / "id_ed25519")  # a link, not the key
    assert box.digests["~/.claude/agents/r.md"].startswith("sha256:")
    assert oct(box.directory.stat().st_mode & 0o777) == "0o700"


def test_sockets_are_never_copied(tmp_path: Path) -> None:
    host = _host(tmp_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(host / ".claude" / "ipc.sock"))
    run = tmp_path / "run"
    run.mkdir()
    try:
        box = prepare_home(run, str(host), ("~/.claude",))
    finally:
        listener.close()
    assert not os.path.lexists(box.directory / ".claude" / "ipc.sock")


def test_changes_are_listed_with_digests_and_the_home_discarded(tmp_path: Path) -> None:
    host = _host(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    box = prepare_home(run, str(host), ("~/.claude",))
    (box.directory / ".claude" / "settings.json").write_text('{"hooks": 1}\n')
    (box.directory / ".claude" / "agents" / "r.md").unlink()
    (box.directory / ".claude.json").write_text("{}\n")
    (box.directory / "mountpoint-dir").mkdir()  # an empty directory is not a change
    changes = home_changes(box)
    assert [(c["path"], c["change"]) for c in changes] == [
        ("~/.claude.json", "added"),
        ("~/.claude/agents/r.md", "removed"),
        ("~/.claude/settings.json", "modified"),
    ]
    assert all(c["digest"].startswith("sha256:") for c in changes)
    discard_home(box)
    assert not box.directory.exists()
    assert (host / ".claude" / "settings.json").read_text() == '{"a": 1}\n'


def test_a_copy_past_the_bound_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = _host(tmp_path)
    monkeypatch.setattr(home_module, "MAX_COPY_FILES", 1)
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(EnvironmentFailure) as info:
        prepare_home(run, str(host), ("~/.claude",))
    assert info.value.code == "ISOLATION_HOME_COPY_TOO_LARGE"
