"""The egress proxy: the box's only way out, outside the box, with a ``host:port`` allowlist.

A box never shares the host's network. When it may use the network, PlanGate
runs this proxy in its own process, outside the box, for the box's lifetime:

- it listens on a unix socket in the run's private directory (a backend with
  its own network namespace binds that one socket into the box, where a small
  bridge, :data:`BRIDGE_SOURCE`, listens on ``127.0.0.1:PORT`` and hands each
  connection to it, the socket itself, so that the proxy relays the box's
  bytes in one hop) or on a loopback TCP port (a backend without a network
  namespace allows the box exactly that port by rule);
- it speaks HTTP ``CONNECT host:port`` (HTTPS and any TLS: the proxy sees the
  destination, never the content) and plain HTTP with an absolute URI
  (``GET http://host:port/path``); nothing else;
- :func:`egress_allowed` (pure) decides each destination against the rules of
  ``.plangate/isolation.toml``: an allowed one is connected from the host and
  relayed byte for byte; any other gets ``403`` and is recorded as refused;
- :meth:`EgressProxy.stop` returns what was contacted and what was refused
  (host, port, connections, bytes), for the run's record.

The proxy resolves names itself, and never connects a name to an address of the host itself
(:func:`host_only_address`) unless a rule names that address; the box has no resolver and no
route.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import ipaddress
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from plangate.errors import EnvironmentFailure
from plangate.isolation.config import EgressRule
from plangate.isolation.policy import ProxyAccess
from plangate.records import NamedTuple

BOX_PROXY_PORT = 3128
"""The port the bridge listens on inside a box with its own network namespace."""

BOX_PROXY_SOCKET = "/run/plangate-proxy.sock"
"""Where the proxy's unix socket is shown inside such a box."""

MAX_HEAD_BYTES = 64 * 1024
MAX_CONNECTIONS = 256
"""Connections one box may hold open through the proxy at once (more: ``503``)."""
CONNECT_TIMEOUT_SECONDS = 15.0
BUSY_READ_SECONDS = 0.5
"""How long the proxy, at its bound, waits for the connection a bridge hands over (to answer
``503`` on it); only the accepting thread waits, and only for a box already at the bound."""
STOP_GRACE_SECONDS = 2.0
"""How long :meth:`EgressProxy.stop` lets relays end by themselves (their box is gone, so
both sides are closing) before it shuts their sockets down; as long again after that."""
RELAY_PIPE = 1024 * 1024
"""The capacity asked for the pipe each spliced relay direction moves bytes through (Linux's
limit for an unprivileged process; past the account's pipe quota the kernel keeps its
default, 64 KiB): a 10 MB download through the proxy took about 0.7 ms less than with
256 KiB, and with 64 KiB a 100 MB one was about 2x the direct download."""
RELAY_BUFFER = 256 * 1024
"""Bytes the proxy copies at once where the kernel cannot splice."""
_PIPE_SIZE_COMMAND = 1031
"""Linux's fcntl command that sets a pipe's capacity (1024 + 7 in <fcntl.h>; Python's fcntl
module names it only on Linux)."""

BRIDGE_SOURCE = r"""
import os, socket, sys
port, target, argv = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(128)
def hand_over(client):
    # The connection itself goes to the proxy, which serves it from then on: no byte
    # passes through the box a second time. Any failure closes it (no other way out).
    link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        link.connect(target)
        socket.send_fds(link, [b"\0"], [client.fileno()])
    except OSError:
        pass
    link.close()
    client.close()
if os.fork() == 0:
    os.setsid()
    while True:
        conn, _ = listener.accept()
        hand_over(conn)
listener.close()
os.execv(argv[0], argv)
"""
"""The bridge inside the box: binds ``127.0.0.1:PORT`` *before* the command starts (so the
first request never races it), forks the forwarder, then becomes the command
(``python -I -S -c BRIDGE_SOURCE PORT SOCKET -- COMMAND...``). It ends with the box. It moves
no bytes: each connection is handed to the proxy whole (the socket itself, over the proxy's
unix socket: :data:`HANDOFF_MARKER` with the descriptor); one the kernel will not pass is
closed."""

