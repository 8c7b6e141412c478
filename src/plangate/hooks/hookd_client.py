"""The hook helper's client: standard library only, never imports plangate.

Run as ``'<python>' -S -I '<package>/hooks/hookd_launch.py' HOST`` (what
``plangate hooks install --claude --local-python --hookd`` writes into the
git-ignored ``.claude/settings.local.json``), it reads the hook payload, asks
the helper (``plangate hookd``) of this repository for the answer and prints it.
Imported as :mod:`plangate.hooks.hookd_client`, :func:`ask_helper` is what the
Python entry point (``plangate-hook-python HOST``, ``python -m plangate.hooks HOST``)
tries before deciding in-process. :func:`launch` is the client of the sh launcher
``plangate-hook`` that committed hook files call (``bin/plangate-hook``): the
same checks, then, on a miss, ``site`` and the in-process decision in the same
process.

The helper's answer is used only when every check passes, in order:

1. the host is an agent host (``claude``, ``codex``, ``cursor``; the git hooks
   never use the helper), the call is not inside ``plangate exec``'s isolated
   run (``PLANGATE_BOX``: the box's mounts are part of the decision), and
   ``PLANGATE_HOOKD`` is not ``off``;
2. the socket directory (:func:`socket_dir`), opened with ``O_NOFOLLOW``, is a
   directory owned by this user with no group or other permission bits, and
   its parent is owned by this user or root and writable by nobody else; it
   does not lie inside the repository;
3. the socket, looked up with ``lstat`` relative to that handle, is a socket
   (not a link) owned by this user with no group or other permission bits;
4. after connecting, ``SO_PEERCRED`` names this user (Linux only: elsewhere
   the helper is never used);
5. the answer arrives before the deadline, is one complete frame of this
   format and version, says ``answer``, carries this package's digest and the
   digest of the payload sent, and an exit code 0-255.

Anything else returns ``None`` and the caller decides in-process: the same
answer, slower. Nothing here ever allows by default.

Frame (both directions): :data:`MAGIC`, then fields, each a 4-byte big-endian
length and its bytes. Request fields: ``host``, ``root``, ``package digest``,
``cwd``, ``environment`` (``NAME=value`` entries separated by NUL), ``stdout
encoding`` (``encoding:errors``), ``stderr encoding``, ``payload``. Answer
fields: ``status`` (``answer`` or ``refuse``), ``package digest``, ``payload
digest`` (hex SHA-256), ``exit code`` (decimal), ``stdout``, ``stderr``.
"""

# ruff: noqa: PTH100, PTH109, PTH113, PTH117, PTH118, PTH119, PTH120, PTH123, S606
# Standard library only, plain string paths: this file also runs as a script
# under ``python -S -I`` and must stay as light as a bare interpreter.
from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # collections.abc costs milliseconds at start-up; only mypy needs it
    from collections.abc import Mapping

MAGIC = b"PLANGATE-HOOKD/1\n"
"""Format and version of every frame; a helper speaking another version is not used."""

AGENT_HOSTS = ("claude", "codex", "cursor")
CONNECT_TIMEOUT = 0.25
"""Seconds to wait for the connection itself (a live helper accepts at once)."""
ANSWER_TIMEOUT = 8.0
"""Seconds, from connecting, within which the whole answer must have arrived."""
MAX_ANSWER_BYTES = 32 * 1024 * 1024
MAX_FIELD_BYTES = 16 * 1024 * 1024
REQUEST_FIELDS = 8
ANSWER_FIELDS = 6
DISABLE_ENV = "PLANGATE_HOOKD"
"""``off`` makes every hook decide in-process."""
TIMEOUT_ENV = "PLANGATE_HOOKD_TIMEOUT"
"""Seconds for :data:`ANSWER_TIMEOUT` (0.05 to 30); only ever shortens a wait's effect:
a helper that misses it is simply not used."""
BOX_ENV = "PLANGATE_BOX"


def find_root(cwd: str) -> str | None:
    """Real path of the nearest directory at or above ``cwd`` holding ``.git``."""
    if not cwd or not os.path.isabs(cwd):
        return None
    current = os.path.realpath(cwd)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def inside(directory: str, root: str) -> bool:
    """True when ``directory`` (links resolved) is ``root`` or lies under it: a socket
    directory inside the repository, which the agent may write, is never used."""
    real = os.path.realpath(directory)
    return real == root or real.startswith(root.rstrip("/") + "/")


def _sha256_hex(data: bytes) -> str:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]
    except ImportError:  # another build: the public module (heavier, same digest)
        from hashlib import sha256
    return str(sha256(data).hexdigest())


