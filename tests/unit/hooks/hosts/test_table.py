"""The host table: one place names the hosts; adapters share code only through shared
modules; the hook helper's clients and the CLI agree with it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from plangate.hooks import entry, hookd_client
from plangate.hooks.hosts.table import AGENT_ENTRY_POINTS, ENTRY_POINTS, HOSTS
from plangate.hooks.install import CONFIG_FILES, MARKER, apply, installed_commands

SRC = Path(__file__).resolve().parents[4] / "src" / "plangate" / "hooks"
ADAPTERS = {host.adapter for host in HOSTS.values()}


def test_the_native_client_answers_exactly_the_agent_entry_points() -> None:
    source = (SRC / "native" / "hookd_client.c").read_text()
    listed = re.findall(r'strcmp\(host, "([a-z-]+)"\)', source)
    assert sorted(listed) == sorted(AGENT_ENTRY_POINTS)


def test_the_python_client_answers_exactly_the_agent_entry_points() -> None:
    assert tuple(hookd_client.AGENT_HOSTS) == AGENT_ENTRY_POINTS


def test_plangate_hook_answers_every_entry_point_of_the_table() -> None:
    assert entry.HOSTS == tuple(ENTRY_POINTS)
    for name in ENTRY_POINTS:
        assert name in entry.USAGE


def test_an_unknown_entry_point_is_a_blocking_usage_error() -> None:
    output = entry.run_host("vim", b"{}", Path("/"), {})
    assert output.exit_code == 2
    assert "HOOK_USAGE" in output.stderr


@pytest.mark.parametrize("module", sorted(ADAPTERS))
def test_no_adapter_imports_another_adapter(module: str) -> None:
    path = SRC / "hosts" / f"{module.rsplit('.', 1)[1]}.py"
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert not (imported & (ADAPTERS - {module})), module


HOST_NAME_COMPARISON = re.compile(r"""(?:==|!=|\bin)\s*\(?\s*["'](?:claude|codex|cursor|git)["']""")


@pytest.mark.parametrize(
    "relpath",
    ["entry.py", "install.py", "doctor.py", "doctor_settings.py", "doctor_versions.py",
     "hosts/claude.py", "hosts/codex.py", "hosts/cursor.py", "hosts/claude_protocol.py",
     "hosts/requests.py", "hosts/protocol.py", "hosts/tools.py"],
)
def test_callers_look_hosts_up_and_never_compare_their_names(relpath: str) -> None:
    text = (SRC / relpath).read_text()
    assert not HOST_NAME_COMPARISON.search(text), HOST_NAME_COMPARISON.search(text)


def test_every_host_event_is_installed_and_uninstalled(git_repo: Path) -> None:
    names = [name for name, host in HOSTS.items() if host.config_file]
    apply(git_repo, names, install=True)
    installed = {(h, e) for h, e, c in installed_commands(git_repo) if MARKER in c}
    for name in names:
        for event, _matcher in HOSTS[name].events:
            assert (name, event) in installed
    assert ("claude", "PostToolUseFailure") in installed
    apply(git_repo, names, install=False)
    assert not [c for _h, _e, c in installed_commands(git_repo) if MARKER in c]
    assert all(not (git_repo / path).exists() for path in CONFIG_FILES.values())