HANDOFF_MARKER = b"\0"
"""The one byte a bridge sends with a connection's descriptor (no HTTP request starts with it)."""


def bridge_argv(access: ProxyAccess, command: Iterable[str]) -> list[str]:
    """The command line that starts the bridge, then ``command`` (a box path), inside the box."""
    return [
        access.python,
        "-I",
        "-S",
        "-c",
        BRIDGE_SOURCE,
        str(BOX_PROXY_PORT),
        BOX_PROXY_SOCKET,
        "--",
        *command,
    ]


def proxy_env(port: int) -> dict[str, str]:
    """The variables that send a box's HTTP(S) traffic to the proxy at ``127.0.0.1:port``."""
    url = f"http://127.0.0.1:{port}"
    return {"HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url}


def egress_allowed(rules: Iterable[EgressRule], host: str, port: int) -> bool:
    """``host:port`` matches a rule: the same host, or a subdomain of ``*.domain`` (pure)."""
    name = host.lower().rstrip(".")
    for rule in rules:
        if rule.port != port:
            continue
        if rule.host.startswith("*."):
            if name.endswith(rule.host[1:]):  # '.example.com': never the domain itself
                return True
        elif rule.host in (name, f"[{name}]"):
            return True
    return False


def named_by_address(rules: Iterable[EgressRule], host: str, port: int) -> bool:
    """A rule for ``port`` names ``host`` itself and ``host`` is an IP address (pure)."""
    name = host.strip("[]")
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return any(
        rule.port == port and rule.host.strip("[]") == name for rule in rules
    )


def host_only_address(address: str) -> bool:
    """``address`` (what a name resolved to) is one of the host's own or its link's:
    loopback, link-local (cloud metadata services live there), unspecified (connecting to
    it reaches the host's loopback) or multicast; IPv4 inside IPv6 judged as IPv4 (pure).
    An address that does not parse counts as one: it is never connected to."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast


class Destination(NamedTuple):
    """What the proxy saw for one ``host:port``."""

    host: str
    port: int
    connections: int
    bytes_up: int
    bytes_down: int

    def to_json(self) -> dict[str, object]:
        """JSON form."""
        return self._asdict()


class EgressSummary(NamedTuple):
    """What the box contacted through the proxy, and what it was refused."""

    contacted: tuple[Destination, ...]
    refused: tuple[Destination, ...]

    def to_json(self) -> dict[str, object]:
        """JSON form."""
        return {
            "contacted": [d.to_json() for d in self.contacted],
            "refused": [d.to_json() for d in self.refused],
        }


class _Request(NamedTuple):
    host: str
    port: int
    tunnel: bool
    head: bytes
    """For plain HTTP, the request head rewritten for the origin server."""
    rest: bytes


def parse_request(data: bytes) -> _Request | None:
    """The destination of a proxy request head (``None``: not a request this proxy serves)."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return None
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        return None
    method, target, version = parts
    try:
        text = target.decode("ascii")
    except UnicodeDecodeError:
        return None
    if method == b"CONNECT":
        host, port = _split_host_port(text, None)
        if host is None or port is None:
            return None
        return _Request(host, port, True, b"", rest)
    if not text.startswith("http://"):
        return None
    authority, slash, path = text[len("http://") :].partition("/")
    host, port = _split_host_port(authority, 80)
    if host is None or port is None:
        return None
    kept = [
        line
        for line in lines[1:]
        if not line.lower().startswith((b"proxy-", b"connection:", b"keep-alive:"))
    ]
    first = b" ".join([method, ("/" + path if slash else "/").encode("ascii"), version])
    rewritten = b"\r\n".join([first, *kept, b"Connection: close"]) + b"\r\n\r\n"
    return _Request(host, port, False, rewritten, rest)


def _split_host_port(text: str, default: int | None) -> tuple[str | None, int | None]:
    if "@" in text or not text:
        return None, None
    if text.startswith("["):
        host, bracket, tail = text[1:].partition("]")
        if not bracket or (tail and not tail.startswith(":")):
            return None, None  # '[::1', '[::1]x': a closed address, then a port or nothing
        port_text = tail.removeprefix(":")
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            host, port_text = text, ""
    if not port_text:
        return (host.lower(), default) if host else (None, None)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None, None
    return (host.lower(), int(port_text)) if host else (None, None)


class EgressProxy:
    """The proxy of one box (see the module docstring); start it, then stop it for the summary."""

    def __init__(self, rules: tuple[EgressRule, ...]) -> None:
        self.rules = rules
        self._listener: socket.socket | None = None
        self._lock = threading.Lock()
        self._seen: dict[tuple[bool, str, int], list[int]] = {}
        self._threads: list[threading.Thread] = []
        self._relaying: set[socket.socket] = set()  # both sockets of every live relay
        self._closing = False
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.address: str | int = ""

    def listen_unix(self, path: str) -> None:
        """Listen on the unix socket ``path`` (mode 0600; its directory must be private)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            old = os.umask(0o177)
            try:
                sock.bind(path)
            finally:
                os.umask(old)
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        self._start(sock, path)

    def listen_loopback(self) -> int:
        """Listen on a free loopback TCP port; returns it."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind(("127.0.0.1", 0))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        port = int(sock.getsockname()[1])
        self._start(sock, port)
        return port

    def _start(self, sock: socket.socket, address: str | int) -> None:
        self._listener = sock
        self.address = address
        thread = threading.Thread(target=self._accept, name="plangate-egress", daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        listener = self._listener
        while listener is not None and not self._closing:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):  # a box cannot exhaust PlanGate's threads
                _refuse_busy(client)
                continue
            thread = threading.Thread(target=self._serve_slot, args=(client,), daemon=True)
            thread.start()
            with self._lock:
                self._threads.append(thread)

    def _note(
        self, allowed: bool, host: str, port: int, *, connections: int = 0, up: int = 0,
        down: int = 0,
    ) -> None:
        with self._lock:
            entry = self._seen.setdefault((allowed, host, port), [0, 0, 0])
            entry[0] += connections
            entry[1] += up
            entry[2] += down

    def _serve_slot(self, client: socket.socket) -> None:
        try:
            self._serve(client)
        finally:
            self._slots.release()

    def _serve(self, link: socket.socket) -> None:
        with contextlib.closing(link):
            link.settimeout(CONNECT_TIMEOUT_SECONDS)
            try:
                data, handed = _first_read(link)
            except OSError:
                return
            if handed is None:
                if data and not data.startswith(HANDOFF_MARKER):
                    self._serve_client(link, data)
                elif data:
                    _reply(link, b"400 Bad Request", b"plangate: not a proxy request\n")
                return
            link.close()  # it only carried the connection
            with contextlib.closing(handed):
                handed.settimeout(CONNECT_TIMEOUT_SECONDS)
                self._serve_client(handed, b"")

    def _serve_client(self, client: socket.socket, data: bytes) -> None:
        """Read the request head after ``data``, decide it, and relay an allowed one."""
        while b"\r\n\r\n" not in data and len(data) < MAX_HEAD_BYTES:
            try:
                chunk = client.recv(8192)
            except OSError:
                return
            if not chunk:
                return
            data += chunk
        request = parse_request(data)
        if request is None:
            _reply(client, b"400 Bad Request", b"plangate: not a proxy request\n")
            return
        if not egress_allowed(self.rules, request.host, request.port):
            self._note(False, request.host, request.port, connections=1)
            _reply(
                client,
                b"403 Forbidden",
                f"plangate: egress to {request.host}:{request.port} is not allowed "
                "(add it to egress in .plangate/isolation.toml)\n".encode(),
            )
            return
        try:
            remote = self._connect(request.host, request.port)
        except _HostOnly as refused:
            self._note(False, request.host, request.port, connections=1)
            _reply(
                client,
                b"403 Forbidden",
                f"plangate: {request.host} resolves to {refused.address}, an address of the "
                "host itself (loopback, link-local, unspecified or multicast); to allow it, "
                "name that address in egress in .plangate/isolation.toml\n".encode(),
            )
            return
        except OSError as exc:
            self._note(True, request.host, request.port, connections=1)
            _reply(client, b"502 Bad Gateway", f"plangate: {exc}\n".encode())
            return
        self._note(True, request.host, request.port, connections=1)
        with contextlib.closing(remote):
            with self._lock:
                self._relaying.update((client, remote))
            try:
                client.settimeout(None)
                remote.settimeout(None)
                if request.tunnel:
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                else:
                    remote.sendall(request.head)
                if request.rest:
                    remote.sendall(request.rest)
                up, down = _relay(client, remote)
                self._note(True, request.host, request.port, up=up + len(request.rest),
                           down=down)
            finally:
                with self._lock:
                    self._relaying.difference_update((client, remote))

    def _connect(self, host: str, port: int) -> socket.socket:
        """A connection to an allowed ``host:port``. A name is resolved here, once, and
        connected to by the addresses it resolved to; an address of the host itself is
        reached only when a rule names it by address (``127.0.0.1:8080``), so a name whose
        records point at loopback or a metadata service never reaches them."""
        if named_by_address(self.rules, host, port):
            return socket.create_connection((host.strip("[]"), port), CONNECT_TIMEOUT_SECONDS)
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        usable = [info for info in found if not host_only_address(str(info[4][0]))]
        if not usable:
            raise _HostOnly(str(found[0][4][0]) if found else "no address")
        return connect_first(usable, CONNECT_TIMEOUT_SECONDS)

    def stop(self) -> EgressSummary:
        """Stop listening, end every relay, and say what was contacted and refused."""
        self._closing = True
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
        if isinstance(self.address, str) and self.address:
            with contextlib.suppress(OSError):
                Path(self.address).unlink()
        self._end_relays()
        with self._lock:
            seen = sorted(self._seen.items(), key=lambda kv: (kv[0][1], kv[0][2]))
        contacted = tuple(Destination(h, p, *v) for (ok, h, p), v in seen if ok)
        refused = tuple(Destination(h, p, *v) for (ok, h, p), v in seen if not ok)
        return EgressSummary(contacted, refused)


    def _end_relays(self) -> None:
        """Wait for every connection to be served and counted: a relay whose box has gone
        ends by itself; one still open after :data:`STOP_GRACE_SECONDS` has its sockets
        shut down. The summary then holds every byte relayed (a relay records its counts
        when it ends)."""
        with self._lock:
            threads = list(self._threads)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        with self._lock:
            lingering = list(self._relaying)
        for sock in lingering:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))


