"""The PostgreSQL side of export/import (admin/transfer.py) and inspect.

Export reads in one REPEATABLE READ, read-only transaction (one snapshot)
through a server-side cursor; rows in the order of their identity column
when they have one (the order the store allocated them), else the table's
declared order; the audit log in chain order (chain_seq is assigned at
commit, in the order of the commits, which is not always audit_id's).
Import inserts identity columns as exported (OVERRIDING SYSTEM VALUE); each
batch first moves the identity sequence past the batch's largest id, in
its transaction, so a server writing other tenants meanwhile never draws
an id the import is about to write. The sequence is moved by nextval
calls (each atomic, only ever forward), not by a read-then-setval that a
concurrent nextval could slip between and see its value handed out twice.
At the end the tenant's keys in Redis (session cache, blackboard feed) are
dropped so no replica serves a cached absence.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import asyncpg

from statekeeper.admin.tables import Table
from statekeeper.admin.transfer import Selection, TransferError, conflict, tenant_selection
from statekeeper.logs import redact
from statekeeper.storage import schemas
from statekeeper.storage.sql import postgres_mark

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import PostgresStorage

# Rows fetched per round trip of the export cursor.
PREFETCH = 500


async def connect(dsn: str) -> asyncpg.Connection:
    try:
        conn: asyncpg.Connection = await asyncpg.connect(dsn, timeout=10)
    except (OSError, asyncpg.PostgresError) as exc:
        raise TransferError(f"cannot connect to PostgreSQL at {redact(dsn)}: {exc}") from exc
    return conn


class _Postgres:
    backend = "postgres"

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self._identity: dict[str, str] = {}

    async def schema_versions(self) -> dict[str, int]:
        return {state.name: state.version for state in await schemas.postgres_states(self._conn)}

    async def columns(self, table: Table) -> list[str]:
        rows = await self._conn.fetch(
            "SELECT column_name, is_identity, is_generated FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = $1"
            " ORDER BY ordinal_position",
            table.name,
        )
        names = []
        for row in rows:
            if row["is_generated"] != "NEVER" or row["column_name"] in table.generated:
                continue
            if row["is_identity"] == "YES":
                self._identity[table.name] = row["column_name"]
            names.append(row["column_name"])
        return names

    def selection(self, table: Table, tenant: str, user: str | None) -> Selection | None:
        """What is read of `table` (None: nothing); a unit's source narrows it."""
        return tenant_selection(table, tenant, user, postgres_mark)

    async def count(self, table: Table, tenant: str, user: str | None) -> int:
        chosen = self.selection(table, tenant, user)
        if chosen is None:
            return 0
        value = await self._conn.fetchval(
            f"SELECT count(*) FROM {table.name} WHERE {chosen.where}", *chosen.params
        )
        return int(value)

    async def identity(self) -> str:
        """The server, the database (its oid: a database dropped and
        created again under the same name is another target)."""
        row = await self._conn.fetchrow(
            "SELECT coalesce(host(inet_server_addr()), 'local') AS host,"
            " coalesce(inet_server_port(), 0) AS port, current_database() AS name,"
            " (SELECT oid FROM pg_database WHERE datname = current_database()) AS oid"
        )
        assert row is not None
        return f"postgres:{row['host']}:{row['port']}/{row['name']} (oid {row['oid']})"


class PostgresSource(_Postgres):
    async def rows(
        self, table: Table, columns: Sequence[str], tenant: str, user: str | None
    ) -> AsyncIterator[Sequence[Any]]:
        chosen = self.selection(table, tenant, user)
        if chosen is None:
            return
        identity = self._identity.get(table.name)
        order = chosen.order or table.sort or identity or ", ".join(table.order)
        query = (
            f"SELECT {', '.join(columns)} FROM {table.name} WHERE {chosen.where} ORDER BY {order}"
        )
        async for record in self._conn.cursor(query, *chosen.params, prefetch=PREFETCH):
            yield tuple(record.values())


