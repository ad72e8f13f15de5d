"""JSON encodings shared by every backend, so that all store the same bytes."""

from __future__ import annotations

import json
from typing import Any

from statekeeper.core.sessions.models import (
    ChangeKind,
    SessionRecord,
    SessionVersion,
    ToolCall,
)

# One encoder for every call: json.dumps with options builds a new one each time.
_ENCODER = json.JSONEncoder(separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def dumps(value: Any) -> str:
    """Compact, key-sorted JSON: stable bytes for equal values."""
    return _ENCODER.encode(value)


def tool_calls_to_json(calls: tuple[ToolCall, ...]) -> str:
    return dumps([{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls])


def tool_calls_from_json(text: str | None) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(**call) for call in json.loads(text or "[]"))


def record_to_json(record: SessionRecord) -> str:
    return dumps(record.to_json())


def record_from_json(text: str) -> SessionRecord:
    return SessionRecord.from_json(json.loads(text))


def version_from_row(
    version: int, parent_version: int, change_kind: int, create_time: float, snapshot: str
) -> SessionVersion:
    return SessionVersion(
        version=version,
        parent_version=parent_version,
        change_kind=ChangeKind(change_kind),
        create_time=create_time,
        snapshot=record_from_json(snapshot),
    )
