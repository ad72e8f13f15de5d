"""SQL shared by the SQL backends (SQLite and PostgreSQL), so that both
filter and order the same way. `mark(n)` renders the n-th (1-based)
placeholder of the backend's dialect."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
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

    def __iter__(self) -> Iterator[Any]:
        """The values, in the order of keys() (not a dict's keys)."""
        ...


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


class Where:
    """The conditions of a WHERE clause and their parameters, in the
    placeholders of one dialect (`mark`), so that a query is built once for
    both backends. Parameters are numbered in the order they are added."""

    def __init__(self, mark: Mark) -> None:
        self.mark = mark
        self.clauses: list[str] = []
        self.params: list[object] = []

    def param(self, value: object) -> str:
        """Binds `value`; returns its placeholder."""
        self.params.append(value)
        return self.mark(len(self.params))

    def add(self, clause: str, *values: object) -> None:
        """Adds `clause`, its `{}` replaced by placeholders of `values`."""
        self.clauses.append(clause.format(*(self.param(value) for value in values)))

    def sql(self) -> str:
        """The conditions, joined by AND."""
        return " AND ".join(self.clauses)


def audit_query(
    tenant: str | None, audit_filter: AuditFilter, before_id: int, limit: int, mark: Mark
) -> tuple[str, list[object]]:
    """SELECT of audit records, newest first."""
    where = Where(mark)
    if tenant is not None:
        where.add("tenant = {}", tenant)
    for name in ("entity_type", "entity_id", "principal", "service", "method"):
        if value := getattr(audit_filter, name):
            where.add(f"{name} = {{}}", value)
    if audit_filter.start_time:
        where.add("time >= {}", audit_filter.start_time)
    if audit_filter.end_time:
        where.add("time < {}", audit_filter.end_time)
    if before_id > 0:
        where.add("audit_id < {}", before_id)
    condition = f" WHERE {where.sql()}" if where.clauses else ""
    sql = (
        f"SELECT audit_id, {AUDIT_COLUMNS} FROM audit_log{condition}"
        f" ORDER BY audit_id DESC LIMIT {where.param(limit)}"
    )
    return sql, where.params


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
    where = Where(mark)
    where.add("tenant = {}", tenant)
    where.add("(expire_time IS NULL OR expire_time > {})", now)
    if session_filter.user_id:
        where.add("user_id = {}", session_filter.user_id)
    if session_filter.agent_id:
        where.add("agent_id = {}", session_filter.agent_id)
    if session_filter.status is not None:
        where.add("status = {}", int(session_filter.status))
    if after is not None:
        where.add(
            "(create_time < {} OR (create_time = {} AND session_id < {}))",
            after.create_time,
            after.create_time,
            after.session_id,
        )
    sql = (
        f"SELECT state FROM sessions WHERE {where.sql()}"
        f" ORDER BY create_time DESC, session_id DESC LIMIT {where.param(limit)}"
    )
    return sql, where.params


def sqlite_mark(_: int) -> str:
    return "?"


def sqlite_numbered_mark(index: int) -> str:
    """SQLite's numbered placeholder `?N`: for statements that name one
    parameter more than once, or not in order."""
    return f"?{index}"


def postgres_mark(index: int) -> str:
    return f"${index}"
