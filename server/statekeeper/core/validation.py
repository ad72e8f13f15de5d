"""Field checks shared by every capability. Each raises an error naming the
request field, so a caller always learns which input was wrong."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from statekeeper.core.errors import InvalidArgumentError, LimitExceededError
from statekeeper.core.limits import Limits

_ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]+$")


def check_id(field: str, value: str, limits: Limits, required: bool = True) -> None:
    """Ids are 1..max_id_length characters of [A-Za-z0-9._:-]."""
    if not value:
        if required:
            raise InvalidArgumentError(field, "is required")
        return
    if len(value) > limits.max_id_length:
        raise InvalidArgumentError(field, f"is longer than {limits.max_id_length} characters")
    if not _ID_PATTERN.match(value):
        raise InvalidArgumentError(field, "may only contain letters, digits and . _ : -")


def check_text(field: str, value: str, max_bytes: int) -> None:
    size = len(value.encode("utf-8"))
    if size > max_bytes:
        raise LimitExceededError(field, max_bytes, f"is {size} bytes")


def check_metadata(field: str, metadata: Mapping[str, str], limits: Limits) -> None:
    if len(metadata) > limits.max_metadata_entries:
        raise LimitExceededError(field, limits.max_metadata_entries, f"has {len(metadata)} entries")
    for key, value in metadata.items():
        if not key:
            raise InvalidArgumentError(field, "keys must not be empty")
        check_text(f"{field}[{key!r}]", key, limits.max_metadata_key_bytes)
        check_text(f"{field}[{key!r}]", value, limits.max_metadata_value_bytes)


def check_json_size(field: str, value: Any, max_bytes: int) -> None:
    check_text(field, json.dumps(value, separators=(",", ":")), max_bytes)


def check_count(field: str, items: Sequence[Any], limit: int) -> None:
    if len(items) > limit:
        raise LimitExceededError(field, limit, f"has {len(items)} items")


def check_non_negative(field: str, value: float) -> None:
    if value < 0:
        raise InvalidArgumentError(field, "must not be negative")


def page_size(field: str, requested: int, limits: Limits, default: int | None = None) -> int:
    """AIP-158: 0 means the default, negative is an error, big is clamped."""
    check_non_negative(field, requested)
    if requested == 0:
        return default if default is not None else limits.default_page_size
    return min(requested, limits.max_page_size)


# ----- values of any request field (applied to every RPC by the api layer) -------------

# Timestamps must convert to int64 nanoseconds since the epoch (some stores and
# every `Timestamp.ToNanoseconds()` do), so the range is the one int64 nanoseconds
# cover, rounded in to whole years: 1678-01-01T00:00:00Z .. 2261-12-31T23:59:59Z.
MIN_TIMESTAMP_SECONDS = -9_214_560_000
MAX_TIMESTAMP_SECONDS = 9_214_646_399
# Durations are added to "now" and the sum must stay a valid timestamp: 100 years
# (of 365.25 days) keeps now + duration far inside the range above.
MAX_DURATION_SECONDS = 3_155_760_000
_NANOS_PER_SECOND = 1_000_000_000


def check_duration(field: str, seconds: int, nanos: int) -> None:
    """A google.protobuf.Duration as the well-known type defines it (nanos
    within +-999,999,999 and of the sign of seconds), not negative (no
    duration of the contract means "before now") and at most 100 years."""
    if not -_NANOS_PER_SECOND < nanos < _NANOS_PER_SECOND:
        raise InvalidArgumentError(field, f"nanos {nanos} is outside [-999999999, 999999999]")
    if (seconds < 0 < nanos) or (nanos < 0 < seconds):
        raise InvalidArgumentError(field, "seconds and nanos must have the same sign")
    if seconds < 0 or nanos < 0:
        raise InvalidArgumentError(field, "must not be negative")
    if seconds > MAX_DURATION_SECONDS or (seconds == MAX_DURATION_SECONDS and nanos):
        raise InvalidArgumentError(field, f"must be at most {MAX_DURATION_SECONDS}s (100 years)")


def check_timestamp(field: str, seconds: int, nanos: int) -> None:
    """A google.protobuf.Timestamp with nanos in [0, 999,999,999] between
    1678-01-01 and 2261-12-31 (UTC): what int64 nanoseconds can hold."""
    if not 0 <= nanos < _NANOS_PER_SECOND:
        raise InvalidArgumentError(field, f"nanos {nanos} is outside [0, 999999999]")
    if not MIN_TIMESTAMP_SECONDS <= seconds <= MAX_TIMESTAMP_SECONDS:
        raise InvalidArgumentError(
            field, "must be between 1678-01-01T00:00:00Z and 2261-12-31T23:59:59Z"
        )


def check_characters(field: str, value: str) -> None:
    """No NUL in text: PostgreSQL cannot store it (in text or jsonb), so both
    backends refuse it alike."""
    if "\x00" in value:
        raise InvalidArgumentError(field, "must not contain NUL characters (U+0000)")


def check_finite(field: str, value: float) -> None:
    """Numbers are finite: NaN and infinities have no JSON form and no order."""
    if not math.isfinite(value):
        raise InvalidArgumentError(field, f"must be a finite number, not {value}")
