"""The egress proxy's pure parts, each at its edges: the box's variables and bridge line,
the allowlist, the request head, the record. Constants are written out here (not read from
the module): a changed one must turn a test red."""

from __future__ import annotations

import socket

import pytest

from plangate.isolation import proxy
from plangate.isolation.config import EgressRule
from plangate.isolation.policy import ProxyAccess
from plangate.isolation.proxy import (
    Destination,
    EgressSummary,
    bridge_argv,
    connect_first,
    egress_allowed,
    parse_request,
    proxy_env,
)


def test_the_proxys_fixed_numbers() -> None:
    assert proxy.BOX_PROXY_PORT == 3128
    assert proxy.BOX_PROXY_SOCKET == "/run/plangate-proxy.sock"
    assert proxy.MAX_HEAD_BYTES == 65536
    assert proxy.MAX_CONNECTIONS == 256
    assert proxy.CONNECT_TIMEOUT_SECONDS == 15.0
    assert proxy.BUSY_READ_SECONDS == 0.5
    assert proxy.STOP_GRACE_SECONDS == 2.0
    assert proxy.RELAY_PIPE == 1048576
    assert proxy.RELAY_BUFFER == 262144
    assert proxy.HANDOFF_MARKER == b"\0"


def test_the_box_sends_every_http_client_to_the_proxy() -> None:
    url = "http://127.0.0.1:3128"
    assert proxy_env(3128) == {
        "HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url,
    }
    assert proxy_env(41000)["https_proxy"] == "http://127.0.0.1:41000"


def test_the_bridge_line_binds_the_port_then_runs_the_command() -> None:
    access = ProxyAccess("/tmp/p.sock", 3128, "/usr/bin/python3")
    assert bridge_argv(access, ["claude", "-p", "x"]) == [
        "/usr/bin/python3", "-I", "-S", "-c", proxy.BRIDGE_SOURCE, "3128",
        "/run/plangate-proxy.sock", "--", "claude", "-p", "x",
    ]


@pytest.mark.parametrize(
    ("rules", "host", "port", "allowed"),
    [
        ((EgressRule("api.example.com", 443),), "api.example.com.", 443, True),
        ((EgressRule("api.example.com", 443),), "API.EXAMPLE.COM", 443, True),
        ((EgressRule("api.example.com", 443),), "api.example.com..", 443, True),
        ((EgressRule("*.example.com", 443),), "a.example.com", 443, True),
        ((EgressRule("*.example.com", 443),), "example.com", 443, False),
        ((EgressRule("*.example.com", 443),), "aexample.com", 443, False),
        ((EgressRule("*.example.com", 443),), "a.example.com", 80, False),
        ((EgressRule("[::1]", 80),), "::1", 80, True),
        ((EgressRule("[::1]", 80),), "[::1]", 80, True),
        ((), "api.example.com", 443, False),
        ((EgressRule("other.example", 443), EgressRule("api.example.com", 443)),
         "api.example.com", 443, True),
    ],
)
def test_egress_allowed_at_its_edges(
    rules: tuple[EgressRule, ...], host: str, port: int, allowed: bool
) -> None:
    assert egress_allowed(rules, host, port) is allowed


def test_the_record_of_what_was_contacted_and_refused() -> None:
    one = Destination("api.example.com", 443, 2, 10, 20)
    two = Destination("evil.example", 80, 1, 0, 0)
    assert one.to_json() == {"host": "api.example.com", "port": 443, "connections": 2,
                             "bytes_up": 10, "bytes_down": 20}
    assert EgressSummary((one,), (two,)).to_json() == {
        "contacted": [one.to_json()], "refused": [two.to_json()]}


