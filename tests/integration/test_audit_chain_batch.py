"""The audit hash chain linked a batch at a time (session schema migration
7): records inserted in bulk, from many transactions at once, around
failures and across the upgrade verify exactly as records linked one at a
time did, and tampering with a batch is still named, on both backends."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import asyncpg
import grpc
import numpy as np
import pytest

from statekeeper.storage import schemas
from statekeeper.storage.embedded.audit_chain import insert_audit_rows
from statekeeper.storage.embedded.migrations import apply_migrations as apply_sqlite
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.sessions_schema import AUDIT_DIGEST, DATABASE_FILE, audit_digest
from statekeeper.storage.embedded.sessions_schema import MIGRATIONS as SQLITE_MIGRATIONS
from statekeeper.storage.postgres import sessions_schema as postgres_schema
from statekeeper.storage.postgres.migrations import apply_migrations as apply_postgres
from statekeeper.storage.sql import AUDIT_COLUMNS
from statekeeper_client.v1 import memory_pb2 as memory_pb
from statekeeper_client.v1.memory_pb2_grpc import MemoryServiceStub
from tests.e2e.conftest import ServerProcess
from tests.integration.conftest import ServerFactory
from tests.integration.test_audit_chain import ALPHA, BETA, KEYS, verify, write

Row = tuple[object, ...]
SQLITE_INSERT = f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)"
POSTGRES_INSERT = f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)"
# Migrations before the chain (2: the audit log), and before this change (6).
BEFORE_CHAIN, BEFORE_BATCHES = 3, 6


def rows(tenants: Sequence[str], count: int, tag: str) -> list[Row]:
    """`count` records spread over `tenants`, with text a digest must not
    mistake (quotes, non-ASCII) and times no formatting may round."""
    return [
        (
            tenants[n % len(tenants)],
            "key-\u00e9",
            "statekeeper.v1.MemoryService",
            "RecordEpisodes",
            "episode",
            f'{tag}-{n} "quoted" \\ \u6f22',
            n,
            1.7e9 + n / 3,
            f"recorded {tag} {n}",
        )
        for n in range(count)
    ]


def intact(records: int, tenants: int, older: int = 0) -> tuple[int, str]:
    tail = f", {older} older than the chain" if older else ""
    return 0, f"audit chain intact: {records} records of {tenants} tenants{tail}\n"


# ----- embedded -------------------------------------------------------------------


def sqlite_at(path: Path, version: int) -> sqlite3.Connection:
    """The store's file with the session schema up to `version`."""
    db = sqlite3.connect(path / DATABASE_FILE, isolation_level=None)
    db.create_function(AUDIT_DIGEST, 10, audit_digest, deterministic=True)
    apply_sqlite(db, "schema_migrations", [m for m in SQLITE_MIGRATIONS if m[0] <= version])
    return db


def raw_sqlite(path: Path, statement: str) -> object:
    with sqlite3.connect(path / DATABASE_FILE) as db:
        db.create_function(AUDIT_DIGEST, 10, audit_digest)
        row = db.execute(statement).fetchone()
    return None if row is None else row[0]


async def write_embedded_batches(path: Path) -> int:
    """Batches through the store's writer (group commit): linked batches,
    records left to the trigger in the same transactions, and a write that
    fails after linking its batch. Returns the records stored."""
    storage = EmbeddedStorage(path)
    await storage.start()
    try:

        def batch_then_raw(db: sqlite3.Connection) -> None:
            insert_audit_rows(db, rows(["alpha", "beta", "gamma"], 700, "batch"))
            db.executemany(SQLITE_INSERT, rows(["alpha", "beta"], 5, "raw"))
            insert_audit_rows(db, rows(["beta"], 30, "after"))

        def linked_then_fails(db: sqlite3.Connection) -> None:
            insert_audit_rows(db, rows(["alpha", "beta"], 50, "undone"))
            raise RuntimeError("the write fails after its records")

        writes = [storage.write(batch_then_raw), storage.write(linked_then_fails)]
        writes += [
            storage.write(lambda db, n=n: insert_audit_rows(db, rows(["alpha"], 1, f"one{n}")))
            for n in range(20)
        ]
        outcomes = await asyncio.gather(*writes, return_exceptions=True)
        assert [type(o) for o in outcomes[:2]] == [type(None), RuntimeError]
        return 700 + 5 + 30 + 20
    finally:
        await storage.close()


