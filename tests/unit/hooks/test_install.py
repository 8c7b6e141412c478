"""The shipped Claude Code plugin and the composite GitHub Action are well-formed."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from plangate.hooks.install import MARKER

ROOT = Path(__file__).resolve().parents[3]
PLUGIN = ROOT / "src" / "plangate" / "resources" / "claude-plugin"


def test_plugin_manifest_copies_are_identical() -> None:
    packaged = json.loads((PLUGIN / "plugin.json").read_text())
    layout = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert packaged == layout
    assert packaged["name"] == "plangate"


def test_plugin_hooks_cover_every_event_and_fail_closed() -> None:
    config = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())
    hooks = config["hooks"]
    assert set(hooks) == {"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop"}
    assert hooks["PreToolUse"][0]["matcher"] == "*"
    for groups in hooks.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command"
                assert hook["command"].startswith("plangate hook claude || exit 2")
                assert MARKER in hook["command"]


def test_action_runs_the_ci_check() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    scripts = "\n".join(step.get("run", "") for step in action["runs"]["steps"])
    assert 'bash "${{ github.action_path }}/scripts/ci-action.sh"' in scripts
    check = (ROOT / "scripts" / "ci-action.sh").read_text()
    assert 'args=(ci check --base "$BASE" --head "$HEAD" --json --annotations)' in check
    assert set(action["inputs"]) >= {"base", "head"}
    assert action["outputs"]["verdict"]["value"] == "${{ steps.check.outputs.verdict }}"


def test_installed_commands_name_an_importable_entry_point() -> None:
    import importlib.util
    import shlex

    from plangate.hooks.install import git_hook_script, hook_command

    for line in (hook_command("claude", "python3"), git_hook_script("git-pre-push", "python3")):
        words = shlex.split(line.splitlines()[-1].replace("exec ", ""), comments=True)
        module = words[words.index("-m") + 1]
        assert module == "plangate.hooks"
        assert importlib.util.find_spec(module + ".__main__") is not None


def test_the_marketplace_file_lists_the_shipped_plugin() -> None:
    """The repository root is a Claude Code plugin marketplace: its one entry is the
    shipped plugin, at a relative source that holds the plugin's manifest."""
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert marketplace["owner"]["name"]
    [entry] = marketplace["plugins"]
    assert entry["source"].startswith("./")
    source = (ROOT / entry["source"]).resolve()
    assert source == PLUGIN.resolve()
    manifest = json.loads((source / ".claude-plugin" / "plugin.json").read_text())
    assert entry["name"] == manifest["name"] == "plangate"
    assert entry["version"] == manifest["version"]
