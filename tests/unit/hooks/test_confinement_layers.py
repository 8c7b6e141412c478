"""Which Claude Code settings files the hook reads, how strictly, and how each
``denyWrite`` entry is resolved (real files in a temporary home and repository)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plangate.hooks.confinement import (
    MANAGED_SETTINGS,
    MAX_SETTINGS_BYTES,
    SANDBOX_DENY_REQUIRED,
    SANDBOX_REQUIRED,
    claude_sandbox,
    path_facts,
    sandbox_problem,
)
from plangate.hooks.sandbox_settings import PathFacts

PROTECTED = ("CLAUDE.md",)


def _sandbox(deny: list[str]) -> dict[str, object]:
    return {"sandbox": {**SANDBOX_REQUIRED, "filesystem": {"denyWrite": deny}}}


class Place:
    """A temporary home and repository, and the settings files between them."""

    def __init__(self, tmp_path: Path) -> None:
        # Not the process's HOME (the test session sets one): the hook must read the
        # home the hook's environment names.
        self.home = tmp_path / "person"
        self.root = self.home / "repo"
        self.root.mkdir(parents=True)
        self.env = {"HOME": str(self.home)}

    def write(self, where: str, settings: object) -> Path:
        base = self.home if where == "user" else self.root
        name = "settings.local.json" if where == "local" else "settings.json"
        path = base / ".claude" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(settings))
        return path

    def judge(self, *, bypass: bool = False) -> tuple[str, str]:
        return claude_sandbox(str(self.root), self.env, PROTECTED, bypass=bypass)


RELATIVE_DENY = [*SANDBOX_DENY_REQUIRED, *PROTECTED]


@pytest.fixture
def place(tmp_path: Path) -> Place:
    return Place(tmp_path)


@pytest.mark.parametrize("where", ["project", "local"])
def test_the_project_files_establish_the_sandbox_with_relative_entries(
    place: Place, where: str
) -> None:
    place.write(where, _sandbox(RELATIVE_DENY))
    assert place.judge() == ("claude-sandbox", "")


def test_relative_entries_in_the_user_file_name_no_repository_path(place: Place) -> None:
    place.write("user", _sandbox(RELATIVE_DENY))
    established, why = place.judge()
    assert established == ""
    assert why.startswith("sandbox.filesystem.denyWrite does not name ")


def test_absolute_entries_in_the_user_file_under_the_home_from_the_environment(
    place: Place,
) -> None:
    place.write("user", _sandbox([f"~/repo/{p}" for p in RELATIVE_DENY]))
    assert place.judge() == ("claude-sandbox", "")
    place.write("user", _sandbox([f"/{place.root}/{p}" for p in RELATIVE_DENY]))
    assert place.judge() == ("claude-sandbox", "")


def test_no_settings_file_establishes_nothing(place: Place) -> None:
    assert place.judge() == ("", "sandbox.enabled is not true")


def test_a_bypassing_call_is_not_confined(place: Place) -> None:
    place.write("project", _sandbox(RELATIVE_DENY))
    established, why = place.judge(bypass=True)
    assert established == ""
    assert "dangerouslyDisableSandbox" in why


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[]", b'{"sandbox": 1, "sandbox": 2}', b"\xff\xfe"],
)
def test_a_settings_file_that_cannot_be_read_strictly_establishes_nothing(
    place: Place, content: bytes
) -> None:
    place.write("project", _sandbox(RELATIVE_DENY))
    place.write("local", {}).write_bytes(content)
    assert place.judge() == ("", "a Claude Code settings file cannot be read")


def test_a_settings_file_that_is_a_directory_or_a_link_establishes_nothing(place: Place) -> None:
    good = place.write("project", _sandbox(RELATIVE_DENY))
    local = place.root / ".claude" / "settings.local.json"
    local.mkdir()
    assert place.judge() == ("", "a Claude Code settings file cannot be read")
    local.rmdir()
    os.symlink(good, local)
    assert place.judge() == ("", "a Claude Code settings file cannot be read")


def _padded(settings: object, size: int) -> bytes:
    data = json.dumps(settings).encode()
    return data + b" " * (size - len(data))


def test_a_settings_file_of_the_largest_size_is_read_and_one_byte_more_is_not(
    place: Place,
) -> None:
    path = place.write("project", {})
    path.write_bytes(_padded(_sandbox(RELATIVE_DENY), MAX_SETTINGS_BYTES))
    assert place.judge() == ("claude-sandbox", "")
    path.write_bytes(_padded(_sandbox(RELATIVE_DENY), MAX_SETTINGS_BYTES + 1))
    assert place.judge() == ("", "a Claude Code settings file cannot be read")


def test_the_largest_settings_file_is_one_mebibyte() -> None:
    assert MAX_SETTINGS_BYTES == 1024 * 1024


def test_the_managed_settings_are_read_where_claude_code_keeps_them() -> None:
    # Linux and macOS locations of the administrator's managed settings file.
    assert MANAGED_SETTINGS == (
        "/etc/claude-code/managed-settings.json",
        "/Library/Application Support/ClaudeCode/managed-settings.json",
    )


# -- sandbox_problem: the shape of each layer, and how entries resolve ---------------


def _problem(*layers: object, root: str = "/r", home: str = "", protected=PROTECTED) -> str:
    return sandbox_problem(
        list(layers),  # type: ignore[arg-type]
        root=root,
        protected=list(protected),
        bypass=False,
        home=home,
    )


@pytest.mark.parametrize(
    ("sandbox", "why"),
    [
        ([], "a settings file's 'sandbox' is not an object"),
        ({**SANDBOX_REQUIRED, "excludedCommands": "git"}, "sandbox.excludedCommands is not a list"),
        ({**SANDBOX_REQUIRED, "filesystem": []}, "sandbox.filesystem is not an object"),
        (
            {**SANDBOX_REQUIRED, "filesystem": {"denyWrite": [*RELATIVE_DENY, 7]}},
            "sandbox.filesystem.denyWrite is not a list of paths",
        ),
        (
            {**SANDBOX_REQUIRED, "filesystem": {"denyWrite": ".git"}},
            "sandbox.filesystem.denyWrite is not a list of paths",
        ),
    ],
)
def test_each_wrongly_typed_value_is_named(sandbox: object, why: str) -> None:
    assert _problem({"sandbox": sandbox}) == why


def test_a_home_relative_entry_names_nothing_when_the_home_is_unknown() -> None:
    deny = [*SANDBOX_DENY_REQUIRED, "~/CLAUDE.md"]
    layers = [_sandbox(deny)]
    assert sandbox_problem(layers, root="/r", protected=["x/CLAUDE.md"], bypass=False) != ""
    # not even for a repository at the root directory
    deny = [f"//{p}" for p in SANDBOX_DENY_REQUIRED] + ["~/CLAUDE.md"]
    assert sandbox_problem([_sandbox(deny)], root="/", protected=["CLAUDE.md"], bypass=False) == (
        "sandbox.filesystem.denyWrite does not name 'CLAUDE.md'"
    )


def test_a_home_with_a_trailing_slash_resolves_like_one_without() -> None:
    deny = [f"~/r/{p}" for p in RELATIVE_DENY]
    assert _problem(_sandbox(deny), home="/h/", root="/h/r") == ""


def test_a_root_with_a_trailing_slash_resolves_like_one_without() -> None:
    deny = [f"//r/{p}" for p in RELATIVE_DENY]
    assert _problem(_sandbox(deny), root="/r/") == ""


@pytest.mark.parametrize("entry", ["/x", "//elsewhere/x", "~x"])
def test_an_entry_outside_the_repository_or_ambiguous_names_no_path(entry: str) -> None:
    deny = [*SANDBOX_DENY_REQUIRED, entry]
    assert _problem(_sandbox(deny), protected=("x",)) == (
        "sandbox.filesystem.denyWrite does not name 'x'"
    )


def test_a_one_letter_path_named_as_it_is_is_named() -> None:
    assert _problem(_sandbox([*SANDBOX_DENY_REQUIRED, "x"]), protected=("x",)) == ""


def test_a_missing_path_is_not_named_by_a_sibling_sharing_its_prefix() -> None:
    # '.plangate' is missing: a path below it would be named, '.plangate-old' is not below.
    facts = PathFacts(frozenset({".git", ".claude", ".codex", ".cursor", "docs", "docs/working"}))
    deny = [".plangate-old", ".git", ".claude", ".codex", ".cursor", "docs/working", "CLAUDE.md"]
    problem = sandbox_problem(
        [_sandbox(deny)], root="/r", protected=list(PROTECTED), bypass=False, facts=facts
    )
    assert problem == "sandbox.filesystem.denyWrite does not name '.plangate'"
    deny[0] = ".plangate/ledger.sqlite3"
    assert (
        sandbox_problem(
            [_sandbox(deny)], root="/r", protected=list(PROTECTED), bypass=False, facts=facts
        )
        == ""
    )


# -- path_facts: what exists, read from the disk ---------------------------------------


def test_path_facts_lists_a_real_directory_but_not_a_link_to_one(tmp_path: Path) -> None:
    (tmp_path / "real" / ".claude").mkdir(parents=True)
    (tmp_path / "real" / ".claude" / "agents").mkdir()
    facts = path_facts(str(tmp_path / "real"), [".claude"])
    assert facts.children[".claude"] == ("agents",)
    assert facts.exists(".claude/agents")
    assert not facts.exists(".codex")

    (tmp_path / "linked").mkdir()
    os.symlink(tmp_path / "real" / ".claude", tmp_path / "linked" / ".claude")
    linked = path_facts(str(tmp_path / "linked"), [".claude"])
    assert linked.exists(".claude")
    assert ".claude" not in linked.children


def test_without_home_in_the_environment_the_process_home_is_read(place: Place) -> None:
    process_home = Path(os.environ["HOME"])
    (process_home / ".claude").mkdir(parents=True, exist_ok=True)
    (process_home / ".claude" / "settings.json").write_text(
        json.dumps(_sandbox([f"/{place.root}/{p}" for p in RELATIVE_DENY]))
    )
    assert claude_sandbox(str(place.root), {}, PROTECTED, bypass=False) == ("claude-sandbox", "")
