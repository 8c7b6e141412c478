"""Which git PlanGate runs: a trusted system one (or the person's own, named in their
``programs.toml``), never the first ``git`` on ``PATH``, which whoever starts PlanGate
chooses. Real git, real user namespaces (``unshare``, bubblewrap) as a box shows the
system's files to an ordinary account."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import plangate.git as git_door
from plangate import sysbin
from plangate.git import Git, GitError
from support.repo import commit_all, git

REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")


@pytest.fixture
def fresh_lookup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """git looked up anew in this test; the person's configuration directory is empty."""
    monkeypatch.setattr(git_door, "_GIT_PROGRAM", [])
    config = tmp_path / "person-config"
    config.mkdir()
    monkeypatch.setattr(sysbin, "user_config_dir", lambda: config)
    return config


def _lying_git(directory: Path, marker: Path) -> Path:
    directory.mkdir()
    liar = directory / "git"
    liar.write_text(f"#!/bin/sh\ntouch '{marker}'\necho {'0' * 40}\nexit 0\n")
    liar.chmod(0o755)
    return liar


def test_a_git_first_on_path_never_runs(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_lookup: Path
) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    marker = tmp_path / "liar.ran"
    liar = _lying_git(tmp_path / "bin", marker)
    monkeypatch.setenv("PATH", f"{liar.parent}:{os.environ['PATH']}")
    assert shutil.which("git") == str(liar)  # the caller's PATH names the liar first
    assert Git(git_repo).head() == head
    assert not marker.exists()
    assert git_door.git_program() == REAL_GIT


def test_a_cli_run_with_a_lying_git_on_path_reads_the_real_history(
    git_repo: Path, tmp_path: Path
) -> None:
    """The same, through the installed command: ``ci check`` in a fresh process."""
    marker = tmp_path / "liar.ran"
    liar = _lying_git(tmp_path / "bin", marker)
    base = git(git_repo, "rev-parse", "HEAD")
    (git_repo / "stray.py").write_text("x = 1\n")
    commit_all(git_repo, "work without a task")
    env = dict(os.environ, PATH=f"{liar.parent}:{os.environ['PATH']}")
    proc = subprocess.run(
        [sys.executable, "-m", "plangate", "ci", "check", "--base", base, "--head", "HEAD"],
        cwd=git_repo, env=env, capture_output=True, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert b"CI_NO_TASK" in proc.stdout and b"stray.py" in proc.stdout
    assert not marker.exists()


def test_no_trusted_git_is_refused_with_the_override_named(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_lookup: Path
) -> None:
    monkeypatch.setattr(sysbin, "SYSTEM_BIN_DIRS", (str(tmp_path / "empty"),))
    with pytest.raises(GitError) as info:
        Git(git_repo).head()
    assert info.value.code == "GIT_MISSING"
    assert "programs.toml" in (info.value.hint or "")


def test_the_persons_own_git_is_used_when_trusted_and_refused_otherwise(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_lookup: Path
) -> None:
    monkeypatch.setattr(sysbin, "SYSTEM_BIN_DIRS", (str(tmp_path / "empty"),))
    own = tmp_path / "tools" / "git"
    own.parent.mkdir()
    shutil.copy2(REAL_GIT, own)
    own.chmod(0o755)
    programs = fresh_lookup / sysbin.PROGRAMS_FILE
    programs.write_text(f'git = "{own}"\n')
    programs.chmod(0o644)
    assert Git(git_repo).head() == git(git_repo, "rev-parse", "HEAD")
    assert git_door.git_program() == str(own)
    # Writable by others: refused, never passed over for another git.
    monkeypatch.setattr(git_door, "_GIT_PROGRAM", [])
    own.chmod(0o777)
    with pytest.raises(GitError) as info:
        Git(git_repo).head()
    assert info.value.code == "GIT_UNTRUSTED"
    assert "writable by others" in info.value.message


@pytest.mark.parametrize(
    ("uid_map", "expected"),
    [
        ("         0          0 4294967295\n", 0),  # no user namespace
        ("      1000          0          1\n", 1000),  # root mapped to 1000 in the box
        ("      1000       1000          1\n", 65534),  # an ordinary account's box
        ("", 65534),  # nothing mapped
        ("         0       1000          1\n         1     100000      65536\n", 65534),
        ("         5          0         10\n", 5),
        ("garbage line\n      7          0          1\n", 7),
    ],
)
def test_root_as_a_user_namespace_shows_it(uid_map: str, expected: int) -> None:
    assert sysbin.root_uid_from(uid_map, 65534) == expected


def _in_namespace(prefix: list[str], repo: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "from pathlib import Path\n"
        "from plangate.git import Git, git_program\n"
        "from plangate.sysbin import root_uids\n"
        f"print(root_uids(), git_program(), Git(Path({str(repo)!r})).head())\n"
    )
    return subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True,
                          text=True, check=False)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="util-linux unshare not installed")
def test_git_is_found_where_root_is_not_mapped(git_repo: Path) -> None:
    """A user namespace without root in it shows the system's files as owned by the
    overflow uid, as a box run by an ordinary account does."""
    probe = subprocess.run(["unshare", "-U", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("user namespaces are not available here")
    proc = _in_namespace(["unshare", "-U"], git_repo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["(0,", "65534)", REAL_GIT, git(git_repo, "rev-parse", "HEAD")]


def test_git_is_found_in_a_box_that_maps_root_to_another_uid(git_repo: Path) -> None:
    bwrap = sysbin.find_system_binary("bwrap")[0]
    if bwrap is None or os.getuid() != 0:
        pytest.skip("needs bubblewrap, run as root (root is then mapped to --uid)")
    proc = _in_namespace([bwrap, "--unshare-user", "--uid", "1000", "--gid", "1000",
                          "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"], git_repo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["(0,", "1000)", REAL_GIT, git(git_repo, "rev-parse", "HEAD")]
