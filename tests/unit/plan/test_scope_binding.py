"""The scope's digest, its matching rules, and whether a record approved this scope."""

from __future__ import annotations

import hashlib
import json

import pytest

from plangate.plan.scope import (
    SCOPE_DIGEST_MISMATCH,
    SCOPE_NOT_APPROVED,
    SCOPE_UNDEFINED,
    TaskScope,
    check_scope_binding,
    derive_scope,
    scope_digest,
)

DEFINED = TaskScope(("src/**", "README.md"), None, ("src/secret",))


def _independent_digest(allowed: list[str], denied: list[str]) -> str:
    # RFC 8785 canonical JSON of an ASCII string-list map is sorted keys, no blanks.
    text = json.dumps({"allowed": allowed, "denied": denied}, sort_keys=True,
                      separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_the_reason_codes_are_their_names() -> None:
    assert (SCOPE_UNDEFINED, SCOPE_NOT_APPROVED, SCOPE_DIGEST_MISMATCH) == (
        "SCOPE_UNDEFINED", "SCOPE_NOT_APPROVED", "SCOPE_DIGEST_MISMATCH")
    assert derive_scope(None).problem is not None
    assert derive_scope(None).problem.code == "SCOPE_UNDEFINED"  # type: ignore[union-attr]


def test_the_digest_is_of_both_lists_in_plan_order() -> None:
    assert scope_digest(["b", "a"], ["c"]) == _independent_digest(["b", "a"], ["c"])
    assert scope_digest(["a"], []) != scope_digest([], ["a"])
    assert scope_digest(["a", "b"], []) != scope_digest(["b", "a"], [])
    assert DEFINED.digest == _independent_digest(["src/**", "README.md"], ["src/secret"])


def test_an_undefined_scope_has_no_digest() -> None:
    assert TaskScope(None).digest is None
    assert TaskScope(()).digest == _independent_digest([], [])


def test_denies_names_the_pattern_above_a_path_in_any_case() -> None:
    assert DEFINED.denies("src/secret") == "src/secret"
    assert DEFINED.denies("src/secret/key.pem") == "src/secret"
    assert DEFINED.denies("SRC/Secret/key.pem") == "src/secret"
    assert DEFINED.denies("src/app.py") is None
    assert TaskScope(("src/**",)).denies("src/secret") is None


def test_outside_lists_exactly_the_paths_not_allowed() -> None:
    paths = ["src/app.py", "src/secret/x", "docs/a.md", "README.md"]
    assert DEFINED.outside(paths) == ["src/secret/x", "docs/a.md"]
    assert DEFINED.outside([]) == []
    assert TaskScope(None).outside(["README.md"]) == ["README.md"]


def test_a_record_with_the_scopes_digest_approves_it() -> None:
    assert check_scope_binding(DEFINED, {"scope_digest": DEFINED.digest}) is None


@pytest.mark.parametrize("record", [{}, {"other": 1}, None, "scope_digest", ["scope_digest"]])
def test_a_record_without_a_digest_did_not_approve_the_scope(record: object) -> None:
    reason = check_scope_binding(DEFINED, record)
    assert reason is not None and reason.code == SCOPE_NOT_APPROVED
    assert reason.hint


@pytest.mark.parametrize("recorded", [
    "sha256:" + "0" * 64,
    "sha256:" + "A" * 64,
    "sha256:short",
    "",
    42,
])
def test_another_or_malformed_digest_is_a_mismatch(recorded: object) -> None:
    reason = check_scope_binding(DEFINED, {"scope_digest": recorded})
    assert reason is not None and reason.code == SCOPE_DIGEST_MISMATCH
    assert str(DEFINED.digest) in reason.message


def test_the_digest_of_a_wider_scope_does_not_approve_a_narrower_one() -> None:
    wider = TaskScope(("src/**", "README.md"), None, ())
    reason = check_scope_binding(DEFINED, {"scope_digest": wider.digest})
    assert reason is not None and reason.code == SCOPE_DIGEST_MISMATCH


def test_an_undefined_scope_is_left_to_the_caller() -> None:
    assert check_scope_binding(TaskScope(None), {}) is None


def test_a_denied_top_level_directory_denies_everything_below_it() -> None:
    scope = TaskScope(("**",), None, ("vendor",))
    assert scope.denies("vendor/lib/x.py") == "vendor"
    assert not scope.allows("vendor/lib/x.py")
    assert scope.allows("src/vendor.py")
