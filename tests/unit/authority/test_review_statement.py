"""Review statements, version 1 (plan bytes) and version 2 (plan bytes and derived scope)."""

from __future__ import annotations

import json

import pytest

from plangate.authority.statement import Statement, parse_statement, statement_bytes

D = "sha256:" + "a" * 64
SCOPE = "sha256:" + "b" * 64
V1 = Statement("TASK-0001", "c1", "PASS", D, "review-self.md", D, "alice@example.com")


def test_a_statement_with_a_scope_is_version_2_and_reads_back() -> None:
    data = statement_bytes(V1._replace(scope_digest=SCOPE))
    value = json.loads(data)
    assert value["version"] == 2 and value["scope_digest"] == SCOPE
    assert parse_statement(data) == V1._replace(scope_digest=SCOPE)


def test_a_statement_without_a_scope_stays_version_1() -> None:
    data = statement_bytes(V1)
    assert json.loads(data)["version"] == 1 and "scope_digest" not in json.loads(data)
    assert parse_statement(data) == V1


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"version": 1}, "kind, version or role"),  # a scope in a version 1 statement
        ({"scope_digest": "sha256:x"}, "scope_digest must be a sha256 digest"),
        ({"scope_digest": None}, "scope_digest must be a sha256 digest"),
    ],
)
def test_a_version_2_statement_is_strict(change: dict, why: str) -> None:
    value = json.loads(statement_bytes(V1._replace(scope_digest=SCOPE)))
    value.update(change)
    data = (json.dumps(value, sort_keys=True, separators=(",", ":")) + "\n").encode()
    problem = parse_statement(data)
    assert isinstance(problem, str) and why in problem


def test_a_version_1_statement_claiming_version_2_is_refused() -> None:
    value = json.loads(statement_bytes(V1))
    value["version"] = 2
    data = (json.dumps(value, sort_keys=True, separators=(",", ":")) + "\n").encode()
    assert isinstance(parse_statement(data), str)
