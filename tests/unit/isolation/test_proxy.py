"""The egress proxy: its allowlist decision and request parsing (pure), and one real proxy."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import threading
from pathlib import Path

import pytest

from plangate.isolation.config import EgressRule
from plangate.isolation.policy import ProxyAccess
from plangate.isolation.proxy import (
    HANDOFF_MARKER,
    EgressProxy,
    egress_allowed,
    host_only_address,
    named_by_address,
    parse_request,
)

RULES = (
    EgressRule("api.example.com", 443),
    EgressRule("*.cdn.example.org", 443),
    EgressRule("127.0.0.1", 8080),
    EgressRule("[::1]", 80),
)


@pytest.mark.parametrize(
    ("host", "port", "allowed"),
    [
        ("api.example.com", 443, True),
        ("API.Example.com.", 443, True),
        ("api.example.com", 80, False),
        ("evil.example.com", 443, False),
        ("api.example.com.evil.net", 443, False),
        ("a.cdn.example.org", 443, True),
        ("a.b.cdn.example.org", 443, True),
        ("cdn.example.org", 443, False),
        ("xcdn.example.org", 443, False),
        ("127.0.0.1", 8080, True),
        ("127.0.0.1", 8081, False),
        ("localhost", 8080, False),
        ("::1", 80, True),
    ],
)
def test_egress_allowed_matches_host_and_port_exactly(host: str, port: int, allowed: bool) -> None:
    assert egress_allowed(RULES, host, port) is allowed


@pytest.mark.parametrize(
    ("address", "host_only"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("0.0.0.0", True),  # noqa: S104 -- an address judged, never bound
        ("::", True),
        ("169.254.169.254", True),  # the cloud metadata service
        ("fe80::1%eth0", True),
        ("::ffff:127.0.0.1", True),
        ("::ffff:169.254.169.254", True),
        ("224.0.0.1", True),
        ("ff02::1", True),
        ("not an address", True),
        ("93.184.216.34", False),
        ("10.1.2.3", False),  # a private network's servers are reached by name (rules)
        ("2606:2800:220:1::1", False),
        ("::ffff:93.184.216.34", False),
    ],
)
def test_addresses_of_the_host_itself_are_known(address: str, host_only: bool) -> None:
    assert host_only_address(address) is host_only


@pytest.mark.parametrize(
    ("host", "port", "named"),
    [
        ("127.0.0.1", 8080, True),
        ("::1", 80, True),
        ("[::1]", 80, True),
        ("127.0.0.1", 8081, False),
        ("api.example.com", 443, False),  # a name, not an address
        ("localhost", 8080, False),
    ],
)
def test_a_rule_names_an_address_only_literally(host: str, port: int, named: bool) -> None:
    assert named_by_address((*RULES, EgressRule("localhost", 8080)), host, port) is named


def test_a_name_resolving_to_the_host_itself_is_refused(tmp_path: Path) -> None:
    # 'localhost' is on the allowlist by name; it resolves to loopback, which only a rule
    # naming the address reaches: the proxy refuses it (and records it) instead of
    # connecting the box to a service of the host.
    server, port = _echo_server()
    proxy = EgressProxy((EgressRule("localhost", port),))
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    try:
        tunnel = _through(path, f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode())
        plain = _through(path, f"GET http://localhost:{port}/ HTTP/1.1\r\n\r\n".encode())
    finally:
        summary = proxy.stop()
        server.close()
    for answer in (tunnel, plain):
        assert answer.startswith(b"HTTP/1.1 403"), answer
        assert b"an address of the host itself" in answer
        assert b"ECHO" not in answer
    assert summary.contacted == ()
    assert [(d.host, d.port, d.connections) for d in summary.refused] == [
        ("localhost", port, 2)
    ]


def test_connect_and_absolute_http_requests_are_parsed() -> None:
    tunnel = parse_request(b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\nHELLO")
    assert tunnel is not None
    assert (tunnel.host, tunnel.port, tunnel.tunnel, tunnel.rest) == (
        "api.example.com", 443, True, b"HELLO"
    )
    plain = parse_request(
        b"GET http://h.example:8080/a/b?c HTTP/1.1\r\nHost: h.example:8080\r\n"
        b"Proxy-Authorization: x\r\nConnection: keep-alive\r\n\r\n"
    )
    assert plain is not None
    assert (plain.host, plain.port, plain.tunnel) == ("h.example", 8080, False)
    assert plain.head.startswith(b"GET /a/b?c HTTP/1.1\r\n")
    assert b"Proxy-Authorization" not in plain.head
    assert plain.head.endswith(b"Connection: close\r\n\r\n")
    default_port = parse_request(b"GET http://h.example/ HTTP/1.0\r\n\r\n")
    assert default_port is not None
    assert default_port.port == 80


@pytest.mark.parametrize(
    "head",
    [
        b"GET /relative HTTP/1.1\r\n\r\n",
        b"CONNECT host HTTP/1.1\r\n\r\n",
        b"CONNECT host:99999 HTTP/1.1\r\n\r\n",
        b"CONNECT user@host:443 HTTP/1.1\r\n\r\n",
        b"GET ftp://h/ HTTP/1.1\r\n\r\n",
        b"NONSENSE\r\n\r\n",
        b"GET http://h/ HTTP/1.1\r\n",  # no end of head
    ],
)
def test_anything_else_is_not_a_request(head: bytes) -> None:
    assert parse_request(head) is None


def _echo_server() -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = conn.recv(100)
                conn.sendall(b"ECHO:" + data)

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


def _through(path: str, head: bytes, payload: bytes = b"") -> bytes:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(10)
    client.connect(path)
    client.sendall(head)
    out = b""
    if payload:
        out = client.recv(1000)
        client.sendall(payload)
    while chunk := client.recv(1000):
        out += chunk
    client.close()
    return out


def test_a_real_proxy_tunnels_allowed_destinations_and_records_refusals(tmp_path: Path) -> None:
    server, port = _echo_server()
    proxy = EgressProxy((EgressRule("127.0.0.1", port),))
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    try:
        assert (Path(path).stat().st_mode & 0o777) == 0o600
        allowed = _through(path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode(), b"hi")
        refused = _through(path, b"CONNECT 127.0.0.1:9 HTTP/1.1\r\n\r\n")
    finally:
        summary = proxy.stop()
        server.close()
    assert allowed.startswith(b"HTTP/1.1 200")
    assert allowed.endswith(b"ECHO:hi")
    assert refused.startswith(b"HTTP/1.1 403")
    assert [(d.host, d.port, d.connections) for d in summary.contacted] == [
        ("127.0.0.1", port, 1)
    ]
    assert summary.contacted[0].bytes_down == len(b"ECHO:hi")
    assert [(d.host, d.port, d.connections) for d in summary.refused] == [("127.0.0.1", 9, 1)]
    assert not Path(path).exists()


def test_connections_past_the_bound_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plangate.isolation import proxy as proxy_module

    monkeypatch.setattr(proxy_module, "MAX_CONNECTIONS", 1)
    proxy = EgressProxy(())
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        held.connect(path)  # holds the only slot: its request head never ends
        late = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        late.settimeout(10)
        late.connect(path)
        second = late.recv(1000)
        late.close()
    finally:
        held.close()
        proxy.stop()
    assert second.startswith(b"HTTP/1.1 503")


def test_a_connection_handed_over_past_the_bound_gets_the_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the bound, the 503 goes to the handed-over connection (the box's program), not
    only to the unix socket that carried it."""
    from plangate.isolation import proxy as proxy_module

    monkeypatch.setattr(proxy_module, "MAX_CONNECTIONS", 1)
    proxy = EgressProxy(())
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client, accepted = _tcp_pair()
    try:
        held.connect(path)  # holds the only slot: its request head never ends
        _hand_over(path, HANDOFF_MARKER, [accepted.fileno()])
        accepted.close()
        client.settimeout(10)
        answer = b""
        while chunk := client.recv(1000):
            answer += chunk
    finally:
        client.close()
        held.close()
        proxy.stop()
    assert answer.startswith(b"HTTP/1.1 503"), answer


