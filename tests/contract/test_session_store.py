"""The SessionStore contract (storage/interfaces.py), checked on every backend."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from dataclasses import replace
from pathlib import Path

import asyncpg
import pytest

from statekeeper.core.audit.models import AuditFilter, AuditRecord
from statekeeper.core.errors import (
    AlreadyExistsError,
    ConcurrentModificationError,
    NotFoundError,
)
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.core.sessions.models import (
    ChangeKind,
    Message,
    MessageMeta,
    Role,
    SessionChange,
    SessionCursor,
    SessionFilter,
    SessionRecord,
    SessionStatus,
    SessionVersion,
    ToolCall,
)
from statekeeper.storage.embedded import erasure as embedded_erasure
from statekeeper.storage.embedded import sessions as embedded
from statekeeper.storage.embedded import sessions_schema as embedded_schema
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.postgres import erasure as postgres_erasure
from statekeeper.storage.postgres import sessions as postgres
from statekeeper.storage.postgres import sessions_schema
from tests.services import configured, create_database, drop_database, reachable


def tenant() -> str:
    """A fresh tenant per test, so backends that share a server stay clean."""
    return f"t-{uuid.uuid4().hex[:8]}"


def record(session_id: str, **fields: object) -> SessionRecord:
    base: dict[str, object] = {"session_id": session_id, "user_id": "u", "version": 1}
    base.update(fields)
    return SessionRecord(**base)  # type: ignore[arg-type]


def first_version(rec: SessionRecord) -> SessionVersion:
    return SessionVersion(rec.version, 0, ChangeKind.CREATE, rec.create_time, rec)


def message(sequence: int, content: str = "hi", **fields: object) -> Message:
    return Message(
        sequence=sequence,
        message_id=uuid.uuid4().hex,
        role=fields.pop("role", Role.USER),  # type: ignore[arg-type]
        content=content,
        token_count=7,
        **fields,  # type: ignore[arg-type]
    )


def append_change(
    current: SessionRecord, messages: list[Message], request_id: str = ""
) -> SessionChange:
    last = messages[-1].sequence
    nxt = current.evolve(
        version=current.version + 1,
        last_sequence=last,
        visible_ranges=((1, last),),
        message_count=current.message_count + len(messages),
    )
    return SessionChange(
        expected_version=current.version,
        record=nxt,
        version=SessionVersion(nxt.version, current.version, ChangeKind.APPEND, 0.0, nxt),
        new_messages=tuple(messages),
        request_id=request_id,
    )


async def test_create_get_and_duplicate(storage: Storage) -> None:
    t = tenant()
    rec = record("s1", metadata={"a": "b"}, context_variables={"x": [1, {"y": None}]})
    await storage.sessions.create_session(t, first_version(rec))
    assert await storage.sessions.get_session(t, "s1") == rec
    with pytest.raises(AlreadyExistsError):
        await storage.sessions.create_session(t, first_version(rec))
    assert await storage.sessions.get_session(tenant(), "s1") is None


async def test_apply_change_is_compare_and_swap(storage: Storage) -> None:
    t = tenant()
    rec = record("s1")
    await storage.sessions.create_session(t, first_version(rec))
    change = append_change(rec, [message(1), message(2, tool_calls=(ToolCall("c", "f", "{}"),))])
    await storage.sessions.apply_change(t, change)
    with pytest.raises(ConcurrentModificationError):
        await storage.sessions.apply_change(t, change)
    stored = await storage.sessions.get_session(t, "s1")
    assert stored == change.record
    messages = await storage.sessions.list_messages(t, "s1", 0, 10, False)
    assert [m.sequence for m in messages] == [1, 2]
    assert messages[1].tool_calls == (ToolCall("c", "f", "{}"),)
    with pytest.raises(NotFoundError):
        await storage.sessions.apply_change(tenant(), change)


async def test_concurrent_changes_one_wins(storage: Storage) -> None:
    t = tenant()
    rec = record("s1")
    await storage.sessions.create_session(t, first_version(rec))
    changes = [append_change(rec, [message(1, f"writer {i}")]) for i in range(8)]
    results = await asyncio.gather(
        *(storage.sessions.apply_change(t, c) for c in changes), return_exceptions=True
    )
    assert sum(r is None for r in results) == 1
    assert all(isinstance(r, ConcurrentModificationError) for r in results if r is not None)
    assert len(await storage.sessions.list_messages(t, "s1", 0, 10, True)) == 1


async def test_receipts_are_unique_per_tenant(storage: Storage) -> None:
    t = tenant()
    rec = record("s1")
    await storage.sessions.create_session(t, first_version(rec))
    change = append_change(rec, [message(1), message(2)], request_id="r1")
    await storage.sessions.apply_change(t, change)
    receipt = await storage.sessions.get_append_receipt(t, "r1")
    assert receipt is not None
    assert (receipt.first_sequence, receipt.last_sequence, receipt.version) == (1, 2, 2)
    again = append_change(change.record, [message(3)], request_id="r1")
    with pytest.raises(AlreadyExistsError):
        await storage.sessions.apply_change(t, again)
    # The failed change left nothing behind.
    assert (await storage.sessions.get_session(t, "s1")) == change.record
    assert await storage.sessions.get_append_receipt(tenant(), "r1") is None


async def test_visibility_reset_and_window_meta(storage: Storage) -> None:
    t = tenant()
    rec = record("s1")
    await storage.sessions.create_session(t, first_version(rec))
    change = append_change(rec, [message(i) for i in range(1, 6)])
    await storage.sessions.apply_change(t, change)
    rolled = change.record.evolve(version=3, visible_ranges=((1, 2), (4, 4)))
    await storage.sessions.apply_change(
        t,
        SessionChange(
            expected_version=2,
            record=rolled,
            version=SessionVersion(3, 1, ChangeKind.ROLLBACK, 0.0, rolled),
            visibility_changed=True,
        ),
    )
    meta = await storage.sessions.list_window_tail(t, "s1", 1, 1000, 1000)
    assert [m.sequence for m in meta] == [2, 4]
    assert all(m.token_count == 7 for m in meta)
    recent = await storage.sessions.list_recent_messages(t, "s1", 0, 5, 10)
    assert [m.sequence for m in recent] == [1, 2, 4]
    visible = await storage.sessions.list_messages(t, "s1", 0, 10, False)
    assert [m.sequence for m in visible] == [1, 2, 4]
    everything = await storage.sessions.list_messages(t, "s1", 0, 10, True)
    assert [m.rolled_back for m in everything] == [False, False, True, False, True]
    picked = await storage.sessions.get_messages(t, "s1", [5, 1, 99])
    assert [m.sequence for m in picked] == [1, 5]


def tool_turn(first: int, calls: int) -> list[Message]:
    """An ASSISTANT message calling `calls` tools, then their TOOL results."""
    ids = [f"call-{first}-{n}" for n in range(calls)]
    turn = [
        message(
            first,
            "",
            role=Role.ASSISTANT,
            tool_calls=tuple(ToolCall(i, "lookup", '{"q": 1}') for i in ids),
        )
    ]
    turn += [
        message(first + 1 + n, "42", role=Role.TOOL, tool_call_id=i) for n, i in enumerate(ids)
    ]
    return turn


async def test_window_tail_stops_at_budget_on_a_unit_boundary(storage: Storage) -> None:
    t = tenant()
    rec = record("s1")
    await storage.sessions.create_session(t, first_version(rec))
    # 1-10 user messages, 11 calls three tools answered by 12-14, 15 user.
    messages = [message(i) for i in range(1, 11)] + tool_turn(11, 3) + [message(15)]
    await storage.sessions.apply_change(t, append_change(rec, messages))
    tail = storage.sessions.list_window_tail
    # 7 tokens each: 15 > 14 at message 14, a TOOL message, so the tail
    # goes on to the call that opens its unit.
    assert [m.sequence for m in await tail(t, "s1", 0, 14, 1000)] == [11, 12, 13, 14, 15]
    assert [m.sequence for m in await tail(t, "s1", 0, 35, 1000)] == list(range(10, 16))
    # Exactly at the budget is not past it: one more message is read.
    assert [m.sequence for m in await tail(t, "s1", 0, 7, 1000)] == list(range(11, 16))
    assert [m.sequence for m in await tail(t, "s1", 0, 1000, 2)] == list(range(11, 16))
    assert [m.sequence for m in await tail(t, "s1", 0, 1000, 6)] == list(range(10, 16))
    assert [m.sequence for m in await tail(t, "s1", 12, 1000, 1000)] == [13, 14, 15]
    assert [m.sequence for m in await tail(t, "s1", 0, 10**9, 10**9)] == list(range(1, 16))
    call = (await tail(t, "s1", 0, 14, 1000))[0]
    assert call.role == Role.ASSISTANT
    assert call.tool_call_ids == ("call-11-0", "call-11-1", "call-11-2")
    assert [m.tool_call_id for m in await tail(t, "s1", 11, 1000, 1000)][:3] == [
        "call-11-0",
        "call-11-1",
        "call-11-2",
    ]
    assert await tail(t, "s1", 15, 1000, 1000) == []
    assert await tail(t, "nope", 0, 1000, 1000) == []
    # The same suffix, whole (what a context window returns).
    stored = {m.sequence: m for m in await storage.sessions.list_messages(t, "s1", 0, 99, False)}
    for budget in (14, 35, 7, 10**6):
        whole = await storage.sessions.list_window_messages(t, "s1", 0, budget)
        planned = await tail(t, "s1", 0, budget, 10**9)
        assert [m.sequence for m in whole] == [m.sequence for m in planned]
        assert whole == [stored[m.sequence] for m in planned]
    assert whole[10].tool_calls[2] == ToolCall("call-11-2", "lookup", '{"q": 1}')


async def test_recent_messages_newest_first_within_bounds(storage: Storage) -> None:
    t = tenant()
    rec = record("s1")
    await storage.sessions.create_session(t, first_version(rec))
    await storage.sessions.apply_change(
        t, append_change(rec, [message(i, f"m{i}") for i in range(1, 9)])
    )
    recent = await storage.sessions.list_recent_messages(t, "s1", 2, 8, 3)
    assert [(m.sequence, m.content) for m in recent] == [(5, "m5"), (6, "m6"), (7, "m7")]
    assert [m.sequence for m in await storage.sessions.list_recent_messages(t, "s1", 5, 7, 9)] == [
        6
    ]


async def test_versions_newest_first(storage: Storage) -> None:
    t = tenant()
    rec = record("s1")
    await storage.sessions.create_session(t, first_version(rec))
    current = rec
    for sequence in range(1, 4):
        change = append_change(current, [message(sequence)])
        await storage.sessions.apply_change(t, change)
        current = change.record
    versions = await storage.sessions.list_versions(t, "s1", 0, 2)
    assert [v.version for v in versions] == [4, 3]
    older = await storage.sessions.list_versions(t, "s1", 3, 10)
    assert [v.version for v in older] == [2, 1]
    v2 = await storage.sessions.get_version(t, "s1", 2)
    assert v2 is not None and v2.snapshot.last_sequence == 1
    assert await storage.sessions.get_version(t, "s1", 9) is None


async def test_list_order_filters_and_expiry(storage: Storage) -> None:
    t = tenant()
    now = 1000.0
    specs = [
        ("a", 1.0, "u1", None),
        ("b", 2.0, "u2", None),
        ("c", 2.0, "u1", None),
        ("d", 3.0, "u1", 999.0),  # expired at `now`
    ]
    for session_id, created, user_id, expire in specs:
        rec = record(session_id, create_time=created, user_id=user_id, expire_time=expire)
        await storage.sessions.create_session(t, first_version(rec))
    listed = await storage.sessions.list_sessions(t, SessionFilter(), now, None, 10)
    assert [r.session_id for r in listed] == ["c", "b", "a"]
    page = await storage.sessions.list_sessions(
        t, SessionFilter(), now, SessionCursor(2.0, "c"), 10
    )
    assert [r.session_id for r in page] == ["b", "a"]
    only_u1 = await storage.sessions.list_sessions(t, SessionFilter(user_id="u1"), now, None, 10)
    assert [r.session_id for r in only_u1] == ["c", "a"]
    paused = await storage.sessions.list_sessions(
        t, SessionFilter(status=SessionStatus.PAUSED), now, None, 10
    )
    assert paused == []


async def test_delete_and_sweep(storage: Storage) -> None:
    t = tenant()
    await storage.sessions.create_session(t, first_version(record("keep")))
    await storage.sessions.create_session(t, first_version(record("gone", expire_time=5.0)))
    await storage.sessions.create_session(t, first_version(record("later", expire_time=50.0)))
    assert await storage.sessions.delete_expired_sessions(10.0, 100) >= 1
    assert await storage.sessions.get_session(t, "gone") is None
    assert await storage.sessions.get_session(t, "later") is not None
    with pytest.raises(ConcurrentModificationError):
        await storage.sessions.delete_session(t, "keep", expected_version=7)
    await storage.sessions.delete_session(t, "keep", expected_version=0)
    assert await storage.sessions.get_session(t, "keep") is None
    assert await storage.sessions.get_version(t, "keep", 1) is None
    with pytest.raises(NotFoundError):
        await storage.sessions.delete_session(t, "keep", expected_version=0)


def audit(method: str, entity_id: str, revision: int, time: float = 100.0) -> AuditRecord:
    return AuditRecord(
        tenant="ignored: the store writes the change's tenant",
        principal="key-1",
        service="statekeeper.v1.SessionService",
        method=method,
        entity_type="session",
        entity_id=entity_id,
        revision=revision,
        time=time,
        summary=f"{method} {entity_id}",
    )


async def test_audit_is_written_with_each_change_and_only_then(storage: Storage) -> None:
    t = tenant()
    rec = record("s1")
    await storage.sessions.create_session(t, first_version(rec), audit("CreateSession", "s1", 1))
    with pytest.raises(AlreadyExistsError):
        await storage.sessions.create_session(
            t, first_version(rec), audit("CreateSession", "s1", 1)
        )
    change = replace(
        append_change(rec, [message(1)], request_id="r1"), audit=audit("AppendMessages", "s1", 2)
    )
    await storage.sessions.apply_change(t, change)
    with pytest.raises(ConcurrentModificationError):  # stale: no record
        await storage.sessions.apply_change(t, change)
    again = replace(
        append_change(change.record, [message(2)], request_id="r1"),
        audit=audit("AppendMessages", "s1", 3),
    )
    with pytest.raises(AlreadyExistsError):  # reused request id: rolled back with its record
        await storage.sessions.apply_change(t, again)
    with pytest.raises(ConcurrentModificationError):
        await storage.sessions.delete_session(t, "s1", 9, audit("DeleteSession", "s1", 2))
    await storage.sessions.delete_session(t, "s1", 2, audit("DeleteSession", "s1", 2))
    records = await storage.audit.list_audit(t, AuditFilter(), 0, 100)
    assert [(r.method, r.revision) for r in records] == [
        ("DeleteSession", 2),
        ("AppendMessages", 2),
        ("CreateSession", 1),
    ]
    assert {r.tenant for r in records} == {t}
    assert records[0].audit_id > records[1].audit_id > records[2].audit_id > 0
    assert records[2].summary == "CreateSession s1"
    assert await storage.audit.list_audit(tenant(), AuditFilter(), 0, 100) == []


async def test_audit_filters_and_pages(storage: Storage) -> None:
    t = tenant()
    for n, sid in enumerate(["a", "b", "a", "c"]):
        await storage.sessions.create_session(
            t, first_version(record(f"{sid}{n}")), audit("CreateSession", sid, n, time=10.0 + n)
        )
    everything = await storage.audit.list_audit(t, AuditFilter(), 0, 100)
    assert [r.time for r in everything] == [13.0, 12.0, 11.0, 10.0]
    page = await storage.audit.list_audit(t, AuditFilter(), 0, 2)
    rest = await storage.audit.list_audit(t, AuditFilter(), page[-1].audit_id, 10)
    assert page + rest == everything
    only_a = await storage.audit.list_audit(t, AuditFilter(entity_id="a"), 0, 10)
    assert [r.time for r in only_a] == [12.0, 10.0]
    window = await storage.audit.list_audit(t, AuditFilter(start_time=11.0, end_time=13.0), 0, 9)
    assert [r.time for r in window] == [12.0, 11.0]
    assert await storage.audit.list_audit(t, AuditFilter(method="DeleteSession"), 0, 9) == []
    assert await storage.audit.list_audit(t, AuditFilter(principal="key-2"), 0, 9) == []
    across = await storage.audit.list_audit(None, AuditFilter(entity_id="a"), 0, 1000)
    assert {r.tenant for r in across} >= {t}


async def test_sweep_audits_each_session_and_spares_extended_ones(storage: Storage) -> None:
    t = tenant()
    for sid in ("x1", "x2"):
        await storage.sessions.create_session(t, first_version(record(sid, expire_time=5.0)))
    rec = record("kept", expire_time=5.0)
    await storage.sessions.create_session(t, first_version(rec))
    extended = rec.evolve(version=2, expire_time=None)
    await storage.sessions.apply_change(
        t,
        SessionChange(1, extended, SessionVersion(2, 1, ChangeKind.UPDATE, 0.0, extended)),
    )
    template = audit("SweepExpiredSessions", "", 0)
    while await storage.sessions.delete_expired_sessions(10.0, 100, template):
        pass
    swept = await storage.audit.list_audit(t, AuditFilter(method="SweepExpiredSessions"), 0, 9)
    assert sorted((r.entity_id, r.revision, r.tenant) for r in swept) == [
        ("x1", 1, t),
        ("x2", 1, t),
    ]
    assert await storage.sessions.get_session(t, "kept") == extended


# ----- schema migration 3: tool_call_ids backfilled on both SQL backends ---------

_OLD_MESSAGE_COLUMNS = (
    "tenant, session_id, sequence, message_id, role, content, name, tool_calls,"
    " tool_call_id, metadata, token_count, create_time"
)
_OLD_ROWS = [
    ("t", "s1", 1, "m1", int(Role.USER), "hi", "", "[]", "", "{}", 5, 0.0),
    (
        "t",
        "s1",
        2,
        "m2",
        int(Role.ASSISTANT),
        "",
        "",
        '[{"arguments":"{}","id":"c1","name":"f"},{"arguments":"{}","id":"c2","name":"g"}]',
        "",
        "{}",
        9,
        0.0,
    ),
    ("t", "s1", 3, "m3", int(Role.TOOL), "ok", "", "[]", "c1", "{}", 4, 0.0),
]


def _assert_backfilled(tail: list[MessageMeta]) -> None:
    assert [(m.sequence, m.tool_call_ids, m.tool_call_id) for m in tail] == [
        (1, (), ""),
        (2, ("c1", "c2"), ""),
        (3, (), "c1"),
    ]


async def test_sqlite_migration_backfills_tool_call_ids(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "statekeeper.sqlite3", isolation_level=None)
    db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)")
    for version, statements in embedded_schema.MIGRATIONS[:2]:
        for statement in statements:
            db.execute(statement)
        db.execute("INSERT INTO schema_migrations VALUES (?, 0)", (version,))
    db.executemany(
        f"INSERT INTO messages ({_OLD_MESSAGE_COLUMNS}) VALUES ({'?,' * 11}?)", _OLD_ROWS
    )
    db.close()
    storage = embedded.EmbeddedStorage(tmp_path)
    await storage.start()
    try:
        _assert_backfilled(await storage.sessions.list_window_tail("t", "s1", 0, 10**6, 10**6))
    finally:
        await storage.close()


async def test_postgres_migration_backfills_tool_call_ids() -> None:
    services = configured()
    await reachable(services)
    dsn = await create_database(services)
    try:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(
                "CREATE TABLE schema_migrations (version integer PRIMARY KEY,"
                " description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            for migration in sessions_schema.MIGRATIONS[:2]:
                for statement in migration.statements:
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, description) VALUES ($1, $2)",
                    migration.version,
                    migration.description,
                )
            await conn.execute(
                "INSERT INTO sessions VALUES ('t', 's1', 'u', '', 1, 0, NULL, 1, '{}')"
            )
            marks = ",".join(f"${n}" for n in range(1, 13))
            await conn.executemany(
                f"INSERT INTO messages ({_OLD_MESSAGE_COLUMNS}) VALUES ({marks})", _OLD_ROWS
            )
        finally:
            await conn.close()
        storage = postgres.PostgresStorage(dsn, pool_size=2, migrate_on_start=True)
        await storage.start()
        try:
            _assert_backfilled(await storage.sessions.list_window_tail("t", "s1", 0, 10**6, 10**6))
        finally:
            await storage.close()
    finally:
        await drop_database(services, dsn)


async def test_read_for_change_then_apply_with_its_ticket(storage: Storage) -> None:
    t = tenant()
    rec = record("s1")
    sessions = storage.sessions
    await sessions.create_session(t, first_version(rec))
    assert (await sessions.read_for_change(t, "nope"))[0] is None
    await sessions.get_session(t, "s1")  # cached where there is a cache
    current = rec
    for sequence in range(1, 4):
        found, ticket = await sessions.read_for_change(t, "s1")
        assert found == current
        change = replace(append_change(current, [message(sequence)]), ticket=ticket)
        await sessions.apply_change(t, change)
        current = change.record
        assert await sessions.get_session(t, "s1") == current
    # A ticket whose change is never applied leaves no stale read behind,
    # and an applied change without a ticket still works after it.
    await sessions.read_for_change(t, "s1")
    assert await sessions.get_session(t, "s1") == current
    change = append_change(current, [message(4)])
    await sessions.apply_change(t, change)
    assert await sessions.get_session(t, "s1") == change.record
    # A stale ticket's change loses its compare-and-swap like any other.
    _, ticket = await sessions.read_for_change(t, "s1")
    with pytest.raises(ConcurrentModificationError):
        await sessions.apply_change(t, replace(append_change(current, [message(5)]), ticket=ticket))
    assert await sessions.get_session(t, "s1") == change.record


async def test_concurrent_writes_with_one_request_id_store_one_of_them(storage: Storage) -> None:
    """Writes that land in one commit (the embedded store groups concurrent
    writes) still fail alone: the loser's session row and messages are
    undone, the others' kept."""
    t = tenant()
    sessions = storage.sessions
    records = [record(f"s{i}") for i in range(6)]
    for rec in records:
        await sessions.create_session(t, first_version(rec))
    changes = [
        append_change(rec, [message(1, f"to {rec.session_id}")], request_id="same" if i < 2 else "")
        for i, rec in enumerate(records)
    ]
    results = await asyncio.gather(
        *(sessions.apply_change(t, c) for c in changes), return_exceptions=True
    )
    assert sum(r is None for r in results[:2]) == 1
    assert any(isinstance(r, AlreadyExistsError) for r in results[:2])
    assert results[2:] == [None] * 4
    for change, result in zip(changes, results, strict=True):
        stored = await sessions.get_session(t, change.record.session_id)
        messages = await sessions.list_messages(t, change.record.session_id, 0, 10, True)
        if result is None:
            assert stored == change.record and len(messages) == 1
        else:
            assert stored is not None and stored.version == 1 and messages == []


