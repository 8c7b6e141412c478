"""The clock and the one UTC timestamp format (``YYYY-MM-DDTHH:MM:SSZ``).

Every time PlanGate writes (record ``issued_at``, ledger ``at``, override
expiry, run logs) uses :data:`UTC_FORMAT`, and every time it reads is checked
with :func:`is_utc_timestamp`. Pure rules never read the clock: services read it
here and pass the value in.

Light on purpose: :mod:`datetime` is imported only by the functions that
return or take a ``datetime``; the text clock uses :mod:`time` alone.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from plangate.shapes import is_utc_timestamp_shape

if TYPE_CHECKING:
    from datetime import datetime

UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
"""The one timestamp format: UTC to the second."""

_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def utc_now() -> datetime:
    """The current time as an aware UTC datetime."""
    from datetime import UTC, datetime

    return datetime.now(UTC)


def utc_now_text() -> str:
    """The current time as :data:`UTC_FORMAT` text, without importing :mod:`datetime`."""
    return time.strftime(UTC_FORMAT, time.gmtime())


def format_utc(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` of an aware datetime, in UTC; a naive one is refused."""
    from datetime import UTC

    if moment.tzinfo is None:
        raise ValueError("times must be timezone-aware")
    return moment.astimezone(UTC).strftime(UTC_FORMAT)


def parse_utc(text: object) -> datetime | None:
    """The aware datetime of a :data:`UTC_FORMAT` text; None for anything else."""
    if not is_utc_timestamp(text):
        return None
    from datetime import UTC, datetime

    assert isinstance(text, str)  # noqa: S101 - is_utc_timestamp checked it
    return datetime(
        int(text[0:4]), int(text[5:7]), int(text[8:10]),
        int(text[11:13]), int(text[14:16]), int(text[17:19]), tzinfo=UTC,
    )


def is_utc_timestamp(value: object) -> bool:
    """``YYYY-MM-DDTHH:MM:SSZ`` exactly, and a real calendar instant (no leap seconds).

    Checked by hand rather than with :mod:`datetime` to keep the verify path light.
    """
    if not isinstance(value, str) or not is_utc_timestamp_shape(value):
        return False
    year, month, day = int(value[0:4]), int(value[5:7]), int(value[8:10])
    hour, minute, second = int(value[11:13]), int(value[14:16]), int(value[17:19])
    if year < 1 or not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 59:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == 2 and leap else _DAYS_IN_MONTH[month - 1]
    return 1 <= day <= days
