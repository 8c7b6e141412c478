"""Ids and times stay on one line in the HTML report, measured in a real headless Chromium.

A table under width pressure (long paths among the refusals, a timeline with many
ledger kinds) must not squeeze a task id, an entry number, a time, a day or a reason
code to one character per line: each is laid out on exactly one line box, while long
paths still wrap inside their own cells.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.browser import Browser, chromium_path
from support.cli import run_cli_in
from support.report import build_repository

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="chromium missing: scripts/test.sh installs it"
)

LONG_PATH = "src/" + "/".join(f"very-long-directory-name-{n}" for n in range(12)) + "/file.py"

LINES_OF_TEXT = """
(selector) => [...document.querySelectorAll(selector)].map(el => {
  const range = document.createRange();
  range.selectNodeContents(el);
  const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
  return [el.textContent, tops.size];
})
"""


def _crowd_the_ledger(repo: Path) -> None:
    """Refusals with long paths and many ledger kinds: every table is under pressure."""
    from plangate.ledger import open_ledger

    with open_ledger(repo, {}) as ledger:
        for n in range(3):
            ledger.append("hook_decision", "TASK-0001", {
                "host": "claude", "event": "pre", "tool": "Write", "action": "write",
                "verdict": "DENY", "codes": ["HOOK_OUTSIDE_SCOPE", "HOOK_PROTECTED_SURFACE"],
                "targets": [f"{LONG_PATH}.{n}", f"{LONG_PATH}.b{n}"], "task_id": "TASK-0001",
            })
        for kind in ("trust_checkpoint", "session_started", "session_ended", "override_used",
                     "box_started", "box_ended", "plan_marked", "record_issued"):
            ledger.append(kind, "TASK-0001", {"note": "filler"})


def _lines(page, selector: str) -> list[list]:  # type: ignore[no-untyped-def]
    found = page.eval(f"({LINES_OF_TEXT})({selector!r})")
    assert found, f"nothing matches {selector}"
    return found


def test_ids_times_and_codes_are_one_line_each_in_a_crowded_report(
    git_repo: Path, tmp_path: Path
) -> None:
    build_repository(git_repo)
    _crowd_the_ledger(git_repo)
    out = tmp_path / "report.html"
    assert run_cli_in(git_repo, "report", "-o", str(out)).code == 0
    with Browser(tmp_path / "browser") as browser:
        page = browser.open(out)
        cells = {
            "task ids": "table.tasks tbody tr td:first-child",
            "entries": "table.denials tbody tr td:nth-child(1)",
            "times": "table.denials tbody tr td:nth-child(2)",
            "kinds": "table.denials tbody tr td:nth-child(3)",
            "subjects": "table.denials tbody tr td:nth-child(4)",
            "codes": "table.denials tbody tr td:nth-child(6) code",
            "days": "table.timeline tbody tr td:first-child",
            "run times": "table.runs tbody tr td:nth-child(2)",
        }
        for what, selector in cells.items():
            wrapped = [(text, n) for text, n in _lines(page, selector) if n != 1]
            assert wrapped == [], f"{what} wrap: {wrapped}"
        # A long path still wraps inside its own cell instead of widening the page forever.
        paths = [n for text, n in _lines(page, "table.denials tbody tr td:nth-child(7) code")
                 if LONG_PATH in text]
        assert paths and max(paths) > 1
