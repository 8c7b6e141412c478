"""Fixed string shapes, checked without regular expressions.

Each function accepts exactly the strings its documented pattern accepts with
``re.fullmatch`` (a property test compares them). Compiling a regular expression
costs 100-250 µs in every new process; these shapes are checked on every hook
call, every record read and every ledger entry, so they are plain string tests.
"""

from __future__ import annotations

_LOWER_HEX = "0123456789abcdef"
_DIGITS = "0123456789"
_SNAKE_TAIL = "abcdefghijklmnopqrstuvwxyz0123456789_"

TASK_PREFIX = "TASK-"


def is_lower_hex(value: str, low: int, high: int) -> bool:
    """``[0-9a-f]{low,high}``: lowercase hexadecimal of ``low`` to ``high`` characters."""
    # str.strip removes every leading and trailing character of the set: nothing is
    # left exactly when every character belongs to it.
    return low <= len(value) <= high and not value.strip(_LOWER_HEX)


def is_full_sha(value: str) -> bool:
    """``[0-9a-f]{40}|[0-9a-f]{64}``: a full SHA-1 or SHA-256 object id."""
    return len(value) in (40, 64) and not value.strip(_LOWER_HEX)


def is_short_sha(value: str) -> bool:
    """``[0-9a-f]{7,64}``: an abbreviated or full object id."""
    return is_lower_hex(value, 7, 64)


def is_source_sha(value: str) -> bool:
    """``[0-9a-f]{7,40}``: the source commit of a c3-prime record (abbreviated or SHA-1)."""
    return is_lower_hex(value, 7, 40)


def is_sha256_digest(value: str) -> bool:
    """``sha256:[0-9a-f]{64}``: a digest string."""
    return len(value) == 71 and value.startswith("sha256:") and not value[7:].strip(_LOWER_HEX)


def is_task_id(value: str) -> bool:
    """``TASK-[0-9]{4}``: a task id."""
    return len(value) == 9 and value.startswith(TASK_PREFIX) and not value[5:].strip(_DIGITS)


def is_snake_kind(value: str) -> bool:
    """``[a-z][a-z0-9_]{0,63}``: a ledger entry kind."""
    return (
        0 < len(value) <= 64
        and "a" <= value[0] <= "z"
        and not value[1:].strip(_SNAKE_TAIL)
    )


# Every ASCII digit becomes "0" and no other byte does: an ASCII timestamp has the shape
# exactly when its translation is the template (one C-level pass over bytes, faster than a
# compiled pattern; ledger verify checks the time of every entry).
_DIGITS_TO_ZERO = bytes.maketrans(_DIGITS.encode("ascii"), b"0" * len(_DIGITS))
_UTC_TEMPLATE = b"0000-00-00T00:00:00Z"


def is_utc_timestamp_shape(value: str) -> bool:
    """``[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z`` (the shape only; the
    calendar check is :func:`plangate.clock.is_utc_timestamp`)."""
    return (
        len(value) == 20
        and value.isascii()
        and value.encode("ascii").translate(_DIGITS_TO_ZERO) == _UTC_TEMPLATE
    )