def socket_dir(env: Mapping[str, str]) -> str | None:
    """The helpers' socket directory: ``$XDG_RUNTIME_DIR/plangate``, else
    ``$XDG_CACHE_HOME/plangate/hookd`` (``~/.cache/plangate/hookd``)."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "plangate")
    cache = env.get("XDG_CACHE_HOME", "")
    if not (cache and os.path.isabs(cache)):
        home = env.get("HOME", "")
        if not (home and os.path.isabs(home)):
            return None
        cache = os.path.join(home, ".cache")
    return os.path.join(cache, "plangate", "hookd")


def socket_name(root: str) -> str:
    """One socket name per repository: a digest of its real path."""
    return _sha256_hex(os.fsencode(root))[:32] + ".sock"


def package_dir() -> str:
    """The plangate package this file belongs to."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package_digest(directory: str | None = None) -> str:
    """``sha256:`` over every file of the package (``__pycache__`` left out): its path,
    size and modification time in nanoseconds. Any reinstall or edit changes it."""
    top = package_dir() if directory is None else directory
    lines: list[str] = []
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            entries = list(os.scandir(os.path.join(top, relative) if relative else top))
        except OSError:
            lines.append(f"?{relative}")
            continue
        for entry in entries:
            name = f"{relative}/{entry.name}" if relative else entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                lines.append(f"?{name}")
                continue
            if stat.S_ISDIR(info.st_mode):
                if entry.name != "__pycache__":
                    pending.append(name)
                continue
            lines.append(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_mode:o}")
    lines.sort()
    return "sha256:" + _sha256_hex("\n".join(lines).encode("utf-8", "surrogateescape"))


def trusted_dir_fd(path: str, *, uid: int) -> int | None:
    """An ``O_NOFOLLOW`` handle on ``path`` when it and its parent pass the checks
    (module docstring, step 2), else ``None``."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    parent, name = os.path.split(path)
    try:
        parent_fd = os.open(parent, flags)
    except OSError:
        return None
    try:
        info = os.fstat(parent_fd)
        if info.st_uid not in (uid, 0):
            return None
        if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
            return None
        fd = os.open(name, flags, dir_fd=parent_fd)
    except OSError:
        return None
    finally:
        os.close(parent_fd)
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o077:
        os.close(fd)
        return None
    return fd


def socket_trusted(dir_fd: int, name: str, *, uid: int) -> bool:
    """The socket ``name`` in the trusted directory passes step 3 (module docstring)."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISSOCK(info.st_mode) and info.st_uid == uid and not info.st_mode & 0o077


def socket_address(dir_fd: int, directory: str, name: str) -> str:
    """The address to bind or connect: through the verified handle on Linux (short, and
    the directory cannot be swapped in between), else the plain path."""
    if sys.platform.startswith("linux"):
        return f"/proc/self/fd/{dir_fd}/{name}"
    return os.path.join(directory, name)


def frame(fields: list[bytes]) -> bytes:
    """:data:`MAGIC` and ``fields``, each with its 4-byte big-endian length."""
    parts = [MAGIC]
    for field in fields:
        parts.append(len(field).to_bytes(4, "big"))
        parts.append(field)
    return b"".join(parts)


def unframe(data: bytes, count: int) -> list[bytes] | None:
    """Exactly ``count`` fields of one complete frame, or ``None`` (wrong magic, short,
    too long, trailing bytes)."""
    if not data.startswith(MAGIC):
        return None
    at = len(MAGIC)
    fields: list[bytes] = []
    for _ in range(count):
        if at + 4 > len(data):
            return None
        size = int.from_bytes(data[at : at + 4], "big")
        at += 4
        if size > MAX_FIELD_BYTES or at + size > len(data):
            return None
        fields.append(data[at : at + size])
        at += size
    return fields if at == len(data) else None