def _sink_server(reply: bytes) -> tuple[socket.socket, int, list[bytes]]:
    """A server that reads everything sent to it, then answers ``reply`` and closes."""
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
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1], got


@pytest.mark.parametrize("kernel_splice", [True, False], ids=["splice", "copy"])
def test_the_relay_moves_megabytes_both_ways_intact_and_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel_splice: bool
) -> None:
    """Both ways of relaying (the kernel's ``splice``, and reading and writing where the
    kernel has none) deliver every byte in order and record what they moved."""
    if not kernel_splice:
        monkeypatch.delattr("os.splice", raising=False)
    up = bytes(range(256)) * 12_289  # ~3 MB, not a multiple of the relay's buffer
    down = bytes(reversed(range(256))) * 20_011
    server, port, got = _sink_server(down)
    proxy = EgressProxy((EgressRule("127.0.0.1", port),))
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(30)
        client.connect(path)
        client.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += client.recv(1)
        assert head == b"HTTP/1.1 200 Connection established\r\n\r\n"
        client.sendall(up)
        client.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := client.recv(1 << 16):
            received += chunk
        client.close()
    finally:
        summary = proxy.stop()
        server.close()
    assert got == [up]
    assert received == down
    [contacted] = summary.contacted
    assert (contacted.bytes_up, contacted.bytes_down) == (len(up), len(down))


