"""The HTML report loaded in a real headless Chromium: it renders without errors, fetches
nothing, shows its sections, tables and charts, and no hostile value runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.browser import Browser, chromium_path
from support.cli import run_cli_in
from support.report import CANARY, HOSTILE, build_repository, tamper_ledger

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="chromium missing: scripts/test.sh installs it"
)

ON_ATTRIBUTES = (
    "[...document.querySelectorAll('*')].filter(e => [...e.attributes]"
    ".some(a => a.name.toLowerCase().startsWith('on'))).length"
)


def _report(repo: Path, out: Path, *args: str) -> tuple[int, str]:
    result = run_cli_in(repo, "report", "-o", str(out), *args)
    assert result.out.strip() == f"report written: {out}"
    return result.code, out.read_text(encoding="utf-8")


@pytest.fixture
def hostile_repo(git_repo: Path) -> Path:
    return build_repository(git_repo, hostile=True)


def test_report_renders_in_chromium_with_every_section(hostile_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    code, text = _report(hostile_repo, out)
    assert code == 0
    with Browser(tmp_path / "browser") as browser:
        page = browser.open(out)
        assert page.errors == []
        assert page.requests == [out.resolve().as_uri()]  # the page fetched nothing else
        for section in ("tasks", "timeline", "denials", "evaluations"):
            assert page.eval(f"!!document.querySelector('section#{section} h2')") is True
        assert page.eval("document.querySelectorAll('table.tasks tbody tr').length") == 2
        assert page.eval("document.querySelector('#ledger-status').dataset.verified") == "true"
        # timeline, denials by code, paired trials: three inline SVG charts with bars
        assert page.eval("document.querySelectorAll('svg.chart').length") == 3
        assert page.eval("document.querySelectorAll('svg.chart rect').length") > 10
        assert page.eval("document.querySelectorAll('table.denials tbody tr').length") == 5
        assert page.eval("document.querySelectorAll('table.mutants tbody tr').length") == 2
        assert page.eval("document.querySelector('a[href=\"#e5\"]') !== null") is True
        assert page.eval("document.querySelector('tr#e5') !== null") is True
        shot = page.screenshot(tmp_path / "report.png")
        assert shot.stat().st_size > 10_000
        assert page.pdf().startswith(b"%PDF")
    assert "<script" not in text.lower()


def test_hostile_values_are_text_and_never_run(hostile_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "hostile.html"
    _code, text = _report(hostile_repo, out)
    with Browser(tmp_path / "browser") as browser:
        page = browser.open(out)
        assert page.errors == []
        assert page.eval("typeof window.__pwned") == "undefined"
        assert page.eval("document.querySelectorAll('script').length") == 0
        assert page.eval("document.querySelectorAll('img, iframe, object, embed').length") == 0
        assert page.eval(ON_ATTRIBUTES) == 0
        title = page.eval("document.querySelector('#task-TASK-0001 h3').textContent")
        assert HOSTILE in title  # the plan title is shown, as text
        body = page.eval("document.body.textContent")
        assert body.count(HOSTILE) >= 10  # paths, codes, tools, candidate ids, reasons...
    assert CANARY not in text  # unknown payload fields never reach the page


def test_a_tampered_ledger_is_red_and_shows_no_figures(git_repo: Path, tmp_path: Path) -> None:
    build_repository(git_repo)
    tamper_ledger(git_repo)
    out = tmp_path / "tampered.html"
    result = run_cli_in(git_repo, "report", "-o", str(out))
    assert result.code == 1
    assert "LEDGER_ENTRY_HASH_MISMATCH" in result.err
    with Browser(tmp_path / "browser") as browser:
        page = browser.open(out)
        assert page.errors == []
        assert page.eval("document.querySelector('#ledger-status').dataset.verified") == "false"
        assert page.eval("getComputedStyle(document.querySelector('.banner.bad')).color") == (
            "rgb(142, 0, 0)"
        )
        assert page.eval("document.querySelectorAll('svg.chart').length") == 0
        assert page.eval("document.querySelectorAll('.withheld').length") == 3
        assert page.eval("document.querySelectorAll('table.denials, table.runs').length") == 0
        # tasks are still judged from their files: the approved one holds, shown as such
        assert page.eval("document.querySelectorAll('table.tasks tbody tr').length") == 2
        page.screenshot(tmp_path / "tampered.png")
