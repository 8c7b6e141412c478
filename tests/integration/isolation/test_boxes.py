"""Real bubblewrap boxes: what a command inside can write, see, reach and use, and how it ends.

Each test runs a hostile command in a real box and then looks at the host:
nothing outside the writable mounts changed, hidden paths gave nothing away,
limits ended the command, and no process of the box survived it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure
from plangate.isolation.config import EgressRule
from plangate.isolation.policy import Limits, Mount
from plangate.isolation.proxy import BOX_PROXY_SOCKET, start_proxy
from plangate.isolation.runner import run_in_box
from plangate.isolation.views import hidden
from support.boxes import (
    SRC,
    SYSTEM_PYTHON,
    backend_or_fail,
    pid_alive,
    policy,
    shared_dir,
    unprivileged_prefix,
)

PY = os.path.realpath(sys.executable)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap boxes exist on Linux only"
)


def _py(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


def test_writes_land_only_in_writable_mounts(tmp_path: Path) -> None:
    backend = backend_or_fail()
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("original")
    box = policy((Mount(str(work), "/box/work"),), visible_extra=(str(outside),))
    result = run_in_box(
        backend,
        box,
        _py(f"""
        import os, json
        out = {{}}
        for target in ["/box/work/ok.txt", "{outside}/keep.txt", "{outside}/new.txt",
                       "/usr/plangate-escape", "/etc/plangate-escape", "{tmp_path}/escape",
                       "/tmp/private.txt"]:
            try:
                with open(target, "w") as fh:
                    fh.write("written")
                out[target] = "written"
            except OSError as exc:
                out[target] = exc.strerror
        for victim in ["{outside}/keep.txt"]:
            try:
                os.unlink(victim)
                out["unlink"] = "removed"
            except OSError as exc:
                out["unlink"] = exc.strerror
        print(json.dumps(out))
    """),
        capture=True,
    )
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["/box/work/ok.txt"] == "written"
    assert seen["/tmp/private.txt"] == "written"
    for blocked in (
        f"{outside}/keep.txt",
        f"{outside}/new.txt",
        "/usr/plangate-escape",
        "/etc/plangate-escape",
    ):
        assert seen[blocked] != "written", blocked
    assert seen["unlink"] != "removed"
    assert (work / "ok.txt").read_text() == "written"
    assert (outside / "keep.txt").read_text() == "original"
    assert not (outside / "new.txt").exists()
    assert not Path("/usr/plangate-escape").exists()
    assert not (tmp_path / "escape").exists()
    assert not Path("/tmp/private.txt").exists()


def test_read_only_paths_inside_a_writable_mount_stay_unchanged(tmp_path: Path) -> None:
    backend = backend_or_fail()
    work = tmp_path / "work"
    (work / "plan").mkdir(parents=True)
    (work / "plan" / "plan.md").write_text("approved")
    box = policy(
        (Mount(str(work), "/w"),), read_only=(Mount(str(work / "plan"), "/w/plan"),), cwd="/w"
    )
    result = run_in_box(
        backend,
        box,
        _py("""
        import os, shutil
        for attempt in (lambda: open("plan/plan.md", "w").write("x"),
                        lambda: os.unlink("plan/plan.md"),
                        lambda: os.rename("plan", "moved"),
                        lambda: shutil.rmtree("plan"),
                        lambda: os.rename("plan/plan.md", "stolen.md")):
            try:
                attempt()
                print("ESCAPED")
            except OSError:
                pass
        open("free.txt", "w").write("ok")
    """),
        capture=True,
    )
    assert b"ESCAPED" not in result.stdout, result.stdout
    assert (work / "plan" / "plan.md").read_text() == "approved"
    assert (work / "free.txt").read_text() == "ok"


def test_hidden_paths_give_nothing_away(tmp_path: Path) -> None:
    backend = backend_or_fail()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("SECRET-KEY-BYTES")
    (home / "signing.key").write_text("SECRET-SIGNING")
    sock_path = home / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    server.listen(1)
    try:
        box = policy(
            visible_extra=(str(home),),
            hidden=(
                hidden(str(home / ".ssh")),
                hidden(str(home / "signing.key")),
                hidden(str(sock_path)),
            ),
        )
        result = run_in_box(
            backend,
            box,
            _py(f"""
            import os, socket
            print("listing", sorted(os.listdir("{home}/.ssh")))
            for path in ("{home}/.ssh/id_ed25519", "{home}/signing.key"):
                try:
                    print(open(path).read())
                except OSError as exc:
                    print("refused", path, exc.strerror)
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect("{sock_path}")
                print("CONNECTED")
            except OSError as exc:
                print("socket refused", exc.strerror)
        """),
            capture=True,
        )
    finally:
        server.close()
    assert result.exit_code == 0, result.stderr
    out = result.stdout.decode()
    assert "listing []" in out
    assert "SECRET" not in out
    assert sum(line.startswith("refused ") for line in out.splitlines()) == 2
    assert "socket refused" in out
    assert "CONNECTED" not in out


def _tcp_server() -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(b"H")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


@pytest.mark.parametrize("network", [False, True])
def test_no_box_reaches_the_hosts_network_directly(network: bool) -> None:
    """With the network off, and with network access through the egress proxy, a direct
    connection to a host listener fails: the box has its own network namespace."""
    backend = backend_or_fail()
    server, port = _tcp_server()
    started = start_proxy(
        (EgressRule("127.0.0.1", port),), private_network=True, python=PY
    ) if network else None
    try:
        result = run_in_box(
            backend,
            policy(network=network, proxy=started[1] if started else None),
            _py(f"""
            import socket
            try:
                s = socket.create_connection(("127.0.0.1", {port}), timeout=5)
                print("REACHED", s.recv(1))
            except OSError as exc:
                print("unreachable", exc.strerror)
        """),
            capture=True,
        )
    finally:
        server.close()
        if started:
            started[0].stop()
    assert b"unreachable" in result.stdout, result.stdout


def test_the_environment_is_only_the_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = backend_or_fail()
    caller = {
        "PATH": "/usr/bin:/bin",
        "SSH_AUTH_SOCK": "/tmp/agent.sock",
        "PLANGATE_LEDGER_URL": "postgresql://secret@db/x",
        "GIT_DIR": "/repo/.git",
        "AWS_SECRET_ACCESS_KEY": "aws",
    }
    from plangate.isolation.policy import allowed_env

    box = policy()._replace(env=allowed_env(caller))
    for key, value in caller.items():
        monkeypatch.setenv(key, value)
    result = run_in_box(
        backend, box, _py("import os, json; print(json.dumps(dict(os.environ)))"), capture=True
    )
    env = json.loads(result.stdout)
    assert set(env) <= {"PATH", "PWD", "LC_CTYPE", "SHLVL", "_"}, env


def test_cpu_file_size_and_memory_limits_end_the_command(tmp_path: Path) -> None:
    backend = backend_or_fail()
    work = tmp_path / "w"
    work.mkdir()
    cpu = run_in_box(
        backend,
        policy(limits=Limits(cpu_seconds=1, wall_seconds=60)),
        _py("while True: pass"),
        capture=True,
    )
    assert cpu.signal in (signal.SIGXCPU, signal.SIGKILL)
    assert not cpu.timed_out
    fsize = run_in_box(
        backend,
        policy((Mount(str(work), "/w"),), limits=Limits(file_size_bytes=1 << 20, wall_seconds=60)),
        _py("""
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
            open("/w/big", "wb").write(b"x" * (4 << 20))
            print("WROTE")
        except OSError as exc:
            print("refused", exc.strerror)
    """),
        capture=True,
    )
    assert b"WROTE" not in fsize.stdout
    assert (work / "big").stat().st_size <= 1 << 20
    memory = run_in_box(
        backend,
        policy(limits=Limits(memory_bytes=256 << 20, wall_seconds=60)),
        _py("""
        try:
            block = bytearray(1 << 30)
            print("ALLOCATED")
        except MemoryError:
            print("refused")
    """),
        capture=True,
    )
    assert b"ALLOCATED" not in memory.stdout
    assert b"refused" in memory.stdout


def test_output_beyond_the_bound_ends_the_box() -> None:
    backend = backend_or_fail()
    result = run_in_box(
        backend,
        policy(limits=Limits(output_bytes=4096, wall_seconds=60)),
        _py("import sys\nwhile True: sys.stdout.write('x' * 65536)"),
        capture=True,
    )
    assert result.output_exceeded
    assert len(result.stdout) + len(result.stderr) <= 4096
    assert result.exit_code != 0


def test_timeout_kills_the_whole_tree_daemons_included(tmp_path: Path) -> None:
    backend = backend_or_fail()
    work = tmp_path / "w"
    work.mkdir()
    # The box starts a daemon (double fork, new session, stdio closed) that writes
    # its host-visible pid file, then outlives its parent and sleeps.
    result = run_in_box(
        backend,
        policy((Mount(str(work), "/w"),), limits=Limits(wall_seconds=3)),
        _py("""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.close(0); os.close(1); os.close(2)
                with open("/proc/self/stat") as fh:
                    open("/w/daemon.started", "w").write(fh.read())
                time.sleep(600)
            os._exit(0)
        time.sleep(600)
    """),
        capture=True,
    )
    assert result.timed_out
    assert result.exit_code == 128 + signal.SIGKILL
    assert (work / "daemon.started").exists()
    # No process of the box may remain: every sleeper running this box's code is gone.
    time.sleep(0.2)
    leftovers = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if b"daemon.started" in cmdline and pid_alive(int(name)):
                leftovers.append(name)
    assert leftovers == []


def test_missing_or_not_executable_programs_do_not_start(tmp_path: Path) -> None:
    backend = backend_or_fail()
    (tmp_path / "script.sh").write_text("#!/bin/sh\necho hi\n")
    box = policy(visible_extra=(str(tmp_path),), cwd=str(tmp_path))
    assert run_in_box(backend, box, ["no-such-program-xyz"]).exit_code == 127
    assert run_in_box(backend, box, ["./script.sh"]).exit_code == 126


def test_a_bad_policy_is_refused_before_anything_runs(tmp_path: Path) -> None:
    backend = backend_or_fail()
    marker = tmp_path / "ran"
    box = policy((Mount.same("/"),))
    with pytest.raises(EnvironmentFailure) as info:
        run_in_box(backend, box, ["/bin/sh", "-c", f"touch {marker}"])
    assert info.value.code == "ISOLATION_POLICY_INVALID"
    assert not marker.exists()


_RUNNER_SCRIPT = """
import json, sys
sys.path.insert(0, {src!r})
from plangate.isolation.backend import select_backend, probe_all
from plangate.isolation.policy import Limits, Mount, SandboxPolicy, allowed_env
from plangate.isolation.runner import run_in_box
from plangate.isolation.views import system_view
from plangate.errors import PlanGateError
spec = json.loads(sys.argv[1])
try:
    backend = select_backend()
