"""``plangate exec`` lands regular files only: links, repositories and special files are refused.

The task's plan allows ``src/greet.py``; each command puts something a
reviewer cannot read as a file at that allowed path (or beside it), in a real
bubblewrap box on a real repository. Nothing reaches the repository, the
patch and the reasons are kept in the run's directory, and the ledger's
``exec_result`` names the reason. :func:`workspace_facts` is also checked on
its own against a directory of real FIFOs, sockets, devices and repositories.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from plangate.execution.apply import WorkspaceFact, workspace_facts
from plangate.git import Git
from plangate.ledger import open_ledger
from support.boxes import backend_or_fail
from support.delivery import define_surfaces
from support.plan_tasks import approve_task
from support.repo import commit_all, git

PY = os.path.realpath(sys.executable)
TASK = "TASK-0001"

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap boxes exist on Linux only"
)


def _approved(repo: Path, run_cli) -> str:
    backend_or_fail()
    (repo / "src").mkdir()
    (repo / "src" / "keep.py").write_text("KEEP = 1\n")
    commit_all(repo, "code")
    define_surfaces(repo)
    return approve_task(repo, run_cli)


def _exec(repo: Path, run_cli, code: str):
    return run_cli(repo, "exec", TASK, "--json", "--", PY, "-c", textwrap.dedent(code))


def _exec_result(repo: Path) -> dict:
    with open_ledger(repo, {}, create=False) as ledger:
        found = [dict(e.payload) for e in ledger.entries() if e.kind == "exec_result"]
    assert len(found) == 1
    return found[0]


def _refused_and_kept(repo: Path, approved: str, result, code: str) -> dict:
    assert result.code == 1, result.err
    assert code in result.err
    assert "nothing reached the repository" in result.err
    assert git(repo, "rev-parse", "HEAD") == approved
    assert git(repo, "branch", "--list", "plangate/*") == ""
    assert git(repo, "ls-tree", "-r", "HEAD", "--", "src/greet.py") == ""
    assert not os.path.lexists(repo / "src" / "greet.py")
    recorded = _exec_result(repo)
    assert recorded["verdict"] == "REJECTED"
    assert code in recorded["reasons"]
    reasons = json.loads((Path(recorded["run_dir"]) / "reasons.json").read_text())
    assert code in [r["code"] for r in reasons["reasons"]]
    return recorded


@linux_only
def test_link_to_a_private_key_at_an_allowed_path_never_lands(git_repo: Path, run_cli) -> None:
    approved = _approved(git_repo, run_cli)
    key = Path.home() / ".ssh" / "id_ed25519"
    result = _exec(git_repo, run_cli, f"""
        import os
        os.symlink({str(key)!r}, "src/greet.py")
    """)
    recorded = _refused_and_kept(git_repo, approved, result, "EXEC_RESULT_SYMLINK_ESCAPES")
    patch = Path(recorded["patch"]).read_bytes()
    assert b"new file mode 120000" in patch
    assert str(key).encode() in patch  # the human sees where it pointed


@linux_only
def test_relative_link_leaving_the_repository_never_lands(git_repo: Path, run_cli) -> None:
    approved = _approved(git_repo, run_cli)
    result = _exec(git_repo, run_cli, """
        import os
        os.symlink("../../outside/secret", "src/greet.py")
    """)
    _refused_and_kept(git_repo, approved, result, "EXEC_RESULT_SYMLINK_ESCAPES")


@linux_only
def test_link_inside_the_repository_is_refused_too(git_repo: Path, run_cli) -> None:
    approved = _approved(git_repo, run_cli)
    result = _exec(git_repo, run_cli, """
        import os
        os.symlink("keep.py", "src/greet.py")
    """)
    recorded = _refused_and_kept(git_repo, approved, result, "EXEC_RESULT_SYMLINK")
    assert "EXEC_RESULT_SYMLINK_ESCAPES" not in recorded["reasons"]


@linux_only
def test_nested_repository_at_an_allowed_path_never_lands_as_a_gitlink(
    git_repo: Path, run_cli
) -> None:
    approved = _approved(git_repo, run_cli)
    result = _exec(git_repo, run_cli, """
        import os, subprocess
        os.mkdir("src/greet.py")
        env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
               "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}
        subprocess.run(["git", "init", "-q"], cwd="src/greet.py", check=True)
        open("src/greet.py/x", "w").write("x")
        subprocess.run(["git", "add", "x"], cwd="src/greet.py", check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "x"], cwd="src/greet.py", check=True, env=env)
    """)
    recorded = _refused_and_kept(git_repo, approved, result, "EXEC_RESULT_GITLINK")
    assert "EXEC_RESULT_NESTED_REPOSITORY" in recorded["reasons"]


@linux_only
def test_nested_repository_without_a_commit_is_refused_not_dropped(
    git_repo: Path, run_cli
) -> None:
    approved = _approved(git_repo, run_cli)
    result = _exec(git_repo, run_cli, """
        import os, subprocess
        open("src/greet.py", "w").write("ok\\n")
        os.makedirs("src/vendor")
        subprocess.run(["git", "init", "-q"], cwd="src/vendor", check=True)
    """)
    assert result.code == 1, result.err
    assert "EXEC_RESULT_NESTED_REPOSITORY" in result.err
    assert git(git_repo, "rev-parse", "HEAD") == approved
    assert _exec_result(git_repo)["verdict"] == "REJECTED"


@linux_only
@pytest.mark.parametrize(
    ("make", "code"),
    [
        ("os.mkfifo('src/greet.py')", "EXEC_RESULT_FIFO"),
        ("socket.socket(socket.AF_UNIX).bind('src/greet.py')", "EXEC_RESULT_SOCKET"),
    ],
)
def test_fifo_and_socket_at_an_allowed_path_are_refused(
    git_repo: Path, run_cli, make: str, code: str
) -> None:
    approved = _approved(git_repo, run_cli)
    result = _exec(git_repo, run_cli, f"""
        import os, socket
        {make}
    """)
    assert result.code == 1, result.err
    assert code in result.err
    assert git(git_repo, "rev-parse", "HEAD") == approved
    recorded = _exec_result(git_repo)
    assert recorded["verdict"] == "REJECTED"
    assert code in recorded["reasons"]


@linux_only
def test_regular_file_at_the_allowed_path_still_lands(git_repo: Path, run_cli) -> None:
    _approved(git_repo, run_cli)
    result = _exec(git_repo, run_cli, """
        import os
        open("src/greet.py", "w").write("print('hi')\\n")
        os.chmod("src/greet.py", 0o755)
    """)
    assert result.code == 0, result.err
    assert json.loads(result.out)["isolation"]["verdict"] == "ACCEPTED"
    assert git(git_repo, "ls-tree", "HEAD", "--", "src/greet.py").startswith("100755 blob")


# -- the workspace walk on its own (real files of every kind) ---------------------------


def _bare(tmp_path: Path) -> Git:
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "state.git")], check=True)
    return Git(tmp_path / "state.git")


def test_workspace_walk_finds_every_kind_and_skips_what_git_ignores(tmp_path: Path) -> None:
    tree = tmp_path / "ws"
    (tree / ".git").mkdir(parents=True)  # the workspace's own repository: not reported
    (tree / "build").mkdir()
    (tree / ".gitignore").write_text("build/\n")
    os.mkfifo(tree / "fifo")
    os.mkfifo(tree / "build" / "ignored-fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tree / "sock"))
    (tree / "vendor" / "lib").mkdir(parents=True)
    (tree / "vendor" / "lib" / ".git").write_text("gitdir: /elsewhere\n")  # a .git file counts
    os.symlink("/dev/null", tree / "link-to-device")  # links are the tree's to judge
    (tree / "plain.txt").write_text("x")
    try:
        found = workspace_facts(tree, _bare(tmp_path))
    finally:
        sock.close()
    assert sorted(found) == sorted(
        [
            WorkspaceFact("fifo", "fifo"),
            WorkspaceFact("sock", "socket"),
            WorkspaceFact("vendor/lib", "nested_repository"),
        ]
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs CAP_MKNOD")
def test_workspace_walk_finds_a_device_node(tmp_path: Path) -> None:
    tree = tmp_path / "ws"
    tree.mkdir()
    os.mknod(tree / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    assert workspace_facts(tree, _bare(tmp_path)) == (WorkspaceFact("null", "device"),)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a directory whatever its mode")
def test_workspace_walk_reports_a_directory_it_cannot_read(tmp_path: Path) -> None:
    tree = tmp_path / "ws"
    (tree / "closed").mkdir(parents=True)
    (tree / "closed").chmod(0)
    try:
        found = workspace_facts(tree, _bare(tmp_path))
    finally:
        (tree / "closed").chmod(0o700)
    assert found == (WorkspaceFact("closed", "unreadable"),)