def test_stop_ends_a_relay_whose_remote_never_closes_and_counts_it(tmp_path: Path) -> None:
    """The box is gone but a remote holds its connection open: stop() shuts the relay's
    sockets down after its grace period instead of waiting for ever, and the summary
    holds the bytes that relay moved (a relay records them only when it ends)."""
    import time

    from plangate.isolation import proxy as proxy_module

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    held: list[socket.socket] = []
    received = threading.Event()

    def hold() -> None:  # reads what comes, never answers, never closes
        conn, _ = server.accept()
        held.append(conn)
        conn.recv(1 << 16)
        received.set()

    threading.Thread(target=hold, daemon=True).start()
    port = server.getsockname()[1]
    proxy = EgressProxy((EgressRule("127.0.0.1", port),))
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(30)
    try:
        client.connect(path)
        client.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += client.recv(1)
        client.sendall(b"x" * 1000)
        assert received.wait(10)
        started = time.monotonic()
        summary = proxy.stop()
        took = time.monotonic() - started
        assert proxy_module.STOP_GRACE_SECONDS <= took < 3 * proxy_module.STOP_GRACE_SECONDS
        [contacted] = summary.contacted
        assert (contacted.connections, contacted.bytes_up, contacted.bytes_down) == (1, 1000, 0)
        assert client.recv(1) == b""  # the relay is over: the box side sees the end
    finally:
        client.close()
        for conn in held:
            conn.close()
        server.close()