@pytest.mark.parametrize(
    ("head", "host", "port", "tunnel"),
    [
        (b"CONNECT api.example.com:443 HTTP/1.1\r\n\r\n", "api.example.com", 443, True),
        (b"CONNECT API.Example.COM:443 HTTP/1.0\r\n\r\n", "api.example.com", 443, True),
        (b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", "::1", 8443, True),
        (b"CONNECT h:1 HTTP/1.1\r\n\r\n", "h", 1, True),
        (b"CONNECT h:65535 HTTP/1.1\r\n\r\n", "h", 65535, True),
        (b"GET http://h.example HTTP/1.1\r\n\r\n", "h.example", 80, False),
        (b"GET http://[::1]/x HTTP/1.1\r\n\r\n", "::1", 80, False),
        (b"GET http://[::1]:81/x HTTP/1.1\r\n\r\n", "::1", 81, False),
        (b"POST http://h:8080/a HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi", "h", 8080, False),
    ],
)
def test_a_request_head_names_its_destination(
    head: bytes, host: str, port: int, tunnel: bool
) -> None:
    request = parse_request(head)
    assert request is not None
    assert (request.host, request.port, request.tunnel) == (host, port, tunnel)


@pytest.mark.parametrize(
    "head",
    [
        b"CONNECT h:0 HTTP/1.1\r\n\r\n",
        b"CONNECT h:65536 HTTP/1.1\r\n\r\n",
        b"CONNECT h:-1 HTTP/1.1\r\n\r\n",
        b"CONNECT h: HTTP/1.1\r\n\r\n",
        b"CONNECT :443 HTTP/1.1\r\n\r\n",
        b"CONNECT [::1 HTTP/1.1\r\n\r\n",
        b"CONNECT [::1]x:443 HTTP/1.1\r\n\r\n",
        b"CONNECT h:443 HTTP/2\r\n\r\n",
        b"CONNECT h:443 FTP/1.1\r\n\r\n",
        b"CONNECT  h:443 HTTP/1.1\r\n\r\n",
        b"CONNECT h:443\r\n\r\n",
        b"CONNECT h:443 HTTP/1.1 extra\r\n\r\n",
        b"GET http:// HTTP/1.1\r\n\r\n",
        b"GET http://:80/ HTTP/1.1\r\n\r\n",
        b"GET http://u@h/ HTTP/1.1\r\n\r\n",
        b"GET https://h/ HTTP/1.1\r\n\r\n",
        b"GET http://[::1/ HTTP/1.1\r\n\r\n",
        b"GET http://[::1]x/ HTTP/1.1\r\n\r\n",
        b"GET http://[::1]x:80/ HTTP/1.1\r\n\r\n",
        b"GET http://h\xc3\xa9/ HTTP/1.1\r\n\r\n",
        b"\r\n\r\n",
    ],
)
def test_a_head_that_names_no_destination_is_refused(head: bytes) -> None:
    assert parse_request(head) is None


def test_a_plain_request_is_sent_on_for_the_origin_server() -> None:
    request = parse_request(
        b"GET http://h:8080/a/b?c=1 HTTP/1.1\r\nHost: h:8080\r\nProxy-Connection: keep-alive\r\n"
        b"PROXY-AUTHORIZATION: x\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\n"
        b"Accept: */*\r\n\r\nBODY"
    )
    assert request is not None
    assert request.head == (
        b"GET /a/b?c=1 HTTP/1.1\r\nHost: h:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    )
    assert request.rest == b"BODY"
    root = parse_request(b"GET http://h HTTP/1.0\r\n\r\n")
    assert root is not None and root.head == b"GET / HTTP/1.0\r\nConnection: close\r\n\r\n"


def test_a_tunnel_keeps_what_followed_its_head() -> None:
    request = parse_request(b"CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n\x16\x03\x01")
    assert request is not None
    assert (request.head, request.rest) == (b"", b"\x16\x03\x01")


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now: a connection is refused at once
    return port


def _addresses(*ports: int) -> list[tuple[int, int, int, str, tuple[str, int]]]:
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", p)) for p in ports]


def test_the_first_address_that_accepts_is_the_connection() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        sock = connect_first(_addresses(_closed_port(), server.getsockname()[1]), 5.0)
        try:
            assert sock.getpeername() == server.getsockname()
            assert sock.gettimeout() == 5.0
        finally:
            sock.close()
    finally:
        server.close()


def test_when_no_address_accepts_the_last_failure_is_raised() -> None:
    with pytest.raises(ConnectionRefusedError):
        connect_first(_addresses(_closed_port(), _closed_port()), 5.0)
    with pytest.raises(OSError, match="no address"):
        connect_first([], 5.0)
