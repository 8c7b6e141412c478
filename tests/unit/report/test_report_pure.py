"""The pure report modules with literal facts: picking fields, escaping, withholding."""

from __future__ import annotations

import pytest

from plangate.report.build import build_report
from plangate.report.ledger_view import denials, in_window, ledger_figures
from plangate.report.model import Entry, LedgerFacts, ReportInputs, clip, text_of, texts_of
from plangate.report.render_markdown import md
from plangate.verdict import Reason


def _entry(
    seq: int, kind: str, payload: dict, subject: str = "TASK-0001", at: str = "2026-12-01T10:00:00Z"
) -> Entry:
    return Entry(seq, kind, subject, payload, at, "sha256:" + "0" * 64, "sha256:" + "1" * 64)


def test_clip_makes_controls_visible_and_marks_a_cut() -> None:
    assert clip("a\nb\x1b") == "a\\x0ab\\x1b"
    assert clip("x" * 10, 4) == "xxxx [...]"


def test_fields_are_picked_by_type_only() -> None:
    payload = {"verdict": ["DENY"], "codes": ["A", 3, None, "B"], "n": True}
    assert text_of(payload, "verdict") == ""
    assert texts_of(payload, "codes") == ("A", "B")
    assert text_of("not a mapping", "verdict", "-") == "-"


@pytest.mark.parametrize("value", ["<script>", "a|b", "[x](y)", "![i](u)", "`c`", "a\nb", "&amp;"])
def test_markdown_values_are_inert(value: str) -> None:
    shown = md(value)
    assert "<" not in shown and "\n" not in shown
    for ch in "|[]()`!":
        assert ch not in shown.replace("\\" + ch, "")


def test_only_denials_count_as_denials() -> None:
    rows = [
        _entry(1, "hook_decision", {"verdict": "DENY", "codes": ["X"], "targets": ["p"]}),
        _entry(2, "hook_decision", {"verdict": "ALLOW", "codes": [], "targets": ["q"]}),
        _entry(3, "exec_result", {"verdict": "ACCEPTED"}),
        _entry(4, "exec_result", {"verdict": "NO_CHANGES"}),
        _entry(5, "exec_result", {"verdict": "REJECTED", "reasons": ["Y"], "changed": ["r"]}),
        _entry(6, "exec_refused", {"verdict": "REJECTED", "reasons": ["Z"]}),
        _entry(7, "c3_issue", {"verdict": "DENY"}),
    ]
    found = denials(rows)
    assert [d.seq for d in found.rows] == [1, 5, 6]
    assert {c.label for c in found.by_code} == {"X", "Y", "Z"}
    assert {c.label for c in found.by_path} == {"p", "r"}


def test_window_by_day_and_task() -> None:
    rows = [
        _entry(1, "k", {}, at="2026-11-30T23:59:59Z"),
        _entry(2, "k", {}),
        _entry(3, "k", {"task_id": "TASK-0002"}, subject="-"),
    ]
    assert [e.seq for e in in_window(rows, "2026-12-01", ())] == [2, 3]
    assert [e.seq for e in in_window(rows, None, ("TASK-0002",))] == [3]


def _inputs(verdict: str, entries: tuple[Entry, ...]) -> ReportInputs:
    ledger = LedgerFacts(
        verdict,
        (Reason("LEDGER_X", "m"),) if verdict != "INTACT" else (),
        "loc",
        len(entries),
        None,
        2 if verdict == "TAMPERED" else None,
        ledger_figures(entries),  # handed over even when it does not verify: the builder decides
    )
    return ReportInputs("repo", "2026-12-01T00:00:00Z", ledger, ())


@pytest.mark.parametrize("verdict", ["TAMPERED", "UNAVAILABLE"])
def test_a_ledger_that_does_not_verify_yields_no_figures(verdict: str) -> None:
    entries = (_entry(1, "hook_decision", {"verdict": "DENY", "codes": ["X"]}),)
    report = build_report(_inputs(verdict, entries))
    assert report.timeline is None and report.denials is None and report.evaluations is None
    assert report.withheld
    assert not report.ledger.verified


def test_a_verified_ledger_yields_figures() -> None:
    entries = (_entry(1, "hook_decision", {"verdict": "DENY", "codes": ["X"]}),)
    report = build_report(_inputs("INTACT", entries))
    assert report.denials is not None and len(report.denials.rows) == 1
    assert report.timeline is not None and report.timeline.total == 1
    assert report.withheld == ""
