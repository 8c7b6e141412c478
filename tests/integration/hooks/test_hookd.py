"""The hook helper (``plangate hookd``) and its client, with real sockets and processes.

Every fallback case runs the real client (``python -S -I hookd_launch.py claude``)
against a helper that must not be used, and checks that the client printed
exactly what today's in-process hook prints for the same payload: the payload
is a deny, and every fake helper answers "allow", so a client that trusted it
would turn the deny into an allow.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.hookd import (
    allow_payload,
    deny_payload,
    helper_state,
    in_process,
    requests_served,
    run_client,
    running_helper,
    runtime_env,
    same,
    start_helper,
)
from support.hooks import approved_repo, claude_payload, hook_env, ledger_decisions
from support.native import start_fake_helper

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the helper needs SO_PEERCRED (Linux)"
)


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return approved_repo(git_repo)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return runtime_env(hook_env("TASK-0001"), tmp_path / "run")


def location(repo: Path, env: dict[str, str]):  # type: ignore[no-untyped-def]
    from plangate.hooks.hookd import locate

    return locate(str(repo), env)


# -- the helper answers ------------------------------------------------------------------


def test_allow_and_deny_through_the_helper_equal_in_process(repo: Path, env: dict[str, str]):
    with running_helper(repo, env):
        for payload, code in ((allow_payload(repo), 0), (deny_payload(repo), 2)):
            before = requests_served(repo, env)
            through = run_client(repo, "claude", payload, env)
            assert requests_served(repo, env) == before + 1
            assert through.returncode == code
            same(through, in_process(repo, "claude", payload, env))


def test_a_deny_decided_by_the_helper_is_in_the_ledger(repo: Path, env: dict[str, str]):
    with running_helper(repo, env):
        count = len(ledger_decisions(repo))
        before = requests_served(repo, env)
        result = run_client(repo, "claude", deny_payload(repo), env)
        assert requests_served(repo, env) == before + 1
    assert result.returncode == 2
    decisions = ledger_decisions(repo)
    assert len(decisions) == count + 1
    assert decisions[-1]["verdict"] == "DENY"
    assert "HOOK_PROTECTED_SURFACE" in decisions[-1]["codes"]
    assert decisions[-1]["targets"] == ["CLAUDE.md"]


def test_the_light_entry_point_asks_the_helper_too(repo: Path, env: dict[str, str]):
    with running_helper(repo, env):
        before = requests_served(repo, env)
        through = subprocess.run(
            [sys.executable, "-P", "-m", "plangate.hooks", "claude"],
            cwd=repo, input=deny_payload(repo), env=env, capture_output=True, check=False,
        )
        assert requests_served(repo, env) == before + 1
    same(through, in_process(repo, "claude", deny_payload(repo), env))


def test_git_hooks_never_use_the_helper(repo: Path, env: dict[str, str]):
    with running_helper(repo, env):
        before = requests_served(repo, env)
        subprocess.run(
            [sys.executable, "-P", "-m", "plangate.hooks", "git-pre-commit"],
            cwd=repo, env=env, capture_output=True, check=False,
        )
        assert requests_served(repo, env) == before


def test_inside_exec_isolated_run_the_helper_is_not_asked(repo: Path, env: dict[str, str]):
    boxed = {**env, "PLANGATE_BOX": "bwrap"}
    with running_helper(repo, env):
        before = requests_served(repo, env)
        result = run_client(repo, "claude", deny_payload(repo), boxed)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), boxed))


def test_a_client_of_another_package_digest_is_refused(repo: Path, env: dict[str, str]):
    from plangate.hooks.hookd_client import ask_helper, package_digest

    with running_helper(repo, env):
        before = requests_served(repo, env)
        other = ask_helper("claude", deny_payload(repo), env, str(repo), digest="sha256:other")
        assert other is None
        assert requests_served(repo, env) == before
        mine = ask_helper("claude", deny_payload(repo), env, str(repo), digest=package_digest())
        assert mine is not None and mine[2] == 2


def test_write_or_bash_aimed_at_the_socket_is_denied(repo: Path, env: dict[str, str]):
    with running_helper(repo, env) as helper:
        for tool, tool_input in (
            ("Write", {"file_path": helper.socket, "content": "x"}),
            ("Bash", {"command": f"rm -f {helper.socket}"}),
            ("Bash", {"command": f"ln -sf /tmp/x {helper.socket}"}),
        ):
            result = in_process(repo, "claude", claude_payload("PreToolUse", repo, tool, tool_input),
                                env)
            assert result.returncode == 2, (tool, tool_input)
            assert b"HOOK_TARGET_OUTSIDE_REPO" in result.stderr


# -- fallbacks: each one gives the in-process answer -----------------------------------


def test_no_helper_gives_the_in_process_answer(repo: Path, env: dict[str, str]):
    for payload in (deny_payload(repo), allow_payload(repo)):
        same(run_client(repo, "claude", payload, env), in_process(repo, "claude", payload, env))


@pytest.mark.parametrize("mode", [0o660, 0o606, 0o777])
def test_a_socket_with_group_or_other_bits_is_not_used(repo: Path, env: dict[str, str], mode: int):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        os.chmod(helper.socket, mode)
        result = run_client(repo, "claude", deny_payload(repo), env)
        os.chmod(helper.socket, 0o600)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away needs root")
def test_a_socket_owned_by_another_user_is_not_used(repo: Path, env: dict[str, str]):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        os.chown(helper.socket, 65534, -1)
        result = run_client(repo, "claude", deny_payload(repo), env)
        os.chown(helper.socket, 0, -1)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


@pytest.mark.parametrize("mode", [0o750, 0o705, 0o777])
def test_a_socket_directory_open_to_others_is_not_used(repo: Path, env: dict[str, str], mode: int):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        directory = os.path.dirname(helper.socket)
        os.chmod(directory, mode)
        result = run_client(repo, "claude", deny_payload(repo), env)
        os.chmod(directory, 0o700)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


def test_a_socket_directory_that_is_a_link_is_not_used(
    repo: Path, env: dict[str, str], tmp_path: Path
):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        other = runtime_env(env, tmp_path / "other")
        (tmp_path / "other" / "plangate").symlink_to(os.path.dirname(helper.socket))
        result = run_client(repo, "claude", deny_payload(repo), other)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


def test_a_socket_that_is_a_symlink_is_not_used(repo: Path, env: dict[str, str], tmp_path: Path):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        other = runtime_env(env, tmp_path / "other")
        (tmp_path / "other" / "plangate").mkdir(mode=0o700)
        link = tmp_path / "other" / "plangate" / os.path.basename(helper.socket)
        link.symlink_to(helper.socket)
        result = run_client(repo, "claude", deny_payload(repo), other)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


def test_a_fake_helper_with_every_check_right_is_used(repo: Path, env: dict[str, str]):
    """The control: the fake helpers below differ from this one by one fault each."""
    fake = start_fake_helper(repo, env, "valid")
    try:
        result = run_client(repo, "claude", deny_payload(repo), env)
    finally:
        fake.kill()
        fake.wait()
    assert (result.returncode, result.stdout, result.stderr) == (0, b"out\xff", b"err\n")


@pytest.mark.parametrize(
    "mode",
    ["garbage", "wrong-package", "wrong-payload", "wrong-version", "trailing", "short",
     "bad-code", "big-code", "refuse", "hang", "killed-mid-answer", "closed"],
)
def test_a_helper_answering_wrongly_gives_the_in_process_answer(
    repo: Path, env: dict[str, str], mode: str
):
    fake = start_fake_helper(repo, env, mode)
    timed = {**env, "PLANGATE_HOOKD_TIMEOUT": "1"}
    try:
        started = time.monotonic()
        result = run_client(repo, "claude", deny_payload(repo), timed)
        took = time.monotonic() - started
    finally:
        fake.kill()
        fake.wait()
    if mode == "killed-mid-answer":
        assert fake.returncode == -signal.SIGKILL
    same(result, in_process(repo, "claude", deny_payload(repo), env))
    assert result.returncode == 2
    if mode == "hang":
        assert took < 30  # the client gave up on the helper, it did not wait for it


# -- life cycle --------------------------------------------------------------------------


def test_the_helper_stops_when_idle(repo: Path, env: dict[str, str]):
    helper = start_helper(repo, env, idle=1)
    try:
        assert helper.proc.wait(30) == 0
    finally:
        helper.stop()
    assert not os.path.lexists(helper.socket)


def test_the_helper_stops_when_git_changes(repo: Path, env: dict[str, str]):
    helper = start_helper(repo, env)
    try:
        (repo / ".git").rename(repo / ".git-moved")
        assert helper.proc.wait(30) == 0
    finally:
        helper.stop()
        (repo / ".git-moved").rename(repo / ".git")
    assert not os.path.lexists(helper.socket)


def test_hookd_stop_and_status(repo: Path, env: dict[str, str]):
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-P", "-m", "plangate", "hookd", *args],
                              cwd=repo, env=env, capture_output=True, text=True, check=False,
                              timeout=60)

    assert cli("status").returncode == 1
    helper = start_helper(repo, env)
    try:
        status = cli("status")
        assert status.returncode == 0
        assert "running" in status.stdout and "mode 0600" in status.stdout
        assert cli("stop").stdout.strip() == "hookd: stopped"
        assert helper.proc.wait(30) == 0
        assert cli("status").returncode == 1
        assert cli("stop").stdout.strip() == "hookd: not running"
    finally:
        helper.stop()


def test_hookd_start_detaches_and_refuses_a_second_server(repo: Path, env: dict[str, str]):
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-P", "-m", "plangate", "hookd", *args],
                              cwd=repo, env=env, capture_output=True, text=True, check=False,
                              timeout=90)

    try:
        assert cli("start").stdout.startswith("hookd: started")
        assert cli("start").stdout.startswith("hookd: already running")
        second = cli("run", "--idle-seconds", "5")
        assert second.returncode != 0 and "HOOKD_ALREADY_RUNNING" in second.stderr
    finally:
        cli("stop")


def test_a_helper_refuses_an_unsafe_socket_directory(repo: Path, env: dict[str, str]):
    directory = Path(env["XDG_RUNTIME_DIR"]) / "plangate"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    result = subprocess.run([sys.executable, "-P", "-m", "plangate", "hookd", "run"],
                            cwd=repo, env=env, capture_output=True, text=True, check=False,
                            timeout=60)
    assert result.returncode != 0 and "HOOKD_DIRECTORY_UNSAFE" in result.stderr


def test_peer_credentials_are_the_users(repo: Path, env: dict[str, str]):
    from plangate.hooks.hookd_client import peer_uid

    with running_helper(repo, env) as helper:
        fd = os.open(os.path.dirname(helper.socket), os.O_RDONLY | os.O_DIRECTORY)
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(f"/proc/self/fd/{fd}/{os.path.basename(helper.socket)}")
        assert peer_uid(sock) == os.getuid()
        sock.close()
        os.close(fd)


def test_a_repository_without_the_trust_branch_is_answered_from_memory(
    repo: Path, env: dict[str, str]
):
    """No ``main`` branch: the failed listing at it is remembered by the ref files' bytes,
    so the helper does not ask git for it again on every request."""
    from support.hookd import helper_state
    from support.repo import git

    git(repo, "branch", "-m", "main", "master")
    with running_helper(repo, env):
        for _ in range(3):
            assert run_client(repo, "claude", allow_payload(repo), env).returncode == 0
        assert helper_state(repo, env)["cache_hits"] >= 2


def test_the_trust_root_memo_follows_the_trust_branch(
    repo: Path, env: dict[str, str], tmp_path: Path
):
    """The helper remembers the trust root by the bytes of the branch's ref: moving the
    trust branch to a commit that requires signatures turns the next answer into a deny."""
    from support.keys import allowed_signers, make_key, trust_toml
    from support.repo import commit_all, git

    git(repo, "checkout", "-q", "-b", "work")  # HEAD stays; main is the trust branch
    with running_helper(repo, env):
        first = run_client(repo, "claude", allow_payload(repo), env)
        again = run_client(repo, "claude", allow_payload(repo), env)
        assert (first.returncode, again.returncode) == (0, 0)
        from support.hookd import helper_state

        # No trust file on the branch: the listing at the branch is remembered.
        assert helper_state(repo, env)["cache_hits"] >= 1
        other = tmp_path / "main-worktree"
        git(repo, "worktree", "add", "-q", str(other), "main")
        key = make_key(tmp_path / "keys", "alice@example.com")
        (other / ".plangate").mkdir(exist_ok=True)
        (other / ".plangate" / "trust.toml").write_bytes(
            trust_toml(["alice@example.com"], ["alice@example.com"], require=True))
        (other / ".plangate" / "allowed_signers").write_bytes(allowed_signers(key))
        commit_all(other, "trust root requiring signatures")
        before = requests_served(repo, env)
        after = run_client(repo, "claude", allow_payload(repo), env)
        assert requests_served(repo, env) == before + 1
    expected = in_process(repo, "claude", allow_payload(repo), env)
    assert expected.returncode == 2
    same(after, expected)


def test_install_hookd_writes_the_client_into_the_local_file_only(
    repo: Path, env: dict[str, str], run_cli
):
    import json

    from plangate.hooks.install import apply

    apply(repo, ["claude"], install=True, local_python=True, helper=True)
    committed = (repo / ".claude" / "settings.json").read_text()
    local = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert "hookd_launch" not in committed and sys.executable not in committed
    command = local["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert " -S -I " in command and "hookd_launch.py" in command
    with running_helper(repo, env):
        before = requests_served(repo, env)
        through = subprocess.run(["/bin/sh", "-c", command], cwd=repo, input=deny_payload(repo),
                                 env=env, capture_output=True, check=False, timeout=60)
        assert requests_served(repo, env) == before + 1
    same(through, in_process(repo, "claude", deny_payload(repo), env))
    refused = run_cli(repo, "hooks", "install", "--claude", "--hookd")
    assert refused.code == 2 and "HOOKS_HOOKD_NEEDS_LOCAL_PYTHON" in refused.err


def test_doctor_reports_the_helper(repo: Path, env: dict[str, str]):
    import json

    def doctor() -> dict:
        proc = subprocess.run([sys.executable, "-P", "-m", "plangate", "doctor", "--json"],
                              cwd=repo, env=env, capture_output=True, text=True, check=False,
                              timeout=300)
        return json.loads(proc.stdout)["facts"]["hookd"]

    assert doctor()["running"] is False
    with running_helper(repo, env):
        state = doctor()
    assert state["running"] is True and state["same_package"] is True
    assert state["socket_owner"] == os.getuid() and state["socket_mode"] == "0600"


def test_a_socket_directory_inside_the_repository_is_never_used(
    repo: Path, env: dict[str, str]
):
    import threading

    from plangate.hooks.hookd_client import ask_helper, socket_address, socket_name

    inner = runtime_env(env, repo / "run")
    refused = subprocess.run([sys.executable, "-P", "-m", "plangate", "hookd", "run"],
                             cwd=repo, env=inner, capture_output=True, text=True, check=False,
                             timeout=60)
    assert refused.returncode != 0 and "inside the repository" in refused.stderr
    directory = repo / "run" / "plangate"
    directory.mkdir(mode=0o700)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    listener = socket.socket(socket.AF_UNIX)
    name = socket_name(os.path.realpath(repo))
    listener.bind(socket_address(fd, str(directory), name))
    os.chmod(name, 0o600, dir_fd=fd)
    listener.listen(1)
    listener.settimeout(5)
    connected: list[bool] = []

    def accept() -> None:
        try:
            conn, _ = listener.accept()
            connected.append(True)
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    answer = ask_helper("claude", deny_payload(repo), {**inner, "PLANGATE_HOOKD_TIMEOUT": "0.5"},
                        str(repo))
    listener.close()
    thread.join()
    os.close(fd)
    assert answer is None and connected == []


# -- a client that stopped waiting -------------------------------------------------------


def _request(repo: Path, env: dict[str, str], payload: bytes) -> bytes:
    from plangate.hooks.hookd_client import environment_field, frame, package_digest

    return frame([b"claude", os.fsencode(str(repo)), package_digest().encode(),
                  os.fsencode(str(repo)), environment_field(env), b"utf-8:strict",
                  b"utf-8:backslashreplace", payload])


def _connect(repo: Path, env: dict[str, str]) -> socket.socket:
    where = location(repo, env)
    fd = os.open(where.directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(f"/proc/self/fd/{fd}/{where.name}")  # the full path is too long
    finally:
        os.close(fd)
    return sock


@pytest.mark.parametrize("client_waits", [False, True])
def test_a_request_whose_client_gave_up_is_neither_decided_nor_recorded(
    repo: Path, env: dict[str, str], client_waits: bool
):
    with running_helper(repo, env):
        count = len(ledger_decisions(repo))
        before = requests_served(repo, env)
        # A silent first connection keeps the helper (one request at a time) busy, so
        # the second request waits in the queue, as behind a slow decision.
        silent = _connect(repo, env)
        time.sleep(0.2)
        second = _connect(repo, env)
        second.sendall(_request(repo, env, deny_payload(repo)))
        second.shutdown(socket.SHUT_WR)
        if not client_waits:
            second.close()  # what the client does when its deadline passes
        silent.close()
        if client_waits:
            second.settimeout(30)
            answer = b"".join(iter(lambda: second.recv(1 << 16), b""))
            second.close()
            assert answer.startswith(b"PLANGATE-HOOKD/1\n")
        deadline = time.monotonic() + 30
        state = helper_state(repo, env)
        while state["abandoned"] + state["requests"] == before and time.monotonic() < deadline:
            time.sleep(0.05)
            state = helper_state(repo, env)
    served = 1 if client_waits else 0
    assert (state["requests"] - before, state["abandoned"]) == (served, 1 - served)
    assert len(ledger_decisions(repo)) == count + served


# -- closed standard streams, slow requests ----------------------------------------------


def _cursor_deny(repo: Path) -> bytes:
    """A Cursor deny: JSON on standard output with exit 0, so a lost stdout would allow."""
    from support.hooks import cursor_payload

    return cursor_payload("beforeShellExecution", repo, command="echo x >> AGENTS.md",
                          cwd=str(repo))


@pytest.mark.parametrize("decision", ["allow", "deny", "cursor-deny"])
@pytest.mark.parametrize("closed", ["<&-", ">&-", "2>&-"])
@pytest.mark.parametrize("entry", ["client", "module"])
def test_a_closed_standard_stream_blocks_without_a_traceback(
    repo: Path, env: dict[str, str], closed: str, entry: str, decision: str
):
    from support.hookd import LAUNCH

    host = "cursor" if decision == "cursor-deny" else "claude"
    command = (
        [sys.executable, "-S", "-I", LAUNCH, host] if entry == "client"
        else [sys.executable, "-P", "-m", "plangate.hooks", host]
    )
    payload = {"allow": allow_payload, "deny": deny_payload, "cursor-deny": _cursor_deny}[
        decision](repo)
    normal = in_process(repo, host, payload, env)
    assert normal.returncode == (2 if decision == "deny" else 0)
    if decision == "cursor-deny":
        assert b'"permission":"deny"' in normal.stdout
    with running_helper(repo, env):
        proc = subprocess.run(
            ["sh", "-c", f'exec "$@" {closed}', "sh", *command],
            cwd=repo, input=payload, env=env, capture_output=True, check=False, timeout=60,
        )
    assert b"Traceback" not in proc.stdout + proc.stderr
    if closed == "<&-":  # no payload at all: invalid, denied
        assert b"HOOK_PAYLOAD_INVALID" in proc.stdout + proc.stderr
        assert proc.returncode == (0 if host == "cursor" else 2)  # Cursor: deny in JSON
        if host == "cursor":
            assert b'"permission":"deny"' in proc.stdout
        return
    # An answer that cannot be printed in full is a block; one that prints nothing on the
    # closed stream keeps its exit code.
    lost = normal.stdout if closed == ">&-" else normal.stderr
    assert proc.returncode == (2 if lost else normal.returncode)


def test_a_request_trickling_in_is_dropped_after_the_request_deadline(
    repo: Path, env: dict[str, str]
):
    from plangate.hooks.hookd import REQUEST_TIMEOUT

    with running_helper(repo, env):
        slow = _connect(repo, env)
        request = _request(repo, env, deny_payload(repo))
        dropped = False
        # One byte every half second: each read gets data long before any per-read
        # timeout, but the whole request takes longer than REQUEST_TIMEOUT allows.
        for sent in range(int(REQUEST_TIMEOUT * 4)):
            try:
                slow.sendall(request[sent : sent + 1])
            except OSError:
                dropped = True
                break
            time.sleep(0.5)
        slow.close()
        assert dropped, "the helper kept reading a request past its deadline"
        # The helper is free again: a normal client is answered by it.
        before = requests_served(repo, env)
        assert run_client(repo, "claude", deny_payload(repo), env).returncode == 2
        assert requests_served(repo, env) == before + 1


@pytest.mark.parametrize("client", ["local", "launcher"])
def test_a_fault_inside_the_client_is_a_miss_never_an_answer(
    repo: Path, env: dict[str, str], client: str
):
    # The helper is running; the client's own call to it fails with an error nobody
    # foresaw. Both clients (the local line's and the launcher's) must then decide
    # in-process: a traceback would end the hook with exit 1, which Claude Code does not
    # treat as a block.
    from support.hookd import LAUNCH

    hooks_dir = os.path.dirname(LAUNCH)
    site_dir = os.path.dirname(os.path.dirname(hooks_dir))
    entry = "main()" if client == "local" else (
        f"launch({site_dir!r}, {sys.executable!r}, sys.argv[1:])"
    )
    boot = (
        "import sys\n"
        f"sys.path.append({hooks_dir!r})\n"
        "import hookd_client\n"
        "from hookd_client import main, launch\n"
        "def broken(*args, **kwargs):\n"
        "    raise RuntimeError('a fault of the client')\n"
        "hookd_client.ask_helper = broken\n"
        "hookd_client.launcher_exact = lambda *a, **k: True\n"
        f"sys.exit({entry})\n"
    )
    payload = deny_payload(repo)
    with running_helper(repo, env):
        proc = subprocess.run(
            [sys.executable, "-S", "-I", "-c", boot, "claude"], cwd=repo, input=payload,
            env=env, capture_output=True, check=False, timeout=60,
        )
    assert b"Traceback" not in proc.stdout + proc.stderr, proc.stderr
    same(proc, in_process(repo, "claude", payload, env))
    assert proc.returncode == 2
