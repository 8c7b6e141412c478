"""The host table: one place names the hosts; adapters share code only through shared
modules; the hook helper's clients and the CLI agree with it."""

from __future__ import annotations

import ast
import json
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
    assert tuple(ENTRY_POINTS) == entry.HOSTS
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


def test_the_host_sandbox_configures_exactly_the_hosts_the_table_marks() -> None:
    from plangate.hooks import sandbox_settings

    marked = tuple(name for name, host in HOSTS.items() if host.sandbox_configured)
    assert tuple(sandbox_settings.HOSTS) == marked


def test_a_claude_hook_call_loads_no_other_adapter(tmp_path: Path) -> None:
    import subprocess
    import sys

    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "Nope"})
    probe = (
        "import sys; from plangate.hooks.entry import run_host; from pathlib import Path; "
        f"run_host('claude', {payload!r}.encode(), Path('/'), {{}}); "
        "print(','.join(sorted(m for m in sys.modules if m.startswith('plangate.hooks.hosts.'))))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    loaded = set(proc.stdout.strip().split(","))
    assert "plangate.hooks.hosts.claude" in loaded
    assert not loaded & {"plangate.hooks.hosts.codex", "plangate.hooks.hosts.cursor",
                         "plangate.hooks.hosts.git"}


def test_the_claude_plugin_hooks_every_claude_event_with_its_matcher() -> None:
    plugin = SRC.parent / "resources" / "claude-plugin" / "hooks" / "hooks.json"
    hooks = json.loads(plugin.read_text())["hooks"]
    expected = dict(HOSTS["claude"].events)
    assert set(hooks) == set(expected)
    for event, groups in hooks.items():
        assert [g.get("matcher") for g in groups] == [expected[event]], event
        assert all(MARKER in h["command"] for g in groups for h in g["hooks"])
