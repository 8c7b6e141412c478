"""The report's ledger figures, folded in one pass while the chain verifies, are the figures
the list-based computation gives over every entry held in memory (on a real ledger).

The reference below is the computation the report made before it streamed: every
verified entry read into a list, then filtered and counted. The streamed figures
must equal it, except that only the newest refusals are listed (each one counted).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from plangate.canonical import canonical_text
from plangate.ledger import open_ledger
from plangate.ledger.chain import verify_rows
from plangate.report.evaluations import EVALUATION_KINDS, evaluation
from plangate.report.ledger_view import denial_row
from plangate.report.model import (
    MAX_DENIAL_ROWS,
    Count,
    DenialView,
    Entry,
    LedgerFigures,
    Timeline,
    text_of,
)
from plangate.report.service import read_ledger
from plangate.report.tasks import EXEC_KINDS, RUN_LOG_EVENTS, runs
from support.cli import run_cli_in
from support.ledger import Backend, backend_fixture  # noqa: F401 -- the fixture
from support.report import build_repository, tamper_ledger

DAYS = ("2026-11-28", "2026-11-29", "2026-11-30", "2026-12-01")
TASKS = ("TASK-0001", "TASK-0002", "TASK-0003")
DENIALS = MAX_DENIAL_ROWS + 40
"""More refusals than the report lists one by one."""


def _clock(day: str) -> Any:
    return lambda: datetime.fromisoformat(f"{day}T09:30:00").replace(tzinfo=UTC)


def _mixed(repo: Path, env: dict[str, str] | None = None) -> None:
    """Hook decisions (refused, allowed, doctor's probes), exec runs and refusals, delivery
    transitions, evaluations and checkpoints, spread over four days and three tasks."""
    for number, day in enumerate(DAYS):
        with open_ledger(repo, env or {}, clock=_clock(day)) as ledger:
            for i in range(DENIALS // len(DAYS)):
                task = TASKS[i % 3]
                ledger.append(
                    "hook_decision",
                    task if i % 5 else "-",
                    {
                        "verdict": "DENY",
                        "tool": "Write",
                        "codes": [f"HOOK_CODE_{i % 13}"] if i % 7 else [],
                        "targets": [f"src/m{i % 11}.py"],
                        "task_id": task,
                    },
                )
            for i in range(6):
                ledger.append(
                    "hook_decision",
                    TASKS[i % 3],
                    {"verdict": "DENY" if i % 2 else "ALLOW", "codes": ["X"], "probe": "doctor"},
                )
                ledger.append(
                    "hook_decision", TASKS[i % 3], {"verdict": "ALLOW", "codes": [], "targets": []}
                )
            for task in TASKS:
                payload = {"program": "claude", "task_id": task, "day": day}
                ledger.append("exec_started", task, payload)
                if task != "TASK-0003":
                    ledger.append("exec_unisolated", task, {"task_id": task})
                verdict = ("ACCEPTED", "REJECTED", "NO_CHANGES")[(number + len(task)) % 3]
                ledger.append(
                    "exec_result",
                    task,
                    {"verdict": verdict, "reasons": ["CI_OUT_OF_SCOPE"], "changed": ["a.py"]},
                )
                ledger.append("exec_ended", task, {"exit_code": number, "task_id": task})
                ledger.append("exec_refused", task, {"verdict": "REJECTED", "reasons": ["C3"]})
                ledger.append("delivery_transition", task, {"entry_id": f"{task}-{day}"})
            digest = "sha256:" + "de"[number % 2] * 64
            ledger.append("eval_candidate_registered", digest, {"candidate": {"candidate_id": day}})
            ledger.append("eval_gate_verdict", digest, {"verdict": f"V{number}"})
            ledger.append("ledger_checkpoint", "-", {"n": number})
            ledger.append("c3_issue", "TASK-0001", {"verdict": "ACCEPTED"})


@pytest.fixture
def repo(git_repo: Path) -> Path:
    _mixed(build_repository(git_repo))
    return git_repo


# -- the list-based computation, as the report made it with every entry in memory ----------


def _all_entries(repo: Path, env: dict[str, str] | None = None) -> list[Entry]:
    with open_ledger(repo, env or {}, create=False) as ledger:
        rows, head = ledger.stored_rows()
    assert verify_rows(rows, head).accepted
    return [
        Entry(
            r.seq, r.kind, r.subject, json.loads(r.payload_text), r.at, r.prev_hash, r.entry_hash
        )
        for r in rows
    ]


def _window(entries: list[Entry], since: str | None, tasks: Sequence[str]) -> list[Entry]:
    wanted = frozenset(tasks)
    out = []
    for entry in entries:
        if since is not None and entry.at[:10] < since:
            continue
        about = (entry.subject, text_of(entry.payload, "task_id"))
        if wanted and not wanted.intersection(about):
            continue
        out.append(entry)
    return out


def _ranked(counter: Counter[str], limit: int = 10) -> tuple[Count, ...]:
    ordered = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    return tuple(Count(label, count) for label, count in ordered[:limit])


def _timeline(entries: list[Entry]) -> Timeline:
    counts: Counter[tuple[str, str]] = Counter((e.at[:10], e.kind) for e in entries)
    per_kind: Counter[str] = Counter(e.kind for e in entries)
    return Timeline(
        days=tuple(sorted({day for day, _kind in counts})),
        kinds=tuple(sorted(per_kind)),
        counts=dict(counts),
        per_kind=_ranked(per_kind, limit=len(per_kind)),
        total=len(entries),
    )


def _is_probe(entry: Entry) -> bool:
    return entry.kind == "hook_decision" and entry.payload.get("probe") == "doctor"


def _denials(entries: list[Entry]) -> tuple[list[DenialView], dict[str, Any]]:
    probes = sum(1 for e in entries if _is_probe(e))
    rows = [d for d in (denial_row(e) for e in entries if not _is_probe(e)) if d is not None]
    by_code: Counter[str] = Counter()
    by_path: Counter[str] = Counter()
    by_subject: Counter[str] = Counter()
    for row in rows:
        by_code.update(row.codes or ("(no code recorded)",))
        by_path.update(row.paths)
        by_subject[row.subject] += 1
    return rows, {
        "by_code": _ranked(by_code),
        "by_path": _ranked(by_path),
        "by_subject": _ranked(by_subject),
        "probes": probes,
    }


def _evaluations(entries: list[Entry]) -> tuple[Any, ...]:
    by_subject: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.kind in EVALUATION_KINDS:
            by_subject.setdefault(entry.subject, []).append(entry)
    return tuple(
        evaluation(subject, {e.kind: e for e in group}, [e.seq for e in group])
        for subject, group in by_subject.items()
    )


def _checkpoint(entries: list[Entry]) -> str | None:
    for entry in reversed(entries):
        if entry.kind == "ledger_checkpoint":
            return (
                f"entry {entry.seq} ({entry.kind}) at {entry.at}, {entry.entry_hash}; "
                "its signature is not checked by this report"
            )
    return None


def _twins(entries: list[Entry], task: str) -> frozenset[str]:
    """What the task's run log would have to hold: half of its runs, one forged line."""
    entries = [e for e in entries if e.subject == task and e.kind in RUN_LOG_EVENTS]
    texts = {canonical_text(dict(e.payload)) for e in entries[::2]}
    return frozenset(texts | {canonical_text({"program": "forged", "task_id": task})})


# -- the comparison ----------------------------------------------------------------------------


def _compare(
    repo: Path, since: str | None, task_filter: tuple[str, ...], env: dict[str, str] | None = None
) -> LedgerFigures:
    entries = _all_entries(repo, env)
    twins = {task: _twins(entries, task) for task in TASKS}
    ledger = read_ledger(repo, env or {}, since=since, task_filter=task_filter, tasks=twins)
    assert ledger.verdict == "INTACT" and ledger.entries_checked == len(entries)
    figures = ledger.figures
    assert figures is not None
    window = _window(entries, since, task_filter)

    assert figures.timeline == _timeline(window)
    rows, counts = _denials(window)
    assert figures.denials.total == len(rows)
    assert figures.denials.rows == tuple(rows[-MAX_DENIAL_ROWS:])
    assert {
        "by_code": figures.denials.by_code,
        "by_path": figures.denials.by_path,
        "by_subject": figures.denials.by_subject,
        "probes": figures.denials.probes,
    } == counts
    assert figures.evaluations == (() if task_filter else _evaluations(window))
    assert figures.checkpoint == _checkpoint(entries)  # the banner ignores the window
    for task in TASKS:
        own = [e for e in entries if e.subject == task]
        told = figures.tasks[task]
        assert list(told.runs) == runs([e for e in own if e.kind in EXEC_KINDS])
        in_ledger = {canonical_text(dict(e.payload)) for e in own if e.kind in RUN_LOG_EVENTS}
        assert told.run_log_matched == twins[task] & in_ledger
        assert list(told.delivery_ids) == [
            str(e.payload.get("entry_id")) for e in own if e.kind == "delivery_transition"
        ]
    return figures


@pytest.mark.parametrize(
    ("since", "task_filter"),
    [
        (None, ()),
        ("2026-11-30", ()),
        (None, ("TASK-0002",)),
        ("2026-11-29", ("TASK-0001", "TASK-0003")),
        ("2999-01-01", ()),
    ],
)
def test_streamed_figures_equal_the_list_based_computation(
    repo: Path, since: str | None, task_filter: tuple[str, ...]
) -> None:
    figures = _compare(repo, since, task_filter)
    if since is None and not task_filter:
        # The fixture is what it claims: more refusals than are listed, probes, every kind.
        assert figures.denials.total > MAX_DENIAL_ROWS == len(figures.denials.rows)
        assert figures.denials.probes > 0
        assert len(figures.evaluations) == 3  # the repository's own and two more
        assert figures.checkpoint is not None
        assert all(figures.tasks[t].runs for t in TASKS)


@pytest.mark.parametrize(("since", "task_filter"), [(None, ()), ("2026-11-30", ("TASK-0002",))])
def test_streamed_figures_are_the_same_on_both_backends(
    backend: Backend, since: str | None, task_filter: tuple[str, ...]
) -> None:
    _mixed(backend.repo, backend.env)
    _compare(backend.repo, since, task_filter, backend.env)


def test_the_page_counts_every_refusal_and_lists_the_newest(repo: Path, tmp_path: Path) -> None:
    rows, _counts = _denials(_all_entries(repo))
    markdown = run_cli_in(repo, "report", "--format", "markdown")
    assert markdown.code == 0
    assert f"### Denials: {len(rows)}" in markdown.out
    out = tmp_path / "r.html"
    assert run_cli_in(repo, "report", "-o", str(out)).code == 0
    page = out.read_text()
    assert f"Listing the newest {MAX_DENIAL_ROWS} of {len(rows)} refusals" in page
    assert f'id="e{rows[-1].seq}"' in page
    assert f'id="e{rows[-MAX_DENIAL_ROWS - 1].seq}"' not in page


def test_a_tampered_ledger_yields_no_figures_from_the_stream(
    repo: Path, tmp_path: Path
) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    last = len(_all_entries(copy))
    tamper_ledger(copy, seq=last - 1)  # the bad entry comes after all but one were folded
    ledger = read_ledger(copy, {})
    assert ledger.verdict == "TAMPERED"
    assert ledger.first_bad_seq == last - 1
    assert ledger.figures is None
    result = run_cli_in(copy, "report", "--format", "markdown")
    assert result.code == 1
    assert "### Denials" not in result.out
