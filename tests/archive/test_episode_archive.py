"""The episodes of idle users in the archive tier, end to end on real
`statekeeper serve` processes: a user's episodes leave the database and
every replica's vector index together, come back byte for byte when listed
(or read, or recorded to), are recalled only when a Recall opts in (then
with the same ids and scores as before), stay apart per tenant, go with
EraseUser, and survive kill -9 of the archiver mid-batch."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import numpy as np
import pytest

from statekeeper_client.v1 import admin_pb2, admin_pb2_grpc, memory_pb2, memory_pb2_grpc
from tests.archive.conftest import ArchiveView, S3Endpoint
from tests.archive.helpers import auth, chunk_lines, erase_user
from tests.archive.test_archive import archive_store, manifests
from tests.harness.backends import EMBEDDED, PRODUCTION, Production, backend
from tests.harness.deadlines import Deadline, wait_until
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.servers import ServerProcess

# Idle for 0.00002 days (1.7 s) is old enough; passes every 0.3 s.
ARCHIVE_NOW = ["--archive-episodes-after-days", "0.00002", "--archive-interval-seconds", "0.3"]
NO_EMBEDDER = ["--embedder-kind", "none", "--log-format", "text"]
DIMENSION = 8
# (tenant, user, episodes recorded): beta's u1 has the same user id (and
# texts) as alpha's.
USERS = (("alpha", "u1", 5), ("alpha", "u2", 3), ("beta", "u1", 4))
# Recency moves with the clock between two recalls; the other parts do not.
STEADY = memory_pb2.RecallWeights(similarity=1.0, recency=0.0, importance=0.5)


def vector(seed: int) -> list[float]:
    return [float(x) for x in np.random.default_rng(seed).normal(size=DIMENSION)]


def memory(channel: grpc.Channel) -> memory_pb2_grpc.MemoryServiceStub:
    return memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]


def record(
    stub: memory_pb2_grpc.MemoryServiceStub,
    tenant: str,
    user_id: str,
    number: int,
    embedded: bool = True,
) -> memory_pb2.RecordEpisodeResponse:
    reply: memory_pb2.RecordEpisodeResponse = stub.RecordEpisode(
        memory_pb2.RecordEpisodeRequest(
            user_id=user_id,
            session_id=f"s-{number % 2}",
            user_message=f"{user_id} asks about topic {number} and the harbour",
            assistant_response=f"answer {number} ✓ for {user_id}",
            embedding=vector(number) if embedded else [],
            importance=0.1 * (number % 10),
            metadata={"n": str(number)},
        ),
        metadata=auth(tenant),
        timeout=60,
    )
    return reply


def record_users(stub: memory_pb2_grpc.MemoryServiceStub) -> dict[tuple[str, str], list[str]]:
    ids: dict[tuple[str, str], list[str]] = {}
    for tenant, user_id, count in USERS:
        for number in range(count):
            # The last episode of u2 has no vector (found lexically only).
            embedded = not (user_id == "u2" and number == count - 1)
            episode = record(stub, tenant, user_id, number, embedded).episode
            ids.setdefault((tenant, user_id), []).append(episode.id)
    return ids


def listing(stub: memory_pb2_grpc.MemoryServiceStub, tenant: str, user_id: str) -> list[bytes]:
    """Everything ListEpisodes shows of a user (restores the user first),
    but the decayed importance, which moves with the clock."""
    episodes = stub.ListEpisodes(
        memory_pb2.ListEpisodesRequest(user_id=user_id, page_size=100, include_embedding=True),
        metadata=auth(tenant),
        timeout=60,
    ).episodes
    for episode in episodes:
        episode.ClearField("decayed_importance")
    return [e.SerializeToString(deterministic=True) for e in episodes]


def recall(
    stub: memory_pb2_grpc.MemoryServiceStub,
    tenant: str,
    user_id: str,
    how: str,
    include_archived: bool = False,
) -> list[tuple[str, float, float]]:
    """(id, similarity, combined) of a VECTOR or a LEXICAL recall."""
    request = memory_pb2.RecallRequest(
        user_id=user_id, top_k=10, weights=STEADY, include_archived=include_archived
    )
    if how == "vector":
        request.query_vector.values[:] = vector(1)
    else:
        request.query_text = "harbour topic 2"
    results = stub.Recall(request, metadata=auth(tenant), timeout=60).results
    return [(r.episode.id, r.score.similarity, r.score.combined) for r in results]


def indexed(stub: memory_pb2_grpc.MemoryServiceStub, tenant: str, user_id: str) -> int:
    """How many vectors the user's index holds on that replica."""
    stats = stub.GetIndexStats(
        memory_pb2.GetIndexStatsRequest(user_id=user_id), metadata=auth(tenant), timeout=60
    ).stats
    return int(stats.vector_count)


