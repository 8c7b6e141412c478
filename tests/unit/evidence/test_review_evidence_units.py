"""Adversarial review, unit level: merge_ready must bind the approval; privacy keys."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.delivery.log import seal_entries
from plangate.evidence.privacy import output_problems
from plangate.evidence.producer import binds_approval, derive_run
from plangate.forbidden_keys import ACCOUNT_KEYS, PRIVATE_KEYS, SECRET_KEYS, key_class

HEAD = "b" * 40
SOURCE = "c" * 40
PLAN = "sha256:" + "1" * 64
PACKAGE = "sha256:" + "2" * 64
APPROVAL = {"plan_hash": PLAN, "plan_package_hash": PACKAGE, "source_sha": SOURCE}


def merge_record(**changes):
    record = {
        "pr_number": 7,
        "head_sha": HEAD,
        "check_summary": {"ci": "success"},
        "review_disposition": {},
        "round": 0,
        "plan_hash": PLAN,
        "plan_package_hash": PACKAGE,
        "source_sha": SOURCE,
    }
    record.update(changes)
    return record


def entries(record):
    state = {"kind": "state", "state": "MERGE_READY", "pr_number": 7, "head_sha": HEAD,
             "reasons": []}
    return seal_entries([state, {"kind": "merge_ready", "record": record}], prev=None,
                        at="2026-12-02T10:00:00Z")


def test_bound_merge_ready_is_terminal():
    run = derive_run("AUTO_APPROVED", entries(merge_record()), APPROVAL)
    assert run.terminal_state == "MERGE_READY"
    assert run.unbound_merge_ready is False


@pytest.mark.parametrize(
    "changes",
    [
        {"plan_hash": "sha256:" + "9" * 64},
        {"plan_package_hash": "sha256:" + "9" * 64},
        {"source_sha": "d" * 40},
    ],
)
def test_merge_ready_of_another_approval_is_not_terminal(changes):
    run = derive_run("AUTO_APPROVED", entries(merge_record(**changes)), APPROVAL)
    assert run.terminal_state is None
    assert run.unbound_merge_ready is True
    assert run.ci_outcomes == "unavailable"


@pytest.mark.parametrize(
    ("record_source", "bound"),
    [(SOURCE, True), (SOURCE[:7], True), (SOURCE[:6], False), ("d" * 7, False), (None, False)],
)
def test_abbreviated_source_sha_binds_only_as_a_prefix_of_at_least_seven(record_source, bound):
    approval = {**APPROVAL, "source_sha": record_source}
    assert binds_approval(merge_record(), approval) is bound


# --- privacy keys in any spelling ----------------------------------------------------


def _respell(key: str, style: int) -> str:
    parts = key.split("_")
    if style == 0:
        return key.upper()
    if style == 1:
        return parts[0] + "".join(p.title() for p in parts[1:])  # camelCase
    if style == 2:
        return "-".join(parts)
    return ".".join(p.title() for p in parts)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(SECRET_KEYS | PRIVATE_KEYS | ACCOUNT_KEYS)), st.integers(0, 3))
def test_every_listed_key_is_found_in_any_spelling(key, style):
    expected = ("secret" if key in SECRET_KEYS else "private" if key in PRIVATE_KEYS
                else "account")
    assert key_class(_respell(key, style)) == expected


@pytest.mark.parametrize(
    "key", ["access_token", "githubToken", "client_secret", "db_password", "private_key",
            "aws_secret_access_key", "refresh-token", "session.cookie", "credentials"],
)
def test_credential_suffixes_are_forbidden(key):
    assert key_class(key) == "secret"
    assert output_problems({"routing_decisions": [{key: "x"}]})


@pytest.mark.parametrize(
    "key", ["route", "max_tokens", "token_count", "plan_hash", "evidence_ref", "reviewer",
            "check_summary", "keyword", "user_names_count"],
)
def test_ordinary_keys_are_not_flagged(key):
    assert key_class(key) is None
