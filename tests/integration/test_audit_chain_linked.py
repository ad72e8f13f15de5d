"""Audit records inserted already linked on PostgreSQL (session schema
migration 10, audit_append_linked): they share one gap-free chain per tenant
with records the pass at commit links, in the same transaction or in
concurrent ones, over several connections; the commit rewrites none of them;
and checkpoint saves, writes and claims, blackboard commits and batches of
episodes insert their records so."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Sequence

import asyncpg
import grpc

from statekeeper_client.v1 import checkpoint_pb2 as cp
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1 import session_pb2 as sp
from statekeeper_client.v1.checkpoint_pb2_grpc import CheckpointServiceStub
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.harness.deadlines import wait_until
from tests.integration.conftest import ServerFactory
from tests.integration.test_audit_chain import ALPHA, BETA, KEYS, verify, write
from tests.integration.test_audit_chain_batch import (
    POSTGRES_INSERT,
    Row,
    intact,
    migrate_all,
    record_episodes,
    rows,
)

TENANTS = ["alpha", "beta", "gamma", "delta"]
LINKED = "SELECT audit_append_linked($1::text[], $2::text[], $3::text[], $4::text[],"
LINKED += " $5::text[], $6::text[], $7::bigint[], $8::float8[], $9::text[])"


def columns(batch: Sequence[Row]) -> list[list[object]]:
    """`batch` as audit_append_linked takes it: one array per column."""
    return [list(column) for column in zip(*batch, strict=True)]


async def append_linked(conn: asyncpg.Connection, batch: Sequence[Row]) -> int:
    return int(await conn.fetchval(LINKED, *columns(batch)))


async def mixed_writer(dsn: str, n: int, each: int) -> int:
    """Transactions of four kinds on one connection, at random: a linked
    call of several tenants alone (as cp_save or bb_commit is); records of
    one tenant inserted unlinked before and after a linked call; a linked
    call rolled back with its savepoint between unlinked records; a mixed
    transaction rolled back whole. Returns the records committed."""
    chance = random.Random(n)
    committed = 0
    conn = await asyncpg.connect(dsn)
    try:
        for i in range(each):
            kind = chance.randrange(4)
            tag = f"w{n}-{i}"
            if kind == 0:
                tenants = chance.sample(TENANTS, chance.randint(1, len(TENANTS)))
                committed += await append_linked(conn, rows(tenants, chance.randint(1, 40), tag))
                continue
            # One tenant per mixed transaction: its linked call holds the
            # tenant's head to commit, where the pass takes it again.
            tenant = [chance.choice(TENANTS)]
            try:
                async with conn.transaction():
                    await conn.executemany(POSTGRES_INSERT, rows(tenant, 5, f"{tag}-before"))
                    kept = 5
                    if kind == 2:
                        try:
                            async with conn.transaction():  # a savepoint
                                await append_linked(conn, rows(tenant, 7, f"{tag}-undone"))
                                raise LookupError("the savepoint rolls back")
                        except LookupError:
                            pass
                    else:
                        kept += await append_linked(conn, rows(tenant, 9, f"{tag}-linked"))
                    await conn.executemany(POSTGRES_INSERT, rows(tenant, 3, f"{tag}-after"))
                    kept += 3
                    if kind == 3:
                        raise KeyError("the transaction rolls back")
                committed += kept
            except KeyError:
                pass
    finally:
        await conn.close()
    return committed


def test_linked_and_pass_linked_records_keep_one_gap_free_chain_per_tenant(
    database: str,
) -> None:
    async def scenario() -> int:
        await migrate_all(database)
        counts = await asyncio.gather(*(mixed_writer(database, n, 25) for n in range(6)))
        return sum(counts)

    stored = asyncio.run(scenario())
    assert verify(["--postgres-dsn", database]) == intact(stored, len(TENANTS))


async def updated_in_transaction(conn: asyncpg.Connection, table: str) -> int:
    """Rows of `table` this transaction updated, after running the
    deferred triggers queued so far."""
    await conn.execute("SET CONSTRAINTS ALL IMMEDIATE")
    await conn.execute("SET CONSTRAINTS ALL DEFERRED")
    return int(await conn.fetchval("SELECT pg_stat_get_xact_tuples_updated($1::regclass)", table))


def test_a_linked_record_is_not_rewritten_at_commit(database: str) -> None:
    async def scenario() -> tuple[int, int, int, int]:
        await migrate_all(database)
        conn = await asyncpg.connect(database)
        try:
            async with conn.transaction():
                await append_linked(conn, rows(["beta", "alpha"], 50, "linked"))
                after_linked = await updated_in_transaction(conn, "audit_log")
                heads = await updated_in_transaction(conn, "audit_chain_heads")
                await conn.executemany(POSTGRES_INSERT, rows(["alpha"], 5, "unlinked"))
                after_unlinked = await updated_in_transaction(conn, "audit_log")
            chained = await conn.fetchval(
                "SELECT count(*) FROM audit_log WHERE tenant = 'alpha' AND chain_seq <= 25"
                " AND summary LIKE 'recorded linked %'"
            )
        finally:
            await conn.close()
        return after_linked, heads, after_unlinked, chained

    after_linked, heads, after_unlinked, chained = asyncio.run(scenario())
    assert (after_linked, heads) == (0, 2)  # each tenant's head moved once
    assert after_unlinked == 5  # the pass rewrites the records it links
    assert chained == 25  # linked first, so first in the chain
    assert verify(["--postgres-dsn", database]) == intact(55, 2)


async def audit_log_counters(dsn: str) -> tuple[int, int, int]:
    """Rows of audit_log, and the inserts and updates its statistics
    counted (of backends that have flushed them)."""
    conn = await asyncpg.connect(dsn)
    try:
        row = await conn.fetchrow(
            "SELECT (SELECT count(*) FROM audit_log), n_tup_ins, n_tup_upd"
            " FROM pg_stat_user_tables WHERE relname = 'audit_log'"
        )
    finally:
        await conn.close()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def flushed_updates(dsn: str) -> int:
    """audit_log's updates once every insert is counted: a backend flushes
    its counters together, at latest when it exits."""
    counters = wait_until(
        lambda: (c := asyncio.run(audit_log_counters(dsn)))[0] == c[1] and c,
        30,
        "audit_log statistics flushed",
    )
    return counters[2]


def checkpoints(address: str, metadata: list[tuple[str, str]], count: int) -> None:
    """A claim, `count` saves and as many writes, all audited."""
    state = common_pb2.Payload(content_type="application/json", data=b'{"n":1}')
    with grpc.insecure_channel(address) as channel:
        stub = CheckpointServiceStub(channel)
        epoch = stub.ClaimExecution(
            cp.ClaimExecutionRequest(execution_id="run"), metadata=metadata
        ).ownership_epoch
        for n in range(count):
            checkpoint = cp.Checkpoint(
                execution_id="run", checkpoint_id=f"{n:04d}", step=n, state=state
            )
            stub.SaveCheckpoint(
                cp.SaveCheckpointRequest(checkpoint=checkpoint, ownership_epoch=epoch),
                metadata=metadata,
            )
            stub.PutWrites(
                cp.PutWritesRequest(
                    execution_id="run",
                    checkpoint_id=f"{n:04d}",
                    task_id="task",
                    writes=[cp.WriteInput(channel="c", value=state)],
                    ownership_epoch=epoch,
                ),
                metadata=metadata,
            )


def test_checkpoint_blackboard_and_episode_records_are_inserted_linked(
    production_server: ServerFactory, database: str
) -> None:
    server = production_server(*KEYS)
    checkpoints(server.address, ALPHA, 6)
    write(server, ALPHA, 5)
    write(server, BETA, 4)
    record_episodes(server, BETA, 20)
    server.kill()  # its connections close: their backends flush statistics
    records = 1 + 6 + 6 + 5 + 4 + 20
    assert verify(["--postgres-dsn", database]) == intact(records, 2)
    assert flushed_updates(database) == 0
    # The counters see a rewrite: records inserted unlinked are updated.
    asyncio.run(unlinked_insert(database, 3))
    assert flushed_updates(database) == 3


async def unlinked_insert(dsn: str, count: int) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.executemany(POSTGRES_INSERT, rows(["alpha"], count, "plain"))
    finally:
        await conn.close()


def appends(address: str, metadata: list[tuple[str, str]], sessions: int, each: int) -> None:
    """`sessions` sessions, then `each` appends to every one of them at once
    (a thread per session: concurrent changes of one tenant, which the
    store applies in groups)."""
    with grpc.insecure_channel(address) as channel:
        stub = SessionServiceStub(channel)
        for n in range(sessions):
            session = sp.Session(user_id="u", agent_id="a")
            request = sp.CreateSessionRequest(session_id=f"s{n}", session=session)
            stub.CreateSession(request, metadata=metadata)

        def append_to(n: int) -> None:
            for k in range(each):
                message = sp.SessionMessage(role=sp.ROLE_USER, content=f"m{k}")
                request = sp.AppendMessagesRequest(session_id=f"s{n}", messages=[message])
                stub.AppendMessages(request, metadata=metadata)

        threads = [threading.Thread(target=append_to, args=(n,)) for n in range(sessions)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def test_session_appends_are_audited_with_records_inserted_linked(
    production_server: ServerFactory, database: str
) -> None:
    server = production_server(*KEYS)
    appends(server.address, ALPHA, 4, 6)
    server.kill()  # its connections close: their backends flush statistics
    assert verify(["--postgres-dsn", database]) == intact(4 + 4 * 6, 1)
    # Only the creations' records are linked at commit (rewritten once).
    assert flushed_updates(database) == 4
