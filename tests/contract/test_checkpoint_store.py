"""The CheckpointStore contract (core/checkpoints/store.py), on every backend.

Backends register a factory in CHECKPOINT_BACKENDS: the embedded store, and
the PostgreSQL one (the production backend: checkpoints have no Redis tier)
on a fresh database per test, skipped with the reason printed when the test
services are not configured. Each test also uses a fresh tenant.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from statekeeper.core.audit.models import AuditFilter, AuditRecord
from statekeeper.core.checkpoints.models import (
    ChannelEntry,
    ChannelValueMissingError,
    CheckpointDeletedError,
    CheckpointDraft,
    CheckpointQuery,
    OwnershipSupersededError,
    Position,
    ReadOptions,
    WriteEntry,
    WritesDraft,
)
from statekeeper.core.checkpoints.store import CheckpointStore
from statekeeper.core.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.core.schema_upgrades import Payload
from statekeeper.storage.embedded.checkpoints import EmbeddedCheckpointStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres.checkpoints import PostgresCheckpointStore
from tests.contract.fresh_postgres import fresh_postgres

AuditReader = Callable[[str], Awaitable[list[AuditRecord]]]


@dataclass
class Backend:
    """A started store, the same store as another server replica sees it
    (its own connections; the same object where the backend has no
    replicas), how to read the audit trail, and how to close it all."""

    store: CheckpointStore
    replica: CheckpointStore
    audit_trail: AuditReader
    close: Callable[[], Awaitable[None]]


async def _embedded(tmp_path: Path) -> Backend:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedCheckpointStore(storage)
    await store.start()

    async def trail(tenant: str) -> list[AuditRecord]:
        return list(reversed(await storage.audit.list_audit(tenant, AuditFilter(), 0, 1000)))

    return Backend(store, store, trail, storage.close)


async def _postgres(tmp_path: Path) -> Backend:
    database = await fresh_postgres()
    try:
        store = PostgresCheckpointStore(database.storage)
        replica = PostgresCheckpointStore(await database.replica())
        # Both start at once, as replicas booting together: one migrates.
        await asyncio.gather(store.start(), replica.start())
    except BaseException:
        await database.close()
        raise
    return Backend(store, replica, database.audit_trail, database.close)


StoreFactory = Callable[[Path], Awaitable[Backend]]


CHECKPOINT_BACKENDS: dict[str, StoreFactory] = {"embedded": _embedded, "postgres": _postgres}

ALL = ReadOptions()
BASE_NS = 1_700_000_000_000_000_000


@pytest.fixture(params=sorted(CHECKPOINT_BACKENDS))
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    created = await CHECKPOINT_BACKENDS[request.param](tmp_path)
    yield created
    await created.close()


@pytest.fixture
def store(backend: Backend) -> CheckpointStore:
    return backend.store


@pytest.fixture
def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def value(text: str) -> Payload:
    return Payload("text/plain", 0, text.encode())


def inline(version: str, text: str) -> ChannelEntry:
    payload = value(text)
    return ChannelEntry(version, payload, payload.content_hash())


def draft(
    checkpoint_id: str,
    *,
    execution_id: str = "run",
    namespace: str = "",
    parent: str = "",
    time_ns: int = BASE_NS,
    channels: dict[str, ChannelEntry] | None = None,
    metadata: dict[str, Any] | None = None,
    run_id: str = "",
) -> CheckpointDraft:
    return CheckpointDraft(
        execution_id=execution_id,
        namespace=namespace,
        checkpoint_id=checkpoint_id,
        parent_checkpoint_id=parent,
        state=Payload("application/json", 1, b"{}"),
        channels=channels or {},
        metadata=metadata or {},
        run_id=run_id,
        create_time_ns=time_ns,
    )


def writes(
    checkpoint_id: str, task_id: str, *entries: tuple[int, str, str], **kw: str
) -> WritesDraft:
    return WritesDraft(
        execution_id=kw.get("execution_id", "run"),
        namespace=kw.get("namespace", ""),
        checkpoint_id=checkpoint_id,
        task_id=task_id,
        task_path=kw.get("task_path", ""),
        writes=tuple(WriteEntry(index, channel, value(text)) for index, channel, text in entries),
    )


async def ids(store: CheckpointStore, tenant: str, **query: Any) -> list[str]:
    found = await store.list_checkpoints(tenant, CheckpointQuery(**query), None, 100, ALL)
    return [checkpoint.checkpoint_id for checkpoint in found]


async def chain(store: CheckpointStore, tenant: str, count: int, **kw: Any) -> list[str]:
    """Saves `count` checkpoints c0..cN-1, each the parent of the next."""
    made: list[str] = []
    for index in range(count):
        checkpoint_id = f"{kw.get('prefix', 'c')}{index}"
        await store.save_checkpoint(
            tenant,
            draft(
                checkpoint_id,
                parent=made[-1] if made else "",
                time_ns=BASE_NS + index,
                **{k: v for k, v in kw.items() if k != "prefix"},
            ),
            0,
        )
        made.append(checkpoint_id)
    return made


# ----- saving and reading -------------------------------------------------------------


async def test_save_and_get_round_trip(store: CheckpointStore, tenant: str) -> None:
    outcome = await store.save_checkpoint(
        tenant,
        draft("c1", channels={"a": inline("1", "alpha")}, metadata={"step": 3, "x": [1, "y"]}),
        0,
    )
    assert outcome.checkpoint_id == "c1" and not outcome.replaced and outcome.sequence >= 1
    got = await store.get_checkpoint(tenant, "run", "", "c1", ALL)
    assert got is not None
    assert got.channels["a"].value == value("alpha")
    assert got.channels["a"].content_hash == value("alpha").content_hash()
    assert got.metadata == {"step": 3, "x": [1, "y"]}
    assert got.state == Payload("application/json", 1, b"{}")
    assert got.create_time_ns == BASE_NS


async def test_latest_follows_time_not_id_order(store: CheckpointStore, tenant: str) -> None:
    await store.save_checkpoint(tenant, draft("z-older", time_ns=BASE_NS), 0)
    await store.save_checkpoint(tenant, draft("a-newer", time_ns=BASE_NS + 1), 0)
    latest = await store.get_checkpoint(tenant, "run", "", None, ALL)
    assert latest is not None and latest.checkpoint_id == "a-newer"
    assert await ids(store, tenant, execution_id="run") == ["a-newer", "z-older"]


async def test_time_ties_break_by_save_order(store: CheckpointStore, tenant: str) -> None:
    for checkpoint_id in ["m", "b", "x"]:
        await store.save_checkpoint(tenant, draft(checkpoint_id, time_ns=BASE_NS), 0)
    assert await ids(store, tenant, execution_id="run") == ["x", "b", "m"]


async def test_resave_replaces_content_but_keeps_sequence_and_writes(
    store: CheckpointStore, tenant: str
) -> None:
    first = await store.save_checkpoint(tenant, draft("c1", metadata={"v": 1}), 0)
    await store.save_checkpoint(tenant, draft("c2", time_ns=BASE_NS + 5), 0)
    await store.put_writes(tenant, writes("c1", "t", (0, "ch", "w")), 0)
    again = await store.save_checkpoint(tenant, draft("c1", metadata={"v": 2}), 0)
    assert again.replaced and again.sequence == first.sequence
    got = await store.get_checkpoint(tenant, "run", "", "c1", ALL)
    assert got is not None and got.metadata == {"v": 2} and len(got.pending_writes) == 1


async def test_server_assigned_ids_sort_in_save_order(store: CheckpointStore, tenant: str) -> None:
    assigned = [
        (await store.save_checkpoint(tenant, draft("", time_ns=BASE_NS), 0)).checkpoint_id
        for _ in range(12)
    ]
    assert assigned == sorted(assigned) and len(set(assigned)) == 12


async def test_channel_given_by_version_or_hash_reuses_the_stored_value(
    store: CheckpointStore, tenant: str
) -> None:
    await store.save_checkpoint(tenant, draft("c1", channels={"a": inline("1", "big")}), 0)
    digest = value("big").content_hash()
    await store.save_checkpoint(
        tenant,
        draft("c2", parent="c1", time_ns=BASE_NS + 1, channels={"a": ChannelEntry("1")}),
        0,
    )
    await store.save_checkpoint(
        tenant,
        draft("c3", time_ns=BASE_NS + 2, channels={"b": ChannelEntry("9", None, digest)}),
        0,
    )
    for checkpoint_id, channel in [("c2", "a"), ("c3", "b")]:
        got = await store.get_checkpoint(tenant, "run", "", checkpoint_id, ALL)
        assert got is not None and got.channels[channel].value == value("big")


async def test_missing_channel_values_are_refused(store: CheckpointStore, tenant: str) -> None:
    with pytest.raises(ChannelValueMissingError) as missing:
        await store.save_checkpoint(tenant, draft("c1", channels={"a": ChannelEntry("7")}), 0)
    assert missing.value.metadata == {"condition": "CHANNEL_VALUE_MISSING", "channel": "a"}
    with pytest.raises(ChannelValueMissingError):
        await store.save_checkpoint(
            tenant, draft("c1", channels={"a": ChannelEntry("7", None, "0" * 64)}), 0
        )
    assert await store.get_checkpoint(tenant, "run", "", "c1", ALL) is None


async def test_read_without_values_keeps_versions_and_hashes(
    store: CheckpointStore, tenant: str
) -> None:
    await store.save_checkpoint(tenant, draft("c1", channels={"a": inline("1", "v")}), 0)
    got = await store.get_checkpoint(
        tenant, "run", "", "c1", ReadOptions(include_values=False, include_writes=False)
    )
    assert got is not None
    assert got.channels["a"] == ChannelEntry("1", None, value("v").content_hash())
    fetched = await store.get_channel_values(tenant, [value("v").content_hash(), "f" * 64])
    assert fetched == {value("v").content_hash(): value("v")}


async def test_tenants_never_meet(store: CheckpointStore, tenant: str) -> None:
    await store.save_checkpoint(tenant, draft("c1", channels={"a": inline("1", "secret")}), 0)
    other = tenant + "-other"
    assert await store.get_checkpoint(other, "run", "", None, ALL) is None
    assert await ids(store, other) == []
    assert await store.get_channel_values(other, [value("secret").content_hash()]) == {}
    with pytest.raises(ChannelValueMissingError):
        await store.save_checkpoint(
            other,
            draft("c1", channels={"a": ChannelEntry("1", None, value("secret").content_hash())}),
            0,
        )


# ----- pending writes -----------------------------------------------------------------


async def test_writes_first_wins_special_channels_replace(
    store: CheckpointStore, tenant: str
) -> None:
    await store.save_checkpoint(tenant, draft("c1"), 0)
    first = await store.put_writes(tenant, writes("c1", "t1", (0, "a", "one"), (-1, "err", "x")), 0)
    again = await store.put_writes(tenant, writes("c1", "t1", (0, "a", "two"), (-1, "err", "y")), 0)
    assert (first.stored, first.duplicates) == (2, 0)
    assert (again.stored, again.duplicates) == (1, 1)
    got = await store.get_checkpoint(tenant, "run", "", "c1", ALL)
    assert got is not None
    assert {(w.index, w.value.data) for w in got.pending_writes} == {(0, b"one"), (-1, b"y")}


async def test_writes_are_ordered_by_task_path_task_id_index(
    store: CheckpointStore, tenant: str
) -> None:
    await store.save_checkpoint(tenant, draft("c1"), 0)
    await store.put_writes(tenant, writes("c1", "b", (1, "x", ""), (0, "x", ""), task_path="p2"), 0)
    await store.put_writes(tenant, writes("c1", "a", (0, "x", ""), task_path="p2"), 0)
    await store.put_writes(tenant, writes("c1", "z", (0, "x", "")), 0)
    got = await store.get_checkpoint(tenant, "run", "", "c1", ALL)
    assert got is not None
    order = [(w.task_path, w.task_id, w.index) for w in got.pending_writes]
    assert order == [("", "z", 0), ("p2", "a", 0), ("p2", "b", 0), ("p2", "b", 1)]


async def test_writes_need_an_existing_checkpoint(store: CheckpointStore, tenant: str) -> None:
    with pytest.raises(NotFoundError):
        await store.put_writes(tenant, writes("nope", "t", (0, "a", "")), 0)


async def test_writes_are_isolated_by_namespace(store: CheckpointStore, tenant: str) -> None:
    await store.save_checkpoint(tenant, draft("c1"), 0)
    await store.save_checkpoint(tenant, draft("c1", namespace="child:1"), 0)
    await store.put_writes(tenant, writes("c1", "t", (0, "a", "child"), namespace="child:1"), 0)
    root = await store.get_checkpoint(tenant, "run", "", "c1", ALL)
    child = await store.get_checkpoint(tenant, "run", "child:1", "c1", ALL)
    assert root is not None and child is not None
    assert root.pending_writes == () and len(child.pending_writes) == 1


# ----- listing --------------------------------------------------------------------------


async def test_metadata_filter_compares_json_values(store: CheckpointStore, tenant: str) -> None:
    await store.save_checkpoint(
        tenant, draft("n", metadata={"step": 1, "flag": True, "o": {"a": [1, 2]}, "s": "1"}), 0
    )
    await store.save_checkpoint(
        tenant, draft("m", time_ns=BASE_NS + 1, metadata={"step": 2, "flag": 1, "s": None}), 0
    )
    assert await ids(store, tenant, metadata_filter={"step": 1.0}) == ["n"]
    assert await ids(store, tenant, metadata_filter={"flag": True}) == ["n"]
    assert await ids(store, tenant, metadata_filter={"flag": 1}) == ["m"]
    assert await ids(store, tenant, metadata_filter={"o": {"a": [1, 2]}}) == ["n"]
    assert await ids(store, tenant, metadata_filter={"s": None}) == ["m"]
    assert await ids(store, tenant, metadata_filter={"s": "1", "step": 1}) == ["n"]
    assert await ids(store, tenant, metadata_filter={"missing": 1}) == []


async def test_list_pages_and_before_bound(store: CheckpointStore, tenant: str) -> None:
    made = await chain(store, tenant, 5)
    await chain(store, tenant, 2, execution_id="other")
    first = await store.list_checkpoints(tenant, CheckpointQuery("run"), None, 2, ALL)
    after = Position(first[-1].create_time_ns, first[-1].sequence, "run", "")
    second = await store.list_checkpoints(tenant, CheckpointQuery("run"), after, 10, ALL)
    listed = [c.checkpoint_id for c in first + second]
    assert listed == list(reversed(made))
    before = "c3"
    assert await ids(store, tenant, execution_id="run", before_checkpoint_id=before) == [
        "c2",
        "c1",
        "c0",
    ]
    assert len(await ids(store, tenant)) == 7


async def test_before_compares_ids_byte_by_byte(store: CheckpointStore, tenant: str) -> None:
    """`before` is an id comparison, as in LangGraph's savers: the id need not
    name a stored checkpoint (a subgraph's history is bounded by a parent's
    id), and it wins over the time order, in every namespace."""
    await store.save_checkpoint(tenant, draft("b", time_ns=BASE_NS), 0)
    await store.save_checkpoint(tenant, draft("a", time_ns=BASE_NS + 1), 0)
    await store.save_checkpoint(tenant, draft("d", namespace="sub", time_ns=BASE_NS + 2), 0)
    await store.save_checkpoint(tenant, draft("B", time_ns=BASE_NS + 3), 0)
    await store.save_checkpoint(tenant, draft("\u00e9", time_ns=BASE_NS + 4), 0)
    assert await ids(store, tenant, execution_id="run", before_checkpoint_id="c") == ["B", "a", "b"]
    assert await ids(store, tenant, execution_id="run", before_checkpoint_id="b") == ["B", "a"]
    assert await ids(store, tenant, namespace="", before_checkpoint_id="a") == ["B"]
    assert await ids(store, tenant, namespace="sub", before_checkpoint_id="e") == ["d"]
    assert await ids(store, tenant, namespace="sub", before_checkpoint_id="d") == []
    # UTF-8 bytes: U+00E9 (0xC3 0xA9) sorts after every ASCII id.
    assert await ids(store, tenant, before_checkpoint_id="\u00ff") == ["\u00e9", "B", "d", "a", "b"]
    assert await ids(store, tenant, before_checkpoint_id="z") == ["B", "d", "a", "b"]


# ----- deletion is final ----------------------------------------------------------------


async def test_late_writes_after_delete_fail(store: CheckpointStore, tenant: str) -> None:
    made = await chain(store, tenant, 2)
    await store.put_writes(tenant, writes(made[1], "t", (0, "a", "")), 0)
    counts = await store.delete_execution(tenant, "run", BASE_NS)
    assert (counts.checkpoints, counts.writes) == (2, 1)
    with pytest.raises(CheckpointDeletedError) as deleted:
        await store.save_checkpoint(tenant, draft("c9", parent=made[1]), 0)
    assert deleted.value.metadata["condition"] == "CHECKPOINT_DELETED"
    with pytest.raises(CheckpointDeletedError):
        await store.put_writes(tenant, writes(made[1], "t", (1, "a", "")), 0)
    with pytest.raises(CheckpointDeletedError):
        await store.save_checkpoint(tenant, draft(made[0]), 0)
    assert await ids(store, tenant, execution_id="run") == []
    fresh = await store.save_checkpoint(tenant, draft("fresh"), 0)
    assert fresh.sequence > 2, "sequence numbers are never reused"


async def test_delete_of_unknown_execution_counts_zero(store: CheckpointStore, tenant: str) -> None:
    counts = await store.delete_execution(tenant, "ghost", BASE_NS)
    assert (counts.checkpoints, counts.writes, counts.channel_values) == (0, 0, 0)


async def test_delete_runs_spans_namespaces_and_tombstones(
    store: CheckpointStore, tenant: str
) -> None:
    await store.save_checkpoint(tenant, draft("a", run_id="r1"), 0)
    await store.save_checkpoint(tenant, draft("b", run_id="r1", namespace="sub"), 0)
    await store.save_checkpoint(tenant, draft("c", run_id="r2", parent="a", time_ns=BASE_NS + 1), 0)
    counts = await store.delete_runs(tenant, ["r1", "unknown"], BASE_NS)
    assert counts.checkpoints == 2
    assert await ids(store, tenant) == ["c"]
    with pytest.raises(CheckpointDeletedError):
        await store.put_writes(tenant, writes("b", "t", (0, "x", ""), namespace="sub"), 0)


async def test_delete_removes_values_nothing_else_uses(store: CheckpointStore, tenant: str) -> None:
    await store.save_checkpoint(tenant, draft("a", channels={"x": inline("1", "only-a")}), 0)
    await store.save_checkpoint(
        tenant, draft("b", execution_id="keep", channels={"x": inline("1", "shared")}), 0
    )
    await store.save_checkpoint(tenant, draft("c", channels={"x": inline("2", "shared")}), 0)
    counts = await store.delete_execution(tenant, "run", BASE_NS)
    assert counts.channel_values == 1
    remaining = await store.get_channel_values(
        tenant, [value("only-a").content_hash(), value("shared").content_hash()]
    )
    assert list(remaining) == [value("shared").content_hash()]


async def test_forgotten_tombstones_allow_the_id_again(store: CheckpointStore, tenant: str) -> None:
    await store.save_checkpoint(tenant, draft("a"), 0)
    await store.delete_execution(tenant, "run", BASE_NS)
    assert await store.forget_tombstones(BASE_NS + 1, 1000) >= 1
    await store.save_checkpoint(tenant, draft("b", parent="a"), 0)


# ----- copy -----------------------------------------------------------------------------


async def test_copy_keeps_ids_order_values_and_writes(store: CheckpointStore, tenant: str) -> None:
    made = await chain(store, tenant, 3, channels={"x": inline("1", "v")})
    await store.save_checkpoint(tenant, draft("s", namespace="sub", time_ns=BASE_NS + 9), 0)
    await store.put_writes(tenant, writes(made[-1], "t", (0, "a", "w")), 0)
    counts = await store.copy_execution(tenant, "run", "fork", None)
    assert (counts.checkpoints, counts.writes) == (4, 1)
    assert await ids(store, tenant, execution_id="fork") == await ids(
        store, tenant, execution_id="run"
    )
    latest = await store.get_checkpoint(tenant, "fork", "", None, ALL)
    assert latest is not None and latest.channels["x"].value == value("v")
    assert len(latest.pending_writes) == 1
    after = await store.save_checkpoint(tenant, draft("", execution_id="fork"), 0)
    assert after.sequence > max(c.sequence for c in [latest])


async def test_copy_until_a_checkpoint_forks_there(store: CheckpointStore, tenant: str) -> None:
    made = await chain(store, tenant, 4)
    counts = await store.copy_execution(tenant, "run", "fork", made[1])
    assert counts.checkpoints == 2
    assert await ids(store, tenant, execution_id="fork") == [made[1], made[0]]


async def test_copy_refuses_missing_source_and_busy_target(
    store: CheckpointStore, tenant: str
) -> None:
    with pytest.raises(NotFoundError):
        await store.copy_execution(tenant, "ghost", "fork", None)
    await chain(store, tenant, 1)
    await chain(store, tenant, 1, execution_id="busy")
    with pytest.raises(AlreadyExistsError):
        await store.copy_execution(tenant, "run", "busy", None)
    with pytest.raises(NotFoundError):
        await store.copy_execution(tenant, "run", "fork", "nope")


# ----- prune ----------------------------------------------------------------------------


async def test_prune_keeps_last_n_and_the_values_they_need(
    store: CheckpointStore, tenant: str
) -> None:
    # c0 introduces "base"; later checkpoints only name its version.
    await store.save_checkpoint(
        tenant, draft("c0", channels={"base": inline("1", "base"), "x": inline("1", "x0")}), 0
    )
    for index in range(1, 5):
        channels = {"base": ChannelEntry("1"), "x": inline(str(index + 1), f"x{index}")}
        await store.save_checkpoint(
            tenant,
            draft(f"c{index}", parent=f"c{index - 1}", time_ns=BASE_NS + index, channels=channels),
            0,
        )
    await store.put_writes(tenant, writes("c0", "t", (0, "a", "old")), 0)
    counts = await store.prune(tenant, ["run"], 2, dry_run=False)
    assert (counts.checkpoints, counts.writes, counts.channel_values) == (3, 1, 3)
    assert await ids(store, tenant, execution_id="run") == ["c4", "c3"]
    kept = await store.get_checkpoint(tenant, "run", "", "c3", ALL)
    assert kept is not None and kept.channels["base"].value == value("base")
    assert kept.parent_checkpoint_id == "c2", "a kept checkpoint may name a pruned parent"
    # Pruning is not final: a pruned id may still be a parent.
    await store.save_checkpoint(tenant, draft("c5", parent="c0", time_ns=BASE_NS + 9), 0)


async def test_prune_counts_per_namespace_and_dry_run_changes_nothing(
    store: CheckpointStore, tenant: str
) -> None:
    await chain(store, tenant, 3)
    await chain(store, tenant, 3, namespace="sub")
    dry = await store.prune(tenant, None, 1, dry_run=True)
    assert dry.checkpoints == 4
    assert len(await ids(store, tenant)) == 6
    real = await store.prune(tenant, None, 1, dry_run=False)
    assert real == dry
    assert await ids(store, tenant, namespace="") == ["c2"]
    assert await ids(store, tenant, namespace="sub") == ["c2"]


async def test_prune_zero_removes_everything_without_finality(
    store: CheckpointStore, tenant: str
) -> None:
    made = await chain(store, tenant, 2)
    await store.prune(tenant, ["run"], 0, dry_run=False)
    assert await ids(store, tenant) == []
    await store.save_checkpoint(tenant, draft("next", parent=made[-1]), 0)


# ----- ownership ------------------------------------------------------------------------


async def test_claims_fence_stale_writers(store: CheckpointStore, tenant: str) -> None:
    first = await store.claim_execution(tenant, "run")
    await store.save_checkpoint(tenant, draft("c1"), first)
    second = await store.claim_execution(tenant, "run")
    assert second > first
    with pytest.raises(OwnershipSupersededError) as stale:
        await store.save_checkpoint(tenant, draft("c2"), first)
    assert stale.value.metadata["current_epoch"] == str(second)
    with pytest.raises(OwnershipSupersededError):
        await store.put_writes(tenant, writes("c1", "t", (0, "a", "")), first)
    with pytest.raises(InvalidArgumentError):
        await store.save_checkpoint(tenant, draft("c2"), second + 5)
    await store.save_checkpoint(tenant, draft("c2", time_ns=BASE_NS + 1), second)
    await store.save_checkpoint(tenant, draft("c3", time_ns=BASE_NS + 2), 0)
    await store.delete_execution(tenant, "run", BASE_NS)
    assert await store.claim_execution(tenant, "run") > second, "epochs survive deletion"


# ----- audit ------------------------------------------------------------------------------


def audit(summary: str) -> AuditRecord:
    return AuditRecord("", "key", "svc", "Method", "execution", "run", 0, 1.0, summary)


async def test_audit_is_stored_with_each_change_and_only_then(
    backend: Backend, tenant: str
) -> None:
    store = backend.store
    await store.save_checkpoint(tenant, draft("c1"), 0, audit("save"))
    await store.save_checkpoint(tenant, draft("c2", time_ns=BASE_NS + 1), 0, audit("save 2"))
    await store.put_writes(tenant, writes("c2", "t", (0, "a", "")), 0, audit("writes"))
    epoch = await store.claim_execution(tenant, "run", audit("claim"))
    with pytest.raises(NotFoundError):
        await store.put_writes(tenant, writes("nope", "t", (0, "a", "")), 0, audit("refused"))
    await store.copy_execution(tenant, "run", "fork", None, audit("copy"))
    await store.prune(tenant, None, 1, False, audit("prune"))
    await store.delete_runs(tenant, ["none"], BASE_NS, audit("no runs"))
    await store.delete_execution(tenant, "run", BASE_NS, audit("delete"))
    with pytest.raises(CheckpointDeletedError):
        await store.save_checkpoint(tenant, draft("c3", parent="c2"), 0, audit("refused"))
    trail = [(r.summary, r.entity_id, r.revision) for r in await backend.audit_trail(tenant)]
    assert trail == [
        ("save", "run", 1),
        ("save 2", "run", 2),
        ("writes", "run", 2),
        ("claim", "run", epoch),
        ("copy", "run", 2),
        ("prune", "fork", 2),
        ("prune", "run", 2),
        ("delete", "run", 2),
    ]


# ----- replicas ---------------------------------------------------------------------------
# Two server replicas write the same data at once (on the embedded backend,
# which has no replicas, two callers of one store).


async def test_replicas_saving_one_execution_get_distinct_sequences(
    backend: Backend, tenant: str
) -> None:
    stores = [backend.store, backend.replica]
    outcomes = await asyncio.gather(
        *(stores[i % 2].save_checkpoint(tenant, draft("", time_ns=BASE_NS), 0) for i in range(20))
    )
    assert len({outcome.sequence for outcome in outcomes}) == 20
    assert len({outcome.checkpoint_id for outcome in outcomes}) == 20
    assert len(await ids(backend.store, tenant)) == 20


async def test_replicas_claiming_at_once_get_distinct_epochs(backend: Backend, tenant: str) -> None:
    stores = [backend.store, backend.replica]
    claims = (stores[i % 2].claim_execution(tenant, "run") for i in range(10))
    epochs = await asyncio.gather(*claims)
    assert sorted(epochs) == list(range(1, 11))


async def test_a_deletion_on_one_replica_is_final_for_a_writer_on_another(
    backend: Backend, tenant: str
) -> None:
    writer, deleter = backend.store, backend.replica
    await writer.save_checkpoint(tenant, draft("c0"), 0)
    underway = asyncio.Event()
    attempted = ["c0"]

    async def write_chain() -> Exception | None:
        for index in range(1, 200):
            try:
                await writer.put_writes(tenant, writes(attempted[-1], "t", (0, "a", "w")), 0)
                attempted.append(f"c{index}")
                await writer.save_checkpoint(
                    tenant, draft(attempted[-1], parent=attempted[-2], time_ns=BASE_NS + index), 0
                )
            except CheckpointDeletedError as refused:
                return refused
            if index == 5:
                underway.set()
        return None

    async def delete_while_writing() -> None:
        await underway.wait()
        await deleter.delete_execution(tenant, "run", BASE_NS)

    refused, _ = await asyncio.gather(write_chain(), delete_while_writing())
    assert isinstance(refused, CheckpointDeletedError)
    assert await ids(backend.store, tenant) == []
    # No write outlived its checkpoint: once the ids may be reused, they
    # come back without any.
    await backend.store.forget_tombstones(BASE_NS + 1, 1000)
    for checkpoint_id in attempted:
        await writer.save_checkpoint(tenant, draft(checkpoint_id), 0)
        got = await writer.get_checkpoint(tenant, "run", "", checkpoint_id, ALL)
        assert got is not None and got.pending_writes == (), checkpoint_id


async def test_a_value_collected_on_one_replica_is_never_lost_by_a_save_on_another(
    backend: Backend, tenant: str
) -> None:
    for round_index in range(15):
        shared = inline("1", f"shared-{round_index}")
        await backend.replica.save_checkpoint(
            tenant, draft(f"y{round_index}", execution_id="doomed", channels={"v": shared}), 0
        )
        by_hash = draft(
            f"x{round_index}",
            execution_id="keep",
            time_ns=BASE_NS + round_index,
            channels={"v": ChannelEntry("1", None, shared.content_hash)},
        )

        async def save_by_hash(record: CheckpointDraft = by_hash) -> bool:
            try:
                await backend.store.save_checkpoint(tenant, record, 0)
            except ChannelValueMissingError:
                return False  # the value was collected first: refused, not lost
            return True

        saved, _ = await asyncio.gather(
            save_by_hash(), backend.replica.delete_execution(tenant, "doomed", BASE_NS)
        )
        got = await backend.store.get_checkpoint(tenant, "keep", "", f"x{round_index}", ALL)
        if saved:
            assert got is not None and got.channels["v"].value == shared.value, round_index
        else:
            assert got is None


async def test_erase_user_deletes_tagged_executions_and_their_blobs(
    store: CheckpointStore, tenant: str
) -> None:
    other = f"t-{uuid.uuid4().hex[:8]}"
    subject = ErasureSubject("u1")
    shared, mine = inline("1", "shared value"), inline("1", "u1 only value")
    tagged = {"user_id": "u1", "thread": "x"}
    # u1's execution: only its first checkpoint is tagged; its subgraph
    # namespace and writes go with it.
    await store.save_checkpoint(
        tenant,
        draft("c0", execution_id="e1", channels={"a": shared, "b": mine}, metadata=tagged),
        0,
    )
    await store.save_checkpoint(tenant, draft("c1", execution_id="e1", parent="c0"), 0)
    await store.save_checkpoint(tenant, draft("s0", execution_id="e1", namespace="sub"), 0)
    await store.put_writes(tenant, writes("c1", "task", (0, "a", "w"), execution_id="e1"), 0)
    # u2's execution shares a channel value (one blob) with u1's.
    await store.save_checkpoint(
        tenant,
        draft("c0", execution_id="e2", channels={"a": shared}, metadata={"user_id": "u2"}),
        0,
    )
    await store.save_checkpoint(
        other, draft("c0", execution_id="e1", channels={"b": mine}, metadata=tagged), 0
    )
    dry = await store.erase_user(tenant, subject, dry_run=True)
    assert dry.counts[("checkpoints", "checkpoints")] == 3
    assert dry.counts[("checkpoints", "writes")] == 1
    assert dry.counts[("checkpoints", "blobs")] == 1  # "shared value" is u2's too
    assert await ids(store, tenant, execution_id="e1") != []
    real = await store.erase_user(tenant, subject, dry_run=False)
    assert real.counts == dry.counts
    assert await ids(store, tenant, execution_id="e1") == []
    kept = await store.get_checkpoint(tenant, "e2", "", None, ALL)
    assert kept is not None and kept.channels["a"].value == shared.value
    theirs = await store.get_checkpoint(other, "e1", "", None, ALL)
    assert theirs is not None and theirs.channels["b"].value == mine.value
    assert (await store.erase_user(tenant, subject, dry_run=False)).total == 0
