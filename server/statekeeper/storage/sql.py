"""SQL shared by the SQL backends (SQLite and PostgreSQL), so that both
filter and order the same way. `mark(n)` renders the n-th (1-based)
placeholder of the backend's dialect."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from statekeeper.core.audit.models import AuditFilter, AuditRecord
from statekeeper.core.sessions.models import (
    Message,
    MessageMeta,
    Role,
    SessionCursor,
    SessionFilter,
    SessionVersion,
    ToolCall,
)
from statekeeper.storage import codec

Mark = Callable[[int], str]


class Row(Protocol):
    """A result row addressable by column name (sqlite3.Row, asyncpg.Record)."""

    def __getitem__(self, key: str, /) -> Any: ...

    def keys(self) -> Any: ...


MESSAGE_COLUMNS = (
    "sequence, message_id, role, content, name, tool_calls, tool_call_id, metadata, "
    "token_count, create_time, rolled_back"
)

# Written with every message, never read back into a `Message`: the ids of
# the tool calls an ASSISTANT message makes, as a JSON array ('' for none), so
# that planning a window pairs calls with their results without decoding
# `tool_calls` (with its arguments) for every row.
MESSAGE_INSERT_COLUMNS = MESSAGE_COLUMNS + ", tool_call_ids"

# What planning a compaction reads of a message (see `meta_from_row`).
WINDOW_META_COLUMNS = "sequence, role, token_count, tool_call_ids, tool_call_id"

AUDIT_COLUMNS = (
    "tenant, principal, service, method, entity_type, entity_id, revision, time, summary"
)


def message_values(tenant: str, session_id: str, message: Message) -> tuple[object, ...]:
    """tenant, session_id and the values of MESSAGE_INSERT_COLUMNS for `message`."""
    return (
        tenant,
        session_id,
        message.sequence,
        message.message_id,
        int(message.role),
        message.content,
        message.name,
        codec.tool_calls_to_json(message.tool_calls),
        message.tool_call_id,
        codec.dumps(message.metadata),
        message.token_count,
        message.create_time,
        message.rolled_back,
        call_ids_text(message),
    )


def call_ids_text(message: Message) -> str:
    """The `tool_call_ids` column of a message."""
    if not message.tool_calls:
        return ""
    return codec.dumps([call.id for call in message.tool_calls])


def meta_from_row(row: Row) -> MessageMeta:
    """A MessageMeta from a row with WINDOW_META_COLUMNS."""
    ids = row["tool_call_ids"]
    return MessageMeta(
        sequence=int(row["sequence"]),
        role=Role(row["role"]),
        token_count=int(row["token_count"]),
        tool_call_ids=tuple(json.loads(ids)) if ids else (),
        tool_call_id=row["tool_call_id"],
    )


def message_from_row(row: Row) -> Message:
    return Message(
        sequence=int(row["sequence"]),
        message_id=row["message_id"],
        role=Role(row["role"]),
        content=row["content"],
        name=row["name"],
        tool_calls=_tool_calls(row["tool_calls"]),
        tool_call_id=row["tool_call_id"],
        metadata=_metadata(row["metadata"]),
        token_count=int(row["token_count"]),
        create_time=float(row["create_time"]),
        rolled_back=bool(row["rolled_back"]),
    )


# Most messages call no tool and carry no metadata; a window returns ~200
# of them per call, so skip the JSON decoder for those.
def _tool_calls(text: str) -> tuple[ToolCall, ...]:
    return () if text == "[]" else codec.tool_calls_from_json(text)


def _metadata(text: str) -> dict[str, str]:
    return {} if text == "{}" else dict(json.loads(text))


def version_from_row(row: Row) -> SessionVersion:
    return codec.version_from_row(
        int(row["version"]),
        int(row["parent_version"]),
        int(row["change_kind"]),
        float(row["create_time"]),
        row["snapshot"],
    )


def audit_values(audit: AuditRecord, tenant: str) -> tuple[object, ...]:
    """The values of AUDIT_COLUMNS for `audit`, stored under `tenant`."""
    return (
        tenant,
        audit.principal,
        audit.service,
        audit.method,
        audit.entity_type,
        audit.entity_id,
        audit.revision,
        audit.time,
        audit.summary,
    )


def audit_query(
    tenant: str | None, audit_filter: AuditFilter, before_id: int, limit: int, mark: Mark
) -> tuple[str, list[object]]:
    """SELECT of audit records, newest first."""
    clauses: list[str] = []
    params: list[object] = []

    def add(clause: str, value: object) -> None:
        params.append(value)
        clauses.append(clause.format(mark(len(params))))

    if tenant is not None:
        add("tenant = {}", tenant)
    for name in ("entity_type", "entity_id", "principal", "service", "method"):
        if value := getattr(audit_filter, name):
            add(f"{name} = {{}}", value)
    if audit_filter.start_time:
        add("time >= {}", audit_filter.start_time)
    if audit_filter.end_time:
        add("time < {}", audit_filter.end_time)
    if before_id > 0:
        add("audit_id < {}", before_id)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    params.append(limit)
    sql = (
        f"SELECT audit_id, {AUDIT_COLUMNS} FROM audit_log{where}"
        f" ORDER BY audit_id DESC LIMIT {mark(len(params))}"
    )
    return sql, params


def audit_from_row(row: Row) -> AuditRecord:
    """An AuditRecord from a row with audit_id and AUDIT_COLUMNS."""
    return AuditRecord(
        audit_id=int(row["audit_id"]),
        tenant=row["tenant"],
        principal=row["principal"],
        service=row["service"],
        method=row["method"],
        entity_type=row["entity_type"],
        entity_id=row["entity_id"],
        revision=int(row["revision"]),
        time=float(row["time"]),
        summary=row["summary"],
    )


def session_list_query(
    tenant: str,
    session_filter: SessionFilter,
    now: float,
    after: SessionCursor | None,
    limit: int,
    mark: Mark,
) -> tuple[str, list[object]]:
    """SELECT of live sessions, newest first (see SessionStore.list_sessions)."""
    params: list[object] = [tenant, now]
    clauses = [f"tenant = {mark(1)}", f"(expire_time IS NULL OR expire_time > {mark(2)})"]

    def add(clause: str, *values: object) -> None:
        marks = []
        for value in values:
            params.append(value)
            marks.append(mark(len(params)))
        clauses.append(clause.format(*marks))

    if session_filter.user_id:
        add("user_id = {}", session_filter.user_id)
    if session_filter.agent_id:
        add("agent_id = {}", session_filter.agent_id)
    if session_filter.status is not None:
        add("status = {}", int(session_filter.status))
    if after is not None:
        add(
            "(create_time < {} OR (create_time = {} AND session_id < {}))",
            after.create_time,
            after.create_time,
            after.session_id,
        )
    params.append(limit)
    sql = (
        f"SELECT state FROM sessions WHERE {' AND '.join(clauses)}"
        f" ORDER BY create_time DESC, session_id DESC LIMIT {mark(len(params))}"
    )
    return sql, params


def sqlite_mark(_: int) -> str:
    return "?"


def postgres_mark(index: int) -> str:
    return f"${index}"