def test_embedded_batches_verify_after_the_upgrade(tmp_path: Path) -> None:
    with sqlite_at(tmp_path, BEFORE_CHAIN) as db:
        db.executemany(SQLITE_INSERT, rows(["alpha"], 3, "older"))
    with sqlite_at(tmp_path, BEFORE_BATCHES) as db:
        db.executemany(SQLITE_INSERT, rows(["alpha", "beta"], 40, "linked-one-by-one"))
    stored = asyncio.run(write_embedded_batches(tmp_path))
    store = ["--data-dir", str(tmp_path)]
    assert verify(store) == intact(3 + 40 + stored, 3, older=3)

    # A record inside a batch, changed: named.
    middle = raw_sqlite(
        tmp_path, "SELECT audit_id FROM audit_log WHERE tenant = 'gamma' AND chain_seq = 100"
    )
    raw_sqlite(tmp_path, f"UPDATE audit_log SET summary = 'forged' WHERE audit_id = {middle}")
    assert verify(store, "--tenant", "gamma") == (
        1,
        f"audit chain broken at record {middle} (tenant gamma): content does not match its hash\n",
    )
    # One taken out of the middle of a batch: the gap is named.
    raw_sqlite(tmp_path, "DELETE FROM audit_log WHERE tenant = 'beta' AND chain_seq = 200")
    code, output = verify(store, "--tenant", "beta")
    assert code == 1 and "record 200 of the chain is missing" in output, output


def test_linked_rows_are_checked_before_they_are_stored(tmp_path: Path) -> None:
    with sqlite_at(tmp_path, len(SQLITE_MIGRATIONS) + 100) as db:
        with pytest.raises(TypeError):
            insert_audit_rows(db, [("alpha", "p", "s", "m", "t", "e", "1", 1.0, "x")])
        with pytest.raises(ValueError):
            insert_audit_rows(db, [("alpha", "p", "s")])
        assert db.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)


# ----- PostgreSQL -----------------------------------------------------------------


async def postgres_at(dsn: str, version: int) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        migrations = postgres_schema.MIGRATIONS[:version]
        await apply_postgres(
            conn, "schema_migrations", postgres_schema.MIGRATION_LOCK_KEY, migrations
        )
    finally:
        await conn.close()


async def on_postgres(dsn: str, statement: str, *args: object) -> object:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval(statement, *args)
    finally:
        await conn.close()


async def concurrent_transactions(dsn: str, writers: int, each: int) -> int:
    """`writers` connections committing transactions of 1 to 300 records of
    three tenants at once; some roll back whole, some a savepoint inside.
    Returns the records committed."""
    committed = 0

    async def writer(n: int) -> None:
        nonlocal committed
        chance = random.Random(n)
        conn = await asyncpg.connect(dsn)
        try:
            for i in range(each):
                batch = rows(["alpha", "beta", "gamma"][n % 3 :], chance.randint(1, 300), f"w{n}")
                kept = len(batch)
                try:
                    async with conn.transaction():
                        await conn.executemany(POSTGRES_INSERT, batch)
                        try:
                            async with conn.transaction():  # a savepoint
                                await conn.executemany(POSTGRES_INSERT, batch[:7])
                                if i % 3 == 0:
                                    raise LookupError("the savepoint rolls back")
                            kept += len(batch[:7])
                        except LookupError:
                            pass
                        if i % 5 == 4:
                            raise KeyError("the transaction rolls back")
                    committed += kept
                except KeyError:
                    pass
        finally:
            await conn.close()

    await asyncio.gather(*(writer(n) for n in range(writers)))
    return committed


async def imported_out_of_order(dsn: str) -> int:
    """Records inserted with their own ids, not ascending (as an import
    keeps them), in one transaction, one of them below every id of the
    chain: they are chained in the order they were inserted."""
    imported = rows(["delta"], 40, "imported")
    ids = [-1] + [10**12 + (position * 7919) % 39 for position in range(39)]
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.executemany(
                f"INSERT INTO audit_log (audit_id, {AUDIT_COLUMNS}) OVERRIDING SYSTEM VALUE"
                " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)",
                [(audit_id, *row) for audit_id, row in zip(ids, imported, strict=True)],
            )
        chained = await conn.fetch(
            "SELECT audit_id FROM audit_log WHERE tenant = 'delta' ORDER BY chain_seq"
        )
    finally:
        await conn.close()
    assert [row["audit_id"] for row in chained] == ids
    return len(ids)