def hot_episodes(data_dir: Path, where: Production | None) -> dict[str, Any]:
    """The episode rows (and the SQLite lexical index rows) as stored."""
    if where is None:
        db = sqlite3.connect(f"file:{data_dir / 'statekeeper.sqlite3'}?mode=ro", uri=True)
        try:
            return {
                "episodes": db.execute(
                    "SELECT * FROM memory_episodes ORDER BY vector_key"
                ).fetchall(),
                "terms": db.execute(
                    "SELECT rowid, scope, terms FROM memory_episode_terms ORDER BY rowid"
                ).fetchall(),
            }
        finally:
            db.close()

    async def query() -> dict[str, Any]:
        conn = await asyncpg.connect(where.postgres_dsn)
        try:
            rows = await conn.fetch("SELECT * FROM memory_episodes ORDER BY vector_key")
        finally:
            await conn.close()
        return {"episodes": [tuple(row.values()) for row in rows]}

    return asyncio.run(query())


def unit_of(key: str) -> tuple[str, str]:
    parts = key.split("/")
    return parts[1], parts[3]


def episode_units(view: ArchiveView) -> set[tuple[str, str]]:
    return {unit_of(k) for k in manifests(view) if k.split("/")[2] == "episodes"}


@contextmanager
def replicas(
    tmp: Path, where: Production | None, count: int, args: list[str], env: dict[str, str]
) -> Iterator[list[ServerProcess]]:
    servers = [
        ServerProcess(tmp / f"replica-{n}", env=env, extra_args=list(args)) for n in range(count)
    ]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()


def restart(server: ServerProcess, args: list[str]) -> None:
    server.stop()
    server.extra_args = args
    server.start()


