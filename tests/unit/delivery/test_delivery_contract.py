"""The state machine contract: deterministic, no MERGED, embedded verbatim in the docs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import plangate.delivery
from plangate.delivery.machine import EXITS, PRIORITY_ORDER, STATES, contract, contract_text

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = Path(plangate.delivery.__file__).parent


def test_contract_shape():
    doc = contract()
    assert sorted(doc) == ["exits", "priority_order", "states", "terminal", "transitions"]
    assert doc["terminal"] == ["MERGE_READY"]
    assert doc["transitions"]["MERGE_READY"] == []
    every = sorted((*STATES, *EXITS))
    assert len(every) == 9
    for state in STATES:
        if state != "MERGE_READY":
            assert doc["transitions"][state] == every
    assert doc["states"] == sorted(doc["states"])
    assert doc["exits"] == ["EXEC_RETURN", "HUMAN_ESCALATED"]


def test_priority_order_is_the_documented_one():
    assert PRIORITY_ORDER == (
        "invalid_snapshot",
        "plan_deviation",
        "protected_surface",  # plangate addition: a plan scope may cover protected surfaces
        "escalation_flags",
        "ancestry_fail",
        "unknown_check_conclusion",
        "taxonomy_unverifiable",
        "round_limit",
        "same_type_recurrence",
        "ci_failed",
        "conflict",
        "review_findings",
        "waiting_checks",
        "waiting_review",
        "merge_ready_candidate",
        "merge_ready",
    )


def test_contract_text_is_deterministic_sorted_json():
    text = contract_text()
    assert text == contract_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert "MERGED" not in text.replace("MERGE_READY", "")


def test_contract_cli(run_cli, tmp_path):
    result = run_cli(tmp_path, "delivery", "contract")
    assert result.code == 0
    assert result.out == contract_text()


def test_docs_embed_the_contract_verbatim():
    doc = (ROOT / "docs" / "delivery.md").read_text()
    blocks = re.findall(r"```json contract\n(.*?)```", doc, flags=re.DOTALL)
    assert blocks == [contract_text()]


def test_delivery_package_never_merges():
    forbidden = (
        "gh pr merge",
        "merge_pull_request",
        'MERGED"',
        "import socket",
        "urllib",
        "http.client",
        "requests",
    )
    for path in PACKAGE.glob("*.py"):
        text = path.read_text()
        for token in forbidden:
            assert token not in text, f"{token!r} in {path.name}"


def test_pure_modules_do_no_io():
    for name in ("machine.py", "snapshot.py"):
        text = (PACKAGE / name).read_text()
        for token in ("subprocess", "plangate.git", "open(", "datetime", "time.", "os."):
            assert token not in text, f"{token!r} in {name}"


def test_every_reason_code_is_documented():
    import plangate.evidence

    doc = (ROOT / "docs" / "reason-codes.md").read_text()
    sources = [*PACKAGE.glob("*.py"), *Path(plangate.evidence.__file__).parent.glob("*.py")]
    sources += [
        ROOT / "src" / "plangate" / "cli" / n for n in ("delivery_cmd.py", "evidence_cmd.py")
    ]
    codes = set()
    for path in sources:
        codes |= set(re.findall(r'"((?:DELIVERY|EVIDENCE)_[A-Z_]+)"', path.read_text()))
    assert len(codes) > 40
    missing = sorted(c for c in codes if f"`{c}`" not in doc)
    assert missing == []