def peer_uid(sock: object) -> int | None:
    """The uid of the process at the other end (``SO_PEERCRED``), or ``None``."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        raw = sock.getsockopt(_socket.SOL_SOCKET, option, 12)  # type: ignore[attr-defined]
    except OSError:
        return None
    if not isinstance(raw, bytes) or len(raw) != 12:
        return None
    return int.from_bytes(raw[4:8], sys.byteorder)


def environment_field(env: Mapping[str, str]) -> bytes:
    """The environment as ``NAME=value`` entries separated by NUL."""
    return b"\0".join(
        os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items() if "\0" not in k + v
    )


def _stream_encoding(stream: object) -> bytes:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    errors = getattr(stream, "errors", None) or "strict"
    return f"{encoding}:{errors}".encode()


def _deadline(env: Mapping[str, str]) -> float:
    text = env.get(TIMEOUT_ENV, "")
    try:
        value = float(text) if text else ANSWER_TIMEOUT
    except ValueError:
        return ANSWER_TIMEOUT
    if value != value:  # NaN  # noqa: PLR0124
        return ANSWER_TIMEOUT
    return min(max(value, 0.05), 30.0)


def exchange(
    dir_fd: int, directory: str, name: str, request: bytes, *, uid: int, timeout: float
) -> bytes | None:
    """Connect, check the peer, send ``request`` and read until the helper closes."""
    import _socket
    from time import monotonic

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(socket_address(dir_fd, directory, name))
        if peer_uid(sock) != uid:
            return None
        end = monotonic() + timeout
        sock.settimeout(max(end - monotonic(), 0.001))
        sock.sendall(request)
        sock.shutdown(_socket.SHUT_WR)
        chunks: list[bytes] = []
        total = 0
        while True:
            left = end - monotonic()
            if left <= 0:
                return None
            sock.settimeout(left)
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_ANSWER_BYTES:
                return None
            chunks.append(chunk)
        return b"".join(chunks)
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def ask_helper(
    host: str,
    payload: bytes,
    env: Mapping[str, str],
    cwd: str,
    *,
    digest: str | None = None,
    stdout: object = None,
    stderr: object = None,
) -> tuple[bytes, bytes, int] | None:
    """The helper's ``(stdout, stderr, exit code)`` for this call, or ``None`` when it
    must be decided in-process (every check in the module docstring)."""
    if host not in AGENT_HOSTS or env.get(DISABLE_ENV) == "off" or env.get(BOX_ENV):
        return None
    if not hasattr(os, "getuid"):
        return None
    directory = socket_dir(env)
    if directory is None:
        return None
    uid = os.getuid()
    dir_fd = trusted_dir_fd(directory, uid=uid)  # no helper directory: the cheapest "no"
    if dir_fd is None:
        return None
    try:
        root = find_root(cwd)
        if root is None or inside(directory, root):
            return None
        name = socket_name(root)
        if not socket_trusted(dir_fd, name, uid=uid):
            return None
        package = package_digest() if digest is None else digest
        request = frame(
            [
                host.encode(),
                os.fsencode(root),
                package.encode(),
                os.fsencode(cwd),
                environment_field(env),
                _stream_encoding(sys.stdout if stdout is None else stdout),
                _stream_encoding(sys.stderr if stderr is None else stderr),
                payload,
            ]
        )
        answer = exchange(dir_fd, directory, name, request, uid=uid, timeout=_deadline(env))
    finally:
        os.close(dir_fd)
    return _accepted(answer, package, payload)


def _accepted(
    answer: bytes | None, package: str, payload: bytes
) -> tuple[bytes, bytes, int] | None:
    if answer is None:
        return None
    fields = unframe(answer, ANSWER_FIELDS)
    if fields is None:
        return None
    status, their_package, their_payload, code, out, err = fields
    if status != b"answer" or their_package != package.encode():
        return None
    if their_payload != _sha256_hex(payload).encode():
        return None
    if not (code.isdigit() and len(code) <= 3 and int(code) <= 255):
        return None
    return out, err, int(code)


FALLBACK = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from plangate.hooks.entry import run_in_process; sys.exit(run_in_process())"
)
"""What the script runs when the helper is not used: today's in-process hook, from
this very package (its parent directory first on ``sys.path``)."""


LAUNCHER_FALLBACK = (
    "import sys; del sys.argv[1]; "
    "from plangate.hooks.entry import run_in_process; sys.exit(run_in_process())"
)
"""The miss of the native client linked beside the launcher: the in-process decision with
the interpreter's own ``sys.path`` (the package parent it is handed is dropped), as the
Python entry point imports it."""
NATIVE_BESIDE = "plangate-hook-native"
"""The native client's link beside the launcher (``plangate hookd start`` makes it)."""


def _fallback(host: str, payload: bytes | None) -> int:
    """Run the in-process hook with ``payload`` as its standard input (``None``: this
    process's own). Replaces this process; returns only if that cannot start, with
    exit 2, a block."""
    python = sys.executable
    argv = [python, "-P", "-c", FALLBACK, os.path.dirname(package_dir()), *([host] if host else [])]
    try:
        if payload is None:
            os.execv(python, argv)
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create("plangate-hook-payload", os.MFD_CLOEXEC)
        else:
            import tempfile

            fd = os.dup(tempfile.TemporaryFile().fileno())  # noqa: SIM115
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        if fd == 0:
            # Standard input was closed, so the memory file took its number: keep it,
            # open across the exec.
            os.set_inheritable(0, True)
        else:
            os.dup2(fd, 0)
            os.close(fd)
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        os.execv(python, argv)
    except OSError as exc:
        # os.write, not sys.stderr: the stream may be closed (None); contextlib is too
        # heavy to import here.
        try:  # noqa: SIM105
            os.write(2, f"plangate: HOOK_HELPER_FALLBACK_FAILED: {exc}\n".encode())
        except OSError:
            pass
    return 2


