"""CheckpointManager rules in process: validation naming the field, limits,
defaults, paging."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.core.audit.service import Actor
from statekeeper.core.checkpoints.models import (
    ChannelEntry,
    CheckpointDraft,
    CheckpointLimits,
    CheckpointQuery,
    ReadOptions,
    WriteEntry,
    WritesDraft,
)
from statekeeper.core.checkpoints.service import CheckpointManager
from statekeeper.core.errors import InvalidArgumentError, LimitExceededError, NotFoundError
from statekeeper.core.schema_upgrades import Payload, UpgradeRegistry, builtin_registry
from statekeeper.core.tenancy import Principal
from statekeeper.storage.embedded.checkpoints import EmbeddedCheckpointStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from tests.fakes.clock import TickingClockNs

T = "tenant-a"
A = Actor(Principal(T, "key-test"), "statekeeper.v1.CheckpointService", "Test")

ALL = ReadOptions()


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[CheckpointManager]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedCheckpointStore(storage)
    await store.start()
    limits = CheckpointLimits(max_checkpoint_bytes=10_000, max_batch=5, default_keep_last=2)
    yield CheckpointManager(store, limits, builtin_registry(), clock_ns=TickingClockNs())
    await storage.close()


def value(text: str) -> Payload:
    return Payload("text/plain", 0, text.encode())


def save_draft(checkpoint_id: str = "", **fields: object) -> CheckpointDraft:
    base: dict[str, object] = {"execution_id": "run", "checkpoint_id": checkpoint_id}
    base.update(fields)
    return CheckpointDraft(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("draft", "field"),
    [
        (save_draft(execution_id=""), "checkpoint.execution_id"),
        (save_draft(execution_id="a\nb"), "checkpoint.execution_id"),
        (save_draft(namespace="x" * 600), "checkpoint.namespace"),
        (save_draft(channels={"a": ChannelEntry("")}), "checkpoint.channels['a'].version"),
        (
            save_draft(channels={"a": ChannelEntry("1", value("v"), "0" * 64)}),
            "checkpoint.channels['a']",
        ),
        (
            save_draft(channels={"a": ChannelEntry("1", None, "XYZ")}),
            "checkpoint.channels['a'].content_hash",
        ),
        (save_draft(channels={"": ChannelEntry("1", value("v"))}), "checkpoint.channels['']"),
        (save_draft(metadata={"x": float("nan")}), "checkpoint.metadata"),
    ],
)
async def test_bad_saves_name_the_field(
    manager: CheckpointManager, draft: CheckpointDraft, field: str
) -> None:
    with pytest.raises(InvalidArgumentError) as error:
        await manager.save(A, draft, 0)
    assert error.value.field == field


async def test_oversized_checkpoint_is_resource_exhausted(manager: CheckpointManager) -> None:
    big = {"a": ChannelEntry("1", value("x" * 20_000))}
    with pytest.raises(LimitExceededError) as error:
        await manager.save(A, save_draft(channels=big), 0)
    assert error.value.field == "checkpoint"


async def test_save_fills_time_run_id_and_canonical_metadata(manager: CheckpointManager) -> None:
    saved = await manager.save(A, save_draft(metadata={"step": 2.0, "run_id": "r-1"}), 0)
    assert saved.checkpoint_id and saved.create_time_ns > 0
    got = await manager.get(T, "run", "", saved.checkpoint_id, ALL)
    assert got.metadata == {"step": 2, "run_id": "r-1"} and got.run_id == "r-1"
    assert isinstance(got.metadata["step"], int)
    by_run, _ = await manager.list_checkpoints(T, CheckpointQuery(run_id="r-1"), 0, "", ALL)
    assert [c.checkpoint_id for c in by_run] == [saved.checkpoint_id]


async def test_get_missing_is_not_found(manager: CheckpointManager) -> None:
    with pytest.raises(NotFoundError):
        await manager.get(T, "run", "", "", ALL)
    await manager.save(A, save_draft("c1"), 0)
    with pytest.raises(NotFoundError):
        await manager.get(T, "run", "", "c2", ALL)


@pytest.mark.parametrize(
    ("writes", "field"),
    [
        (WritesDraft("", "", "c1", "t", "", (WriteEntry(0, "a", value("")),)), "execution_id"),
        (WritesDraft("run", "", "", "t", "", (WriteEntry(0, "a", value("")),)), "checkpoint_id"),
        (WritesDraft("run", "", "c1", "", "", (WriteEntry(0, "a", value("")),)), "task_id"),
        (WritesDraft("run", "", "c1", "t", "", ()), "writes"),
        (
            WritesDraft(
                "run",
                "",
                "c1",
                "t",
                "",
                (WriteEntry(0, "a", value("")), WriteEntry(0, "b", value(""))),
            ),
            "writes[1].index",
        ),
        (
            WritesDraft("run", "", "c1", "t", "", (WriteEntry(0, "", value("")),)),
            "writes[0].channel",
        ),
    ],
)
async def test_bad_writes_name_the_field(
    manager: CheckpointManager, writes: WritesDraft, field: str
) -> None:
    with pytest.raises(InvalidArgumentError) as error:
        await manager.put_writes(A, writes, 0)
    assert error.value.field == field


async def test_list_pages_with_tokens_bound_to_their_filters(manager: CheckpointManager) -> None:
    for index in range(5):
        await manager.save(A, save_draft(f"c{index}"), 0)
    page, token = await manager.list_checkpoints(T, CheckpointQuery("run"), 2, "", ALL)
    rest, end = await manager.list_checkpoints(T, CheckpointQuery("run"), 10, token, ALL)
    assert [c.checkpoint_id for c in page + rest] == ["c4", "c3", "c2", "c1", "c0"]
    assert end == ""
    with pytest.raises(InvalidArgumentError) as stale:
        await manager.list_checkpoints(T, CheckpointQuery("other"), 10, token, ALL)
    assert stale.value.field == "page_token"
    with pytest.raises(InvalidArgumentError):
        await manager.list_checkpoints(T, CheckpointQuery("run"), 10, "garbage!", ALL)
    with pytest.raises(InvalidArgumentError) as negative:
        await manager.list_checkpoints(T, CheckpointQuery("run"), -1, "", ALL)
    assert negative.value.field == "page_size"


async def test_before_is_an_id_bound_that_need_not_name_a_checkpoint(
    manager: CheckpointManager,
) -> None:
    """LangGraph lists a subgraph's checkpoints before an id of the parent
    namespace: the bound compares ids, so an id stored elsewhere (or nowhere)
    bounds the listing instead of failing it."""
    for checkpoint_id in ("p1", "p3"):
        await manager.save(A, save_draft(checkpoint_id), 0)
    await manager.save(A, save_draft("p2", namespace="sub"), 0)
    await manager.save(A, save_draft("p4", namespace="sub"), 0)
    sub = CheckpointQuery("run", "sub", before_checkpoint_id="p3")
    found, _ = await manager.list_checkpoints(T, sub, 10, "", ALL)
    assert [c.checkpoint_id for c in found] == ["p2"]
    anywhere = CheckpointQuery(before_checkpoint_id="p4")
    found, _ = await manager.list_checkpoints(T, anywhere, 10, "", ALL)
    # Newest first (time order); the bound only filters, by id.
    assert [c.checkpoint_id for c in found] == ["p2", "p3", "p1"]
    bad = CheckpointQuery("run", before_checkpoint_id="a\x00b")
    with pytest.raises(InvalidArgumentError) as error:
        await manager.list_checkpoints(T, bad, 10, "", ALL)
    assert error.value.field == "before_checkpoint_id"


async def test_channel_values_by_hash(manager: CheckpointManager) -> None:
    await manager.save(A, save_draft("c1", channels={"a": ChannelEntry("1", value("v"))}), 0)
    digest = value("v").content_hash()
    values, missing = await manager.channel_values(T, [digest, "e" * 64, digest])
    assert values == {digest: value("v")} and missing == ["e" * 64]
    with pytest.raises(InvalidArgumentError):
        await manager.channel_values(T, [])
    with pytest.raises(InvalidArgumentError) as bad:
        await manager.channel_values(T, ["nothex"])
    assert bad.value.field == "content_hashes[0]"
    with pytest.raises(LimitExceededError):
        await manager.channel_values(T, ["a" * 64] * 6)


async def test_removals_validate_and_default(manager: CheckpointManager) -> None:
    for index in range(4):
        await manager.save(A, save_draft(f"c{index}"), 0)
    assert (await manager.delete_runs(A, [])).checkpoints == 0
    with pytest.raises(LimitExceededError):
        await manager.delete_runs(A, [f"r{i}" for i in range(6)])
    with pytest.raises(InvalidArgumentError) as both:
        await manager.prune(A, ["run"], True, 1, False)
    assert both.value.field == "all_executions"
    with pytest.raises(InvalidArgumentError):
        await manager.prune(A, ["run"], False, -1, False)
    assert (await manager.prune(A, [], False, None, False)).checkpoints == 0
    pruned = await manager.prune(A, ["run"], False, None, False)
    assert pruned.checkpoints == 2, "keep_last defaults to the configured 2"
    with pytest.raises(InvalidArgumentError):
        await manager.copy_execution(A, "run", "run", "")
    with pytest.raises(InvalidArgumentError):
        await manager.delete_execution(A, "")
    with pytest.raises(InvalidArgumentError):
        await manager.claim_execution(A, "")
    with pytest.raises(InvalidArgumentError) as epoch:
        await manager.save(A, save_draft("c9"), -1)
    assert epoch.value.field == "ownership_epoch"


async def test_sweep_forgets_only_old_tombstones(tmp_path: Path) -> None:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedCheckpointStore(storage)
    await store.start()
    clock = TickingClockNs()
    manager = CheckpointManager(
        store, CheckpointLimits(tombstone_retention_seconds=60), builtin_registry(), clock_ns=clock
    )
    await manager.save(A, save_draft("c1"), 0)
    await manager.delete_execution(A, "run")
    assert await manager.sweep_tombstones() == 0
    clock.now_ns += 61 * 10**9
    assert await manager.sweep_tombstones() == 1
    await storage.close()


async def test_reads_upgrade_old_payloads_and_leave_current_ones_as_stored(
    tmp_path: Path,
) -> None:
    """State, channel values and pending writes stored at an older schema
    version come back at the newest; payloads already there (or unversioned)
    come back byte for byte."""
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedCheckpointStore(storage)
    await store.start()
    upgrades = UpgradeRegistry()
    upgrades.register("app/state", 1, lambda data: data.upper())
    manager = CheckpointManager(store, CheckpointLimits(), upgrades, clock_ns=TickingClockNs())
    old, current = Payload("app/state", 1, b"old"), Payload("app/state", 2, b"current")
    try:
        channels = {"old": ChannelEntry("1", old), "current": ChannelEntry("1", current)}
        channels["plain"] = ChannelEntry("1", value("plain"))
        await manager.save(A, save_draft("c1", state=old, channels=channels), 0)
        writes = (WriteEntry(0, "old", old), WriteEntry(1, "current", current))
        await manager.put_writes(A, WritesDraft("run", "", "c1", "t", "", writes), 0)
        got = await manager.get(T, "run", "", "c1", ALL)
        assert got.state == Payload("app/state", 2, b"OLD")
        assert {name: entry.value for name, entry in got.channels.items()} == {
            "old": Payload("app/state", 2, b"OLD"),
            "current": current,
            "plain": value("plain"),
        }
        assert [write.value for write in got.pending_writes] == [
            Payload("app/state", 2, b"OLD"),
            current,
        ]
        await manager.save(A, save_draft("c2", state=current, channels=channels), 0)
        untouched = await manager.get(T, "run", "", "c2", ReadOptions(include_writes=False))
        assert untouched.state == current and untouched.channels["current"].value == current
        assert untouched.channels["old"].value == Payload("app/state", 2, b"OLD")
    finally:
        await storage.close()
