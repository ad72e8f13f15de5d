"""How blackboard revision batches and bus messages travel through Redis: compact JSON
encodings both ends of a stream or channel share."""

from __future__ import annotations

import base64
import json
from typing import Any

from statekeeper.core.blackboard.models import (
    Entry,
    Event,
    EventType,
    RevisionBatch,
    Value,
    ValueKind,
)
from statekeeper.core.messagebus.models import AgentMessage, Payload


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _value_json(value: Value | None) -> list[Any] | None:
    if value is None:
        return None
    return [int(value.kind), _b64(value.data), value.content_type, value.schema_version]


def _value_from(raw: list[Any] | None) -> Value | None:
    if raw is None:
        return None
    kind, data, content_type, schema_version = raw
    return Value(ValueKind(kind), base64.b64decode(data), content_type, schema_version)


def _entry_json(entry: Entry | None) -> list[Any] | None:
    if entry is None:
        return None
    return [
        entry.board,
        entry.key,
        _value_json(entry.value),
        entry.create_revision,
        entry.mod_revision,
        entry.version,
        entry.writer_agent_id,
        entry.expire_time,
        entry.update_time,
    ]


def _entry_from(raw: list[Any] | None) -> Entry | None:
    if raw is None:
        return None
    board, key, value, create, mod, version, writer, expire, update = raw
    return Entry(board, key, _value_from(value), create, mod, version, writer, expire, update)


def encode_batch(batch: RevisionBatch) -> bytes:
    """Compact JSON of a committed batch, previous entries included."""
    events = [[int(e.type), _entry_json(e.entry), _entry_json(e.previous)] for e in batch.events]
    body = {
        "t": batch.tenant,
        "b": batch.board,
        "r": batch.revision,
        "c": batch.commit_time,
        "e": events,
    }
    return json.dumps(body, separators=(",", ":")).encode()


def decode_batch(data: bytes) -> RevisionBatch:
    body = json.loads(data)
    events = []
    for kind, entry, previous in body["e"]:
        current = _entry_from(entry)
        assert current is not None, "an event always has an entry"
        events.append(Event(EventType(kind), current, _entry_from(previous)))
    return RevisionBatch(body["t"], body["b"], body["r"], body["c"], tuple(events))


def encode_message(message: AgentMessage) -> dict[str, Any]:
    payload = message.payload
    return {
        "id": message.message_id,
        "to": message.to_agent,
        "from": message.from_agent,
        "type": message.type,
        "payload": [payload.content_type, payload.schema_version, _b64(payload.data)],
        "reply_to": message.reply_to,
        "correlation_id": message.correlation_id,
        "in_reply_to": message.in_reply_to,
        "headers": message.headers,
        "idempotency_key": message.idempotency_key,
        "send_time": message.send_time,
        "visible_time": message.visible_time,
        "expire_time": message.expire_time,
        "max_deliveries": message.max_deliveries,
    }


def decode_message(raw: dict[str, Any]) -> AgentMessage:
    content_type, schema_version, data = raw["payload"]
    return AgentMessage(
        message_id=raw["id"],
        to_agent=raw["to"],
        from_agent=raw["from"],
        type=raw["type"],
        payload=Payload(content_type, schema_version, base64.b64decode(data)),
        reply_to=raw["reply_to"],
        correlation_id=raw["correlation_id"],
        in_reply_to=raw["in_reply_to"],
        headers=dict(raw["headers"]),
        idempotency_key=raw["idempotency_key"],
        send_time=raw["send_time"],
        visible_time=raw["visible_time"],
        expire_time=raw["expire_time"],
        max_deliveries=raw["max_deliveries"],
    )


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