async def test_erase_user_deletes_every_session_of_the_user(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two rows per batch: the erasure takes several batches per table.
    monkeypatch.setattr(embedded_erasure, "ERASE_BATCH", 2)
    monkeypatch.setattr(postgres_erasure, "ERASE_BATCH", 2)
    t, other = tenant(), tenant()
    subject = ErasureSubject("u1")
    for t_, session_id, user in [
        (t, "a", "u1"),
        (t, "b", "u1"),
        (t, "c", "u1"),
        (t, "d", "u2"),
        (other, "a", "u1"),
    ]:
        rec = record(session_id, user_id=user)
        await storage.sessions.create_session(t_, first_version(rec))
        change = append_change(rec, [message(1), message(2)], request_id=f"r-{session_id}")
        await storage.sessions.apply_change(t_, change)
        assert await storage.sessions.get_session(t_, session_id) is not None  # cached
    dry = await storage.sessions.erase_user(t, subject, dry_run=True)
    assert dry.counts == {
        ("sessions", "sessions"): 3,
        ("sessions", "messages"): 6,
        ("sessions", "versions"): 6,
        ("sessions", "append_receipts"): 3,
    }
    assert await storage.sessions.get_session(t, "a") is not None
    real = await storage.sessions.erase_user(t, subject, dry_run=False)
    assert real.counts == dry.counts
    for session_id in "abc":
        assert await storage.sessions.get_session(t, session_id) is None
        assert await storage.sessions.list_messages(t, session_id, 0, 10, True) == []
        assert await storage.sessions.get_append_receipt(t, f"r-{session_id}") is None
    assert await storage.sessions.get_session(t, "d") is not None
    assert await storage.sessions.get_session(other, "a") is not None
    assert len(await storage.sessions.list_messages(other, "a", 0, 10, True)) == 2
    assert (await storage.sessions.erase_user(t, subject, dry_run=False)).total == 0
