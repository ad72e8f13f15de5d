"""Embedded backend: one SQLite file in WAL mode plus in-process hot state.

SQLite writes run on one dedicated thread, so transactions never interleave
and the event loop never waits for a commit (the few statements of an append
of one message run on the loop when the writer is idle, its commit still on
the writer thread: see `write`). `synchronous=FULL` makes every acknowledged
commit survive a crash of the process and of the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from statekeeper.core.audit.models import AuditFilter, AuditRecord, ChainLink
from statekeeper.core.audit.store import AuditStore
from statekeeper.core.errors import (
    StorageUnavailableError,
)
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.sessions.context_window import WindowTail
from statekeeper.core.sessions.models import (
    AppendReceipt,
    Message,
    MessageMeta,
    SessionChange,
    SessionCursor,
    SessionFilter,
    SessionRecord,
    SessionVersion,
)
from statekeeper.core.sessions.store import SessionStore
from statekeeper.storage.codec import record_from_json, record_to_json
from statekeeper.storage.embedded.audit_chain import (
    confirm_link,
    insert_audit_rows,
    link_from_hint,
)
from statekeeper.storage.embedded.erasure import run_steps
from statekeeper.storage.embedded.sessions_schema import (
    AUDIT_DIGEST,
    DATABASE_FILE,
    audit_digest,
    migrate,
)
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.shared.erasure import session_steps
from statekeeper.storage.shared.sessions import (
    cas_failure,
    receipt_from_row,
    receipt_sequences,
    request_reused,
    session_exists,
    session_statements,
    session_values,
    version_bound,
    version_values,
)
from statekeeper.storage.sql import (
    AUDIT_COLUMNS,
    MESSAGE_COLUMNS,
    MESSAGE_INSERT_COLUMNS,
    WINDOW_META_COLUMNS,
    audit_from_row,
    audit_query,
    audit_values,
    message_from_row,
    message_values,
    meta_from_row,
    session_list_query,
    sqlite_mark,
    version_from_row,
)

T = TypeVar("T")
M = TypeVar("M", Message, MessageMeta)


_HOT_CACHE_SIZE = 10_000

_SQL = session_statements(sqlite_mark, "rolled_back = 0")


class _HotRecords:
    """The latest record of recently used sessions, shared by the event loop,
    the writer thread and the reader threads (hence the lock).

    The writer puts a record only after its commit succeeded, so an entry
    never runs ahead of disk, and is the latest committed one. A reader that
    missed may offer what it read, which is kept only if no write happened
    since the reader looked (`generation`): a reader's snapshot may predate
    a write that the writer has already cached (or a delete it has already
    forgotten)."""

    def __init__(self, size: int) -> None:
        self._lock = threading.Lock()
        self._records: OrderedDict[tuple[str, str], SessionRecord] = OrderedDict()
        self._size = size
        self.generation = 0

    def get(self, tenant: str, session_id: str) -> SessionRecord | None:
        key = (tenant, session_id)
        with self._lock:
            record = self._records.get(key)
            if record is not None:
                self._records.move_to_end(key)
            return record

    def put(self, tenant: str, record: SessionRecord) -> None:
        with self._lock:
            self.generation += 1
            self._store((tenant, record.session_id), record)

    def offer(self, tenant: str, record: SessionRecord, generation: int) -> None:
        key = (tenant, record.session_id)
        with self._lock:
            if self.generation == generation and key not in self._records:
                self._store(key, record)

    def forget(self, tenant: str, session_id: str) -> None:
        with self._lock:
            self.generation += 1
            self._records.pop((tenant, session_id), None)

    def forget_user(self, tenant: str, user_id: str) -> None:
        """Drops every cached session of the user (an erasure)."""
        with self._lock:
            self.generation += 1
            for key, record in list(self._records.items()):
                if key[0] == tenant and record.user_id == user_id:
                    del self._records[key]

    def _store(self, key: tuple[str, str], record: SessionRecord) -> None:
        self._records[key] = record
        self._records.move_to_end(key)
        while len(self._records) > self._size:
            self._records.popitem(last=False)


class _SqliteSessionStore(SessionStore):
    """Writes go through the backend's group commit (one transaction and
    one fsync for every write queued meanwhile); reads run on the reader
    connections, so they never wait behind a commit."""

    def __init__(self, backend: EmbeddedStorage) -> None:
        self._backend = backend
        self._hot = _HotRecords(_HOT_CACHE_SIZE)

    async def create_session(
        self, tenant: str, version: SessionVersion, audit: AuditRecord | None = None
    ) -> None:
        record = version.snapshot

        def work(db: sqlite3.Connection) -> None:
            try:
                db.execute(_SQL.insert_session, session_values(tenant, record))
            except sqlite3.IntegrityError as exc:
                raise session_exists(record.session_id) from exc
            _insert_version(db, tenant, record.session_id, version)
            _insert_audit(db, tenant, audit)

        await self._backend.write(work, lambda: self._hot.put(tenant, record))

    async def get_session(self, tenant: str, session_id: str) -> SessionRecord | None:
        cached = self._hot.get(tenant, session_id)
        if cached is not None:
            return cached
        generation = self._hot.generation

        def work(db: sqlite3.Connection) -> SessionRecord | None:
            row = db.execute(_SQL.state, (tenant, session_id)).fetchone()
            return None if row is None else record_from_json(row["state"])

        record = await self._backend.read(work)
        if record is not None:
            self._hot.offer(tenant, record, generation)
        return record

    async def list_sessions(
        self,
        tenant: str,
        session_filter: SessionFilter,
        now: float,
        after: SessionCursor | None,
        limit: int,
    ) -> list[SessionRecord]:
        sql, params = session_list_query(tenant, session_filter, now, after, limit, sqlite_mark)

        def work(db: sqlite3.Connection) -> list[SessionRecord]:
            return [record_from_json(row["state"]) for row in db.execute(sql, params)]

        return await self._backend.read(work)

    async def apply_change(self, tenant: str, change: SessionChange) -> None:
        record = change.record

        # Encoded here, not on the writer thread, whose time every write of
        # the group waits for; the snapshot is the record itself.
        state = record_to_json(record)
        snapshot = state if change.version.snapshot is record else None
        messages = [message_values(tenant, record.session_id, m) for m in change.new_messages]
        if len(messages) == 1 and not change.visibility_changed:
            values = _append_values(tenant, change, state, snapshot, messages[0])
            await self._backend.write(
                lambda db: _apply_append(db, tenant, change, values),
                lambda: self._hot.put(tenant, record),
                # A large message's statements would hold the loop (a 4 MiB
                # one about 9 ms): it goes to the writer thread.
                small=_value_bytes(values) <= SMALL_WRITE_BYTES,
            )
            return

        def work(db: sqlite3.Connection) -> None:
            # Compare-and-swap in the UPDATE itself; only a miss reads why.
            updated = db.execute(
                "UPDATE sessions SET agent_id=?, status=?, expire_time=?, version=?, state=?"
                " WHERE tenant=? AND session_id=? AND version=?",
                (
                    record.agent_id,
                    int(record.status),
                    record.expire_time,
                    record.version,
                    state,
                    tenant,
                    record.session_id,
                    change.expected_version,
                ),
            ).rowcount
            if updated != 1:
                _explain_cas_failure(db, tenant, record.session_id, change.expected_version)
            _insert_version(db, tenant, record.session_id, change.version, snapshot)
            db.executemany(
                f"INSERT INTO messages (tenant, session_id, {MESSAGE_INSERT_COLUMNS})"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                messages,
            )
            if change.visibility_changed:
                _reset_visibility(db, tenant, record)
            if change.request_id:
                _insert_receipt(db, tenant, change)
            _insert_audit(db, tenant, change.audit)

        await self._backend.write(work, lambda: self._hot.put(tenant, record))

    async def delete_session(
        self,
        tenant: str,
        session_id: str,
        expected_version: int,
        audit: AuditRecord | None = None,
    ) -> None:
        def work(db: sqlite3.Connection) -> None:
            row = db.execute(_SQL.current_version, (tenant, session_id)).fetchone()
            current = None if row is None else row["version"]
            if current is None or (expected_version > 0 and current != expected_version):
                raise cas_failure(session_id, current, expected_version)
            _delete_session_rows(db, tenant, session_id)
            _insert_audit(db, tenant, audit)

        await self._backend.write(work, lambda: self._hot.forget(tenant, session_id))

    async def list_messages(
        self,
        tenant: str,
        session_id: str,
        after_sequence: int,
        limit: int,
        include_rolled_back: bool,
    ) -> list[Message]:
        sql = _SQL.all_messages if include_rolled_back else _SQL.visible_messages

        def work(db: sqlite3.Connection) -> list[Message]:
            rows = db.execute(sql, (tenant, session_id, after_sequence, limit))
            return [message_from_row(row) for row in rows]

        return await self._backend.read(work)

    async def get_messages(
        self, tenant: str, session_id: str, sequences: Sequence[int]
    ) -> list[Message]:
        wanted = sorted(set(sequences))

        def work(db: sqlite3.Connection) -> list[Message]:
            found: list[Message] = []
            # SQLite caps bound parameters; fetch in chunks.
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant=? AND session_id=?"
                    f" AND sequence IN ({marks}) ORDER BY sequence",
                    (tenant, session_id, *chunk),
                )
                found.extend(message_from_row(row) for row in rows)
            return found

        return await self._backend.read(work)

    async def list_window_tail(
        self,
        tenant: str,
        session_id: str,
        after_sequence: int,
        max_tokens: int,
        max_messages: int,
    ) -> list[MessageMeta]:
        tail: WindowTail[MessageMeta] = WindowTail(max_tokens, max_messages)
        return await self._tail(
            _TAIL_META, (tenant, session_id, after_sequence), meta_from_row, tail
        )

    async def list_window_messages(
        self, tenant: str, session_id: str, after_sequence: int, max_tokens: int
    ) -> list[Message]:
        tail: WindowTail[Message] = WindowTail(max_tokens, _UNLIMITED)
        return await self._tail(
            _TAIL_MESSAGES, (tenant, session_id, after_sequence), message_from_row, tail
        )

    def _tail(
        self,
        sql: str,
        params: tuple[object, ...],
        from_row: Callable[[sqlite3.Row], M],
        tail: WindowTail[M],
    ) -> Awaitable[list[M]]:
        # Returns the read itself: no coroutine of its own on the window path.
        return self._backend.read(lambda db: _read_tail(db, sql, params, from_row, tail))

    async def list_recent_messages(
        self, tenant: str, session_id: str, after_sequence: int, before_sequence: int, limit: int
    ) -> list[Message]:
        def work(db: sqlite3.Connection) -> list[Message]:
            rows = db.execute(
                _SQL.recent_messages,
                (tenant, session_id, after_sequence, before_sequence, limit),
            )
            return [message_from_row(row) for row in rows][::-1]

        return await self._backend.read(work)

    async def get_append_receipt(self, tenant: str, request_id: str) -> AppendReceipt | None:
        def work(db: sqlite3.Connection) -> AppendReceipt | None:
            row = db.execute(_SQL.receipt, (tenant, request_id)).fetchone()
            return None if row is None else receipt_from_row(row)

        return await self._backend.read(work)

    async def list_versions(
        self, tenant: str, session_id: str, before_version: int, limit: int
    ) -> list[SessionVersion]:
        bound = version_bound(before_version)

        def work(db: sqlite3.Connection) -> list[SessionVersion]:
            rows = db.execute(_SQL.versions, (tenant, session_id, bound, limit))
            return [version_from_row(row) for row in rows]

        return await self._backend.read(work)

    async def get_version(
        self, tenant: str, session_id: str, version: int
    ) -> SessionVersion | None:
        def work(db: sqlite3.Connection) -> SessionVersion | None:
            row = db.execute(_SQL.version, (tenant, session_id, version)).fetchone()
            return None if row is None else version_from_row(row)

        return await self._backend.read(work)

    async def delete_expired_sessions(
        self, now: float, limit: int, audit: AuditRecord | None = None
    ) -> int:
        def work(db: sqlite3.Connection) -> int:
            with db:
                rows = db.execute(
                    "SELECT tenant, session_id, version FROM sessions"
                    " WHERE expire_time IS NOT NULL AND expire_time <= ? LIMIT ?",
                    (now, limit),
                ).fetchall()
                for row in rows:
                    tenant, session_id = row["tenant"], row["session_id"]
                    _delete_session_rows(db, tenant, session_id)
                    if audit is not None:
                        entry = audit.for_entity(tenant, session_id, row["version"])
                        _insert_audit(db, tenant, entry)
            for row in rows:
                self._hot.forget(row["tenant"], row["session_id"])
            return len(rows)

        return await self._backend.run(work)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        try:
            erasure = await run_steps(self._backend, session_steps(tenant, subject), dry_run)
        finally:
            # Even if it failed half-way: a retry does not see the sessions
            # already deleted, so it could not drop their cached records.
            if not dry_run:
                self._hot.forget_user(tenant, subject.user_id)
        return erasure.counts


_TAIL_WHERE = (
    " WHERE tenant=? AND session_id=? AND sequence > ? AND rolled_back = 0 ORDER BY sequence DESC"
)
_TAIL_META = f"SELECT {WINDOW_META_COLUMNS} FROM messages{_TAIL_WHERE}"
_TAIL_MESSAGES = f"SELECT {MESSAGE_COLUMNS} FROM messages{_TAIL_WHERE}"
_UNLIMITED = 2**62


def _read_tail(
    db: sqlite3.Connection,
    sql: str,
    params: tuple[object, ...],
    from_row: Callable[[sqlite3.Row], M],
    tail: WindowTail[M],
) -> list[M]:
    # SQLite steps the cursor lazily: rows older than the tail are never
    # visited.
    rows = db.execute(sql, params)
    for row in rows:
        if tail.add(from_row(row)):
            break
    rows.close()
    return tail.messages()


class _SqliteAuditStore(AuditStore):
    def __init__(self, backend: EmbeddedStorage) -> None:
        self._backend = backend

    async def list_audit(
        self, tenant: str | None, audit_filter: AuditFilter, before_id: int, limit: int
    ) -> list[AuditRecord]:
        sql, params = audit_query(tenant, audit_filter, before_id, limit, sqlite_mark)

        def work(db: sqlite3.Connection) -> list[AuditRecord]:
            return [audit_from_row(row) for row in db.execute(sql, params)]

        return await self._backend.read(work)

    async def audit_chain(
        self, tenant: str | None
    ) -> tuple[list[ChainLink], dict[str, tuple[int, str]]]:
        where, params = ("", ()) if tenant is None else (" WHERE tenant = ?", (tenant,))

        def work(db: sqlite3.Connection) -> tuple[list[ChainLink], dict[str, tuple[int, str]]]:
            db.execute("BEGIN")  # one snapshot: records and heads as of the same commit
            try:
                rows = db.execute(
                    f"SELECT audit_id, chain_seq, prev_hash, hash, {AUDIT_COLUMNS}"
                    f" FROM audit_log{where} ORDER BY tenant, chain_seq NULLS FIRST, audit_id",
                    params,
                ).fetchall()
                heads = db.execute(
                    f"SELECT tenant, seq, hash FROM audit_chain_heads{where}", params
                ).fetchall()
            finally:
                db.execute("COMMIT")
            columns = AUDIT_COLUMNS.replace(" ", "").split(",")
            links = [
                ChainLink(
                    audit_id=row["audit_id"],
                    tenant=row["tenant"],
                    chain_seq=row["chain_seq"],
                    prev_hash=row["prev_hash"],
                    hash=row["hash"],
                    recomputed=audit_digest(row["prev_hash"], *(row[c] for c in columns)),
                )
                for row in rows
            ]
            return links, {row["tenant"]: (row["seq"], row["hash"]) for row in heads}

        return await self._backend.read(work)

    async def record_audit(self, record: AuditRecord) -> None:
        await self._backend.write(lambda db: _insert_audit(db, record.tenant, record))


def _insert_audit(db: sqlite3.Connection, tenant: str, audit: AuditRecord | None) -> None:
    if audit is not None:
        insert_audit_rows(db, [audit_values(audit, tenant)])


def _insert_version(
    db: sqlite3.Connection,
    tenant: str,
    session_id: str,
    version: SessionVersion,
    snapshot: str | None = None,
) -> None:
    """`snapshot`: version.snapshot already encoded, if it is at hand."""
    db.execute(_SQL.insert_version, version_values(tenant, session_id, version, snapshot))


def _insert_receipt(db: sqlite3.Connection, tenant: str, change: SessionChange) -> None:
    try:
        db.execute(
            "INSERT INTO append_receipts (tenant, request_id, session_id, first_sequence,"
            " last_sequence, version) VALUES (?,?,?,?,?,?)",
            (
                tenant,
                change.request_id,
                change.record.session_id,
                *receipt_sequences(change),
                change.record.version,
            ),
        )
    except sqlite3.IntegrityError as exc:
        raise request_reused(change.request_id) from exc


def _reset_visibility(db: sqlite3.Connection, tenant: str, record: SessionRecord) -> None:
    db.execute(
        "UPDATE messages SET rolled_back = 1 WHERE tenant=? AND session_id=?",
        (tenant, record.session_id),
    )
    db.executemany(
        "UPDATE messages SET rolled_back = 0 WHERE tenant=? AND session_id=?"
        " AND sequence BETWEEN ? AND ?",
        [(tenant, record.session_id, low, high) for low, high in record.visible_ranges],
    )


# An append of one message is one statement: an INSERT into this view of the
# writer connection's own (TEMP, so nothing of it is stored), whose trigger
# does what `apply_change` does in six (the session's compare-and-swap, the
# audit chain head's, the audit record, version, message and receipt): a
# small write, whose statements can run at once on the loop (see `write`).
_APPEND_VIEW = "sk_append_one"
_MESSAGE_FIELDS = [column.strip() for column in MESSAGE_INSERT_COLUMNS.split(",")]
_APPEND_FIELDS = [
    *("tenant", "session_id", "expected_version", "agent_id", "status", "expire_time"),
    *("version", "state", "parent_version", "change_kind", "create_time", "snapshot"),
    *(f"m_{field}" for field in _MESSAGE_FIELDS),
    *("request_id", "first_sequence", "last_sequence"),
    # The audit record linked from the remembered head (audit_chain), or NULLs.
    *(f"a_{field.strip()}" for field in AUDIT_COLUMNS.split(",")),
    *("a_chain_seq", "a_prev_hash", "a_hash"),
]
_APPEND_INSERT = (
    f"INSERT INTO {_APPEND_VIEW} ({', '.join(_APPEND_FIELDS)})"
    f" VALUES ({','.join('?' * len(_APPEND_FIELDS))})"
)
_VERSION_CHANGED = "statekeeper: the session version changed"
_HEAD_MOVED = "statekeeper: the audit chain head moved"
_MESSAGE_FROM_NEW = ", ".join(f"NEW.m_{field}" for field in _MESSAGE_FIELDS)
_AUDIT_FROM_NEW = ", ".join(f"NEW.a_{field.strip()}" for field in AUDIT_COLUMNS.split(","))
_NO_AUDIT: tuple[None, ...] = (None,) * (len(AUDIT_COLUMNS.split(",")) + 3)
_APPEND_SCHEMA = (
    f"CREATE TEMP VIEW IF NOT EXISTS {_APPEND_VIEW} AS SELECT "
    + ", ".join(f"NULL AS {field}" for field in _APPEND_FIELDS)
    + " WHERE 0",
    f"""CREATE TEMP TRIGGER IF NOT EXISTS {_APPEND_VIEW}_apply
        INSTEAD OF INSERT ON {_APPEND_VIEW} BEGIN
            UPDATE sessions SET agent_id = NEW.agent_id, status = NEW.status,
                expire_time = NEW.expire_time, version = NEW.version, state = NEW.state
            WHERE tenant = NEW.tenant AND session_id = NEW.session_id
                AND version = NEW.expected_version;
            SELECT RAISE(ABORT, '{_VERSION_CHANGED}') WHERE changes() = 0;
            UPDATE audit_chain_heads SET seq = NEW.a_chain_seq, hash = NEW.a_hash
            WHERE NEW.a_hash IS NOT NULL AND tenant = NEW.a_tenant
                AND seq = NEW.a_chain_seq - 1 AND hash = NEW.a_prev_hash;
            SELECT RAISE(ABORT, '{_HEAD_MOVED}') WHERE NEW.a_hash IS NOT NULL AND changes() = 0;
            INSERT INTO audit_log ({AUDIT_COLUMNS}, chain_seq, prev_hash, hash)
            SELECT {_AUDIT_FROM_NEW}, NEW.a_chain_seq, NEW.a_prev_hash, NEW.a_hash
            WHERE NEW.a_hash IS NOT NULL;
            INSERT INTO session_versions (tenant, session_id, version, parent_version,
                change_kind, create_time, snapshot)
            VALUES (NEW.tenant, NEW.session_id, NEW.version, NEW.parent_version,
                NEW.change_kind, NEW.create_time, NEW.snapshot);
            INSERT INTO messages (tenant, session_id, {MESSAGE_INSERT_COLUMNS})
            VALUES (NEW.tenant, NEW.session_id, {_MESSAGE_FROM_NEW});
            INSERT INTO append_receipts (tenant, request_id, session_id, first_sequence,
                last_sequence, version)
            SELECT NEW.tenant, NEW.request_id, NEW.session_id, NEW.first_sequence,
                NEW.last_sequence, NEW.version
            WHERE NEW.request_id <> '';
        END""",
)


# An append whose values hold more bytes than this is not a small write.
SMALL_WRITE_BYTES = 64 * 1024


def _value_bytes(values: tuple[object, ...]) -> int:
    return sum(len(value) for value in values if isinstance(value, str | bytes))


def create_append_statement(db: sqlite3.Connection) -> None:
    """Creates the writer connection's view and trigger for appends of one
    message (outside any transaction: a rollback would drop them)."""
    for statement in _APPEND_SCHEMA:
        db.execute(statement)


def _append_values(
    tenant: str,
    change: SessionChange,
    state: str,
    snapshot: str | None,
    message: tuple[object, ...],
) -> tuple[object, ...]:
    record, version = change.record, change.version
    if snapshot is None:
        snapshot = record_to_json(version.snapshot)
    return (
        tenant,
        record.session_id,
        change.expected_version,
        record.agent_id,
        int(record.status),
        record.expire_time,
        record.version,
        state,
        version.parent_version,
        int(version.change_kind),
        version.create_time,
        snapshot,
        *message[2:],  # message_values without tenant and session id
        change.request_id,
        *receipt_sequences(change),
    )


def _apply_append(
    db: sqlite3.Connection, tenant: str, change: SessionChange, values: tuple[object, ...]
) -> None:
    """The write of an append of one message: `values` through the view, with
    its audit record linked from the remembered chain head; if there is none,
    or the head moved since, the record is inserted as any other."""
    audit = None if change.audit is None else audit_values(change.audit, tenant)
    linked = None if audit is None else link_from_hint(db, audit)
    try:
        db.execute(_APPEND_INSERT, (*values, *(linked or _NO_AUDIT)))
    except sqlite3.IntegrityError as exc:
        if _VERSION_CHANGED in str(exc):
            _explain_cas_failure(db, tenant, change.record.session_id, change.expected_version)
        if "append_receipts" in str(exc):
            raise request_reused(change.request_id) from exc
        if linked is None or _HEAD_MOVED not in str(exc):
            raise
        # Nothing of the statement is stored: again, the record unlinked.
        confirm_link(db, linked, stored=False)
        _apply_append(db, tenant, change, values)
        return
    if linked is not None:
        confirm_link(db, linked, stored=True)
    elif audit is not None:
        insert_audit_rows(db, [audit])


def _explain_cas_failure(
    db: sqlite3.Connection, tenant: str, session_id: str, expected_version: int
) -> None:
    """Raises NotFoundError or ConcurrentModificationError (always raises)."""
    row = db.execute(_SQL.current_version, (tenant, session_id)).fetchone()
    raise cas_failure(session_id, None if row is None else row["version"], expected_version)


def _delete_session_rows(db: sqlite3.Connection, tenant: str, session_id: str) -> None:
    for table in ("messages", "session_versions", "append_receipts", "sessions"):
        db.execute(f"DELETE FROM {table} WHERE tenant=? AND session_id=?", (tenant, session_id))


# How long the writer waits for another process's lock on the file.
_BUSY_TIMEOUT_MS = 5000
# Writes queued while a group commits wait for the next group; at most this
# many share one transaction.
MAX_WRITE_GROUP = 256
# Reader connections (and threads): enough that a long read (a context window
# of a long session, a page of history) does not hold up the short ones.
READER_THREADS = 2
# close() waits for the queued writes at most this many drains.
_CLOSE_DRAIN_ROUNDS = 100_000


@dataclass
class _WriteJob:
    work: Callable[[sqlite3.Connection], object]
    after_commit: Callable[[], None] | None
    future: asyncio.Future[object]
    result: object = None
    error: BaseException | None = None


class EmbeddedStorage(Storage):
    """SQLite (WAL) under `data_dir`: one writer connection on its own
    thread, and reader connections on reader threads.

    Writes through `write` are group-committed: every write queued while a
    group commits goes into the next group, one transaction and one fsync
    for all of them, each in its own savepoint (a write that fails leaves
    the others in). A write returns only after its group's commit, so
    acknowledged still means durable. A small write to an idle writer runs
    its statements on the loop and only its commit on the writer thread
    (see `write`). Reads through `read` run on reader connections, which
    under WAL see the last commit and never wait for the writer. `run` runs
    work alone on the writer connection.
    """

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / DATABASE_FILE
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        self._readers = ThreadPoolExecutor(
            max_workers=READER_THREADS, thread_name_prefix="sqlite-read"
        )
        self._reader_local = threading.local()
        self._reader_connections: list[sqlite3.Connection] = []
        self._reader_lock = threading.Lock()
        self._inline: sqlite3.Connection | None = None  # see read_inline
        self._db: sqlite3.Connection | None = None
        # Writes waiting for the writer thread, and whether a drain of them
        # is queued or running there (both guarded by the lock).
        self._write_lock = threading.Lock()
        self._pending_writes: list[_WriteJob] = []
        self._draining = False
        # `run` calls handed to the writer thread and not finished (guarded
        # by the lock): while there are any, no write starts on the loop.
        self._runs = 0
        self.sessions = _SqliteSessionStore(self)
        self.audit = _SqliteAuditStore(self)

    @property
    def description(self) -> str:
        return f"embedded SQLite store at {self._path}"

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Runs `work` on the database thread with the open connection."""

        def call() -> T:
            try:
                if self._db is None:
                    raise StorageUnavailableError("the embedded store is closed")
                return work(self._db)
            except sqlite3.OperationalError as exc:
                raise StorageUnavailableError(f"embedded store error: {exc}") from exc

        def finished(_: object) -> None:  # run, failed, or cancelled while queued
            with self._write_lock:
                self._runs -= 1

        with self._write_lock:
            self._runs += 1
        try:
            submitted = self._executor.submit(call)
        except RuntimeError:  # the store was closed: `call` will never run
            finished(None)
            raise
        submitted.add_done_callback(finished)
        return await asyncio.wrap_future(submitted)

    async def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Runs read-only `work` on a reader connection (autocommit: each
        statement sees the last commit)."""
        loop = asyncio.get_running_loop()

        def call() -> T:
            if self._db is None:
                raise StorageUnavailableError("the embedded store is closed")
            try:
                return work(self._reader())
            except sqlite3.OperationalError as exc:
                raise StorageUnavailableError(f"embedded store error: {exc}") from exc

        if self._db is None:  # closed: its reader threads are gone too
            raise StorageUnavailableError("the embedded store is closed")
        return await loop.run_in_executor(self._readers, call)

    def read_inline(self, work: Callable[[sqlite3.Connection], T]) -> T | None:
        """Runs read-only `work` at once on the calling thread (the event
        loop), on a connection of its own: for a read of a few small rows or
        a PRAGMA, which costs less than the hop to a reader thread and back.
        None if it cannot run at once: the store is not open, the database
        is busy (no busy timeout: the loop never waits), or an SQLite error;
        the caller then reads through `read`."""
        if self._db is None:
            return None
        try:
            if self._inline is None:
                self._inline = self._read_only_connection(busy_timeout=0)
            return work(self._inline)
        except sqlite3.Error:
            return None

    def _read_only_connection(self, busy_timeout: float) -> sqlite3.Connection:
        """A read-only autocommit connection to the file, waiting at most
        `busy_timeout` seconds for a lock (0: never)."""
        db = sqlite3.connect(
            self._path, check_same_thread=False, isolation_level=None, timeout=busy_timeout
        )
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA query_only=ON")
        return db

    def _reader(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._reader_local, "db", None)
        if db is None:
            db = self._read_only_connection(busy_timeout=5.0)
            self._reader_local.db = db
            with self._reader_lock:
                self._reader_connections.append(db)
        return db

    async def write(
        self,
        work: Callable[[sqlite3.Connection], T],
        after_commit: Callable[[], None] | None = None,
        *,
        small: bool = False,
    ) -> T:
        """Runs `work` in the next group commit and returns its result once
        the group is durable. `work` MUST NOT commit or roll back; an
        exception it raises undoes its own statements only and is raised
        here. `after_commit` runs on the writer thread right after the
        commit, before any later write or this call returns.

        The job is handed to the writer thread at once: the thread commits
        groups for as long as writes are queued and wakes the event loop once
        per group to settle its callers, so a write costs the loop two turns
        (queue it, resume its caller) however busy the loop is with reads.

        `small`: `work` is a few statements on a few rows (an append of one
        message). When the writer is idle, they run at once on the calling
        thread (the loop) and only the commit is handed to the writer
        thread: the writer's share of the write, which waits for the GIL
        and a CPU anew at each step while the loop is busy, is its fsync."""
        loop = asyncio.get_running_loop()
        job = _WriteJob(work, after_commit, loop.create_future())
        # A caller cancelled mid-commit never reads its outcome; mark it read.
        job.future.add_done_callback(_consume)
        with self._write_lock:
            start, self._draining = not self._draining, True
            # Nothing runs on the writer connection now, and nothing can be
            # handed to it before this returns (only the loop hands work).
            at_once = start and small and self._runs == 0
            if not at_once:
                self._pending_writes.append(job)
        if at_once:
            self._write_at_once(loop, job)
        elif start:
            self._submit_drain(loop)
        # Cancelling the caller cancels only this future (no shield needed):
        # the job stays queued and commits with its group all the same.
        result = await job.future
        return result  # type: ignore[return-value]

    def _submit_drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """Queues a drain on the writer thread, behind any `run` queued
        before it (a stream of writes cannot starve them)."""
        try:
            self._executor.submit(self._drain, loop)
        except RuntimeError:  # the store was closed: nothing will commit
            with self._write_lock:
                jobs, self._pending_writes = self._pending_writes, []
                self._draining = False
            closed = StorageUnavailableError("the embedded store is closed")
            for job in jobs:
                job.error = closed
            _hand_back(loop, jobs)  # this may run on the writer thread

    def _write_at_once(self, loop: asyncio.AbstractEventLoop, job: _WriteJob) -> None:
        """On the loop, with the writer idle (this holds `_draining`): opens
        the transaction and runs `job` in it, then hands the commit to the
        writer thread. A transaction it cannot open at once (the file locked
        by another process: the loop never waits for it) goes the usual way.
        Whatever escapes (an exit, a rollback that failed) still answers the
        write and frees the writer."""
        db = self._db
        try:
            began = db is not None and _begin_without_waiting(db)
            if began:
                assert db is not None
                _run_at_once(db, job)
        except BaseException:
            if db is not None and db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.rollback()
            job.error = job.error or StorageUnavailableError("the embedded store stopped")
            self._finish_drain(loop, [job])
            raise
        if db is None or not began:
            with self._write_lock:
                self._pending_writes.insert(0, job)
            self._submit_drain(loop)
            return
        try:
            self._executor.submit(self._commit_at_once, loop, job)
        except RuntimeError:  # closed meanwhile: it cannot be committed
            with contextlib.suppress(sqlite3.Error):
                db.rollback()
            job.error = StorageUnavailableError("the embedded store is closed")
            self._finish_drain(loop, [job])

    def _commit_at_once(self, loop: asyncio.AbstractEventLoop, job: _WriteJob) -> None:
        """On the writer thread: commits the transaction `_write_at_once`
        began (nothing, if its job failed), then drains as `_drain` does."""
        self._commit_and_settle(loop, [job], _commit_open)

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the writer thread: commits one group of the queued writes,
        hands its outcomes to the event loop, and queues the next drain if
        more writes arrived meanwhile."""
        with self._write_lock:
            jobs = self._pending_writes[:MAX_WRITE_GROUP]
            del self._pending_writes[:MAX_WRITE_GROUP]
        self._commit_and_settle(loop, jobs, _commit_group)

    def _commit_and_settle(
        self,
        loop: asyncio.AbstractEventLoop,
        jobs: list[_WriteJob],
        commit: Callable[[sqlite3.Connection, list[_WriteJob]], None],
    ) -> None:
        """On the writer thread: `commit` of `jobs` (a group, or a write
        begun at once), their outcomes handed to the event loop, and the
        next drain queued if more writes arrived meanwhile."""
        try:
            if self._db is None:
                raise StorageUnavailableError("the embedded store is closed")
            commit(self._db, jobs)
        except Exception as exc:
            # Nothing of the group is stored: every job fails.
            error = exc
            if isinstance(exc, sqlite3.OperationalError):
                error = StorageUnavailableError(f"embedded store error: {exc}")
            for job in jobs:
                job.error = job.error or error
        except BaseException:
            # Not an error of the write (an exit or interrupt): its callers
            # still get an answer, and the next writes still start a drain.
            for job in jobs:
                job.error = job.error or StorageUnavailableError("the embedded store stopped")
            raise
        finally:
            self._finish_drain(loop, jobs)

    def _finish_drain(self, loop: asyncio.AbstractEventLoop, jobs: list[_WriteJob]) -> None:
        """Queues the next drain if writes arrived, else marks the writer
        idle, and then hands `jobs` back: a caller resumed by its answer
        finds the writer idle, so its next small write runs at once."""
        try:
            with self._write_lock:
                more = bool(self._pending_writes)
                self._draining = more
            if more:
                self._submit_drain(loop)
        finally:
            _hand_back(loop, jobs)

    async def start(self) -> None:
        if self._db is not None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        self._db = await loop.run_in_executor(self._executor, self._open)

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.create_function(AUDIT_DIGEST, 10, audit_digest, deterministic=True)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
        # With isolation_level=None, `with db:` would not open a transaction;
        # use the default deferred mode so `with db:` commits or rolls back.
        db.isolation_level = "DEFERRED"
        migrate(db)
        create_append_statement(db)
        return db

    async def close(self) -> None:
        # Each `run` waits behind the drain queued before it: once none is
        # queued, every write handed to the writer has committed.
        for _ in range(_CLOSE_DRAIN_ROUNDS):
            with self._write_lock:
                if not self._draining:
                    break
            await self.run(lambda db: None)
        db, self._db = self._db, None
        inline, self._inline = self._inline, None
        if inline is not None:
            inline.close()
        self._readers.shutdown(wait=True)
        with self._reader_lock:
            readers, self._reader_connections = self._reader_connections, []
        for reader in readers:
            reader.close()
        if db is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, db.close)
        self._executor.shutdown(wait=True)

    async def healthy(self) -> bool:
        try:
            return await self.run(lambda db: db.execute("SELECT 1").fetchone() is not None)
        except StorageUnavailableError:
            return False