PYTHON_ENV_KEPT = frozenset({"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"})
"""The ``PYTHON*`` variables whose effect ``-I`` may drop without changing an answer: byte
compilation and buffering (every answer is flushed). Any other one (``PYTHONPATH``,
``PYTHONIOENCODING``, ``PYTHONUTF8``, ``PYTHONHOME``, ``PYTHONOPTIMIZE``, ...) sends the
launcher to the Python entry point, which honours it."""


def launcher_exact(env: Mapping[str, str], executable: str | None = None) -> bool:
    """True when this ``-S -I`` process, once ``site`` is enabled, imports and prints exactly
    what the Python entry point (``plangate-hook-python``) would: no ``PYTHON*`` variable
    that ``-I`` ignores (:data:`PYTHON_ENV_KEPT` aside), and a virtual environment that does
    not include the system's site packages (so no user site directory, which ``-I`` skips
    and a plain interpreter would put before the environment's own packages)."""
    if any(name.startswith("PYTHON") and name not in PYTHON_ENV_KEPT for name in env):
        return False
    if "__PYVENV_LAUNCHER__" in env:
        return False
    # site.venv()'s own reading (under -S it has not run yet): the file beside the
    # interpreter, else one level up; the last include-system-site-packages line counts,
    # and anything but "true" excludes the system's packages and the user site directory.
    exe_dir = os.path.dirname(os.path.abspath(executable or sys.executable))
    for candidate in (exe_dir, os.path.dirname(exe_dir)):
        config = os.path.join(candidate, "pyvenv.cfg")
        if os.path.isfile(config):
            break
    else:
        return False
    system_site = "true"
    try:
        with open(config, encoding="utf-8") as handle:
            for line in handle:
                if "=" in line:
                    key, _, value = line.partition("=")
                    if key.strip().lower() == "include-system-site-packages":
                        system_site = value.strip().lower()
    except (OSError, ValueError):
        return False
    return system_site != "true"


def launch(site_dir: str, entry: str, args: list[str]) -> int:
    """The launcher's client (``plangate-hook``, a POSIX sh script beside ``entry``, runs
    ``python -S -I -c BOOT ENTRY ARGS``, BOOT importing this file from ``site_dir``):
    the helper's answer when every check passes, else the in-process decision in this very
    process after ``site`` is enabled; never raises.

    When :func:`launcher_exact` fails, or this file is not the package ``site_dir`` holds,
    the Python entry point ``entry`` replaces this process with standard input untouched.
    """
    try:
        exact = launcher_exact(os.environ) and package_dir() == os.path.join(
            site_dir, "plangate"
        )
    except Exception:  # noqa: BLE001 -- any doubt: the Python entry point decides
        exact = False
    if not exact:
        return _exec_entry(entry, args)
    host = args[0] if len(args) == 1 else ""
    payload, code = _helper_answer(host)
    return _decide_here(args, payload) if code is None else code


def _helper_answer(host: str) -> tuple[bytes | None, int | None]:
    """For an agent ``host``: read the payload and print the helper's answer; returns the
    payload read (``None`` when nothing was read) and the exit code to end with, or ``None``
    when this call must be decided in-process. A fault of this client is a miss, never an
    answer."""
    if host not in AGENT_HOSTS:
        return None, None
    try:
        # A closed standard input (sys.stdin is None) reads as an empty payload.
        payload = sys.stdin.buffer.read(8 * 1024 * 1024 + 1) if sys.stdin else b""
    except (OSError, ValueError):
        payload = b""
    # The answer needs both output streams; without one, the in-process hook decides.
    if sys.stdout is None or sys.stderr is None:
        return payload, None
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    try:
        answer = ask_helper(host, payload, os.environ, cwd)
    except Exception:  # noqa: BLE001 -- a client fault is a miss, never an answer
        answer = None
    if answer is None:
        return payload, None
    out, err, code = answer
    try:
        sys.stdout.buffer.write(out)
        sys.stdout.buffer.flush()
        sys.stderr.buffer.write(err)
        sys.stderr.buffer.flush()
    except (OSError, ValueError):
        return payload, 2
    return payload, code


