"""The host sandbox settings as data: what task start writes, how stop takes it back,
and that the hook's confinement check accepts exactly what is written."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from plangate.errors import InputRejected, UsageError
from plangate.hooks.confinement import sandbox_problem
from plangate.hooks.sandbox_settings import (
    apply_claude,
    apply_codex,
    claude_paths,
    codex_block,
    has_glob,
    parse_hosts,
    revert_claude,
    revert_codex,
    writable_dirs,
)

ROOT = "/work/repo"
PROTECTED = ["**/CLAUDE.md", ".github/workflows/**", ".claude/settings*.json"]


@pytest.mark.parametrize(
    ("scope", "dirs"),
    [
        (["src/app.py", "tests/test_app.py"], ["src", "tests"]),
        (["src/app/**", "src/app/x.py", "src/*.py"], ["src"]),
        (["src/app/**", "src/lib/*.py"], ["src/app", "src/lib"]),
        (["README.md", "**/*.py"], []),  # the root itself: both hosts write there already
    ],
)
def test_writable_dirs_are_the_literal_leading_directories(
    scope: list[str], dirs: list[str]
) -> None:
    assert writable_dirs(scope) == dirs


def test_glob_patterns_are_told_apart() -> None:
    assert has_glob("**/CLAUDE.md") and has_glob(".claude/settings*.json")
    assert not has_glob(".github/workflows/**") and not has_glob("CLAUDE.md")


def _written(settings: dict[str, Any]) -> dict[str, Any]:
    allow, deny = claude_paths(ROOT, "TASK-0001", ["src/app.py"], PROTECTED, ["lib/CLAUDE.md"])
    new, _record = apply_claude(settings, allow, deny)
    return new


def test_what_task_start_writes_is_what_the_hook_accepts() -> None:
    new = _written({})
    assert new["sandbox"]["filesystem"]["allowWrite"] == ["//work/repo/src"]
    deny = new["sandbox"]["filesystem"]["denyWrite"]
    assert "//work/repo/.github/workflows" in deny and "//work/repo/lib/CLAUDE.md" in deny
    assert sandbox_problem([new], root=ROOT, protected=PROTECTED, bypass=False) == ""


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("enabled", False, "sandbox.enabled"),
        ("failIfUnavailable", False, "sandbox.failIfUnavailable"),
        ("allowUnsandboxedCommands", True, "sandbox.allowUnsandboxedCommands"),
        ("excludedCommands", ["make"], "excludedCommands"),
    ],
)
def test_the_hook_refuses_what_task_start_wrote_once_weakened(
    key: str, value: object, why: str
) -> None:
    new = _written({})
    new["sandbox"][key] = value
    assert why in sandbox_problem([new], root=ROOT, protected=PROTECTED, bypass=False)


def test_a_protected_pattern_start_did_not_deny_is_refused_by_the_hook() -> None:
    new = _written({})
    more = [*PROTECTED, ".gitlab-ci.yml"]
    assert "gitlab" in sandbox_problem([new], root=ROOT, protected=more, bypass=False)


USER_SETTINGS: list[dict[str, Any]] = [
    {},
    {"model": "opus"},
    {"sandbox": {"enabled": False, "excludedCommands": ["docker"]}},
    {"sandbox": {"network": {"allowLocalBinding": True}, "filesystem": {"denyWrite": ["~/x"]}}},
    {"sandbox": {"filesystem": {"allowWrite": ["//work/repo/src"], "denyRead": ["~/.ssh"]}}},
    {"sandbox": {"failIfUnavailable": True, "filesystem": {}}, "permissions": {"deny": []}},
]


@pytest.mark.parametrize("settings", USER_SETTINGS)
def test_stop_gives_back_exactly_the_user_settings(settings: dict[str, Any]) -> None:
    allow, deny = claude_paths(ROOT, "TASK-0001", ["src/app.py"], PROTECTED)
    new, record = apply_claude(settings, allow, deny)
    assert new != settings
    assert revert_claude(new, record) == settings


def test_a_value_changed_after_start_is_left_to_its_owner() -> None:
    allow, deny = claude_paths(ROOT, "TASK-0001", ["src/app.py"], PROTECTED)
    new, record = apply_claude({"sandbox": {"enabled": False}}, allow, deny)
    new["sandbox"]["failIfUnavailable"] = False  # the user's own choice since
    new["sandbox"]["filesystem"]["denyWrite"].append("~/.aws")
    assert revert_claude(new, record) == {
        "sandbox": {"enabled": False, "failIfUnavailable": False,
                    "filesystem": {"denyWrite": ["~/.aws"]}},
    }


@pytest.mark.parametrize(
    "settings",
    [{"sandbox": []}, {"sandbox": {"filesystem": "x"}},
     {"sandbox": {"filesystem": {"denyWrite": "~/x"}}},
     {"sandbox": {"filesystem": {"allowWrite": [1]}}}],
)
def test_a_sandbox_of_the_wrong_type_is_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(InputRejected) as caught:
        apply_claude(settings, [], [])
    assert caught.value.code == "TASK_SANDBOX_SETTINGS_INVALID"


@pytest.mark.parametrize(
    "text", ["", 'model = "o4"\n', 'model = "o4"\n\n[profiles.x]\nmodel = "o3"\n']
)
def test_codex_block_round_trip(text: str) -> None:
    block = codex_block(ROOT, ["src/app.py", "tests/x.py"])
    new = apply_codex(text, block)
    parsed = tomllib.loads(new)
    assert parsed["sandbox_mode"] == "workspace-write"
    assert parsed["sandbox_workspace_write"] == {
        "writable_roots": ["/work/repo/src", "/work/repo/tests"], "network_access": False,
    }
    assert revert_codex(new, block) == text
    assert revert_codex(new + "# the user's own line\n", block) == text + "# the user's own line\n"


@pytest.mark.parametrize(
    "text",
    ['sandbox_mode = "read-only"\n', "[sandbox_workspace_write]\nnetwork_access = true\n",
     "# plangate-managed: begin\n"],
)
def test_a_codex_config_that_sets_the_sandbox_is_refused(text: str) -> None:
    with pytest.raises(InputRejected) as caught:
        apply_codex(text, codex_block(ROOT, []))
    assert caught.value.code == "TASK_SANDBOX_CODEX_CONFLICT"


def test_a_codex_block_changed_since_start_is_refused() -> None:
    block = codex_block(ROOT, ["src/app.py"])
    changed = apply_codex("", block).replace("false", "true")
    with pytest.raises(InputRejected) as caught:
        revert_codex(changed, block)
    assert caught.value.code == "TASK_SANDBOX_STATE_CHANGED"


def test_malformed_codex_toml_is_refused() -> None:
    with pytest.raises(InputRejected) as caught:
        apply_codex("model = \n", codex_block(ROOT, []))
    assert caught.value.code == "TASK_SANDBOX_SETTINGS_INVALID"


@pytest.mark.parametrize(
    ("option", "hosts"),
    [("auto", None), ("none", ()), ("claude", ("claude",)), ("codex, claude", ("codex", "claude"))],
)
def test_the_sandbox_option(option: str, hosts: tuple[str, ...] | None) -> None:
    assert parse_hosts(option) == hosts


@pytest.mark.parametrize("option", ["cursor", "", ","])
def test_an_unknown_sandbox_host_is_a_usage_error(option: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_hosts(option)
    assert caught.value.code == "TASK_SANDBOX_HOST_UNKNOWN"


# -- the deny plan: entries bubblewrap can mount ------------------------------------------

from plangate.hooks.sandbox_settings import (  # noqa: E402
    EVERYTHING_EXISTS,
    PathFacts,
    claude_plan,
    deny_plan,
)


def _facts(*existing: str, **children: tuple[str, ...]) -> PathFacts:
    listed = {k.replace("__", "."): v for k, v in children.items()}
    return PathFacts(frozenset(existing), listed)


def _check_mountable(entries: tuple[str, ...], facts: PathFacts) -> None:
    """The rule bubblewrap imposes: no entry names a missing path below another entry,
    and no missing Claude Code entry lies below a denied path."""
    own = (".claude/commands", ".claude/agents")
    for entry in entries:
        for other in (*entries, *own):
            below = other != entry and other.startswith(entry + "/")
            assert not (below and not facts.exists(other)), (entry, other)


@pytest.mark.parametrize(
    ("wanted", "facts", "entries"),
    [
        # A missing path under a denied one is covered by it, never named.
        ([".plangate", ".plangate/approvals"], _facts(".plangate"), (".plangate",)),
        # A missing path under a missing one: its first missing component, once.
        ([".cursor", ".cursor/hooks.json"], _facts(), (".cursor",)),
        ([".cursor/rules", ".cursor/commands"], _facts(), (".cursor",)),
        ([".github/workflows"], _facts(".github"), (".github/workflows",)),
        # .claude/ holds Claude Code's own missing entries: named by its entries.
        ([".claude"], _facts(".claude", ".claude/settings.json",
                             __claude=("settings.json", "rules")),
         (".claude/rules", ".claude/settings.json")),
        # ...and whole once those entries exist.
        ([".claude"], _facts(".claude", ".claude/commands", ".claude/agents"), (".claude",)),
        # An existing path under a denied one adds nothing.
        (["docs/working", "docs/working/T-1"], _facts("docs", "docs/working", "docs/working/T-1"),
         ("docs/working",)),
    ],
)
def test_the_deny_plan_names_only_what_bubblewrap_can_mount(
    wanted: list[str], facts: PathFacts, entries: tuple[str, ...]
) -> None:
    plan = deny_plan(wanted, facts)
    assert plan.entries == entries
    _check_mountable(plan.entries, facts)


def test_what_cannot_be_denied_is_reported_with_its_protection() -> None:
    facts = _facts(".claude", __claude=("settings.local.json",))
    plan = deny_plan([".claude"], facts)
    assert plan.entries == (".claude/settings.local.json",)
    assert [gap.path for gap in plan.gaps] == [".claude"]
    assert "PreToolUse hook" in plan.gaps[0].why and ".claude/commands" in plan.gaps[0].why
    missing = deny_plan([".claude/x"], _facts())  # .claude missing: Claude mounts below it
    assert missing.entries == () and missing.gaps[0].path == ".claude/x"


def test_the_hook_check_follows_the_plan_for_the_same_facts() -> None:
    facts = _facts(".plangate", ".git", ".claude", "docs", "docs/working",
                   ".claude/settings.local.json", __claude=("settings.local.json",))
    plan = claude_plan("TASK-0001", PROTECTED, facts)
    allow, deny = claude_paths(ROOT, "TASK-0001", ["src/app.py"], PROTECTED, (), facts=facts)
    new, _record = apply_claude({}, allow, deny)
    assert sandbox_problem([new], root=ROOT, protected=PROTECTED, bypass=False,
                           facts=facts) == ""
    assert "//work/repo/.claude" not in deny and "//work/repo/.cursor" in deny
    # The same settings do not satisfy a tree where every path exists (.claude unnamed).
    assert ".claude" in sandbox_problem([new], root=ROOT, protected=PROTECTED, bypass=False,
                                        facts=EVERYTHING_EXISTS)
    # A new entry in .claude/ since start: the hook no longer relies on the sandbox.
    grown = facts.with_file(".claude/evil.sh")
    assert ".claude/evil.sh" in sandbox_problem([new], root=ROOT, protected=PROTECTED,
                                                bypass=False, facts=grown)
    assert ".plangate" in plan.entries and ".github/workflows" not in plan.entries
    assert ".github" in plan.entries  # missing: its first missing component


def test_codex_writable_roots_name_only_directories_that_exist() -> None:
    # A missing root makes Codex's bubblewrap fail every command; the repository is
    # writable under workspace-write anyway.
    block = codex_block(ROOT, ["src/app.py", "tests/x.py"], PathFacts(frozenset({"src"})))
    parsed = tomllib.loads(block)
    assert parsed["sandbox_workspace_write"]["writable_roots"] == ["/work/repo/src"]


def test_a_missing_path_named_below_its_first_missing_component_counts() -> None:
    # Claude Code mounts any missing path at its first missing component: naming
    # .github/workflows protects .github as the plan's own entry would.
    facts = _facts(".plangate", ".git", ".claude", ".claude/commands", ".claude/agents",
                   ".codex", ".cursor", "docs", "docs/working")
    deny = [f"/{ROOT}/{p}" for p in (".plangate", ".git", ".claude", ".codex", ".cursor",
                                     "docs/working", ".github/workflows")]
    settings = {"sandbox": {"enabled": True, "failIfUnavailable": True,
                            "allowUnsandboxedCommands": False,
                            "filesystem": {"denyWrite": deny}}}
    protected = [".github/workflows/**"]
    assert sandbox_problem([settings], root=ROOT, protected=protected, bypass=False,
                           facts=facts) == ""
    existing = facts.with_file(".github/workflows")  # now it exists: .github is not named
    assert sandbox_problem([settings], root=ROOT, protected=protected, bypass=False,
                           facts=existing) == ""
    deny.remove(f"/{ROOT}/.github/workflows")
    assert ".github" in sandbox_problem([settings], root=ROOT, protected=protected,
                                        bypass=False, facts=facts)
