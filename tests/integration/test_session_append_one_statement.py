"""An append of one message on the embedded store is one statement on the
writer (a TEMP view whose trigger updates the session, inserts its version,
message, receipt and audit record linked from the remembered chain head):
it stores what the separate statements store, keeps the session's
compare-and-swap and request ids, and the audit chain stays intact when
something else moved the head in between (records linked by the trigger,
a write rolled back after linking its own)."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path

import pytest

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import AlreadyExistsError, ConcurrentModificationError, NotFoundError
from statekeeper.core.sessions.models import (
    ChangeKind,
    Message,
    Role,
    SessionChange,
    SessionRecord,
    SessionVersion,
    ToolCall,
)
from statekeeper.storage.embedded.audit_chain import insert_audit_rows
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.sessions_schema import DATABASE_FILE
from statekeeper.storage.sql import AUDIT_COLUMNS, MESSAGE_INSERT_COLUMNS, audit_values
from tests.integration.test_audit_chain import verify

TENANT = "alpha"
UNLINKED_INSERT = f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)"


def audit(session_id: str, revision: int, what: str) -> AuditRecord:
    return AuditRecord(
        tenant=TENANT,
        principal="key-1",
        service="statekeeper.v1.SessionService",
        method="AppendMessages",
        entity_type="session",
        entity_id=session_id,
        revision=revision,
        time=1.7e9 + revision / 3,
        summary=f"{what} \u00e9 'quoted'",
    )


def created(session_id: str) -> SessionVersion:
    record = SessionRecord(session_id=session_id, user_id="u", version=1, create_time=1.7e9)
    return SessionVersion(1, 0, ChangeKind.CREATE, 1.7e9, record)


async def started(path: Path, *session_ids: str) -> tuple[EmbeddedStorage, list[SessionRecord]]:
    """An embedded store on `path` with the sessions created, and their records."""
    storage = EmbeddedStorage(path)
    await storage.start()
    records = []
    for session_id in session_ids:
        await storage.sessions.create_session(TENANT, created(session_id))
        record = await storage.sessions.get_session(TENANT, session_id)
        assert record is not None
        records.append(record)
    return storage, records


def messages_from(first: int, count: int) -> list[Message]:
    """Messages with every column set: a tool call, metadata, non-ASCII."""
    return [
        Message(
            sequence=first + n,
            message_id=uuid.uuid4().hex,
            role=Role.ASSISTANT,
            content=f"message {first + n} \u6f22 'x'",
            name="agent",
            tool_calls=(ToolCall(f"c{first + n}", "lookup", '{"q": 1}'),),
            tool_call_id="",
            metadata={"k": "v"},
            token_count=11,
            create_time=1.7e9 + (first + n) / 7,
        )
        for n in range(count)
    ]


def append(current: SessionRecord, messages: list[Message], request_id: str = "") -> SessionChange:
    last = messages[-1].sequence
    record = current.evolve(
        version=current.version + 1,
        last_sequence=last,
        visible_ranges=((1, last),),
        message_count=current.message_count + len(messages),
        update_time=1.7e9 + last,
    )
    return SessionChange(
        expected_version=current.version,
        record=record,
        version=SessionVersion(record.version, current.version, ChangeKind.APPEND, 1.7e9, record),
        new_messages=tuple(messages),
        request_id=request_id,
        audit=audit(current.session_id, record.version, f"appended {len(messages)}"),
    )


def rows(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(path / DATABASE_FILE) as db:
        return db.execute(sql, params).fetchall()


def typed(columns: str) -> str:
    """Each column and its SQLite type: a value stored as another type
    (a REAL as TEXT, say) is told apart."""
    return ", ".join(f"{c}, typeof({c})" for c in columns.split(", "))


async def appended_one_by_one_and_together(path: Path) -> None:
    storage, (one, two) = await started(path, "one", "two")
    try:
        sessions = storage.sessions
        for message in messages_from(1, 3):
            change = append(one, [message], request_id=f"r{message.sequence}")
            await sessions.apply_change(TENANT, change)
            one = change.record
        together = messages_from(1, 3)
        await sessions.apply_change(TENANT, append(two, together, request_id="r-two"))
        assert await sessions.get_session(TENANT, "one") == one
        stored = await sessions.list_messages(TENANT, "one", 0, 10, False)
        assert [(m.sequence, m.tool_calls, m.metadata) for m in stored] == [
            (n, (ToolCall(f"c{n}", "lookup", '{"q": 1}'),), {"k": "v"}) for n in (1, 2, 3)
        ]
        version = await sessions.get_version(TENANT, "one", 4)
        assert version is not None and version.snapshot == one
        receipt = await sessions.get_append_receipt(TENANT, "r2")
        assert receipt is not None
        assert (receipt.session_id, receipt.first_sequence, receipt.last_sequence) == ("one", 2, 2)
        assert receipt.version == 3
    finally:
        await storage.close()


def test_one_message_appends_store_what_a_larger_append_stores(tmp_path: Path) -> None:
    asyncio.run(appended_one_by_one_and_together(tmp_path))
    columns = typed(MESSAGE_INSERT_COLUMNS).replace("message_id, typeof(message_id), ", "")
    one = rows(tmp_path, f"SELECT {columns} FROM messages WHERE session_id = 'one' ORDER BY 1")
    two = rows(tmp_path, f"SELECT {columns} FROM messages WHERE session_id = 'two' ORDER BY 1")
    assert len(one) == 3 and one == two
    version_columns = typed("parent_version, change_kind, create_time, snapshot")
    versions = rows(
        tmp_path,
        f"SELECT {version_columns} FROM session_versions WHERE session_id = 'one' AND version = 4",
    )
    (state,) = rows(tmp_path, "SELECT state FROM sessions WHERE session_id = 'one'")
    assert versions == [
        (3, "integer", int(ChangeKind.APPEND), "integer", 1.7e9, "real", state[0], "text")
    ]
    assert rows(tmp_path, "SELECT count(*) FROM append_receipts") == [(4,)]
    assert verify(["--data-dir", str(tmp_path)])[0] == 0


async def failing_appends(path: Path) -> None:
    storage, (current,) = await started(path, "s")
    try:
        sessions = storage.sessions
        first = append(current, messages_from(1, 1), request_id="once")
        await sessions.apply_change(TENANT, first)
        with pytest.raises(ConcurrentModificationError):  # stale expected version
            await sessions.apply_change(TENANT, append(current, messages_from(1, 1)))
        with pytest.raises(AlreadyExistsError):  # request id used before
            await sessions.apply_change(
                TENANT, append(first.record, messages_from(2, 1), request_id="once")
            )
        with pytest.raises(NotFoundError):
            await sessions.apply_change("other", append(first.record, messages_from(2, 1)))
        assert await sessions.get_session(TENANT, "s") == first.record
        assert len(await sessions.list_messages(TENANT, "s", 0, 10, True)) == 1
    finally:
        await storage.close()


def test_refused_one_message_appends_leave_nothing(tmp_path: Path) -> None:
    asyncio.run(failing_appends(tmp_path))
    # The one append that went in (the creation had no record): nothing of the others.
    assert rows(tmp_path, "SELECT revision FROM audit_log ORDER BY chain_seq") == [(2,)]
    assert verify(["--data-dir", str(tmp_path)])[0] == 0


async def appends_around_other_audit_writes(path: Path) -> int:
    """Appends of one message, with the chain head moved between them by
    records the trigger links and by a write rolled back after linking its
    own records (so the remembered head is stale); returns the records."""
    storage, (current,) = await started(path, "s")
    try:
        sessions = storage.sessions
        records = 0  # the creation has no record

        def unlinked(db: sqlite3.Connection) -> None:
            db.execute(
                UNLINKED_INSERT, audit_values(audit("raw", 1, "left to the trigger"), TENANT)
            )

        def linked_then_fails(db: sqlite3.Connection) -> None:
            insert_audit_rows(db, [audit_values(audit("undone", 1, "rolled back"), TENANT)])
            raise RuntimeError("the write fails after linking its record")

        for round_ in range(12):
            change = append(current, messages_from(current.last_sequence + 1, 1))
            other = unlinked if round_ % 2 else linked_then_fails
            outcomes = await asyncio.gather(
                sessions.apply_change(TENANT, change),
                storage.write(other),
                return_exceptions=True,
            )
            assert outcomes[0] is None
            current = change.record
            records += 1 if round_ % 2 == 0 else 2
            change = append(current, messages_from(current.last_sequence + 1, 1))
            await sessions.apply_change(TENANT, change)
            current = change.record
            records += 1
        return records
    finally:
        await storage.close()


def test_the_audit_chain_stays_intact_when_its_head_moves_between_appends(
    tmp_path: Path,
) -> None:
    records = asyncio.run(appends_around_other_audit_writes(tmp_path))
    assert rows(tmp_path, "SELECT count(*) FROM audit_log") == [(records,)]
    code, output = verify(["--data-dir", str(tmp_path)])
    assert (code, output) == (0, f"audit chain intact: {records} records of 1 tenants\n")
