"""The hook helper's native client for tests: build it with a real compiler, run it, and a
fake helper that records the request it got (to compare the two clients byte for byte)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

FAKE_HELPER = r"""
import hashlib, os, signal, socket, sys, time
from plangate.hooks.hookd import locate, open_directory
from plangate.hooks.hookd_client import (
    ANSWER_FIELDS, REQUEST_FIELDS, frame, package_digest, socket_address, unframe)

mode, root, record = sys.argv[1], sys.argv[2], sys.argv[3]
count = int(sys.argv[4]) if len(sys.argv) > 4 else 1
where = locate(root, os.environ)
fd = open_directory(where, create=True)
os.umask(0o077)
sock = socket.socket(socket.AF_UNIX)
sock.bind(socket_address(fd, where.directory, where.name))
sock.listen(4)
print("ready", flush=True)
for turn in range(count):
    conn, _ = sock.accept()
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    if record != "-":
        with open(f"{record}.{turn}", "wb") as out:
            out.write(data)
    fields = unframe(data, REQUEST_FIELDS)
    payload = fields[-1]
    good_package = package_digest().encode()
    good_payload = hashlib.sha256(payload).hexdigest().encode()
    allow = [b"answer", good_package, good_payload, b"0", b"out\xff", b"err\n"]
    if mode == "valid":
        conn.sendall(frame(allow))
    elif mode == "garbage":
        conn.sendall(b"HTTP/1.1 200 OK\r\n\r\nallow")
    elif mode == "wrong-package":
        conn.sendall(frame([b"answer", b"sha256:" + b"0" * 64, good_payload, b"0", b"", b""]))
    elif mode == "wrong-payload":
        conn.sendall(frame([b"answer", good_package, b"0" * 64, b"0", b"", b""]))
    elif mode == "wrong-version":
        conn.sendall(frame(allow).replace(b"HOOKD/1", b"HOOKD/2", 1))
    elif mode == "trailing":
        conn.sendall(frame(allow) + b"x")
    elif mode == "short":
        conn.sendall(frame(allow[:5]))
    elif mode == "bad-code":
        conn.sendall(frame([b"answer", good_package, good_payload, b"-1", b"", b""]))
    elif mode == "big-code":
        conn.sendall(frame([b"answer", good_package, good_payload, b"256", b"", b""]))
    elif mode == "refuse":
        conn.sendall(frame([b"refuse", good_package, good_payload, b"0", b"", b""]))
    elif mode == "hang":
        time.sleep(60)
    elif mode == "killed-mid-answer":
        whole = frame(allow)
        conn.sendall(whole[: len(whole) - 3])
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "closed":
        pass
    conn.close()
os.unlink(where.name, dir_fd=fd)
"""


def start_fake_helper(
    repo: Path, env: Mapping[str, str], mode: str, record: str = "-", count: int = 1
) -> subprocess.Popen[bytes]:
    """A fake helper for ``repo`` answering ``count`` requests in ``mode``; each request is
    written to ``record.N`` (``-``: not kept)."""
    proc = subprocess.Popen(
        [sys.executable, "-P", "-c", FAKE_HELPER, mode, str(repo), record, str(count)],
        env=dict(env), cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line == b"ready\n", proc.stderr.read() if proc.stderr else b""
    return proc


def build_native(cache: Path, norepo: Path, extra_flags: tuple[str, ...] = ()) -> str:
    """Build the native client with the real compiler into ``cache/plangate/bin``."""
    from plangate.hooks.native_build import build

    env = {"XDG_CACHE_HOME": str(cache), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    built = build(str(norepo), env, python=sys.executable, extra_flags=extra_flags)
    assert built.path is not None, (built.code, built.detail)
    return built.path


def run_native(
    binary: str, repo: Path, host: str | None, stdin: bytes, env: Mapping[str, str],
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    """``'<binary>' HOST``, as the installed line runs it (no host: no argument)."""
    return subprocess.run(
        [binary, *([host] if host is not None else [])], cwd=repo, input=stdin,
        env=dict(env), capture_output=True, check=False, timeout=timeout,
    )


def native_binary_fixture(tmp_path_factory: object, extra_flags: tuple[str, ...] = ()) -> str:
    """Build once per session (``tmp_path_factory`` is pytest's)."""
    make = tmp_path_factory.mktemp  # type: ignore[attr-defined]
    return build_native(make("native-cache"), make("norepo"), extra_flags)
