"""Redaction, forbidden keys and the output backstop of RunEvidence."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.evidence.privacy import (
    find_forbidden_keys,
    output_problems,
    redact,
    redact_tree,
)
from plangate.forbidden_keys import ACCOUNT_KEYS, PRIVATE_KEYS, SECRET_KEYS


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        (
            "https://github.com/acme/plangate/pull/940#issuecomment-5140067809",
            "pr:940#comment:5140067809",
            "privacy_url_reduced",
        ),
        ("see https://github.com/acme/plangate/pull/12 ok", "see pr:12 ok", "privacy_url_reduced"),
        ("http://example.com/a", "ref:redacted", "privacy_url_reduced"),
        ("/Users/alice/secret.txt", "path:redacted", "privacy_absolute_path"),
        ("failed at /tmp/x/y.py line 3", "failed at path:redacted line 3", "privacy_absolute_path"),
        ("(/etc/passwd)", "(path:redacted)", "privacy_absolute_path"),
        ("thanks @alice-b", "thanks account:redacted", "privacy_account_handle"),
        ("mirror at github.com/acme/x", "mirror at ref:redacted", "privacy_url_reduced"),
        ("ssh://git@host/x", "ref:redacted", "privacy_url_reduced"),
    ],
)
def test_redaction(text, expected, kind):
    out, escalations = redact(text)
    assert out == expected
    assert [k for k, _ in escalations] == [kind]


@pytest.mark.parametrize(
    "text", ["src/app/x.py", "a@b.com", "sha256:" + "a" * 64, "docs/working/TASK-0001/x", ""]
)
def test_harmless_text_is_unchanged(text):
    assert redact(text) == (text, [])


def test_forbidden_and_account_keys_found_at_any_depth():
    # separators do not hide a key: user_name is the username account key
    value = {"a": [{"b": {"API-KEY": 1}}], "Login": 2, "fine": {"user_names_count": 3},
             "also": {"user_name": 4}}
    assert find_forbidden_keys(value, "x") == ["x: API-KEY", "x: Login", "x: user_name"]


def test_constants():
    assert len(ACCOUNT_KEYS) == 8
    assert {
        "file_path",
        "stack_trace",
        "stdout",
        "api_key",
        "user_prompt",
        "absolute_path",
    } <= SECRET_KEYS | PRIVATE_KEYS


def test_backstop():
    assert output_problems({"a": "ok", "b": ["src/x"]}) == []
    problems = output_problems({"a": "/abs", "b": [{"user": 1}], "c": "x://y", "d": {"stderr": ""}})
    assert len(problems) == 4


def test_redact_tree_keeps_keys_and_types():
    value = {"k": ["/tmp/x", 1, None, {"n": "@bob"}]}
    out, escalations = redact_tree(value)
    assert out == {"k": ["path:redacted", 1, None, {"n": "account:redacted"}]}
    assert len(escalations) == 2


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"ab/:@.#-_ \nUsershtp19", "github.com", "://", "https://", "/Users/"]),
        max_size=20,
    ).map("".join)
)
def test_redacted_text_always_passes_the_backstop(text):
    out, _ = redact(text)
    assert output_problems({"observation": out}) == [], (text, out)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_redaction_is_idempotent(text):
    once, _ = redact(text)
    twice, escalations = redact(once)
    assert twice == once
    assert escalations == []