def connect_first(
    addresses: Sequence[tuple[int, int, int, str, Any]], timeout: float
) -> socket.socket:
    """A connection to the first of ``addresses`` that accepts one, in order; the last
    failure is raised when none does (an empty list: ``OSError``)."""
    failure: OSError | None = None
    for family, kind, proto, _name, address in addresses:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(address)
        except OSError as exc:
            sock.close()
            failure = exc
            continue
        return sock
    raise failure or OSError("no address to connect to")


class _HostOnly(Exception):
    """A name resolved only to addresses of the host itself."""

    def __init__(self, address: str) -> None:
        super().__init__(address)
        self.address = address


def _refuse_busy(link: socket.socket) -> None:
    """``503`` for a connection past :data:`MAX_CONNECTIONS`: on the connection a bridge
    hands over with it when one arrives within :data:`BUSY_READ_SECONDS` (the link itself is
    closed by then), else on the link."""
    handed = None
    if link.family == socket.AF_UNIX:
        link.settimeout(BUSY_READ_SECONDS)
        with contextlib.suppress(OSError):
            handed = _first_read(link)[1]
    for sock in (link,) if handed is None else (handed, link):
        _reply(sock, b"503 Service Unavailable", b"plangate: too many connections\n")
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)
        sock.close()


def _first_read(link: socket.socket) -> tuple[bytes, socket.socket | None]:
    """The first bytes on a proxy connection, and the connection a bridge handed over with
    them (``None``: a client speaking for itself). Anything sent with a descriptor other than
    exactly :data:`HANDOFF_MARKER` and one connected TCP socket is refused: the marker alone
    comes back, without a connection (the caller answers ``400``)."""
    if link.family != socket.AF_UNIX:
        return link.recv(8192), None
    data, fds, flags, _address = socket.recv_fds(link, 8192, 1)
    if not fds:
        return data, None
    # More descriptors than asked for were closed by the kernel (MSG_CTRUNC).
    handed = [_adopt(fd) for fd in fds]
    one = handed[0] if len(handed) == 1 else None
    if data == HANDOFF_MARKER and one is not None and not flags & socket.MSG_CTRUNC:
        return data, one
    for sock in handed:
        if sock is not None:
            sock.close()
    return HANDOFF_MARKER, None


