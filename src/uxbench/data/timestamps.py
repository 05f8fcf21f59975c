"""Timestamps: one reading for the dataset loader and the log miner.

Accepted: ISO 8601 (``2024-05-01T10:00:00+08:00``, ``...Z``, ``2024-05-01 10:00:00``, a fraction of any
length, a date alone), the same with slashes (``2024/05/01 10:00:00``), epoch seconds or milliseconds as a
number or digit string (above 10^11 they are milliseconds), and a `datetime` (Parquet timestamps). The
result is always timezone-aware: a time without a zone is read as UTC, so times from different sources can
be subtracted (only differences and dates are used).

`parse_timestamp` raises `DataError` naming the field (never quoting the value) for anything else; with
``lenient=True`` it returns None instead, for places where a bad time must not drop a record (the dataset's
optional message times).
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

from uxbench.errors import DataError

EPOCH_MS_THRESHOLD = 10**11
"""Epoch numbers above this are milliseconds (10^11 seconds is the year 5138)."""
_MAX_EPOCH_S = 253402300799  # 9999-12-31T23:59:59Z
_LOOSE_ISO = re.compile(r"(\d{4})[-/](\d\d)[-/](\d\d)(?:[T ](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?)?(.*)")


class _Invalid(ValueError):
    pass


def _from_epoch(seconds: float) -> datetime:
    if not math.isfinite(seconds) or seconds < 0:
        raise _Invalid("an epoch timestamp must be a non-negative number")
    if seconds > EPOCH_MS_THRESHOLD:
        seconds /= 1000.0
    if seconds > _MAX_EPOCH_S:
        raise _Invalid("the epoch timestamp is out of range")
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _from_text(text: str) -> datetime:
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    # Slashes, fractions that are not 3 or 6 digits, and what Python 3.10's fromisoformat rejects.
    match = _LOOSE_ISO.fullmatch(text)
    if match:
        y, mo, d, h, mi, sec, frac, zone = match.groups()
        try:
            return datetime.fromisoformat(
                f"{y}-{mo}-{d}T{h or '00'}:{mi or '00'}:{sec or '00'}.{((frac or '') + '000000')[:6]}{zone}"
            )
        except ValueError:
            pass
    raise _Invalid("not an ISO 8601 timestamp or epoch number")


def _parse(value: object) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, bool):
        raise _Invalid("a timestamp must be text or a number, not a boolean")
    elif isinstance(value, (int, float)):
        parsed = _from_epoch(float(value))
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            number = float(text) if text.isascii() else None  # float() also reads non-ASCII digits
        except ValueError:
            number = None
        parsed = _from_epoch(number) if number is not None else _from_text(text)
    else:
        raise _Invalid(f"a timestamp must be text or a number, got {type(value).__name__}")
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def parse_timestamp(value: object, field: str = "created_at", *, lenient: bool = False) -> datetime | None:
    """An aware datetime (naive times read as UTC), None when absent; see the module docstring."""
    try:
        return _parse(value)
    except (_Invalid, OverflowError, OSError) as exc:
        if lenient:
            return None
        reason = str(exc) if isinstance(exc, _Invalid) else "the timestamp is out of range"
        raise DataError(reason, field=field) from None
