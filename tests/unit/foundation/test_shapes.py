"""Each string shape accepts exactly what its documented pattern accepts with ``re.fullmatch``."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from plangate import shapes

SHAPES: list[tuple[Callable[[str], bool], str]] = [
    (shapes.is_full_sha, r"[0-9a-f]{40}|[0-9a-f]{64}"),
    (shapes.is_short_sha, r"[0-9a-f]{7,64}"),
    (shapes.is_source_sha, r"[0-9a-f]{7,40}"),
    (shapes.is_sha256_digest, r"sha256:[0-9a-f]{64}"),
    (shapes.is_task_id, r"TASK-[0-9]{4}"),
    (shapes.is_snake_kind, r"[a-z][a-z0-9_]{0,63}"),
    (
        shapes.is_utc_timestamp_shape,
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z",
    ),
]

HEX40 = "0123456789abcdef" * 2 + "01234567"
HEX64 = "0123456789abcdef" * 4

# Near misses: one character off, one too many or too few, a trailing newline (``$``
# would accept it, fullmatch does not), Unicode digits and full-width letters.
NEAR_MISSES = [
    "", HEX40, HEX64, HEX40[:-1], HEX40 + "0", HEX64 + "0", HEX64[:-1], HEX40.upper(),
    HEX40[:7], HEX40[:6], HEX40 + "\n", "\n" + HEX40, HEX40[:39] + "g", HEX40[:39] + "\uff41",
    "sha256:" + HEX64, "sha256:" + HEX64 + "\n", "SHA256:" + HEX64, "sha256:" + HEX40,
    "sha256:" + HEX64[:-1] + "\u0661", "TASK-0001", "TASK-001", "TASK-00001", "task-0001",
    "TASK-\u0661\u0662\u0663\u0664", "TASK-0001\n", " TASK-0001", "TASK-00a1", "a", "a" * 64,
    "a" * 65, "a_b9", "_ab", "9ab", "ab-c", "\u00e9t\u00e9", "kind\n",
    "2026-12-03T15:56:47Z", "2026-12-03T15:56:47Z\n", "2026-12-03 15:56:47Z",
    "2026-12-03T15:56:47", "\u0662026-12-03T15:56:47Z", "2026-1a-03T15:56:47Z",
    "2026-12-03T15:56:4Z7", "12026-12-03T15:56:47Z", "2026-12-03T15-56-47Z",
]


@pytest.mark.parametrize(("shape", "pattern"), SHAPES, ids=[s.__name__ for s, _ in SHAPES])
@pytest.mark.parametrize("text", NEAR_MISSES)
def test_shape_agrees_with_its_pattern_on_near_misses(
    shape: Callable[[str], bool], pattern: str, text: str
) -> None:
    assert shape(text) is (re.fullmatch(pattern, text) is not None)


ALPHABET = st.sampled_from(list("0123456789abcdefgzAF_-:TZ sha256TASK\n\u0661\uff10\u00e9"))


@pytest.mark.parametrize(("shape", "pattern"), SHAPES, ids=[s.__name__ for s, _ in SHAPES])
@settings(max_examples=400, deadline=None)
@given(text=st.text(ALPHABET, max_size=80))
@example(text="")
def test_shape_agrees_with_its_pattern_on_any_text(
    shape: Callable[[str], bool], pattern: str, text: str
) -> None:
    assert shape(text) is (re.fullmatch(pattern, text) is not None)


@pytest.mark.parametrize(("shape", "pattern"), SHAPES, ids=[s.__name__ for s, _ in SHAPES])
def test_shape_agrees_with_its_pattern_on_generated_matches(
    shape: Callable[[str], bool], pattern: str
) -> None:
    # hypothesis.from_regex builds strings that do match: each must be accepted.
    @settings(max_examples=200, deadline=None)
    @given(text=st.from_regex(pattern, fullmatch=True))
    def check(text: str) -> None:
        assert shape(text) is (re.fullmatch(pattern, text) is not None)

    check()


def test_shapes_refuse_text_around_a_valid_value() -> None:
    assert shapes.is_full_sha(HEX40)
    assert not shapes.is_full_sha(" " + HEX40)
    assert shapes.is_task_id("TASK-0042")
    assert not shapes.is_task_id("TASK-0042 ")
    assert shapes.is_lower_hex("abc1234", 7, 7)
    assert not shapes.is_lower_hex("abc1234", 8, 9)
