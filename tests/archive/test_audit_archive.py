"""Audit records in the archive tier, with real `statekeeper serve`
processes: whole UTC days older than --archive-audit-after-days move to the
object store (chunks keep audit_id and the hash chain columns) and are
read through, never restored: ListAuditRecords answers the same pages with
the same tokens, one tenant never sees another's archived days, the chain
still verifies across archive + hot and keeps growing, and a kill -9 of
the archiver under write load loses and duplicates nothing.

Records of past days are written into the store before the server starts
(the server stamps records with its clock, and a day is archived only once
it is over and older than the policy)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import pytest
from google.protobuf import timestamp_pb2

from statekeeper.core.archive.audit import AuditUnits, day_unit
from statekeeper.storage.archive.audit_embedded import EmbeddedAuditArchive
from statekeeper.storage.archive.audit_postgres import PostgresAuditArchive
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.sessions_schema import AUDIT_DIGEST, DATABASE_FILE, audit_digest
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.sql import AUDIT_COLUMNS
from statekeeper_client.v1 import admin_pb2, admin_pb2_grpc, common_pb2
from statekeeper_client.v1 import blackboard_pb2 as bb
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.archive.conftest import ArchiveView, S3Endpoint
from tests.archive.helpers import auth, chunk_lines, statekeeper
from tests.harness.backends import EMBEDDED, PRODUCTION, Production, backend
from tests.harness.deadlines import Deadline, wait_until
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.servers import ServerProcess

DAY = 86_400.0
TODAY = datetime.datetime.now(datetime.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
# Past days seeded (all over for more than a day: archived by a 1-day policy).
PAST_DAYS = (6, 5, 4, 2)
PER_DAY = 5
POLICY = ["--archive-audit-after-days", "1", "--archive-interval-seconds", "0.3"]
CHUNK_COLUMNS = ["audit_id", *AUDIT_COLUMNS.replace(" ", "").split(","), "chain_seq"]
CHUNK_COLUMNS += ["prev_hash", "hash"]
SELECT_ROWS = f"SELECT {', '.join(CHUNK_COLUMNS)} FROM audit_log"


def day_start(days_ago: int) -> float:
    return (TODAY - datetime.timedelta(days=days_ago)).timestamp()


def past_records(
    days: tuple[int, ...] = PAST_DAYS, per_day: int = PER_DAY
) -> list[tuple[Any, ...]]:
    """Rows (AUDIT_COLUMNS) of past days for both tenants, in time order."""
    rows = []
    for days_ago in days:
        for n in range(per_day):
            for tenant in ("alpha", "beta"):
                when = day_start(days_ago) + 3600.0 * n + 0.125
                entity = f"b-{days_ago}-{n}"
                # The summary is not ASCII: the digests of both backends must agree.
                who = (tenant, f"key-{tenant}", "statekeeper.v1.BlackboardService", "PutEntry")
                rows.append((*who, "blackboard", entity, n + 1, when, f"put k{n} ✓ {tenant}"))
    return rows


def run_sql(where: Production | None, data_dir: Path, statement: str, *rows: Any) -> list[Any]:
    """Runs `statement` on the store behind the server's back (with each of
    `rows` as parameters when given); returns the rows of a SELECT."""
    if where is None:
        with contextlib.closing(sqlite3.connect(data_dir / DATABASE_FILE)) as db:
            db.create_function(AUDIT_DIGEST, 10, audit_digest)
            if rows:
                marks = statement.replace("$", "?")
                with db:
                    db.executemany(marks, rows)
                return []
            return [tuple(row) for row in db.execute(statement)]

    async def on_postgres() -> list[Any]:
        conn = await asyncpg.connect(where.postgres_dsn)
        try:
            if rows:
                async with conn.transaction():
                    await conn.executemany(statement, rows)
                return []
            return [tuple(row) for row in await conn.fetch(statement)]
        finally:
            await conn.close()

    return asyncio.run(on_postgres())


def seed(where: Production | None, data_dir: Path, rows: list[tuple[Any, ...]]) -> None:
    marks = ", ".join(f"${n + 1}" for n in range(9))
    run_sql(where, data_dir, f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({marks})", *rows)


def hot_rows(where: Production | None, data_dir: Path) -> list[tuple[Any, ...]]:
    return sorted(run_sql(where, data_dir, SELECT_ROWS))


def put(server: ServerProcess, tenant: str, keys: list[str]) -> None:
    """One audit record per key (a blackboard put)."""
    value = bb.BlackboardValue(payload=common_pb2.Payload(data=b"v"))
    with grpc.insecure_channel(server.address) as channel:
        stub = BlackboardServiceStub(channel)  # type: ignore[no-untyped-call]
        for key in keys:
            request = bb.PutEntryRequest(board="b", key=key, value=value)
            stub.PutEntry(request, metadata=auth(tenant), timeout=60)


def listing(server: ServerProcess, tenant: str, **fields: Any) -> list[bytes]:
    """Every page of a listing, each response serialized (records and token)."""
    pages: list[bytes] = []
    token = ""
    with grpc.insecure_channel(server.address) as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]
        for _ in range(1000):  # bounded: pages
            request = admin_pb2.ListAuditRecordsRequest(page_size=7, page_token=token, **fields)
            answer = stub.ListAuditRecords(request, metadata=auth(tenant), timeout=60)
            pages.append(answer.SerializeToString(deterministic=True))
            token = answer.next_page_token
            if not token:
                return pages
    raise AssertionError("a listing that never ends")


def stamp(seconds: float) -> timestamp_pb2.Timestamp:
    moment = timestamp_pb2.Timestamp()
    moment.FromNanoseconds(int(seconds * 1e9))
    return moment


QUERIES: dict[str, dict[str, Any]] = {
    "everything": {},
    "archived days only": {"start_time": stamp(day_start(5)), "end_time": stamp(day_start(3))},
    "archive and hot": {"start_time": stamp(day_start(3))},
    "one entity": {"entity_id": "b-4-2"},
    "nothing": {"start_time": stamp(day_start(9)), "end_time": stamp(day_start(8))},
}


@contextlib.contextmanager
def archive_store(
    kind: str, tmp: Path, s3: S3Endpoint | None
) -> Iterator[tuple[list[str], dict[str, str], ArchiveView]]:
    if kind == "local":
        directory = tmp / "archive"
        yield ["--archive-url", str(directory)], {}, ArchiveView(directory=directory)
        return
    assert s3 is not None
    bucket = s3.new_bucket()
    view = ArchiveView(endpoint=s3, bucket=bucket, prefix="cold")
    yield ["--archive-url", f"s3://{bucket}/cold"], dict(s3.env), view


def audit_manifests(view: ArchiveView) -> list[str]:
    return [k for k in view.all_keys() if "/audit/" in k and k.endswith("/manifest.json")]


def verify(where: Production | None, data_dir: Path, store_args: list[str]) -> tuple[int, str]:
    target = (
        ["--data-dir", str(data_dir)] if where is None else ["--postgres-dsn", where.postgres_dsn]
    )
    done = statekeeper("audit", "verify", *target, *store_args)
    return done.returncode, done.stdout + done.stderr


def restart(server: ServerProcess, args: list[str]) -> None:
    server.stop()
    server.extra_args = args
    server.start()


@pytest.mark.parametrize(("backend_name", "store"), [(EMBEDDED, "local"), (PRODUCTION, "s3")])
def test_archived_days_read_through_same_pages_and_chain(
    backend_name: str,
    store: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s3 = request.getfixturevalue("s3") if store == "s3" else None
    with (
        backend(backend_name, "auditarch") as where,
        archive_store(store, tmp_path, s3) as (store_args, env, view),
    ):
        for name, value in env.items():
            monkeypatch.setenv(name, value)  # for `statekeeper audit verify`
        base = [*(where.serve_args() if where else []), *key_args(API_KEYS), *store_args]
        server = ServerProcess(tmp_path / "server", env=env, extra_args=base)
        server.start()  # creates the schema
        try:
            server.stop()
            seed(where, server.data_dir, past_records())
            server.start()
            put(server, "alpha", ["today-1", "today-2"])
            put(server, "beta", ["today-1"])
            before = {
                (tenant, name): listing(server, tenant, **fields)
                for tenant in ("alpha", "beta")
                for name, fields in QUERIES.items()
            }
            rows_before = hot_rows(where, server.data_dir)
            past = [row for row in rows_before if row[8] < day_start(1)]
            assert len(past) == len(PAST_DAYS) * PER_DAY * 2

            # Every past day of each tenant moves out; today's records stay.
            restart(server, [*base, *POLICY])
            wait_until(
                lambda: len(audit_manifests(view)) == len(PAST_DAYS) * 2,
                120,
                "every past day archived",
                lambda: f"{view.all_keys()}\n{server.log_tail()}",
            )
            wait_until(
                lambda: (
                    hot_rows(where, server.data_dir) == [r for r in rows_before if r not in past]
                ),
                60,
                "past days deleted hot",
            )

            # The chunks hold the rows as they were, chain columns included.
            archived = []
            for key in view.all_keys():
                if "/audit/" in key and "/chunk-" in key:
                    tenant, unit = key.split("/")[1], key.split("/")[3]
                    lines = chunk_lines(view.read(key))
                    assert lines[0]["tenant"] == tenant
                    audit = next(t for t in lines[0]["tables"] if t["name"] == "audit_log")
                    assert audit["columns"] == CHUNK_COLUMNS
                    for line in lines[1:-1]:
                        assert line["t"] == "audit_log" and line["r"][1] == tenant
                        day = datetime.datetime.fromtimestamp(line["r"][8], datetime.UTC)
                        assert day.date().isoformat() == unit
                        archived.append(tuple(line["r"]))
            assert sorted(archived) == past

            # Read through: the same pages and tokens, per tenant.
            for (tenant, name), pages in before.items():
                assert listing(server, tenant, **QUERIES[name]) == pages, (tenant, name)

            # The chain goes on across archive + hot.
            put(server, "alpha", ["later"])
            server.stop()
            assert verify(where, server.data_dir, store_args) == (
                0,
                f"audit chain intact: {len(rows_before) + 1} records of 2 tenants\n",
            )
            # `statekeeper audit list` reads the archived days through too.
            target = ["--data-dir", str(server.data_dir)]
            if where is not None:
                target = ["--postgres-dsn", where.postgres_dsn]
            listed = statekeeper(
                "audit", "list", "--tenant", "alpha", "--json", *target, *store_args
            )
            records = [json.loads(line) for line in listed.stdout.splitlines()]
            assert len(records) == 23 and records[0]["summary"] == "put later", listed.stderr
            ids = [record["audit_id"] for record in records]
            assert ids == sorted(ids, reverse=True)
            assert sum(record["entity_id"].startswith("b-") for record in records) == 20
            if where is not None:
                code, output = verify(where, server.data_dir, [])
                assert code == 1 and "read with --archive-url" in output, output
        finally:
            server.stop()


def test_a_damaged_chunk_fails_reads_and_verify(tmp_path: Path) -> None:
    """A chunk that does not match its manifest's sha256 is never served:
    listings over its day fail UNAVAILABLE, verify says so; other days read."""
    base = [*key_args(API_KEYS)]
    server = ServerProcess(tmp_path / "server", extra_args=base)
    server.start()
    view = ArchiveView(directory=server.data_dir / "archive")
    try:
        server.stop()
        seed(None, server.data_dir, past_records())
        restart(server, [*base, *POLICY])
        wait_until(lambda: len(audit_manifests(view)) == len(PAST_DAYS) * 2, 120, "archived")
        wait_until(lambda: not hot_rows(None, server.data_dir), 60, "deleted hot")
        unit = datetime.date.fromtimestamp(day_start(4)).isoformat()
        chunk = next(k for k in view.all_keys() if f"alpha/audit/{unit}/chunk-" in k)
        damaged = bytearray(view.read(chunk))
        damaged[len(damaged) // 2] ^= 0xFF
        (view.directory / chunk).write_bytes(bytes(damaged))  # type: ignore[operator]
        with pytest.raises(grpc.RpcError) as failed:
            listing(server, "alpha")
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
        recent = {"start_time": stamp(day_start(3))}
        assert len(listing(server, "alpha", **recent)) == 1  # days after it still read
        assert len(listing(server, "beta")) == 3  # 20 records, 7 a page
        server.stop()
        code, output = verify(None, server.data_dir, [])
        assert code == 1 and "missing or corrupt" in output, output
    finally:
        server.stop()


class Writer(threading.Thread):
    """Puts blackboard entries (one audit record each) until stopped,
    retrying through restarts; remembers the keys acknowledged."""

    def __init__(self, server: ServerProcess, tenant: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.server, self.tenant, self.stop = server, tenant, stop
        self.acknowledged: list[str] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for n in range(100_000):  # bounded; ends with the stop event
                if self.stop.is_set():
                    return
                self._put(f"w-{self.tenant}-{n}")
        except BaseException as exc:
            self.error = exc

    def _put(self, key: str) -> None:
        deadline = Deadline(120)
        while True:  # bounded by the deadline
            try:
                put(self.server, self.tenant, [key])
                self.acknowledged.append(key)
                return
            except grpc.RpcError as exc:
                retry = exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
                if not retry or deadline.expired():
                    raise
                time.sleep(0.1)


def archived_rows(directory: Path) -> list[tuple[Any, ...]]:
    rows = []
    for manifest in directory.rglob("manifest.json"):
        for entry in json.loads(manifest.read_text())["chunks"]:
            lines = chunk_lines((directory / entry["key"]).read_bytes())
            rows += [tuple(line["r"]) for line in lines[1:-1]]
    return rows


@pytest.mark.parametrize("backend_name", [EMBEDDED, PRODUCTION])
def test_kill_9_mid_batch_under_writes_loses_and_duplicates_nothing(
    backend_name: str, tmp_path: Path
) -> None:
    days = tuple(range(40, 1, -1))  # 39 past days per tenant, 3 records each
    with backend(backend_name, "auditcrash") as where:
        directory = tmp_path / "archive"
        base = [*(where.serve_args() if where else []), *key_args(API_KEYS)]
        base += ["--archive-url", str(directory)]
        server = ServerProcess(tmp_path / "server", extra_args=base)
        server.start()
        server.stop()
        seeded = past_records(days, 3)
        seed(where, server.data_dir, seeded)
        server.extra_args = [*base, *POLICY, "--archive-batch-size", "2"]
        server.start()
        stop = threading.Event()
        writers = [Writer(server, tenant, stop) for tenant in ("alpha", "beta")]
        for writer in writers:
            writer.start()
        try:
            for _ in range(3):  # kill -9 right after a batch, then start again
                wait_until(lambda: "archived a batch of audit" in server.log(), 120, "a batch")
                server.kill()
                server.start()
            wait_until(
                lambda: len(list(directory.rglob("manifest.json"))) == len(days) * 2,
                180,
                "every past day archived",
                server.log_tail,
            )
        finally:
            stop.set()
            for writer in writers:
                writer.join(timeout=180)
        for writer in writers:
            assert writer.error is None, writer.error
        server.stop()
        hot = run_sql(where, server.data_dir, SELECT_ROWS)
        archived = archived_rows(directory)
        ids = [row[0] for row in hot + archived]
        assert len(ids) == len(set(ids)), "a record both hot and archived"
        assert all(row[8] < day_start(1) for row in archived)
        assert not [row for row in hot if row[8] < day_start(1)]
        # Every seeded record once; every acknowledged write at least once (a
        # put whose answer a kill cut off is retried, and may be there twice).
        content = sorted(row[1:10] for row in hot + archived if row[8] < day_start(1))
        assert content == sorted(seeded)
        written = {row[9] for row in hot + archived}
        acknowledged = {f"put {key}" for writer in writers for key in writer.acknowledged}
        assert len(acknowledged) > 10 and acknowledged <= written
        assert verify(where, server.data_dir, ["--archive-url", str(directory)]) == (
            0,
            f"audit chain intact: {len(ids)} records of 2 tenants\n",
        )


@pytest.mark.parametrize("backend_name", [EMBEDDED, PRODUCTION])
def test_days_found_in_order_and_a_day_written_after_its_export_stays_hot(
    backend_name: str, tmp_path: Path
) -> None:
    """The kind on the real store: past days by tenant then day (and paged
    by cursor); the compare-and-delete refuses a day that changed."""
    with backend(backend_name, "auditcas") as where:
        asyncio.run(days_and_delete(where, tmp_path))


async def days_and_delete(where: Production | None, tmp_path: Path) -> None:
    storage: EmbeddedStorage | PostgresStorage
    if where is None:
        storage = EmbeddedStorage(tmp_path)
        await storage.start()
        units = AuditUnits(EmbeddedAuditArchive(storage, tmp_path), 1.0)
    else:
        storage = PostgresStorage(where.postgres_dsn, pool_size=2, migrate_on_start=True)
        await storage.start()
        units = AuditUnits(PostgresAuditArchive(storage), 1.0)
    try:
        await asyncio.to_thread(seed, where, tmp_path, past_records((4, 3, 0), 2))
        cutoff = time.time() - DAY
        found = await units.candidates(cutoff, None, 10)
        four, three = day_unit(day_start(4)), day_unit(day_start(3))
        expected = [("alpha", four), ("alpha", three), ("beta", four), ("beta", three)]
        assert [(c.tenant, c.unit, c.user_id) for c in found] == [(*e, "") for e in expected]
        assert await units.candidates(cutoff, found[1].cursor, 10) == found[2:]
        assert await units.candidates(cutoff, None, 1) == found[:1]

        exported = await units.export("alpha", four, tmp_path / "chunk")
        assert exported is not None and exported.extra["records"] == 2
        late = past_records((4,), 1)[0]  # alpha, day four: committed after the export
        await asyncio.to_thread(seed, where, tmp_path, [late])
        assert await units.delete_hot("alpha", four, exported) is None
        assert await units.is_hot("alpha", four, exported.extra)
        again = await units.export("alpha", four, tmp_path / "chunk-2")
        assert again is not None and again.extra["records"] == 3
        assert await units.delete_hot("alpha", four, again) is True
        assert not await units.is_hot("alpha", four, again.extra)
        assert await units.delete_hot("alpha", four, again) is False
        assert await units.export("alpha", four, tmp_path / "chunk-3") is None
        left = await asyncio.to_thread(run_sql, where, tmp_path, SELECT_ROWS)
        # 3 days x 2 records x 2 tenants, but alpha's day four (with the late one).
        assert len(left) == 10
        assert all(row[1] == "beta" or row[8] >= day_start(3) for row in left)
    finally:
        await storage.close()


def test_listings_while_the_archiver_moves_days_see_every_record_once(tmp_path: Path) -> None:
    """A listing reads hot records before the archive, and the archiver
    writes a day's manifest before deleting its rows: a listing racing it
    never misses nor repeats a record."""
    days = tuple(range(30, 1, -1))
    base = [*key_args(API_KEYS)]
    server = ServerProcess(tmp_path / "server", extra_args=base)
    server.start()
    view = ArchiveView(directory=server.data_dir / "archive")
    try:
        server.stop()
        seed(None, server.data_dir, past_records(days, 3))
        server.start()
        expected = listing(server, "alpha")
        assert len(expected) == len(days) * 3 // 7 + 1
        restart(server, [*base, *POLICY, "--archive-batch-size", "1"])
        midway = 0
        deadline = Deadline(180)
        while len(audit_manifests(view)) < len(days) * 2:  # bounded by the deadline
            archived = len(audit_manifests(view))
            assert listing(server, "alpha") == expected
            midway += 0 < archived < len(days) * 2
            assert not deadline.expired(), server.log_tail()
        assert midway >= 3  # listings did run while days moved
        assert listing(server, "alpha") == expected
    finally:
        server.stop()