async def around_savepoints_and_early_checks(dsn: str) -> int:
    """A transaction's first record rolled back with its savepoint, and
    records inserted after an early check (SET CONSTRAINTS ... IMMEDIATE):
    every record committed is still linked."""
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            with pytest.raises(LookupError):
                async with conn.transaction():
                    await conn.executemany(POSTGRES_INSERT, rows(["alpha"], 3, "rolled-back"))
                    raise LookupError("the savepoint rolls back")
            await conn.executemany(POSTGRES_INSERT, rows(["alpha", "beta"], 4, "kept"))
            await conn.execute("SET CONSTRAINTS ALL IMMEDIATE")
            await conn.executemany(POSTGRES_INSERT, rows(["beta"], 3, "after-check"))
            await conn.execute("SET CONSTRAINTS ALL DEFERRED")
            await conn.executemany(POSTGRES_INSERT, rows(["alpha"], 2, "deferred-again"))
        unlinked = await conn.fetchval(
            "SELECT count(*) FROM audit_log WHERE chain_seq IS NULL"
            " AND summary NOT LIKE 'recorded older %'"
        )
    finally:
        await conn.close()
    assert unlinked == 0
    return 4 + 3 + 2


async def migrate_all(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await schemas.migrate_postgres(conn)
    finally:
        await conn.close()


def test_postgres_batches_and_concurrent_commits_verify_after_the_upgrade(database: str) -> None:
    async def scenario() -> int:
        await postgres_at(database, BEFORE_CHAIN)
        conn = await asyncpg.connect(database)
        await conn.executemany(POSTGRES_INSERT, rows(["alpha"], 3, "older"))
        await conn.close()
        await postgres_at(database, BEFORE_BATCHES)
        conn = await asyncpg.connect(database)
        async with conn.transaction():
            await conn.executemany(POSTGRES_INSERT, rows(["alpha", "beta"], 40, "one-by-one"))
        async with conn.transaction():  # one big batch over tenants, linked at commit
            await conn.executemany(POSTGRES_INSERT, rows(["alpha", "beta", "gamma"], 2000, "big"))
        await conn.close()
        await migrate_all(database)
        big = 0
        conn = await asyncpg.connect(database)
        async with conn.transaction():
            await conn.executemany(POSTGRES_INSERT, rows(["alpha", "beta", "gamma"], 2000, "big"))
            big += 2000
        await conn.close()
        racing = await concurrent_transactions(database, writers=6, each=10)
        imported = await imported_out_of_order(database)
        return (
            40 + 2000 + big + racing + imported + await around_savepoints_and_early_checks(database)
        )

    stored = asyncio.run(scenario())
    store = ["--postgres-dsn", database]
    assert verify(store) == intact(3 + stored, 4, older=3)

    middle = asyncio.run(
        on_postgres(
            database,
            "SELECT audit_id FROM audit_log WHERE tenant = 'gamma' AND chain_seq = $1",
            900,
        )
    )
    asyncio.run(
        on_postgres(database, f"UPDATE audit_log SET summary = 'x' WHERE audit_id = {middle}")
    )
    assert verify(store, "--tenant", "gamma") == (
        1,
        f"audit chain broken at record {middle} (tenant gamma): content does not match its hash\n",
    )
    asyncio.run(
        on_postgres(database, "DELETE FROM audit_log WHERE tenant = 'beta' AND chain_seq = 1500")
    )
    code, output = verify(store, "--tenant", "beta")
    assert code == 1 and "record 1500 of the chain is missing" in output, output


# ----- through the API ------------------------------------------------------------


@pytest.fixture(params=["embedded", "production"])
def served(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ServerProcess, list[str]]]:
    """A server of two tenants and the store flags of `audit verify`."""
    if request.param == "embedded":
        server = ServerProcess(tmp_path, extra_args=KEYS)
        server.start()
        try:
            yield server, ["--data-dir", str(tmp_path)]
        finally:
            server.kill()
        return
    factory: ServerFactory = request.getfixturevalue("production_server")
    dsn: str = request.getfixturevalue("database")
    yield factory(*KEYS), ["--postgres-dsn", dsn]


def record_episodes(server: ServerProcess, metadata: list[tuple[str, str]], count: int) -> None:
    vectors = np.random.default_rng(count).standard_normal((count, 16)).astype(np.float32)
    items = [
        memory_pb.RecordEpisodeRequest(
            user_id=f"user-{n % 3}",
            user_message=f"episode {n} of a batch",
            assistant_response="noted",
            embedding=[float(v) for v in vectors[n]],
        )
        for n in range(count)
    ]
    with grpc.insecure_channel(server.address) as channel:
        response = MemoryServiceStub(channel).RecordEpisodes(
            memory_pb.RecordEpisodesRequest(episodes=items), metadata=metadata
        )
    assert len(response.results) == count


def test_record_episodes_batches_keep_one_chain_per_tenant(
    served: tuple[ServerProcess, list[str]],
) -> None:
    server, store = served
    record_episodes(server, ALPHA, 500)
    write(server, BETA, 3)
    record_episodes(server, BETA, 200)
    write(server, ALPHA, 3)
    server.kill()
    assert verify(store) == intact(500 + 3 + 200 + 3, 2)