def _commit_group(db: sqlite3.Connection, jobs: list[_WriteJob]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        if len(jobs) == 1:
            _run_alone(db, jobs[0])
        else:
            for job in jobs:
                _run_job(db, job)
    except BaseException:
        db.rollback()
        raise
    _commit_open(db, jobs)


def _begin_without_waiting(db: sqlite3.Connection) -> bool:
    """Opens a write transaction if nothing holds the file's write lock
    (False, and no transaction, otherwise)."""
    began = False
    try:
        db.execute("PRAGMA busy_timeout=0")
        try:
            db.execute("BEGIN IMMEDIATE")
            began = True
        finally:
            db.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
    except sqlite3.Error:
        if began:  # only its own transaction: the writer connection is idle
            db.rollback()
        return False
    return True


def _run_at_once(db: sqlite3.Connection, job: _WriteJob) -> None:
    """`_run_alone` on the loop: a disk failure is the job's error (nothing
    of it is kept), not the group's."""
    try:
        _run_alone(db, job)
    except sqlite3.OperationalError as exc:
        job.error = StorageUnavailableError(f"embedded store error: {exc}")
        db.rollback()


def _commit_open(db: sqlite3.Connection, jobs: list[_WriteJob]) -> None:
    """Commits the open transaction of `jobs` (nothing to commit if a lone
    job was rolled back), then runs their after-commit callbacks."""
    try:
        db.commit()
    except BaseException:
        db.rollback()
        raise
    for job in jobs:
        if job.error is None and job.after_commit is not None:
            job.after_commit()


def _run_alone(db: sqlite3.Connection, job: _WriteJob) -> None:
    """A group of one job: the transaction holds only its statements, so a
    failure rolls the transaction back instead of a savepoint (two
    statements less for the writer; each waits for the GIL anew)."""
    try:
        job.result = job.work(db)
    except sqlite3.OperationalError:
        raise  # the disk failed: the caller rolls back
    except Exception as exc:
        db.rollback()
        job.error = exc


def _run_job(db: sqlite3.Connection, job: _WriteJob) -> None:
    db.execute("SAVEPOINT job")
    try:
        job.result = job.work(db)
    except sqlite3.OperationalError:
        raise  # the disk failed: the whole group rolls back
    except Exception as exc:
        db.execute("ROLLBACK TO job")
        job.error = exc
    db.execute("RELEASE job")


def _hand_back(loop: asyncio.AbstractEventLoop, jobs: list[_WriteJob]) -> None:
    """Settles `jobs` on the event loop (from any thread)."""
    with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits
        loop.call_soon_threadsafe(_settle, jobs)


def _settle(jobs: list[_WriteJob]) -> None:
    """On the event loop: gives each caller of a group its job's outcome."""
    for job in jobs:
        if job.future.done():
            continue  # its caller was cancelled
        if job.error is not None:
            job.future.set_exception(job.error)
        else:
            job.future.set_result(job.result)


def _consume(future: asyncio.Future[object]) -> None:
    if not future.cancelled():
        future.exception()
