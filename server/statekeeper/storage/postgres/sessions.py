"""PostgreSQL durable tier: sessions, messages, versions, receipts and audit.

Every method is one transaction on a pooled asyncpg connection; a method
that returns has committed. Compare-and-swap is a conditional UPDATE
(`... AND version = expected`), which PostgreSQL re-checks on the newest row
after waiting for a concurrent writer's row lock, so of two writers with the
same expected version exactly one wins, on any number of replicas.

Connection-level failures (refused, reset, admin shutdown, timeouts) become
`StorageUnavailableError` with a message saying PostgreSQL cannot be reached;
the pool drops its connections and reconnects on the next call, so the
server recovers by itself when PostgreSQL is back.

The schema is a list of versioned migrations (MIGRATIONS, append only),
applied by `statekeeper migrate` or `serve --migrate-on-start` in one
transaction under an advisory lock, so replicas starting together apply each
migration once. Without --migrate-on-start the server refuses to start on an
older schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, TypeVar

import asyncpg
import asyncpg.pool

from statekeeper import logs
from statekeeper.core import observations
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
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.postgres.erasure import run_steps
from statekeeper.storage.shared.erasure import Step, session_steps
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
    postgres_mark,
    session_list_query,
    version_from_row,
)

log = logging.getLogger(__name__)

_SQL = session_statements(postgres_mark, "NOT rolled_back")
_INSERT_AUDIT = f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)"

M = TypeVar("M", Message, MessageMeta)

if TYPE_CHECKING:
    Connection = (
        asyncpg.Connection[asyncpg.Record] | asyncpg.pool.PoolConnectionProxy[asyncpg.Record]
    )


# A whole session change in one statement: the compare-and-swap UPDATE, and
# only if it matched, the version, the new messages (zipped from arrays), the
# append receipt and the audit record. A duplicate receipt fails the statement
# as a whole (append_receipts_pkey). The audit record goes in already linked
# into the tenant's chain (audit_append_linked: the statement is its
# transaction's work, so the commit rewrites no audit row); its CTE is an
# aggregate (one row, whatever matched), which the final query reads so
# that it runs.
_APPLY_CHANGE = f"""
WITH changed AS (
    UPDATE sessions SET agent_id = $3, status = $4, expire_time = $5, version = $6, state = $7
    WHERE tenant = $1 AND session_id = $2 AND version = $8
    RETURNING tenant, session_id
), new_version AS (
    INSERT INTO session_versions
        (tenant, session_id, version, parent_version, change_kind, create_time, snapshot)
    SELECT tenant, session_id, $6, $9, $10, $11, $12 FROM changed
), new_messages AS (
    INSERT INTO messages (tenant, session_id, {MESSAGE_INSERT_COLUMNS})
    SELECT c.tenant, c.session_id, m.* FROM changed c, unnest(
        $13::bigint[], $14::text[], $15::integer[], $16::text[], $17::text[], $18::text[],
        $19::text[], $20::text[], $21::integer[], $22::float8[], $23::boolean[],
        $35::text[]) AS m
), receipt AS (
    INSERT INTO append_receipts
        (tenant, request_id, session_id, first_sequence, last_sequence, version)
    SELECT tenant, $24::text, session_id, $25, $26, $6 FROM changed WHERE $24::text IS NOT NULL
), audit AS (
    SELECT count(audit_append_linked(ARRAY[tenant], ARRAY[$27::text], ARRAY[$28::text],
        ARRAY[$29::text], ARRAY[$30::text], ARRAY[$31::text], ARRAY[$32::bigint],
        ARRAY[$33::float8], ARRAY[$34::text])) AS linked
    FROM changed WHERE $27::text IS NOT NULL
)
SELECT count(*) FROM changed CROSS JOIN audit
"""


def _change_row(change: SessionChange, state: str, own_snapshot: str | None) -> tuple[object, ...]:
    """A change's values in the order of _APPLY_GROUP's input columns (and of
    _APPLY_CHANGE's from $2 on, its messages set in before the receipt's):
    session_id, agent_id, status, expire_time, version, state, expected,
    parent_version, change_kind, create_time, snapshot, request_id,
    first_sequence, last_sequence. A snapshot that is the new record itself
    is `own_snapshot`."""
    record, version = change.record, change.version
    return (
        record.session_id,
        record.agent_id,
        int(record.status),
        record.expire_time,
        record.version,
        state,
        change.expected_version,
        version.parent_version,
        int(version.change_kind),
        version.create_time,
        own_snapshot if version.snapshot is record else record_to_json(version.snapshot),
        change.request_id or None,
        *receipt_sequences(change),
    )


def _apply_change_args(tenant: str, change: SessionChange, state: str) -> list[object]:
    columns: list[list[object]] = [[] for _ in range(12)]
    for message in change.new_messages:
        _append_row(columns, message_values(tenant, "", message)[2:])
    audit = change.audit
    audit_args = audit_values(audit, tenant)[1:] if audit else (None,) * 8
    # The snapshot is the new record itself (encoded once).
    row = _change_row(change, state, state)
    return [
        tenant,
        *row[:11],
        *columns[:11],
        *row[11:],
        *audit_args,
        columns[11],  # $35, tool_call_ids: added after the others kept their numbers
    ]


# Concurrent changes of one tenant, all to different sessions, in one
# statement (one commit): the compare-and-swap UPDATE of every session whose
# version still matches (rows locked in session order, so two groups never
# deadlock), then for those only their versions, messages, receipts and audit
# records (in arrival order). It returns the sessions it changed; a change
# whose session is not among them failed its compare-and-swap alone. A
# duplicate receipt fails the statement as a whole (the changes are then
# applied one by one, so that only the duplicate fails). The audit records go
# in already linked, as in _APPLY_CHANGE.
_APPLY_GROUP = f"""
WITH input AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::integer[], $5::float8[], $6::bigint[],
        $7::text[], $8::bigint[], $9::bigint[], $10::integer[], $11::float8[], $12::text[],
        $13::text[], $14::bigint[], $15::bigint[])
    AS c(session_id, agent_id, status, expire_time, version, state, expected, parent_version,
        change_kind, create_time, snapshot, request_id, first_sequence, last_sequence)
), locked AS (
    SELECT s.session_id FROM sessions s JOIN input c ON c.session_id = s.session_id
    WHERE s.tenant = $1 AND s.version = c.expected
    ORDER BY s.session_id FOR UPDATE OF s
), changed AS (
    UPDATE sessions s SET agent_id = c.agent_id, status = c.status,
        expire_time = c.expire_time, version = c.version, state = c.state
    FROM input c JOIN locked l ON l.session_id = c.session_id
    WHERE s.tenant = $1 AND s.session_id = c.session_id AND s.version = c.expected
    RETURNING s.session_id
), new_version AS (
    INSERT INTO session_versions
        (tenant, session_id, version, parent_version, change_kind, create_time, snapshot)
    SELECT $1, c.session_id, c.version, c.parent_version, c.change_kind, c.create_time,
        coalesce(c.snapshot, c.state)
    FROM input c JOIN changed d ON d.session_id = c.session_id
), new_messages AS (
    INSERT INTO messages (tenant, session_id, {MESSAGE_INSERT_COLUMNS})
    SELECT $1, m.* FROM unnest(
        $16::text[], $17::bigint[], $18::text[], $19::integer[], $20::text[], $21::text[],
        $22::text[], $23::text[], $24::text[], $25::integer[], $26::float8[], $27::boolean[],
        $28::text[])
        AS m(session_id, sequence, message_id, role, content, name, tool_calls, tool_call_id,
            metadata, token_count, create_time, rolled_back, tool_call_ids)
    WHERE m.session_id IN (SELECT session_id FROM changed)
), receipt AS (
    INSERT INTO append_receipts
        (tenant, request_id, session_id, first_sequence, last_sequence, version)
    SELECT $1, c.request_id, c.session_id, c.first_sequence, c.last_sequence, c.version
    FROM input c JOIN changed d ON d.session_id = c.session_id WHERE c.request_id IS NOT NULL
), audit AS (
    SELECT audit_append_linked(array_fill($1::text, ARRAY[count(*)::integer]),
        array_agg(a.principal ORDER BY a.arrival), array_agg(a.service ORDER BY a.arrival),
        array_agg(a.method ORDER BY a.arrival), array_agg(a.entity_type ORDER BY a.arrival),
        array_agg(a.entity_id ORDER BY a.arrival), array_agg(a.revision ORDER BY a.arrival),
        array_agg(a.time ORDER BY a.arrival), array_agg(a.summary ORDER BY a.arrival))
        AS linked
    FROM unnest($29::text[], $30::text[], $31::text[], $32::text[], $33::text[], $34::text[],
        $35::bigint[], $36::float8[], $37::text[], $38::integer[])
        AS a(session_id, principal, service, method, entity_type, entity_id, revision, time,
            summary, arrival)
    WHERE a.session_id IN (SELECT session_id FROM changed)
)
SELECT c.session_id FROM changed c CROSS JOIN audit
"""
# At most this many changes share one statement.
_GROUP_MAX = 128


def _apply_group_args(tenant: str, group: Sequence[_Queued]) -> list[object]:
    """_APPLY_GROUP's arguments: a column per field, a row per change (a
    row per message, a row per audit record)."""
    sessions: list[list[object]] = [[] for _ in range(14)]
    messages: list[list[object]] = [[] for _ in range(13)]
    audits: list[list[object]] = [[] for _ in range(10)]
    for arrival, queued in enumerate(group):
        change, record = queued.change, queued.change.record
        # The snapshot is the new record itself (sent once, NULL here).
        _append_row(sessions, _change_row(change, queued.state, None))
        for message in change.new_messages:
            _append_row(messages, message_values(tenant, record.session_id, message)[1:])
        if change.audit is not None:
            audit_row = (record.session_id, *audit_values(change.audit, tenant)[1:], arrival)
            _append_row(audits, audit_row)
    return [tenant, *sessions, *messages, *audits]


def _append_row(columns: list[list[object]], row: Sequence[object]) -> None:
    for column, value in zip(columns, row, strict=True):
        column.append(value)


@dataclasses.dataclass
class _Queued:
    """A change (with its new record's encoding) on its way to PostgreSQL;
    `future` is set while it waits for the next group of its tenant."""

    change: SessionChange
    state: str
    future: asyncio.Future[None] | None = None


# Reading a window tail: the first page holds a typical window (a 4,000-token
# budget is ~150-250 messages); longer ones grow the page up to the cap.
_TAIL_FIRST_PAGE = 256
_TAIL_MAX_PAGE = 4096
_NO_SEQUENCE = 2**62

# Failures that mean "PostgreSQL cannot serve now", as opposed to a bad query.
_UNAVAILABLE = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InsufficientResourcesError,
    asyncpg.exceptions.TransactionRollbackError,
    asyncpg.exceptions.CannotConnectNowError,
)


async def _reset(conn: Connection) -> None:
    """What a connection needs before going back to the pool. The default
    (RESET ALL, UNLISTEN, ...) costs a round trip per call, and this store
    changes no session state; an unfinished transaction is all there is."""
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")


@contextlib.asynccontextmanager
async def _no_transaction(conn: Connection) -> AsyncIterator[None]:
    yield


def _transaction_if(needed: bool) -> Callable[[Connection], AbstractAsyncContextManager[Any]]:
    """A transaction when a change takes several statements, else nothing."""
    return (lambda conn: conn.transaction()) if needed else _no_transaction


def redact(dsn: str) -> str:
    """The DSN without its password (user info or `password=` parameter), for logs."""
    return logs.redact(dsn)


class PostgresStorage(Storage):
    """The durable tier on its own (no cache): a pool of asyncpg connections."""

    def __init__(
        self,
        dsn: str,
        pool_size: int = 10,
        migrate_on_start: bool = False,
        command_timeout: float = 10.0,
        connect_timeout: float = 5.0,
    ) -> None:
        self._dsn = dsn
        self._pool_size = pool_size
        self._migrate_on_start = migrate_on_start
        self._command_timeout = command_timeout
        self._connect_timeout = connect_timeout
        self._pool: asyncpg.Pool[asyncpg.Record] | None = None
        self.sessions: PostgresSessionStore = PostgresSessionStore(self)
        self.audit = PostgresAuditStore(self)

    @property
    def description(self) -> str:
        return f"PostgreSQL at {redact(self._dsn)} (pool of {self._pool_size})"

    async def start(self) -> None:
        if self._pool is not None:
            return
        with _mapped("start"):
            pool = await asyncpg.create_pool(
                self._dsn,
                min_size=0,  # no background reconnect loop while PostgreSQL is down
                max_size=self._pool_size,
                command_timeout=self._command_timeout,
                timeout=self._connect_timeout,
                server_settings={"application_name": "statekeeper"},
                reset=_reset,
            )
        try:
            await self._prepare_schema(pool)
        except BaseException:
            await pool.close()
            raise
        self._pool = pool

    async def _prepare_schema(self, pool: asyncpg.Pool[asyncpg.Record]) -> None:
        """Migrates (with migrate_on_start) or checks every capability's
        schema, not only the session tables (storage/schemas.py)."""
        from statekeeper.storage import schemas

        with _mapped("schema check"):
            async with pool.acquire() as conn:
                if self._migrate_on_start:
                    await schemas.migrate_postgres(conn)
                states = await schemas.postgres_states(conn)
        schemas.refuse_out_of_date(states)

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def healthy(self) -> bool:
        try:
            async with self.connection("health check") as conn:
                await conn.fetchval("SELECT 1", timeout=min(self._command_timeout, 2.0))
            return True
        except StorageUnavailableError:
            return False

    def pool_stats(self) -> tuple[int, int, int] | None:
        """(connections open, idle, maximum) for metrics; None before start."""
        pool = self._pool
        if pool is None:
            return None
        return pool.get_size(), pool.get_idle_size(), pool.get_max_size()

    async def reconnect(self) -> None:
        """Replaces every pooled connection on its next use (after an outage)."""
        if self._pool is not None:
            await self._pool.expire_connections()

    @contextlib.asynccontextmanager
    async def connection(self, what: str) -> AsyncIterator[Connection]:
        if self._pool is None:
            raise StorageUnavailableError("the PostgreSQL store is not open")
        try:
            with _mapped(what):
                async with self._pool.acquire(timeout=self._command_timeout) as conn:
                    yield conn
        except StorageUnavailableError:
            await self.reconnect()
            raise

    @contextlib.asynccontextmanager
    async def transaction(self, what: str) -> AsyncIterator[Connection]:
        async with self.connection(what) as conn, conn.transaction():
            yield conn


@contextlib.contextmanager
def _mapped(what: str) -> Any:
    try:
        yield
    except _UNAVAILABLE as exc:
        observations.store_error("postgresql", exc)
        raise StorageUnavailableError(
            f"PostgreSQL (the durable store) is unavailable ({what} failed:"
            f" {type(exc).__name__}: {exc}); the call was not acknowledged, retry later"
        ) from exc


class PostgresSessionStore(SessionStore):
    """Changes are group-committed per tenant: while one statement of a
    tenant runs, the tenant's next changes queue and then go together in
    one statement (see _APPLY_GROUP), so concurrent appends share a commit
    (and the tenant's audit chain head, which every commit locks) instead of
    queueing for it one by one. A change returns only after its statement
    has committed."""

    def __init__(self, db: PostgresStorage) -> None:
        self._db = db
        # Tenants with a statement running, and the changes waiting for it.
        self._busy: set[str] = set()
        self._queued: dict[str, list[_Queued]] = {}
        self._committers: set[asyncio.Task[None]] = set()

    async def create_session(
        self, tenant: str, version: SessionVersion, audit: AuditRecord | None = None
    ) -> None:
        record = version.snapshot
        async with self._db.transaction("create session") as conn:
            try:
                await conn.execute(_SQL.insert_session, *session_values(tenant, record))
            except asyncpg.UniqueViolationError as exc:
                raise session_exists(record.session_id) from exc
            await _insert_version(conn, tenant, record.session_id, version)
            await _insert_audit(conn, tenant, audit)

    async def get_session(self, tenant: str, session_id: str) -> SessionRecord | None:
        async with self._db.connection("get session") as conn:
            state = await conn.fetchval(_SQL.state, tenant, session_id)
        return None if state is None else record_from_json(state)

    async def list_sessions(
        self,
        tenant: str,
        session_filter: SessionFilter,
        now: float,
        after: SessionCursor | None,
        limit: int,
    ) -> list[SessionRecord]:
        sql, params = session_list_query(tenant, session_filter, now, after, limit, postgres_mark)
        async with self._db.connection("list sessions") as conn:
            rows = await conn.fetch(sql, *params)
        return [record_from_json(row["state"]) for row in rows]

    async def apply_change(
        self, tenant: str, change: SessionChange, state: str | None = None
    ) -> None:
        """Runs the change at once (in the caller's context: its trace) when
        no statement of the tenant is running, else queues it for the
        tenant's next group. `state`: the new record's encoding, if the
        caller has it."""
        queued = _Queued(change, state or record_to_json(change.record))
        if change.visibility_changed:
            await self._apply_one(tenant, queued)
            return
        if tenant in self._busy:
            queued.future = asyncio.get_running_loop().create_future()
            queued.future.add_done_callback(_consume)
            self._queued.setdefault(tenant, []).append(queued)
            # A cancelled caller cancels only its future: the change stays
            # queued and commits with its group (as a running statement would).
            await queued.future
            return
        self._busy.add(tenant)
        try:
            await self._apply_one(tenant, queued)
        finally:
            self._hand_over(tenant)

    def _hand_over(self, tenant: str) -> None:
        """After a tenant's statement: a committer for what queued meanwhile."""
        if not self._queued.get(tenant):
            self._busy.discard(tenant)
            return
        task = asyncio.create_task(
            self._commit_queued(tenant), name="session-group", context=contextvars.Context()
        )
        self._committers.add(task)
        task.add_done_callback(self._committers.discard)

    async def _commit_queued(self, tenant: str) -> None:
        try:
            while group := self._next_group(tenant):
                await self._commit_group(tenant, group)
        finally:
            self._busy.discard(tenant)
            # Only if cancelled (shutdown) can changes be left: fail them.
            left = self._queued.pop(tenant, [])
            closing = StorageUnavailableError("the PostgreSQL store is closing; retry the call")
            _settle(left, [closing] * len(left))

    def _next_group(self, tenant: str) -> list[_Queued]:
        """The oldest queued changes, at most one per session (a later change
        of the same session waits for the next group: its compare-and-swap
        needs the first one's outcome)."""
        queue = self._queued.pop(tenant, [])
        group: list[_Queued] = []
        sessions: set[str] = set()
        rest: list[_Queued] = []
        for queued in queue:
            session_id = queued.change.record.session_id
            if len(group) < _GROUP_MAX and session_id not in sessions:
                sessions.add(session_id)
                group.append(queued)
            else:
                rest.append(queued)
        if rest:
            self._queued[tenant] = rest
        return group

    async def _commit_group(self, tenant: str, group: list[_Queued]) -> None:
        """Settles every future of the group (never raises but on cancellation)."""
        outcomes: list[BaseException | None]
        try:
            if len(group) == 1:
                outcomes = [await _outcome(self._apply_one(tenant, group[0]))]
            else:
                outcomes = await self._apply_many(tenant, group)
        except asyncio.CancelledError:
            outcomes = [StorageUnavailableError("the PostgreSQL store is closing; retry the call")]
            outcomes *= len(group)
            _settle(group, outcomes)
            raise
        except Exception as exc:
            outcomes = [exc] * len(group)
        _settle(group, outcomes)

    async def _apply_many(self, tenant: str, group: list[_Queued]) -> list[BaseException | None]:
        changes = [queued.change for queued in group]
        try:
            async with self._db.connection("apply changes") as conn:
                rows = await conn.fetch(_APPLY_GROUP, *_apply_group_args(tenant, group))
                changed = {row["session_id"] for row in rows}
                return [
                    None
                    if change.record.session_id in changed
                    else await _outcome(
                        _explain_cas_failure(
                            conn, tenant, change.record.session_id, change.expected_version
                        )
                    )
                    for change in changes
                ]
        except asyncpg.UniqueViolationError:
            # A request id used before (or twice in the group); nothing was
            # written. One by one, only the duplicate fails.
            return list(
                await asyncio.gather(*(_outcome(self._apply_one(tenant, q)) for q in group))
            )

    async def _apply_one(self, tenant: str, queued: _Queued) -> None:
        """One statement (one round trip) applies the whole change; only a
        rollback's visibility reset needs a second one, in a transaction."""
        change = queued.change
        steps = _transaction_if(change.visibility_changed)
        async with self._db.connection("apply change") as conn, steps(conn):
            try:
                args = _apply_change_args(tenant, change, queued.state)
                changed = await conn.fetchval(_APPLY_CHANGE, *args)
            except asyncpg.UniqueViolationError as exc:
                if exc.constraint_name != "append_receipts_pkey":
                    raise
                raise request_reused(change.request_id) from exc
            if not changed:
                await _explain_cas_failure(
                    conn, tenant, change.record.session_id, change.expected_version
                )
            if change.visibility_changed:
                await _reset_visibility(conn, tenant, change.record)

    async def delete_session(
        self,
        tenant: str,
        session_id: str,
        expected_version: int,
        audit: AuditRecord | None = None,
    ) -> None:
        async with self._db.transaction("delete session") as conn:
            deleted = await conn.fetchval(
                "DELETE FROM sessions WHERE tenant=$1 AND session_id=$2"
                " AND ($3::bigint <= 0 OR version = $3) RETURNING version",
                tenant,
                session_id,
                expected_version,
            )
            if deleted is None:
                await _explain_cas_failure(conn, tenant, session_id, expected_version)
            await _insert_audit(conn, tenant, audit)

    async def list_messages(
        self,
        tenant: str,
        session_id: str,
        after_sequence: int,
        limit: int,
        include_rolled_back: bool,
    ) -> list[Message]:
        sql = _SQL.all_messages if include_rolled_back else _SQL.visible_messages
        async with self._db.connection("list messages") as conn:
            rows = await conn.fetch(sql, tenant, session_id, after_sequence, limit)
        return [message_from_row(row) for row in rows]

    async def get_messages(
        self, tenant: str, session_id: str, sequences: Sequence[int]
    ) -> list[Message]:
        async with self._db.connection("get messages") as conn:
            rows = await conn.fetch(
                f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant=$1 AND session_id=$2"
                " AND sequence = ANY($3::bigint[]) ORDER BY sequence",
                tenant,
                session_id,
                sorted(set(sequences)),
            )
        return [message_from_row(row) for row in rows]

    async def list_window_tail(
        self,
        tenant: str,
        session_id: str,
        after_sequence: int,
        max_tokens: int,
        max_messages: int,
    ) -> list[MessageMeta]:
        tail: WindowTail[MessageMeta] = WindowTail(max_tokens, max_messages)
        return await self._read_tail(
            tenant, session_id, after_sequence, WINDOW_META_COLUMNS, meta_from_row, tail
        )

    async def list_window_messages(
        self, tenant: str, session_id: str, after_sequence: int, max_tokens: int
    ) -> list[Message]:
        tail: WindowTail[Message] = WindowTail(max_tokens, _NO_SEQUENCE)
        return await self._read_tail(
            tenant, session_id, after_sequence, MESSAGE_COLUMNS, message_from_row, tail
        )

    async def _read_tail(
        self,
        tenant: str,
        session_id: str,
        after_sequence: int,
        columns: str,
        from_row: Callable[[asyncpg.Record], M],
        tail: WindowTail[M],
    ) -> list[M]:
        before, page = _NO_SEQUENCE, _TAIL_FIRST_PAGE
        async with self._db.connection("read window") as conn:
            while True:
                rows = await conn.fetch(
                    f"SELECT {columns} FROM messages"
                    " WHERE tenant=$1 AND session_id=$2 AND sequence > $3 AND sequence < $4"
                    " AND NOT rolled_back ORDER BY sequence DESC LIMIT $5",
                    tenant,
                    session_id,
                    after_sequence,
                    before,
                    page,
                )
                for row in rows:
                    if tail.add(from_row(row)):
                        return tail.messages()
                if len(rows) < page:
                    return tail.messages()
                # Longer than expected (large budget, small messages): read
                # on in growing pages, so a huge window takes few round trips.
                before, page = rows[-1]["sequence"], min(page * 4, _TAIL_MAX_PAGE)

    async def list_recent_messages(
        self, tenant: str, session_id: str, after_sequence: int, before_sequence: int, limit: int
    ) -> list[Message]:
        async with self._db.connection("list recent messages") as conn:
            rows = await conn.fetch(
                _SQL.recent_messages,
                tenant,
                session_id,
                after_sequence,
                before_sequence,
                limit,
            )
        return [message_from_row(row) for row in reversed(rows)]

    async def get_append_receipt(self, tenant: str, request_id: str) -> AppendReceipt | None:
        async with self._db.connection("get receipt") as conn:
            row = await conn.fetchrow(_SQL.receipt, tenant, request_id)
        return None if row is None else receipt_from_row(row)

    async def list_versions(
        self, tenant: str, session_id: str, before_version: int, limit: int
    ) -> list[SessionVersion]:
        async with self._db.connection("list versions") as conn:
            rows = await conn.fetch(
                _SQL.versions, tenant, session_id, version_bound(before_version), limit
            )
        return [version_from_row(row) for row in rows]

    async def get_version(
        self, tenant: str, session_id: str, version: int
    ) -> SessionVersion | None:
        async with self._db.connection("get version") as conn:
            row = await conn.fetchrow(_SQL.version, tenant, session_id, version)
        return None if row is None else version_from_row(row)

    async def delete_expired_sessions(
        self, now: float, limit: int, audit: AuditRecord | None = None
    ) -> int:
        return len(await self.delete_expired(now, limit, audit))

    async def delete_expired(
        self, now: float, limit: int, audit: AuditRecord | None = None
    ) -> list[tuple[str, str]]:
        """delete_expired_sessions, returning the (tenant, session_id) deleted.

        Rows are claimed with FOR UPDATE SKIP LOCKED, so concurrent sweepers
        on several replicas split the work instead of colliding, and the
        expiry is re-checked on the locked row: a TTL extended meanwhile
        keeps its session.
        """
        async with self._db.transaction("sweep") as conn:
            rows = await conn.fetch(
                "WITH doomed AS (SELECT tenant, session_id FROM sessions"
                " WHERE expire_time <= $1 ORDER BY expire_time LIMIT $2"
                " FOR UPDATE SKIP LOCKED)"
                " DELETE FROM sessions s USING doomed d"
                " WHERE s.tenant = d.tenant AND s.session_id = d.session_id"
                " AND s.expire_time <= $1 RETURNING s.tenant, s.session_id, s.version",
                now,
                limit,
            )
            if audit is not None and rows:
                # In tenant order: the audit chain locks each tenant's head at
                # commit in insertion order, so sweepers on other replicas
                # take them in the same order and cannot deadlock.
                await conn.executemany(
                    _INSERT_AUDIT,
                    [
                        audit_values(
                            audit.for_entity(row["tenant"], row["session_id"], row["version"]),
                            row["tenant"],
                        )
                        for row in sorted(rows, key=lambda row: (row["tenant"], row["session_id"]))
                    ],
                )
        return [(row["tenant"], row["session_id"]) for row in rows]

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        counts, _ = await self.erase_sessions(tenant, subject, dry_run)
        return counts

    async def erase_sessions(
        self,
        tenant: str,
        subject: ErasureSubject,
        dry_run: bool,
        invalidate: Callable[[list[str]], Awaitable[None]] | None = None,
    ) -> tuple[ErasureCounts, list[str]]:
        """erase_user, returning the ids of the sessions deleted. `invalidate`
        gets each batch's deleted session ids inside the batch's transaction
        and again after its commit (a cached copy dropped before the commit
        cannot outlive an interruption; one read back in between is dropped
        after), so a cache never serves a deleted session."""

        async def committed(step: Step, values: Sequence[object]) -> None:
            if invalidate is not None and step.kind == "sessions":
                await invalidate([str(v) for v in values])

        async def in_batch(conn: Connection, step: Step, values: Sequence[object]) -> None:
            await committed(step, values)

        erasure = await run_steps(
            self._db,
            session_steps(tenant, subject),
            dry_run,
            in_batch=in_batch,
            committed=committed,
        )
        return erasure.counts, [str(i) for i in erasure.values("sessions", "sessions")]


class PostgresAuditStore(AuditStore):
    def __init__(self, db: PostgresStorage) -> None:
        self._db = db

    async def list_audit(
        self, tenant: str | None, audit_filter: AuditFilter, before_id: int, limit: int
    ) -> list[AuditRecord]:
        sql, params = audit_query(tenant, audit_filter, before_id, limit, postgres_mark)
        async with self._db.connection("list audit") as conn:
            rows = await conn.fetch(sql, *params)
        return [audit_from_row(row) for row in rows]

    async def audit_chain(
        self, tenant: str | None
    ) -> tuple[list[ChainLink], dict[str, tuple[int, str]]]:
        where = "" if tenant is None else " WHERE tenant = $1"
        params = [] if tenant is None else [tenant]
        # One snapshot: records and heads as of the same commit.
        async with (
            self._db.connection("verify audit chain") as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            rows = await conn.fetch(
                "SELECT audit_id, tenant, chain_seq, prev_hash, hash,"
                f" audit_digest(coalesce(prev_hash, ''), a) AS recomputed FROM audit_log a{where}"
                " ORDER BY tenant, chain_seq NULLS FIRST, audit_id",
                *params,
            )
            heads = await conn.fetch(
                f"SELECT tenant, seq, hash FROM audit_chain_heads{where}", *params
            )
        return [ChainLink(**dict(row)) for row in rows], {
            row["tenant"]: (row["seq"], row["hash"]) for row in heads
        }

    async def record_audit(self, record: AuditRecord) -> None:
        async with self._db.transaction("record audit") as conn:
            await _insert_audit(conn, record.tenant, record)


async def _outcome(step: Awaitable[None]) -> Exception | None:
    """None if `step` succeeded, else the exception it raised."""
    try:
        await step
    except Exception as exc:
        return exc
    return None


def _settle(group: list[_Queued], outcomes: Sequence[BaseException | None]) -> None:
    for queued, outcome in zip(group, outcomes, strict=True):
        if queued.future is None or queued.future.done():
            continue
        if outcome is None:
            queued.future.set_result(None)
        else:
            queued.future.set_exception(outcome)


def _consume(future: asyncio.Future[None]) -> None:
    """Marks a queued change's outcome as read: its caller may be gone."""
    if not future.cancelled():
        future.exception()


async def _explain_cas_failure(
    conn: Connection, tenant: str, session_id: str, expected_version: int
) -> None:
    """Raises NotFoundError or ConcurrentModificationError (always raises)."""
    current = await conn.fetchval(_SQL.current_version, tenant, session_id)
    raise cas_failure(session_id, current, expected_version)


async def _insert_version(
    conn: Connection, tenant: str, session_id: str, version: SessionVersion
) -> None:
    await conn.execute(_SQL.insert_version, *version_values(tenant, session_id, version))


async def _reset_visibility(conn: Connection, tenant: str, record: SessionRecord) -> None:
    lows = [low for low, _ in record.visible_ranges]
    highs = [high for _, high in record.visible_ranges]
    await conn.execute(
        "UPDATE messages SET rolled_back = NOT EXISTS (SELECT 1 FROM"
        " unnest($3::bigint[], $4::bigint[]) AS r(low, high)"
        " WHERE sequence BETWEEN r.low AND r.high)"
        " WHERE tenant=$1 AND session_id=$2",
        tenant,
        record.session_id,
        lows,
        highs,
    )


async def _insert_audit(conn: Connection, tenant: str, audit: AuditRecord | None) -> None:
    if audit is not None:
        await conn.execute(_INSERT_AUDIT, *audit_values(audit, tenant))
