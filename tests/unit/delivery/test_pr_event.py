"""Reading the pull request from a CI event: every field, every bad input, each with its code."""

from __future__ import annotations

import json
from typing import Any

import pytest

from plangate.delivery.pr_event import (
    check_event_name,
    parse_check,
    parse_event,
    snapshot_object,
)
from plangate.delivery.pr_snapshot import parse_snapshot
from plangate.errors import UsageError

BASE = "a" * 40
HEAD = "b" * 40


def event(**pull: Any) -> dict[str, Any]:
    """A ``pull_request`` event as GitHub writes it (only the keys delivery reads, and some)."""
    body: dict[str, Any] = {
        "number": 12,
        "title": "TASK-0001: greet",
        "body": "Implements the greeting.",
        "base": {"ref": "main", "sha": BASE},
        "head": {"ref": "feature", "sha": HEAD},
        "mergeable": None,
        "user": {"login": "alice"},
    }
    body.update(pull)
    return {"action": "synchronize", "number": 12, "pull_request": body}


def data(obj: object) -> bytes:
    return json.dumps(obj).encode()


def code_of(raw: bytes, name: str | None = None) -> str:
    with pytest.raises(UsageError) as info:
        parse_event(raw, name)
    return info.value.code


def test_a_pull_request_event_gives_number_title_body_and_commits() -> None:
    pr = parse_event(data(event()), "pull_request")
    assert (pr.name, pr.number, pr.title, pr.body) == (
        "pull_request", 12, "TASK-0001: greet", "Implements the greeting.")
    assert (pr.base_sha, pr.head_sha, pr.mergeable) == (BASE, HEAD, None)
    assert (pr.review_state, pr.review_sha) == ("", "")


def test_a_null_body_is_empty_and_mergeable_is_read() -> None:
    pr = parse_event(data(event(body=None, mergeable=False)))
    assert (pr.body, pr.mergeable) == ("", False)


def test_a_review_event_gives_the_reviews_state_and_commit() -> None:
    raw = event()
    raw["review"] = {"state": "APPROVED", "commit_id": HEAD}
    pr = parse_event(data(raw))  # no name given: the review object says what it is
    assert (pr.name, pr.review_state, pr.review_sha) == ("pull_request_review", "approved", HEAD)


@pytest.mark.parametrize("name", ["push", "schedule", "workflow_dispatch", "issue_comment"])
def test_an_event_name_that_is_not_a_pull_request_is_refused(name: str) -> None:
    assert code_of(data(event()), name) == "DELIVERY_EVENT_WRONG_TYPE"


def test_an_event_without_a_pull_request_object_is_the_wrong_type() -> None:
    push = {"ref": "refs/heads/main", "after": HEAD, "commits": []}
    assert code_of(data(push)) == "DELIVERY_EVENT_WRONG_TYPE"


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"pull_request": {}, "pull_request": {}}',
    ],
)
def test_malformed_json_is_invalid(raw: bytes) -> None:
    assert code_of(raw) == "DELIVERY_EVENT_INVALID"


@pytest.mark.parametrize(
    "change",
    [
        {"number": 0},
        {"number": "12"},
        {"number": True},
        {"number": 13},  # disagrees with the event's own number
        {"title": None},
        {"body": 5},
        {"base": {"sha": "abc123"}},  # abbreviated: cannot be compared for equality
        {"head": {"sha": HEAD.upper()}},
        {"head": "feature"},
        {"mergeable": "yes"},
    ],
)
def test_a_bad_field_is_invalid(change: dict[str, Any]) -> None:
    assert code_of(data(event(**change))) == "DELIVERY_EVENT_INVALID"


def test_a_review_event_without_a_review_commit_is_invalid() -> None:
    raw = event()
    raw["review"] = {"state": "approved"}
    assert code_of(data(raw), "pull_request_review") == "DELIVERY_EVENT_INVALID"


def test_event_names_of_pull_requests_pass() -> None:
    for name in ("pull_request", "pull_request_target", "pull_request_review"):
        assert check_event_name(name) == name
    assert check_event_name(None) is None
    assert check_event_name("") is None


@pytest.mark.parametrize("text", ["tests", "=success", "tests=", " = "])
def test_a_check_that_is_not_name_equals_conclusion_is_refused(text: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_check(text)
    assert info.value.code == "DELIVERY_CHECK_INVALID"


def test_a_check_is_read_with_its_conclusion_in_lower_case() -> None:
    assert parse_check("tests=SUCCESS") == ("tests", "success")


def test_the_snapshot_built_from_an_event_passes_the_snapshot_contract() -> None:
    pr = parse_event(data(event()))
    obj = snapshot_object(pr, "TASK-0001", ["src/app.py"], mergeable=True,
                          checks=[("tests", "success")], dod_evaluated=True)
    snapshot = parse_snapshot(obj)
    assert (snapshot.pr_number, snapshot.head_sha, snapshot.mergeable) == (12, HEAD, "MERGEABLE")
    assert snapshot.changed_files == ("src/app.py",)
    assert [(c.name, c.sha, c.conclusion) for c in snapshot.checks] == [("tests", HEAD, "success")]
    # No review in a pull_request event: never an approval.
    assert snapshot.review_ok is False


def test_an_approved_review_of_the_head_is_an_approval_and_of_another_commit_is_not() -> None:
    raw = event()
    raw["review"] = {"state": "approved", "commit_id": HEAD}
    assert parse_snapshot(snapshot_object(parse_event(data(raw)), "TASK-0001", ["a"],
                                          mergeable=True)).review_ok
    raw["review"] = {"state": "approved", "commit_id": BASE}
    assert not parse_snapshot(snapshot_object(parse_event(data(raw)), "TASK-0001", ["a"],
                                              mergeable=True)).review_ok


@pytest.mark.parametrize(("flag", "state"), [(True, "MERGEABLE"), (False, "CONFLICTING"),
                                             (None, "UNKNOWN")])
def test_mergeable_unknown_is_never_mergeable(flag: bool | None, state: str) -> None:
    obj = snapshot_object(parse_event(data(event())), "TASK-0001", ["a"], mergeable=flag)
    assert obj["mergeable"] == state