except PlanGateError as exc:
    print(json.dumps({{"error": exc.code, "message": exc.message,
                      "statuses": [s.to_json() for s in probe_all()]}}))
    raise SystemExit(0)
box = SandboxPolicy(system_view(), tuple(Mount(*m) for m in spec["writable"]), (), (),
                    False, Limits(**spec["limits"]), allowed_env({{"PATH": "/usr/bin:/bin"}}),
                    "/")
result = run_in_box(backend, box, spec["command"], capture=True)
print(json.dumps({{"exit_code": result.exit_code, "stdout": result.stdout.decode(),
                  "stderr": result.stderr.decode(), "timed_out": result.timed_out,
                  "forwarded": result.forwarded_signal}}))
"""


def _script(directory: Path) -> Path:
    path = directory / "runner.py"
    path.write_text(_RUNNER_SCRIPT.format(src=SRC))
    path.chmod(0o644)
    return path


def test_process_limit_as_an_unprivileged_user() -> None:
    prefix = unprivileged_prefix()
    if prefix is None or not Path(SYSTEM_PYTHON).exists():
        pytest.skip("cannot run as an unprivileged user here")
    backend_or_fail()
    with shared_dir() as shared:
        spec = {
            "writable": [],
            "limits": {"processes": 8, "wall_seconds": 60},
            "command": [
                SYSTEM_PYTHON,
                "-c",
                textwrap.dedent("""
                    import os, time
                    n = 0
                    try:
                        for _ in range(64):
                            if os.fork() == 0:
                                time.sleep(3); os._exit(0)
                            n += 1
                    except OSError:
                        pass
                    print("forked", n)
                """),
            ],
        }
        proc = subprocess.run(
            [*prefix, SYSTEM_PYTHON, str(_script(shared)), json.dumps(spec)],
            capture_output=True,
            timeout=120,
            check=False,
            cwd=shared,
        )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert "error" not in out, out
    forked = int(out["stdout"].split()[1])
    assert forked < 64


def test_writes_and_hidden_paths_hold_for_an_unprivileged_user() -> None:
    prefix = unprivileged_prefix()
    if prefix is None or not Path(SYSTEM_PYTHON).exists():
        pytest.skip("cannot run as an unprivileged user here")
    backend_or_fail()
    with shared_dir() as shared:
        work = shared / "work"
        work.mkdir()
        os.chown(work, 65534, 65534) if os.getuid() == 0 else None
        spec = {
            "writable": [[str(work), "/w"]],
            "limits": {"wall_seconds": 60},
            "command": [
                "/bin/sh",
                "-c",
                f"echo ok > /w/ok; echo x > {shared}/escape 2>/dev/null; "
                "echo x > /usr/escape 2>/dev/null; ls /root 2>&1; id -u",
            ],
        }
        proc = subprocess.run(
            [*prefix, SYSTEM_PYTHON, str(_script(shared)), json.dumps(spec)],
            capture_output=True,
            timeout=120,
            check=False,
            cwd=shared,
        )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert "error" not in out, out
        assert (work / "ok").read_text() == "ok\n"
        assert not (shared / "escape").exists()
        assert not Path("/usr/escape").exists()


def test_signals_to_plangate_are_forwarded_and_end_the_box() -> None:
    backend_or_fail()
    with shared_dir() as shared:
        spec = {
            "writable": [],
            "limits": {"wall_seconds": 600},
            "command": ["/bin/sh", "-c", "echo started; sleep 300"],
        }
        proc = subprocess.Popen(
            [PY, str(_script(shared)), json.dumps(spec)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        time.sleep(1.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    result = json.loads(out)
    assert result["forwarded"] == signal.SIGTERM, err
    assert result["exit_code"] == 128 + signal.SIGTERM or result["exit_code"] >= 128
    assert not result["timed_out"]


def _outer_bwrap(extra: list[str], shared: Path) -> dict[str, object]:
    spec = {"writable": [], "limits": {"wall_seconds": 30}, "command": ["/bin/true"]}
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
        "--unshare-pid",
        *extra,
        "--",
        PY,
        str(_script(shared)),
        json.dumps(spec),
    ]
    proc = subprocess.run(argv, capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_no_user_namespaces_means_no_box_and_a_refusal() -> None:
    backend_or_fail()
    with shared_dir() as shared:
        out = _outer_bwrap(["--disable-userns"], shared)
    assert out["error"] == "SANDBOX_UNAVAILABLE"
    assert "cannot create a box" in str(out["message"])
    statuses = {s["backend"]: s for s in out["statuses"]}  # type: ignore[union-attr]
    assert statuses["bubblewrap"]["available"] is False


def test_a_missing_bwrap_means_no_box_and_a_refusal() -> None:
    backend_or_fail()
    with shared_dir() as shared:
        out = _outer_bwrap(["--ro-bind", "/dev/null", "/usr/bin/bwrap"], shared)
    assert out["error"] == "SANDBOX_UNAVAILABLE"
    assert "bubblewrap" in str(out["message"])


def _digest_server() -> tuple[socket.socket, int, list[bytes]]:
    """A server that reads everything sent to it, then answers with its sha256 and
    ``DOWN_BYTES`` of a pattern, and closes."""
    import hashlib

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    got: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while chunk := conn.recv(1 << 16):
                    data += chunk
                got.append(data)
                conn.sendall(hashlib.sha256(data).hexdigest().encode() + _pattern(DOWN_BYTES))

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1], got


def _pattern(size: int) -> bytes:
    return (bytes(range(251)) * (size // 251 + 1))[:size]


UP_BYTES = 3_000_017
DOWN_BYTES = 5_000_011


_CONNECT_IN_BOX = {
    # through the bridge, which hands the connection to the proxy
    "bridge": 's = socket.create_connection(("127.0.0.1", 3128), timeout=30)',
    # straight to the proxy's socket, as a program that speaks for itself
    "socket": (
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(30); "
        f"s.connect({BOX_PROXY_SOCKET!r})"
    ),
}


@pytest.mark.parametrize("via", sorted(_CONNECT_IN_BOX))
def test_megabytes_cross_the_proxy_intact_both_ways(via: str) -> None:
    """The proxy (outside the box; it moves bytes through the kernel where it can) delivers
    every byte in order both ways, for a connection the bridge handed over and for one on its
    socket, and the record counts them."""
    backend = backend_or_fail()
    server, port, got = _digest_server()
    proxy, access, _directory = start_proxy(
        (EgressRule("127.0.0.1", port),), private_network=True, python=PY
    )
    probe = _py(f"""
        import hashlib, socket
        up = (bytes(range(251)) * ({UP_BYTES} // 251 + 1))[:{UP_BYTES}]
        {_CONNECT_IN_BOX[via]}
        s.sendall(b"CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\n\\r\\n")
        head = b""
        while not head.endswith(b"\\r\\n\\r\\n"):
            head += s.recv(1)
        s.sendall(up)
        s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(1 << 16):
            data += chunk
        print(head.split(b"\\r\\n")[0].decode())
        print("ECHOED", data[:64].decode() == hashlib.sha256(up).hexdigest())
        print("DOWN", len(data) - 64, hashlib.sha256(data[64:]).hexdigest())
    """)
    try:
        result = run_in_box(
            backend, policy(network=True, proxy=access, env={"PATH": "/usr/bin:/bin"}), probe,
            capture=True,
        )
    finally:
        summary = proxy.stop()
        server.close()
    import hashlib

    out = result.stdout.decode()
    assert "HTTP/1.1 200 Connection established" in out, out + result.stderr.decode()
    assert "ECHOED True" in out, out
    assert f"DOWN {DOWN_BYTES} {hashlib.sha256(_pattern(DOWN_BYTES)).hexdigest()}" in out, out
    assert got == [_pattern(UP_BYTES)]
    [contacted] = summary.contacted
    assert (contacted.bytes_up, contacted.bytes_down) == (UP_BYTES, DOWN_BYTES + 64)


def test_the_proxy_reaches_an_allowlisted_server_through_the_bridge_and_refuses_others(
) -> None:
    """Through the bridge in the box and the proxy outside: the allowlisted listener answers,
    another one is refused with 403 and recorded."""
    backend = backend_or_fail()
    allowed, allowed_port = _tcp_server()
    other, other_port = _tcp_server()
    proxy, access, directory = start_proxy(
        (EgressRule("127.0.0.1", allowed_port),), private_network=True, python=PY
    )
    probe = _py(f"""
        import os, socket
        def ask(port):
            s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
            s.sendall(f"CONNECT 127.0.0.1:{{port}} HTTP/1.1\\r\\n\\r\\n".encode())
            data = b""
            while True:
                chunk = s.recv(100)
                if not chunk:
                    break
                data += chunk
                if data.endswith(b"H") or b"403" in data:
                    break
            return data.split(b"\\r\\n")[0].decode() + " " + data[-1:].decode()
        print("ALLOWED", ask({allowed_port}))
        print("OTHER", ask({other_port}))
        print("PROXY", os.environ.get("HTTPS_PROXY"))
    """)
    try:
        result = run_in_box(
            backend,
            policy(network=True, proxy=access, env={
                "PATH": "/usr/bin:/bin", "HTTPS_PROXY": "http://127.0.0.1:3128"
            }),
            probe,
            capture=True,
        )
    finally:
        summary = proxy.stop()
        allowed.close()
        other.close()
    out = result.stdout.decode()
    assert "ALLOWED HTTP/1.1 200 Connection established H" in out, out + result.stderr.decode()
    assert "OTHER HTTP/1.1 403 Forbidden" in out, out
    assert [(d.host, d.port) for d in summary.refused] == [("127.0.0.1", other_port)]
    assert [(d.host, d.port) for d in summary.contacted] == [("127.0.0.1", allowed_port)]
    assert directory