@contextlib.asynccontextmanager
async def pooled_snapshot(durable: PostgresStorage, what: str) -> AsyncIterator[asyncpg.Connection]:
    """A pooled connection of `durable` inside one read-only REPEATABLE
    READ transaction (every statement sees one snapshot): what the export
    of one archive unit reads."""
    async with (
        durable.connection(what) as conn,
        conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        yield cast(asyncpg.Connection, conn)


@contextlib.asynccontextmanager
async def source(dsn: str) -> AsyncIterator[PostgresSource]:
    conn = await connect(dsn)
    try:
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            yield PostgresSource(conn)
    finally:
        await conn.close()


class PostgresTarget(_Postgres):
    def __init__(self, conn: asyncpg.Connection, redis_url: str, redis_prefix: str) -> None:
        super().__init__(conn)
        self._redis_url = redis_url
        self._redis_prefix = redis_prefix
        self._sequences: dict[str, str] = {}

    async def identity(self) -> str:
        return f"{await super().identity()} redis prefix {self._redis_prefix!r}"

    async def insert(
        self, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        names = ", ".join(columns)
        marks = ", ".join(f"${i + 1}" for i in range(len(columns)))
        column = self._identity.get(table.name)
        overriding = " OVERRIDING SYSTEM VALUE" if column else ""
        try:
            async with self._conn.transaction():
                if column:
                    at = list(columns).index(column)
                    await self._advance(table, column, max(int(row[at]) for row in rows))
                await self._conn.executemany(
                    f"INSERT INTO {table.name} ({names}){overriding} VALUES ({marks})", rows
                )
        except asyncpg.IntegrityConstraintViolationError as exc:
            raise conflict(table, exc, _clash(exc)) from exc

    async def _advance(self, table: Table, column: str, largest: int) -> None:
        """Moves the column's sequence to `largest` at least, by nextval
        calls (atomic, forward only: ids other tenants drew past ours stay
        behind the sequence)."""
        sequence = self._sequences.get(table.name)
        if sequence is None:
            sequence = await self._conn.fetchval(
                "SELECT pg_get_serial_sequence($1, $2)", table.name, column
            )
            self._sequences[table.name] = sequence
        # In rounds: the gap read may be stale (a concurrent nextval moves it
        # on; drawing too many only leaves a hole in the ids).
        for _ in range(1000):
            gap = await self._conn.fetchval(
                "SELECT $1::bigint - CASE WHEN is_called THEN last_value ELSE last_value - 1 END"
                f" FROM {sequence}",
                largest,
            )
            if gap <= 0:
                return
            await self._conn.execute(
                "SELECT max(nextval($1::regclass)) FROM generate_series(1, $2::bigint)",
                sequence,
                gap,
            )
        raise TransferError(f"the sequence {sequence} does not move past {largest}")

    async def finish(self, tables: Sequence[Table], tenant: str) -> None:
        if self._redis_url:
            await _drop_tenant_keys(self._redis_url, self._redis_prefix, tenant)


async def _drop_tenant_keys(url: str, prefix: str, tenant: str) -> None:
    """Deletes every key of the tenant (`{prefix}:{<tenant>}:*`, one Redis
    Cluster slot): cached sessions and leases, the blackboard feed."""
    import redis.asyncio as redis_asyncio

    client = redis_asyncio.from_url(url, socket_connect_timeout=5, socket_timeout=5)
    try:
        pattern = f"{prefix}:{{{_glob_escape(tenant)}}}:*"
        batch: list[bytes] = []
        async for key in client.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                await client.delete(*batch)
                batch.clear()
        if batch:
            await client.delete(*batch)
    except (OSError, redis_asyncio.RedisError) as exc:
        raise TransferError(
            f"imported, but the tenant's Redis keys at {redact(url)} could not be dropped: {exc};"
            f" delete the keys {prefix}:{{{tenant}}}:* before serving"
        ) from exc
    finally:
        await client.aclose()


def _clash(exc: asyncpg.IntegrityConstraintViolationError) -> str:
    """What clashed: the constraint and the key, as PostgreSQL says."""
    constraint = getattr(exc, "constraint_name", None) or ""
    detail = getattr(exc, "detail", None) or str(exc)
    return f"{constraint}: {detail}" if constraint else detail


def _glob_escape(text: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in text)


@contextlib.asynccontextmanager
async def target(dsn: str, redis_url: str, redis_prefix: str) -> AsyncIterator[PostgresTarget]:
    """The database at `dsn`, migrated first (as `statekeeper migrate`)."""
    conn = await connect(dsn)
    try:
        await schemas.migrate_postgres(conn)
        yield PostgresTarget(conn, redis_url, redis_prefix)
    finally:
        await conn.close()
