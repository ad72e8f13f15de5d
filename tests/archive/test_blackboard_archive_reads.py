"""Reading archived blackboard history: a watch replay with previous values
is linear in a key's versions and runs off the event loop; listings keep
the expiry filter across the hot/archive boundary; concurrent first reads
of a unit share one download; the parsed-unit cache is bounded by bytes;
a read racing an erasure's chunk switch still answers; a retried erasure
finishes one stopped before the old chunk's delete; units are capped by
rows and bytes (core/archive/blackboard.py, storage/archive/blackboard.py)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from statekeeper.core.archive import blackboard as archived
from statekeeper.core.archive.keys import parse_key, unit_prefix
from statekeeper.core.archive.service import Archive, ArchivePolicy
from statekeeper.core.archive.store import ObjectStore
from statekeeper.core.blackboard.models import Entry
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.storage import schemas
from statekeeper.storage.archive.blackboard import entry_opener, load_versions, rewrite_chunk
from statekeeper.storage.archive.embedded import EmbeddedArchiveDatabase
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.objects import open_store
from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from tests.archive.helpers import auth
from tests.archive.test_blackboard_archive import stub_of
from tests.harness.backends import EMBEDDED, PRODUCTION, backend
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.servers import ServerProcess

BOARD = "plan"
TENANT = "alpha"
HOT_VERSIONS = 40


class _CountingRow(dict[str, Any]):
    """A history row that counts how often its fields are read."""

    reads = 0

    def __getitem__(self, name: str) -> Any:
        _CountingRow.reads += 1
        return super().__getitem__(name)


def _one_key_rows(count: int) -> list[dict[str, Any]]:
    return [
        _CountingRow(
            board=BOARD,
            key="hot",
            revision=revision,
            seq=0,
            event_type=1,
            kind=1,
            data=b"x",
            content_type="",
            schema_version=0,
            create_revision=1,
            version=revision,
            writer="w",
            expire_time=None,
            update_time=float(revision),
        )
        for revision in range(1, count + 1)
    ]


def test_a_replay_with_previous_values_reads_each_row_a_bounded_number_of_times() -> None:
    count = 3000
    unit = archived._index(_one_key_rows(count), 1, count)
    _CountingRow.reads = 0
    batches = archived.batches_of(unit, TENANT, BOARD, 1, count, True, lambda _, e: e)
    assert len(batches) == count
    previous = [batch.events[0].previous for batch in batches]
    assert previous[0] is None
    assert [entry.version for entry in previous[1:] if entry] == list(range(1, count))
    # Scanning the key's versions for each event read ~count²/2 fields
    # (4.5 million here); bisection reads a few dozen per event.
    assert _CountingRow.reads < 60 * count


def test_units_are_capped_by_rows_and_bytes() -> None:
    rows = archived.MAX_UNIT_ROWS
    # 100 revisions of 300 rows: the unit ends before the rows pass the cap.
    sizes = [(revision, 300, 10) for revision in range(1, 101)]
    high = archived.capped_high(sizes, 1, 100)
    assert high * 300 <= rows < (high + 1) * 300
    # Large values: the bytes cap ends it first.
    big = archived.MAX_UNIT_BYTES // 4
    assert archived.capped_high([(r, 1, big) for r in range(5, 20)], 5, 19) == 8
    # One revision over both caps is a unit alone; small ranges are whole.
    assert archived.capped_high([(7, rows * 2, 0), (8, 1, 0)], 7, 9) == 7
    assert archived.capped_high([(3, 5, 5)], 3, 50) == 50


def _put(stub: Any, key: str, ttl: int = 0) -> int:
    value = pb.BlackboardValue(payload=common_pb2.Payload(data=key.encode()))
    request = pb.PutEntryRequest(board=BOARD, key=key, value=value)
    if ttl:
        request.ttl.CopyFrom(duration_pb2.Duration(seconds=ttl))
    reply = stub.PutEntry(request, metadata=auth(TENANT), timeout=60)
    return int(reply.header.revision)


def _list_all(stub: Any, first: Any) -> list[str]:
    keys = [entry.key for entry in first.entries]
    token = first.next_page_token
    for _ in range(50):
        if not token:
            break
        page = stub.ListEntries(
            pb.ListEntriesRequest(board=BOARD, page_size=1, page_token=token),
            metadata=auth(TENANT),
        )
        keys += [entry.key for entry in page.entries]
        token = page.next_page_token
    return keys


@pytest.mark.parametrize("backend_name", [EMBEDDED, PRODUCTION])
def test_archived_history_reads(backend_name: str, tmp_path: Path) -> None:
    with backend(backend_name, "bbreads") as where:
        serve_args = where.serve_args() if where else []
        listed, hot_last = _write_and_list(tmp_path, serve_args)
    assert listed == ["a", "c", "hot", "users/u1/k0", "users/u1/k1", "users/u1/k2"]
    asyncio.run(_read_in_process(tmp_path, tmp_path / "archive", hot_last))


def _write_and_list(tmp_path: Path, serve_args: list[str]) -> tuple[list[str], int]:
    """Writes history, lists it in pages of one that cross from the hot
    history into the archive (CompactBlackboard between the first page and
    the next), and returns the keys listed and the last revision of "hot"."""
    directory = tmp_path / "archive"
    args = [
        *serve_args,
        *key_args(API_KEYS),
        "--archive-url",
        str(directory),
        "--archive-blackboard-history",
        "--limit",
        "blackboard.expiry_sweep_interval_seconds=3600",
    ]
    server = ServerProcess(tmp_path / "server", extra_args=args)
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = stub_of(channel)
            for step in range(3):
                _put(stub, f"users/u1/k{step}")
            for _ in range(HOT_VERSIONS):
                hot_last = _put(stub, "hot")
            _put(stub, "a")
            _put(stub, "b", ttl=1)
            _put(stub, "c")
            time.sleep(2.0)  # b expired, not swept
            first = stub.ListEntries(
                pb.ListEntriesRequest(board=BOARD, page_size=1), metadata=auth(TENANT)
            )
            last = _put(stub, "z")
            stub.CompactBlackboard(
                pb.CompactBlackboardRequest(revision=last), metadata=auth(TENANT), timeout=120
            )
            # The first page was hot; the next ones read the archive.
            listed = _list_all(stub, first)
    finally:
        server.stop()
    return listed, hot_last


async def _read_in_process(tmp_path: Path, directory: Path, hot_last: int) -> None:
    storage = EmbeddedStorage(tmp_path / "local")
    await storage.start()
    try:
        await schemas.migrate_embedded(storage)
        objects = open_store(str(directory), tmp_path / "local")
        database = EmbeddedArchiveDatabase(storage, tmp_path / "local")
        archive = Archive(objects, database, [], ArchivePolicy())
        await _single_flight_and_replay(archive, hot_last)
        await _bounded_cache(archive, hot_last)
        (unit,) = await archive.units("blackboard", TENANT)
        manifest = await archive.manifest("blackboard", TENANT, unit)
        assert manifest is not None
        unerased = await objects.get(manifest["chunks"][0]["key"])
        assert unerased is not None
        racing = _SwitchingStore(objects, archived.ArchivedHistoryEraser(archive, rewrite_chunk))
        await _read_racing_an_erasure(Archive(racing, database, [], ArchivePolicy()), hot_last)
        assert racing.switched
        await _retried_erasure_finishes(archive, unit, unerased)
    finally:
        await storage.close()


async def _single_flight_and_replay(archive: Archive, hot_last: int) -> None:
    threads: set[int] = set()
    opener = entry_opener(None)

    def opened(tenant: str, entry: Entry) -> Entry:
        threads.add(threading.get_ident())
        return opener(tenant, entry)

    reader = archived.ArchivedHistoryReader(archive, load_versions, opened)
    answers = await asyncio.gather(
        *(reader.read(TENANT, BOARD, ["hot"], hot_last, 10**9) for _ in range(6))
    )
    assert reader.downloads == 1
    assert all(answer == answers[0] for answer in answers)
    assert answers[0][0].version == HOT_VERSIONS
    batches = await reader.history(TENANT, BOARD, 4, hot_last, True, 10**9)
    assert [batch.events[0].entry.version for batch in batches] == list(range(1, HOT_VERSIONS + 1))
    assert [b.events[0].previous.version for b in batches[1:] if b.events[0].previous] == list(
        range(1, HOT_VERSIONS)
    )
    # Entries were built (and opened) in worker threads, not on the loop.
    assert threads and threading.get_ident() not in threads
    assert reader.downloads == 1


async def _bounded_cache(archive: Archive, hot_last: int) -> None:
    # A cache smaller than the unit keeps nothing: each read parses again.
    reader = archived.ArchivedHistoryReader(archive, load_versions, entry_opener(None), 1)
    for _ in range(2):
        await reader.read(TENANT, BOARD, ["hot"], hot_last, 10**9)
    assert reader.downloads == 2


class _SwitchingStore:
    """The archive's store, where an erasure switches the chunk just after
    a reader read the manifest and before it fetches the chunk."""

    def __init__(self, store: ObjectStore, eraser: archived.ArchivedHistoryEraser) -> None:
        self._store = store
        self._eraser = eraser
        self.switched = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def get(self, key: str) -> bytes | None:
        if not self.switched and parse_key(key).kind == "chunk":
            self.switched = True
            counts = await self._eraser.erase_user(TENANT, ErasureSubject("u1"), False)
            assert counts.counts[("blackboard", "archived_versions")] == 3
        return await self._store.get(key)


async def _read_racing_an_erasure(racing: Archive, hot_last: int) -> None:
    reader = archived.ArchivedHistoryReader(racing, load_versions, entry_opener(None))
    keys = ["hot", "users/u1/k0"]
    entries = await reader.read(TENANT, BOARD, keys, hot_last, 10**9)
    assert [entry.key for entry in entries] == ["hot"]  # the erased key is gone


async def _retried_erasure_finishes(archive: Archive, unit: str, unerased: bytes) -> None:
    objects = archive.objects
    prefix = unit_prefix(TENANT, "blackboard", unit)
    manifest = await archive.manifest("blackboard", TENANT, unit)
    assert manifest is not None
    (named,) = [chunk["key"] for chunk in manifest["chunks"]]
    # An erasure stopped after its manifest switch, before the old chunk's
    # delete, left the old chunk with the rows it erased.
    stale = prefix + "chunk-00000000deadbeef.ndjson.zst"
    await objects.put(stale, unerased)
    eraser = archived.ArchivedHistoryEraser(archive, rewrite_chunk)
    counts = await eraser.erase_user(TENANT, ErasureSubject("u1"), False)
    assert counts.counts.get(("blackboard", "archived_versions"), 0) == 0
    chunks = [key for key in await objects.list(prefix) if parse_key(key).kind == "chunk"]
    assert chunks == [named]