def _adopt(fd: int) -> socket.socket | None:
    """The descriptor a bridge sent as a connected TCP socket, or ``None`` (it is closed)."""
    sock: socket.socket | None = None
    with contextlib.suppress(OSError):
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            sock = socket.socket(fileno=fd)
    if sock is None:
        os.close(fd)
        return None
    tcp = sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM
    try:
        sock.getpeername()  # a listening or unconnected socket is no connection
    except OSError:
        tcp = False
    if not tcp:
        sock.close()
        return None
    return sock


def _reply(client: socket.socket, status: bytes, body: bytes) -> None:
    head = (
        b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain\r\nConnection: close\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        client.sendall(head + body)


def _splice_pump(src: socket.socket, dst: socket.socket, counts: list[int], slot: int) -> bool:
    """Move ``src`` to ``dst`` through a pipe in the kernel (Linux ``splice``: the bytes never
    enter this process); False when the kernel cannot splice these sockets (nothing moved)."""
    splice = getattr(os, "splice", None)
    if splice is None:
        return False
    read_end, write_end = os.pipe()
    try:
        with contextlib.suppress(OSError):  # a larger pipe moves more per call; optional
            fcntl.fcntl(write_end, _PIPE_SIZE_COMMAND, RELAY_PIPE)
        moved = False
        while True:
            try:
                n = splice(src.fileno(), write_end, RELAY_PIPE)
            except OSError as exc:
                if not moved and exc.errno == errno.EINVAL:
                    return False
                raise
            if not n:
                return True
            moved = True
            left = n
            while left:
                left -= splice(read_end, dst.fileno(), left)
            counts[slot] += n
    finally:
        os.close(read_end)
        os.close(write_end)


def _relay(client: socket.socket, remote: socket.socket) -> tuple[int, int]:
    """Copy both ways until both sides close; ``(bytes up, bytes down)``."""
    counts = [0, 0]

    def pump(src: socket.socket, dst: socket.socket, slot: int) -> None:
        try:
            if not _splice_pump(src, dst, counts, slot):
                buf = bytearray(RELAY_BUFFER)
                view = memoryview(buf)
                while True:
                    n = src.recv_into(buf)
                    if not n:
                        break
                    dst.sendall(view[:n])
                    counts[slot] += n
        except OSError:
            pass
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    back = threading.Thread(target=pump, args=(remote, client, 1), daemon=True)
    back.start()
    pump(client, remote, 0)
    back.join()
    return counts[0], counts[1]


def start_proxy(
    rules: tuple[EgressRule, ...], *, private_network: bool, python: str
) -> tuple[EgressProxy, ProxyAccess, str]:
    """Start the proxy of one box; ``(proxy, how the box reaches it, its private directory)``.

    With a private network the proxy listens on a unix socket in a new private
    directory (the box binds that socket and runs the bridge, :data:`BRIDGE_SOURCE`,
    with ``python``); otherwise on a loopback port. A proxy that cannot start is
    ``SANDBOX_UNAVAILABLE``: a box never falls back to the host's network.
    """
    proxy = EgressProxy(rules)
    directory = ""
    try:
        if private_network:
            # Short, private and outside the repository: a unix socket path has ~100 bytes.
            directory = tempfile.mkdtemp(prefix="plangate-egress-")
            path = os.path.join(directory, "proxy.sock")  # noqa: PTH118
            proxy.listen_unix(path)
            return proxy, ProxyAccess(path, BOX_PROXY_PORT, python), directory
        port = proxy.listen_loopback()
        return proxy, ProxyAccess("", port), directory
    except OSError as exc:
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
        raise EnvironmentFailure(
            "SANDBOX_UNAVAILABLE",
            f"the egress proxy cannot start: {exc.strerror or exc}",
            "free the temporary directory or loopback port it needs, or run with --no-network",
        ) from None
