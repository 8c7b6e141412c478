"""Where the ledger lives: environment, config file, default; bad values fail closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.ledger import LedgerError, open_ledger
from plangate.ledger.config import resolve_location


def write_config(repo: Path, text: str) -> None:
    (repo / ".plangate").mkdir(parents=True, exist_ok=True)
    (repo / ".plangate" / "config.toml").write_text(text)


def test_default_is_sqlite_in_the_repository(tmp_path: Path) -> None:
    loc = resolve_location(tmp_path, {})
    assert (loc.backend, loc.source) == ("sqlite", "default")
    assert loc.target == str(tmp_path / ".plangate" / "ledger.sqlite3")


def test_env_url_selects_postgresql(tmp_path: Path) -> None:
    loc = resolve_location(tmp_path, {"PLANGATE_LEDGER_URL": "postgresql://u@db.example:5432/l"})
    assert (loc.backend, loc.source) == ("postgresql", "env")
    loc = resolve_location(tmp_path, {"PLANGATE_LEDGER_URL": "postgres://u@h/l"})
    assert loc.backend == "postgresql"


def test_config_file_url_and_env_precedence(tmp_path: Path) -> None:
    write_config(tmp_path, '[other]\nx = 1\n\n[ledger]\nurl = "postgresql://team@db/ledger"\n')
    loc = resolve_location(tmp_path, {})
    assert (loc.backend, loc.source, loc.target) == (
        "postgresql",
        "config",
        "postgresql://team@db/ledger",
    )
    loc = resolve_location(tmp_path, {"PLANGATE_LEDGER_URL": "sqlite:local.sqlite3"})
    assert (loc.backend, loc.source) == ("sqlite", "env")
    assert loc.target == str(tmp_path / "local.sqlite3")


def test_config_without_ledger_section_uses_default(tmp_path: Path) -> None:
    write_config(tmp_path, "[surfaces]\npath = 'x'\n")
    assert resolve_location(tmp_path, {}).source == "default"


def test_sqlite_urls(tmp_path: Path) -> None:
    loc = resolve_location(tmp_path, {"PLANGATE_LEDGER_URL": "sqlite:///srv/l.sqlite3"})
    assert loc.target == "/srv/l.sqlite3"


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        "mysql://u@h/db",
        "http://example.com",
        "ledger.sqlite3",
        "sqlite://host/path",
        "sqlite:",
        "postgresql:///nohost",
        "file:///tmp/x",
    ],
)
def test_bad_urls_are_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(LedgerError) as info:
        resolve_location(tmp_path, {"PLANGATE_LEDGER_URL": url})
    assert info.value.code == "LEDGER_URL_INVALID"
    assert info.value.hint


@pytest.mark.parametrize(
    "text",
    [
        "[ledger\nurl = 1",
        "ledger = 3\n",
        "[ledger]\nurl = 5\n",
        '[ledger]\nurl = "postgresql://h/d"\ntable = "x"\n',
    ],
)
def test_bad_config_files_are_refused(tmp_path: Path, text: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(LedgerError) as info:
        resolve_location(tmp_path, {})
    assert info.value.code == "LEDGER_CONFIG_INVALID"


def test_config_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".plangate" / "config.toml").mkdir(parents=True)
    with pytest.raises(LedgerError) as info:
        resolve_location(tmp_path, {})
    assert info.value.code == "LEDGER_CONFIG_INVALID"


def test_bad_url_in_config_file_is_refused_not_ignored(tmp_path: Path) -> None:
    write_config(tmp_path, '[ledger]\nurl = "mongodb://x/y"\n')
    with pytest.raises(LedgerError) as info:
        open_ledger(tmp_path, {})
    assert info.value.code == "LEDGER_URL_INVALID"
    assert not (tmp_path / ".plangate" / "ledger.sqlite3").exists()


def test_location_display_has_no_password(tmp_path: Path) -> None:
    location = resolve_location(tmp_path, {"PLANGATE_LEDGER_URL": "postgresql://u:s3cret@h:5/d"})
    assert location.display == "postgresql://u:***@h:5/d"
    plain = resolve_location(tmp_path, {"PLANGATE_LEDGER_URL": "postgresql://u@h/d"})
    assert plain.display == "postgresql://u@h/d"


def test_opening_a_sqlite_ledger_does_not_import_psycopg(tmp_path: Path) -> None:
    # The hook and exec hot path opens the ledger on every call.
    import subprocess
    import sys

    code = (
        "import sys, pathlib\n"
        "from plangate.ledger import open_ledger\n"
        f"with open_ledger(pathlib.Path({str(tmp_path)!r}), {{}}) as l:\n"
        "    l.append('hook_decision', '-', {'allow': True})\n"
        "print('psycopg' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True)
    assert out.stdout.strip() == "False"


def test_a_config_reached_through_a_linked_directory_is_refused(tmp_path: Path) -> None:
    """``.plangate`` swapped for a link to a directory naming another ledger: refused, never
    followed (the default ledger is not silently used either)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.toml").write_text('[ledger]\nurl = "postgresql://team@db/ledger"\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".plangate").symlink_to(elsewhere)
    with pytest.raises(LedgerError) as caught:
        resolve_location(repo, {})
    assert caught.value.code == "LEDGER_CONFIG_INVALID"
    assert "symbolic link" in caught.value.message