def _tcp_pair() -> tuple[socket.socket, socket.socket]:
    """A connected loopback TCP pair: (the client's end, the accepted end)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        client = socket.create_connection(listener.getsockname(), timeout=10)
        accepted, _ = listener.accept()
    return client, accepted


def _hand_over(path: str, data: bytes, fds: list[int]) -> bytes:
    """Send ``data`` with ``fds`` as a bridge would; what the proxy answers on the carrier."""
    carrier = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    carrier.settimeout(10)
    carrier.connect(path)
    socket.send_fds(carrier, [data], fds)
    out = b""
    try:
        while chunk := carrier.recv(1000):
            out += chunk
    except OSError:
        pass
    carrier.close()
    return out


def _fd_count() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def test_a_connection_handed_over_with_the_marker_is_served_by_the_proxy_itself(
    tmp_path: Path,
) -> None:
    """A bridge hands the box's connection to the proxy: the request and the reply then travel
    on that connection (not on the unix socket that carried it), and the record counts them."""
    server, port = _echo_server()
    proxy = EgressProxy((EgressRule("127.0.0.1", port),))
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    client, accepted = _tcp_pair()
    try:
        carried = _hand_over(path, HANDOFF_MARKER, [accepted.fileno()])
        accepted.close()  # the proxy holds its own copy now
        client.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        head = client.recv(1000)
        client.sendall(b"hi")
        out = b""
        while chunk := client.recv(1000):
            out += chunk
    finally:
        client.close()
        summary = proxy.stop()
        server.close()
    assert carried == b""
    assert head.startswith(b"HTTP/1.1 200")
    assert out == b"ECHO:hi"
    [contacted] = summary.contacted
    assert (contacted.connections, contacted.bytes_up, contacted.bytes_down) == (1, 2, 7)


def _not_a_connection(kind: str, tmp_path: Path) -> list[socket.socket | int]:
    """Descriptors a box could send in place of a connection (kept open by the caller)."""
    if kind == "file":
        return [os.open(tmp_path / "f", os.O_RDWR | os.O_CREAT, 0o600)]
    if kind == "pipe":
        read_end, write_end = os.pipe()
        return [read_end, write_end]
    if kind == "listening":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        return [listener]
    if kind == "unconnected":
        return [socket.socket()]
    if kind == "udp":
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.connect(("127.0.0.1", 9))
        return [udp]
    assert kind == "unix"
    left, right = socket.socketpair()
    return [left, right]


@pytest.mark.parametrize("kind", ["file", "pipe", "listening", "unconnected", "udp", "unix"])
def test_a_descriptor_that_is_no_tcp_connection_is_refused_and_closed(
    kind: str, tmp_path: Path
) -> None:
    """Only a connected TCP socket is adopted: anything else gets 400 on the carrier, the
    proxy keeps no copy, and nothing is contacted."""
    proxy = EgressProxy((EgressRule("127.0.0.1", 9),))
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    held = _not_a_connection(kind, tmp_path)
    first = held[0]
    fd = first if isinstance(first, int) else first.fileno()
    before = _fd_count()
    try:
        carried = _hand_over(path, HANDOFF_MARKER, [fd])
        # Counted before stop() closes the listener: the carrier's end is the proxy's last
        # act, so a received descriptor still open here is one the proxy kept.
        after = _fd_count()
    finally:
        summary = proxy.stop()
        for item in held:
            if isinstance(item, int):
                os.close(item)
            else:
                item.close()
    assert carried.startswith(b"HTTP/1.1 400"), carried
    assert after == before  # the proxy closed what it received
    assert summary.contacted == () and summary.refused == ()


@pytest.mark.parametrize("data", [b"\0GET http://127.0.0.1:9/ HTTP/1.1\r\n\r\n", b"x", b"\0\0"])
def test_a_connection_sent_with_anything_but_the_marker_alone_is_refused(
    data: bytes, tmp_path: Path
) -> None:
    proxy = EgressProxy((EgressRule("127.0.0.1", 9),))
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    client, accepted = _tcp_pair()
    try:
        carried = _hand_over(path, data, [accepted.fileno()])
        accepted.close()
        client.settimeout(10)
        left_open = client.recv(100)  # the proxy dropped its copy: the connection ends
    finally:
        client.close()
        summary = proxy.stop()
    assert carried.startswith(b"HTTP/1.1 400"), carried
    assert left_open == b""
    assert summary.contacted == () and summary.refused == ()


def test_two_connections_sent_at_once_are_both_refused(tmp_path: Path) -> None:
    proxy = EgressProxy((EgressRule("127.0.0.1", 9),))
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    first_client, first = _tcp_pair()
    second_client, second = _tcp_pair()
    try:
        carried = _hand_over(path, HANDOFF_MARKER, [first.fileno(), second.fileno()])
        first.close()
        second.close()
        first_client.settimeout(10)
        second_client.settimeout(10)
        ended = (first_client.recv(100), second_client.recv(100))
    finally:
        first_client.close()
        second_client.close()
        proxy.stop()
    assert carried.startswith(b"HTTP/1.1 400"), carried
    assert ended == (b"", b"")


def test_the_marker_without_a_connection_is_refused(tmp_path: Path) -> None:
    proxy = EgressProxy((EgressRule("127.0.0.1", 9),))
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    try:
        out = _through(path, HANDOFF_MARKER + b"CONNECT 127.0.0.1:9 HTTP/1.1\r\n\r\n")
    finally:
        summary = proxy.stop()
    assert out.startswith(b"HTTP/1.1 400")
    assert summary.refused == ()


def _serving(rules: tuple[EgressRule, ...], tmp_path: Path) -> tuple[EgressProxy, str]:
    proxy = EgressProxy(rules)
    path = str(tmp_path / "p.sock")
    proxy.listen_unix(path)
    return proxy, path


def test_a_destination_off_the_list_is_refused_before_any_lookup(tmp_path: Path) -> None:
    # '.invalid' never resolves: a refusal that came from a lookup would be a 502
    proxy, path = _serving((EgressRule("api.example.com", 443),), tmp_path)
    try:
        tunnel = _through(path, b"CONNECT nowhere.invalid:443 HTTP/1.1\r\n\r\n")
        plain = _through(path, b"GET http://nowhere.invalid/ HTTP/1.1\r\n\r\n")
    finally:
        summary = proxy.stop()
    assert tunnel.startswith(b"HTTP/1.1 403"), tunnel
    assert b"egress to nowhere.invalid:443 is not allowed" in tunnel
    assert plain.startswith(b"HTTP/1.1 403"), plain
    assert [(d.host, d.port, d.connections) for d in summary.refused] == [
        ("nowhere.invalid", 80, 1), ("nowhere.invalid", 443, 1)]
    assert summary.contacted == ()


def test_an_allowed_name_that_does_not_resolve_is_a_bad_gateway(tmp_path: Path) -> None:
    proxy, path = _serving((EgressRule("nowhere.invalid", 443),), tmp_path)
    try:
        answer = _through(path, b"CONNECT nowhere.invalid:443 HTTP/1.1\r\n\r\n")
    finally:
        summary = proxy.stop()
    assert answer.startswith(b"HTTP/1.1 502"), answer
    assert [(d.host, d.port, d.connections) for d in summary.contacted] == [
        ("nowhere.invalid", 443, 1)]


def test_what_is_no_proxy_request_gets_400(tmp_path: Path) -> None:
    proxy, path = _serving((), tmp_path)
    try:
        answer = _through(path, b"HELLO there\r\n\r\n")
    finally:
        summary = proxy.stop()
    body = b"plangate: not a proxy request\n"
    assert answer == (
        b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    assert summary.contacted == summary.refused == ()


def test_a_plain_request_reaches_the_origin_rewritten_with_its_body(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    received: list[bytes] = []

    def origin() -> None:  # reads the request up to its 4-byte body, then answers
        conn, _ = server.accept()
        with conn:
            data = b""
            while not data.endswith(b"BODY") and (chunk := conn.recv(1 << 16)):
                data += chunk
            received.append(data)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    threading.Thread(target=origin, daemon=True).start()
    proxy, path = _serving((EgressRule("127.0.0.1", port),), tmp_path)
    try:
        answer = _through(
            path,
            f"POST http://127.0.0.1:{port}/a?b HTTP/1.1\r\nHost: x\r\nProxy-Authorization: s"
            "\r\nContent-Length: 4\r\n\r\nBODY".encode(),
        )
    finally:
        summary = proxy.stop()
        server.close()
    assert answer.endswith(b"ok"), answer
    sent = b"".join(received)
    assert sent.startswith(b"POST /a?b HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
                           b"Connection: close\r\n\r\nBODY"), sent
    assert b"Proxy-Authorization" not in sent
    assert summary.contacted[0].bytes_up == len(b"BODY")  # the head is the proxy's own


def test_bytes_sent_with_the_tunnel_request_are_relayed_and_counted(tmp_path: Path) -> None:
    server, port = _echo_server()
    proxy, path = _serving((EgressRule("127.0.0.1", port),), tmp_path)
    try:
        answer = _through(path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nhi".encode())
    finally:
        summary = proxy.stop()
        server.close()
    assert answer.endswith(b"ECHO:hi"), answer
    assert (summary.contacted[0].bytes_up, summary.contacted[0].bytes_down) == (2, 7)


def test_a_proxy_on_a_loopback_port_serves_the_same_rules() -> None:
    server, port = _echo_server()
    proxy = EgressProxy((EgressRule("127.0.0.1", port),))
    listening = proxy.listen_loopback()
    try:
        assert proxy.address == listening
        client = socket.create_connection(("127.0.0.1", listening), timeout=10)
        client.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        head = client.recv(100)
        client.sendall(b"yo")
        echoed = b""
        while chunk := client.recv(100):
            echoed += chunk
        client.close()
    finally:
        summary = proxy.stop()
        server.close()
    assert head.startswith(b"HTTP/1.1 200")
    assert echoed == b"ECHO:yo"
    assert summary.contacted[0].connections == 1


def test_the_kernel_moves_a_connections_bytes_without_this_process() -> None:
    from plangate.isolation.proxy import _splice_pump

    src_peer, src = _tcp_pair()
    dst, dst_peer = _tcp_pair()
    counts = [0, 0]
    payload = os.urandom(3 * 1024 * 1024)  # more than one pipe's worth
    sender = threading.Thread(target=lambda: (src_peer.sendall(payload), src_peer.close()))
    sender.start()
    received = bytearray()
    reader = threading.Thread(target=lambda: [received.extend(c) for c in iter(
        lambda: dst_peer.recv(1 << 16), b"")])
    reader.start()
    try:
        assert _splice_pump(src, dst, counts, 1) is True
    finally:
        sender.join()
        dst.close()
        reader.join()
        src.close()
        dst_peer.close()
    assert counts == [0, len(payload)]
    assert bytes(received) == payload


def test_start_proxy_gives_a_box_a_private_socket_or_a_loopback_port() -> None:
    from plangate.isolation.proxy import start_proxy

    proxy, access, directory = start_proxy((), private_network=True, python="/py")
    try:
        assert os.path.basename(directory).startswith("plangate-egress-")
        assert (os.stat(directory).st_mode & 0o777) == 0o700
        assert access == ProxyAccess(os.path.join(directory, "proxy.sock"), 3128, "/py")
        assert proxy.address == access.socket
        assert stat.S_ISSOCK(os.stat(access.socket).st_mode)
    finally:
        proxy.stop()
        shutil.rmtree(directory, ignore_errors=True)
    plain, loopback, none = start_proxy((), private_network=False, python="/py")
    try:
        assert none == ""
        assert loopback == ProxyAccess("", plain.address)
        socket.create_connection(("127.0.0.1", loopback.port), timeout=5).close()
    finally:
        plain.stop()


def test_a_proxy_that_cannot_listen_refuses_and_leaves_no_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from plangate.errors import EnvironmentFailure
    from plangate.isolation import proxy as proxy_module

    deep = tmp_path / ("d" * 120)  # a socket path under it is longer than the kernel takes
    deep.mkdir()
    monkeypatch.setattr(proxy_module.tempfile, "tempdir", str(deep))
    with pytest.raises(EnvironmentFailure) as info:
        proxy_module.start_proxy((), private_network=True, python="/py")
    assert info.value.code == "SANDBOX_UNAVAILABLE"
    assert list(deep.iterdir()) == []