@pytest.mark.parametrize(("backend_name", "store"), [(EMBEDDED, "local"), (PRODUCTION, "s3")])
def test_idle_users_episodes_leave_and_come_back(
    backend_name: str, store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    s3: S3Endpoint | None = request.getfixturevalue("s3") if store == "s3" else None
    with (
        backend(backend_name, "archep") as where,
        archive_store(store, tmp_path, s3) as (store_args, env, view),
    ):
        base = [*(where.serve_args() if where else []), *key_args(API_KEYS), *NO_EMBEDDER]
        base += store_args
        # Production: a second replica that never archives, holding the
        # users' indexes, which must follow through the change feed.
        count = 1 if where is None else 2
        with replicas(tmp_path, where, count, base, env) as servers:
            first, last = servers[0], servers[-1]
            with grpc.insecure_channel(first.address) as channel:
                ids = record_users(memory(channel))
            with grpc.insecure_channel(last.address) as channel:
                stub = memory(channel)
                before = {
                    (t, u): {
                        "list": listing(stub, t, u),
                        "vector": recall(stub, t, u, "vector"),
                        "lexical": recall(stub, t, u, "lexical"),
                    }
                    for t, u, _ in USERS
                }
                assert all(before[k]["vector"] and before[k]["lexical"] for k in before)
                assert indexed(stub, "alpha", "u1") == 5
            first.stop()  # the rows as they are when nobody writes
            rows_before = hot_episodes(first.data_dir, where)

            # The archiver moves every idle user's episodes out.
            first.extra_args = [*base, *ARCHIVE_NOW]
            first.start()
            wait_until(
                lambda: episode_units(view) == {(t, u) for t, u, _ in USERS},
                120,
                "every user's episodes archived",
                lambda: f"{view.all_keys()}\n{first.log_tail()}",
            )
            wait_until(
                lambda: not hot_episodes(first.data_dir, where)["episodes"], 60, "no hot episode"
            )
            if where is None:
                assert hot_episodes(first.data_dir, where)["terms"] == []
            check_chunks(view, ids)
            restart(first, base)  # the archiver off: nothing is archived again

            for server in servers:
                with grpc.insecure_channel(server.address) as channel:
                    stub = memory(channel)
                    # Out of every replica's index; recall does not restore.
                    wait_until(
                        lambda stub=stub: indexed(stub, "alpha", "u1") == 0, 60, "index emptied"
                    )
                    assert recall(stub, "alpha", "u1", "vector") == []
                    assert recall(stub, "alpha", "u1", "lexical") == []
                    assert recall(stub, "alpha", "u2", "lexical") == []
            assert episode_units(view) == {(t, u) for t, u, _ in USERS}

            with grpc.insecure_channel(last.address) as channel:
                stub = memory(channel)
                # Opt-in recall restores alpha's u1 and ranks as before.
                assert (
                    recall(stub, "alpha", "u1", "vector", True) == before[("alpha", "u1")]["vector"]
                )
                assert recall(stub, "alpha", "u1", "lexical") == before[("alpha", "u1")]["lexical"]
                # beta's u1 (same user id, same texts) stays archived.
                assert episode_units(view) == {("alpha", "u2"), ("beta", "u1")}
                # Another tenant's archived episode is not found, nor restored.
                with pytest.raises(grpc.RpcError) as missing:
                    stub.GetEpisode(
                        memory_pb2.GetEpisodeRequest(episode_id=ids[("beta", "u1")][0]),
                        metadata=auth("alpha"),
                        timeout=60,
                    )
                assert missing.value.code() == grpc.StatusCode.NOT_FOUND
                assert ("beta", "u1") in episode_units(view)
            with grpc.insecure_channel(first.address) as channel:
                stub = memory(channel)
                # The restore reached the other replica's index too.
                wait_until(lambda: indexed(stub, "alpha", "u1") == 5, 60, "index refilled")
                assert recall(stub, "alpha", "u1", "vector") == before[("alpha", "u1")]["vector"]
                # ListEpisodes restores byte for byte; GetEpisode finds its user.
                assert listing(stub, "alpha", "u2") == before[("alpha", "u2")]["list"]
                got = stub.GetEpisode(
                    memory_pb2.GetEpisodeRequest(episode_id=ids[("beta", "u1")][2]),
                    metadata=auth("beta"),
                    timeout=60,
                ).episode
                assert got.user_id == "u1"
                assert episode_units(view) == set()
                for t, u, _ in USERS:
                    assert listing(stub, t, u) == before[(t, u)]["list"]
                    assert recall(stub, t, u, "lexical") == before[(t, u)]["lexical"]
            assert view.all_keys() == []
            for server in servers:
                server.stop()
            assert hot_episodes(first.data_dir, where) == rows_before  # byte for byte


def check_chunks(view: ArchiveView, ids: dict[tuple[str, str], list[str]]) -> None:
    """Each chunk is an export of one user's episodes, of its tenant only."""
    for key in view.all_keys():
        if "/chunk-" not in key:
            continue
        tenant, user_id = unit_of(key)
        lines = chunk_lines(view.read(key))
        assert lines[0]["tenant"] == tenant and lines[0]["user"] == user_id
        counts = {name: n for name, n in lines[-1]["counts"].items() if n}
        assert counts == {"memory_episodes": len(ids[(tenant, user_id)])}
        columns = next(t["columns"] for t in lines[0]["tables"] if t["name"] == "memory_episodes")
        archived = [dict(zip(columns, line["r"], strict=True)) for line in lines[1:-1]]
        assert sorted(row["episode_id"] for row in archived) == sorted(ids[(tenant, user_id)])
        assert {(row["tenant"], row["user_id"]) for row in archived} == {(tenant, user_id)}


def test_recording_restores_and_erasure_removes_the_archive(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    view = ArchiveView(directory=directory)
    base = [*key_args(API_KEYS), *NO_EMBEDDER, "--archive-url", str(directory)]
    server = ServerProcess(tmp_path / "server", extra_args=[*base, *ARCHIVE_NOW])
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = memory(channel)
            first = [record(stub, "alpha", "u1", n).episode.id for n in range(3)]
            stub.AddFacts(
                memory_pb2.AddFactsRequest(
                    user_id="u1",
                    facts=[memory_pb2.FactInput(subject="u1", predicate="likes", object="tea")],
                ),
                metadata=auth("alpha"),
                timeout=60,
            )
            wait_until(lambda: episode_units(view) == {("alpha", "u1")}, 120, "archived")
            # Facts stay hot while the episodes are archived.
            facts = stub.ListFacts(
                memory_pb2.ListFactsRequest(user_id="u1"), metadata=auth("alpha"), timeout=60
            ).facts
            assert [f.object for f in facts] == ["tea"]
            assert episode_units(view) == {("alpha", "u1")}
            # BuildContext recalls archived episodes only when asked to.
            assert context_episodes(stub, include_archived=False) == []
            assert episode_units(view) == {("alpha", "u1")}
            assert set(context_episodes(stub, include_archived=True)) <= set(first)
            assert context_episodes(stub, include_archived=False)
            assert episode_units(view) == set()
            # Archived again; deleting an archived episode restores, then deletes.
            wait_until(lambda: episode_units(view) == {("alpha", "u1")}, 120, "archived again")
            stub.DeleteEpisode(
                memory_pb2.DeleteEpisodeRequest(episode_id=first[0]),
                metadata=auth("alpha"),
                timeout=60,
            )
            listed = [memory_pb2.Episode.FromString(e).id for e in listing(stub, "alpha", "u1")]
            assert sorted(listed) == sorted(first[1:])
            wait_until(lambda: episode_units(view) == {("alpha", "u1")}, 120, "archived once more")
            # Recording restores first: the same turn is a duplicate of the
            # archived episode, not a second copy.
            again = record(stub, "alpha", "u1", 1)
            assert again.duplicate and again.duplicate_of == first[1]
            # Archived again (idle once more), then erased with the user.
            wait_until(lambda: episode_units(view) == {("alpha", "u1")}, 120, "archived a 4th time")
            answer = erase_user(channel, "alpha", "u1")
            erased = {(c.capability, c.kind): c.count for c in answer.counts}
            assert erased.get(("archive", "episodes")) == 1, answer
            assert view.all_keys() == []
            assert listing(stub, "alpha", "u1") == []
    finally:
        server.stop()


def context_episodes(stub: memory_pb2_grpc.MemoryServiceStub, include_archived: bool) -> list[str]:
    built = stub.BuildContext(
        memory_pb2.BuildContextRequest(
            user_id="u1",
            message="what about the harbour topic",
            token_budget=4000,
            include_archived=include_archived,
        ),
        metadata=auth("alpha"),
        timeout=60,
    )
    return [e.episode.id for e in built.episodes]


# ----- kill -9 mid-batch ------------------------------------------------------

KILLS = 3
WRITERS = 2
RETRY_SECONDS = 120.0


class Writer(threading.Thread):
    """Records episodes for new users and for earlier ones (which may be
    archived by then), retrying each until acknowledged (a retry of a
    committed one is an exact duplicate: the same id comes back)."""

    def __init__(self, address: str, name: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.address = address
        self.prefix = name
        self.stop = stop
        self.acked: dict[str, str] = {}  # episode id -> user
        self.error: BaseException | None = None

    def run(self) -> None:
        rng = random.Random(self.prefix)
        try:
            with grpc.insecure_channel(self.address) as channel:
                stub = memory(channel)
                number = 0
                while not self.stop.is_set():  # bounded by the test's stop event
                    user = f"{self.prefix}-u{rng.randrange(12)}"
                    self._record(stub, user, number)
                    number += 1
                    time.sleep(rng.uniform(0, 0.05))
        except BaseException as exc:
            self.error = exc

    def _record(self, stub: memory_pb2_grpc.MemoryServiceStub, user: str, number: int) -> None:
        deadline = Deadline(RETRY_SECONDS)
        while True:  # bounded by the deadline
            try:
                reply = record(stub, "alpha", user, number)
                self.acked[reply.episode.id] = user
                return
            except grpc.RpcError as exc:
                if (
                    exc.code()
                    not in (
                        grpc.StatusCode.UNAVAILABLE,
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        grpc.StatusCode.CANCELLED,
                        grpc.StatusCode.UNKNOWN,
                    )
                    or deadline.expired()
                ):
                    raise
                time.sleep(0.1)


def archived_episodes(directory: Path) -> dict[str, list[str]]:
    """Episode ids per archived user, from the manifests."""
    units: dict[str, list[str]] = {}
    for path in directory.rglob("manifest.json"):
        manifest = json.loads(path.read_text())
        if manifest["capability"] == "episodes":
            units[manifest["unit"]] = list(manifest["extra"]["episode_ids"])
    return units


def hot_by_user(server: ServerProcess, where: Production | None) -> dict[str, list[str]]:
    users: dict[str, list[str]] = {}
    for row in hot_episodes(server.data_dir, where)["episodes"]:
        users.setdefault(row[3], []).append(row[2])
    return users


@pytest.mark.parametrize("backend_name", [EMBEDDED, PRODUCTION])
def test_kill_9_mid_batch_loses_and_duplicates_nothing(backend_name: str, tmp_path: Path) -> None:
    with backend(backend_name, "archepcrash") as where:
        crash_cycles(tmp_path, where)


def crash_cycles(tmp_path: Path, where: Production | None) -> None:
    archive = tmp_path / "archive"
    policy = [
        "--archive-url",
        str(archive),
        "--archive-episodes-after-days",
        "0.00001",  # idle 0.9 s
        "--archive-interval-seconds",
        "0.2",
        "--archive-batch-size",
        "2",
    ]
    base = [*(where.serve_args() if where else []), *key_args(API_KEYS), *NO_EMBEDDER]
    server = ServerProcess(tmp_path / "server", extra_args=[*base, *policy])
    server.start()
    stop = threading.Event()
    writers = [Writer(server.address, f"w{i}", stop) for i in range(WRITERS)]
    try:
        for writer in writers:
            writer.start()
        rng = random.Random(7)
        for _ in range(KILLS):
            wait_until(
                lambda: "archived a batch of episodes" in server.log(),
                120,
                "the archiver moving a batch",
                server.log_tail,
            )
            time.sleep(rng.uniform(0.0, 0.4))
            server.kill()
            time.sleep(rng.uniform(0.1, 0.4))
            server.start()
        time.sleep(1.0)
        stop.set()
        for writer in writers:
            writer.join(timeout=300)
            assert not writer.is_alive()
            assert writer.error is None, repr(writer.error)
        server.stop()

        # Hot + archive = everything acknowledged; a user in both holds the
        # same episodes in both (the manifest written, the rows not deleted).
        acked = {i: u for w in writers for i, u in w.acked.items()}
        hot_now, archived = hot_by_user(server, where), archived_episodes(archive)
        assert archived
        found = {i for ids in hot_now.values() for i in ids}
        found |= {i for ids in archived.values() for i in ids}
        assert set(acked) <= found
        for user in set(hot_now) & set(archived):
            assert set(archived[user]) <= set(hot_now[user]) or not set(archived[user]) & set(
                hot_now[user]
            ), user

        # Everything back (the archiver off): each acknowledged episode once.
        server.extra_args = [*base, "--archive-url", str(archive)]
        server.start()
        with grpc.insecure_channel(server.address) as channel:
            admin = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]
            admin.RestoreArchived(
                admin_pb2.RestoreArchivedRequest(), metadata=auth("alpha"), timeout=120
            )
            stub = memory(channel)
            for user in sorted(set(acked.values())):
                listed = [memory_pb2.Episode.FromString(e).id for e in listing(stub, "alpha", user)]
                assert len(listed) == len(set(listed))
                assert {i for i, u in acked.items() if u == user} <= set(listed), user
        wait_until(
            lambda: not [p for p in archive.rglob("*") if p.is_file()],
            60,
            "an empty archive",
            lambda: "\n".join(str(p) for p in archive.rglob("*") if p.is_file()),
        )
        ids = [i for ids in hot_by_user(server, where).values() for i in ids]
        assert len(ids) == len(set(ids)) and set(acked) <= set(ids)
        log = server.log()
        print(
            "kill test:",
            len(acked),
            "episodes,",
            log.count("archived a batch of episodes"),
            "batches,",
            log.count("restored an archived unit"),
            "restores",
        )
    finally:
        stop.set()
        server.stop()


def test_an_hnsw_key_removed_and_added_again_is_found_again() -> None:
    """A replica whose HNSW index tombstoned an archived episode's key finds
    it again once the restore adds it back (the same key, the same vector)."""
    from statekeeper.core.memory.config import IndexConfig
    from statekeeper.core.memory.faiss_index import HnswIndex

    vectors = np.random.default_rng(3).normal(size=(50, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = np.arange(1, 51, dtype=np.int64)
    index = HnswIndex(DIMENSION, IndexConfig())
    index.add(keys, vectors)
    index.remove([7, 8])
    assert 7 not in [key for key, _ in index.search(vectors[6], 3, None)]
    index.add(keys[6:8], vectors[6:8])
    assert index.contains(7) and index.tombstone_count == 0 and index.live_count == 50
    assert index.search(vectors[6], 1, None)[0][0] == 7
    assert index.search(vectors[7], 1, None)[0][0] == 8
