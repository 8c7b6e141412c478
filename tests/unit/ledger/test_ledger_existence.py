"""The rule that says whether the repository had a ledger: each trace alone is enough,
nothing else is, and messages name a bounded number of paths."""

from __future__ import annotations

import pytest

from plangate.ledger.existence import MAX_EXAMPLES, RULES, Traces, evidence_of_a_ledger

ONE_OF_EACH = {
    "clone_witness": Traces(witness=".git/plangate/ledgers/k.json (created 2026-12-05T00:00:00Z)"),
    "witness_unreadable": Traces(witness_problem=".git/plangate/ledgers/k.json: not JSON"),
    "issued_record": Traces(issued_records=("docs/working/TASK-0001/approvals/c3.json",)),
    "run_log": Traces(run_logs=("docs/working/TASK-0001/run.ndjson",)),
    "delivery_log": Traces(delivery_logs=("docs/working/TASK-0001/delivery/record.jsonl",)),
    "ledger_configured": Traces(ledger_config=".plangate/config.toml"),
    "ledger_ignore_file": Traces(ledger_ignore_file=".plangate/.gitignore"),
    "sqlite_sidecar": Traces(sqlite_sidecars=("/r/.plangate/ledger.sqlite3-wal",)),
}


def test_no_trace_says_nothing() -> None:
    assert evidence_of_a_ledger(Traces()) == ()


@pytest.mark.parametrize("name", sorted(ONE_OF_EACH))
def test_each_trace_alone_says_a_ledger_existed(name: str) -> None:
    evidence = evidence_of_a_ledger(ONE_OF_EACH[name])
    assert len(evidence) == 1
    rule = dict(RULES)[name]
    assert evidence == (rule(ONE_OF_EACH[name]),)


def test_every_rule_is_exercised_and_in_table_order() -> None:
    assert [name for name, _rule in RULES] == list(ONE_OF_EACH)
    merged = Traces(
        witness=ONE_OF_EACH["clone_witness"].witness,
        witness_problem=ONE_OF_EACH["witness_unreadable"].witness_problem,
        issued_records=ONE_OF_EACH["issued_record"].issued_records,
        run_logs=ONE_OF_EACH["run_log"].run_logs,
        delivery_logs=ONE_OF_EACH["delivery_log"].delivery_logs,
        ledger_config=".plangate/config.toml",
        ledger_ignore_file=".plangate/.gitignore",
        sqlite_sidecars=ONE_OF_EACH["sqlite_sidecar"].sqlite_sidecars,
    )
    evidence = evidence_of_a_ledger(merged)
    assert len(evidence) == len(RULES)
    assert "this clone created it" in evidence[0]
    assert "cannot" in evidence[1] or "not JSON" in evidence[1]
    assert "c3-prime" in evidence[2]
    assert "run logs" in evidence[3]
    assert "journal files" in evidence[-1]


def test_messages_name_a_bounded_number_of_paths() -> None:
    logs = tuple(f"docs/working/TASK-{i:04d}/run.ndjson" for i in range(1, 11))
    (text,) = evidence_of_a_ledger(Traces(run_logs=logs))
    assert all(path in text for path in logs[:MAX_EXAMPLES])
    assert logs[MAX_EXAMPLES] not in text
    assert f"and {len(logs) - MAX_EXAMPLES} more" in text


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (1, "exec run logs: L1"),
        (3, "exec run logs: L1, L2, L3"),
        (4, "exec run logs: L1, L2, L3 and 1 more"),
        (10, "exec run logs: L1, L2, L3 and 7 more"),
    ],
)
def test_a_message_names_three_paths_then_counts_the_rest(count: int, message: str) -> None:
    logs = tuple(f"L{i}" for i in range(1, count + 1))
    assert evidence_of_a_ledger(Traces(run_logs=logs)) == (message,)