LAUNCHER_SIGNATURE = b"plangate-hook HOST: the hook entry point committed hook files call"
"""A line of the sh launcher (``bin/plangate-hook``), by which doctor recognises it."""


def launcher_route(env: Mapping[str, str]) -> dict[str, str | None]:
    """Which way a call of ``plangate-hook`` found on ``env``'s ``PATH`` goes, by the rules
    the launcher and :func:`launch` apply (for ``plangate doctor``): ``route`` is
    ``launcher`` (``-S -I``: the helper when it passes every check, else in-process in
    the same process), ``python-entry-point`` (with the ``reason``) or ``not-found``."""
    found = None
    for directory in env.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(directory, "plangate-hook")
        if os.path.isabs(directory) and os.access(candidate, os.X_OK):
            found = candidate
            break
    result: dict[str, str | None] = {"command": found, "route": "not-found", "reason": None,
                                     "package": None, "interpreter": None, "native": None}
    if found is None:
        return result
    real = os.path.realpath(found)
    result["route"] = "python-entry-point"
    try:
        with open(real, "rb") as handle:
            text = handle.read(1 << 16)
        with open(os.path.join(os.path.dirname(real), "plangate-hook-python"), "rb") as handle:
            first = handle.readline().rstrip(b"\n")
    except OSError as exc:
        result["reason"] = f"not the sh launcher, or no plangate-hook-python beside it: {exc}"
        return result
    if not text.startswith(b"#!/bin/sh") or LAUNCHER_SIGNATURE not in text:
        result["reason"] = "plangate-hook is not the sh launcher (an older installation?)"
        return result
    python = os.fsdecode(first[2:])
    result["interpreter"] = python
    if not (first.startswith(b"#!/") and " " not in python and "\t" not in python
            and os.path.basename(python).startswith("python")):
        result["reason"] = "plangate-hook-python names no plain interpreter path"
        return result
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    tail = "python{}.{}".format(*sys.version_info[:2])
    site_dir = None
    for lib in dict.fromkeys((sys.platlibdir, "lib")):
        candidate = os.path.join(prefix, lib, tail, "site-packages")
        if os.path.lexists(os.path.join(candidate, "plangate")):
            site_dir = candidate
            break
    if site_dir is None:
        result["reason"] = ("no plangate package in the environment's site-packages (an "
                            "editable install, another Python version, or not a virtual "
                            "environment)")
        return result
    result["package"] = os.path.join(site_dir, "plangate")
    if any(name.startswith("PYTHON") and name not in PYTHON_ENV_KEPT for name in env):
        result["reason"] = "a PYTHON* variable is set that -I would ignore"
        return result
    if not launcher_exact({}, python):
        result["reason"] = ("not a virtual environment without the system's site packages "
                            "(a user site directory could come first)")
        return result
    result["route"] = "launcher"
    native = os.path.join(os.path.dirname(real), NATIVE_BESIDE)
    if os.access(native, os.X_OK):
        result["native"] = os.path.realpath(native)
    return result


def _decide_here(args: list[str], payload: bytes | None) -> int:
    """Enable ``site`` (as a plain start would have) and run the in-process hook of
    :mod:`plangate.hooks.entry` on ``payload`` (``None``: it reads standard input)."""
    try:
        import site

        site.main()
        from plangate.startup import tune_collector

        tune_collector()
        from plangate.hooks.entry import run_in_process
    except Exception as exc:  # noqa: BLE001 -- cannot decide: a block, never an allow
        try:  # noqa: SIM105
            os.write(2, f"plangate: HOOK_LAUNCHER_FAILED: {exc}\n".encode())
        except OSError:
            pass
        return 2
    return run_in_process(args, payload=payload)


def _exec_entry(entry: str, args: list[str]) -> int:
    """Replace this process with the Python entry point; exit 2 (a block) if it cannot start."""
    try:
        os.execv(entry, [entry, *args])
    except OSError as exc:
        try:  # noqa: SIM105
            os.write(2, f"plangate: HOOK_LAUNCHER_FAILED: {exc}\n".encode())
        except OSError:
            pass
    return 2


def main(argv: list[str] | None = None) -> int:
    """``python -S -I hookd_client.py HOST``: the helper's answer, else the in-process one."""
    args = sys.argv[1:] if argv is None else argv
    host = args[0] if len(args) == 1 else ""
    payload, code = _helper_answer(host)
    return _fallback(host, payload) if code is None else code


if __name__ == "__main__":
    sys.exit(main())
