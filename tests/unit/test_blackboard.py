"""Blackboard rules in process: revisions, compare-and-swap, transactions,
TTL, reads at a revision, paging, compaction, quotas."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.core.blackboard.models import (
    BlackboardLimits,
    EventType,
    RevisionCompactedError,
    RevisionMismatchError,
    Value,
)
from statekeeper.core.blackboard.service import (
    Blackboard,
    Compare,
    CompareOperator,
    CompareTarget,
    DeleteOp,
    DeleteResult,
    GetOp,
    GetResult,
    PutOp,
    PutResult,
)
from statekeeper.core.errors import InvalidArgumentError, LimitExceededError
from statekeeper.storage.embedded.blackboard import EmbeddedBlackboardStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from tests.fakes.clock import FakeClock

T = "tenant-a"
LIMITS = BlackboardLimits(expiry_sweep_interval_seconds=3600, compaction_interval_seconds=3600)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedBlackboardStore]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    blackboard_store = EmbeddedBlackboardStore(storage)
    await blackboard_store.start()
    yield blackboard_store
    await blackboard_store.close()
    await storage.close()


@pytest.fixture
def board(store: EmbeddedBlackboardStore, clock: FakeClock) -> Blackboard:
    return Blackboard(store, LIMITS, clock=clock)


def v(text: str) -> Value:
    return Value.payload(text.encode())


async def test_revisions_are_per_tenant_and_shared_by_boards(board: Blackboard) -> None:
    first = await board.put(T, "plan", PutOp("k", v("1")))
    second = await board.put(T, "plan", PutOp("k", v("2")))
    other_board = await board.put(T, "notes", PutOp("k", v("x")))
    other_tenant = await board.put("tenant-b", "plan", PutOp("k", v("y")))
    assert (first.header.revision, second.header.revision, other_board.header.revision) == (1, 2, 3)
    assert other_tenant.header.revision == 1
    assert (second.entry.create_revision, second.entry.mod_revision, second.entry.version) == (
        1,
        2,
        2,
    )
    deleted = await board.delete(T, "plan", "k")
    recreated = await board.put(T, "plan", PutOp("k", v("3")))
    assert deleted.header.revision == 4
    assert (recreated.entry.create_revision, recreated.entry.version) == (5, 1)


async def test_compare_and_swap_on_mod_revision(board: Blackboard) -> None:
    created = await board.put(T, "b", PutOp("k", v("1")), expected_mod_revision=0)
    with pytest.raises(RevisionMismatchError) as exists:
        await board.put(T, "b", PutOp("k", v("2")), expected_mod_revision=0)
    assert exists.value.metadata["current_revision"] == str(created.entry.mod_revision)
    updated = await board.put(
        T, "b", PutOp("k", v("2")), expected_mod_revision=created.entry.mod_revision
    )
    with pytest.raises(RevisionMismatchError):
        await board.put(
            T, "b", PutOp("k", v("3")), expected_mod_revision=created.entry.mod_revision
        )
    with pytest.raises(RevisionMismatchError) as absent:
        await board.put(T, "b", PutOp("missing", v("3")), expected_mod_revision=7)
    assert absent.value.metadata["current_revision"] == "0"
    with pytest.raises(RevisionMismatchError):
        await board.delete(T, "b", "k", expected_mod_revision=created.entry.mod_revision)
    gone = await board.delete(
        T, "b", "k", expected_mod_revision=updated.entry.mod_revision, return_previous=True
    )
    assert gone.deleted and gone.previous is not None and gone.previous.value == v("2")


async def test_a_delete_of_a_missing_key_creates_no_revision(board: Blackboard) -> None:
    await board.put(T, "b", PutOp("k", v("1")))
    missing = await board.delete(T, "b", "nothing")
    assert not missing.deleted and missing.header.revision == 1


async def test_txn_runs_one_branch_under_one_revision(board: Blackboard) -> None:
    await board.put(T, "b", PutOp("a", v("1")))
    outcome = await board.txn(
        T,
        "b",
        [
            Compare("a", CompareOperator.EQUAL, CompareTarget.VALUE, v("1")),
            Compare("a", CompareOperator.GREATER, CompareTarget.VALUE, v("0")),
            Compare("missing", CompareOperator.EQUAL, CompareTarget.MOD_REVISION, 0),
            Compare("missing", CompareOperator.EQUAL, CompareTarget.EXISTS, False),
        ],
        [
            PutOp("b", v("2"), return_previous=True),
            GetOp("b"),
            DeleteOp("a", return_previous=True),
            GetOp("a"),
        ],
        [],
        writer_agent_id="planner",
    )
    assert outcome.succeeded and outcome.header.revision == 2
    put, got_b, deleted, got_a = outcome.results
    assert isinstance(put, PutResult) and put.entry.mod_revision == 2 and put.previous is None
    assert isinstance(got_b, GetResult) and got_b.entry == put.entry
    assert put.entry.writer_agent_id == "planner"
    assert isinstance(deleted, DeleteResult) and deleted.deleted and deleted.previous is not None
    assert isinstance(got_a, GetResult) and got_a.entry is None


async def test_txn_failure_branch_and_value_compares_on_missing_keys(board: Blackboard) -> None:
    await board.put(T, "b", PutOp("j", Value.json_object({"x": 1, "y": [1, 2]})))
    same_json = Value.json_object({"y": [1, 2], "x": 1})
    outcome = await board.txn(
        T,
        "b",
        [
            Compare("j", CompareOperator.EQUAL, CompareTarget.VALUE, same_json),
            Compare("missing", CompareOperator.NOT_EQUAL, CompareTarget.VALUE, v("x")),
        ],
        [PutOp("never", v("x"))],
        [GetOp("j")],
    )
    assert not outcome.succeeded, "a value compare on a missing key must be false"
    assert outcome.header.revision == 1, "a read-only branch creates no revision"
    (got,) = outcome.results
    assert isinstance(got, GetResult) and got.entry is not None
    equal = await board.txn(
        T, "b", [Compare("j", CompareOperator.EQUAL, CompareTarget.VALUE, same_json)], [], []
    )
    assert equal.succeeded


async def test_txn_rejects_changing_a_key_twice_and_ordering_on_exists(board: Blackboard) -> None:
    with pytest.raises(InvalidArgumentError) as twice:
        await board.txn(T, "b", [], [PutOp("k", v("1")), DeleteOp("k")], [])
    assert twice.value.field == "success[1].delete_entry.key"
    with pytest.raises(InvalidArgumentError) as exists:
        await board.txn(
            T, "b", [Compare("k", CompareOperator.LESS, CompareTarget.EXISTS, True)], [], []
        )
    assert exists.value.field == "compares[0].operator"
    with pytest.raises(InvalidArgumentError) as json_order:
        greater = Compare("k", CompareOperator.GREATER, CompareTarget.VALUE, Value.json_object({}))
        await board.txn(T, "b", [greater], [], [])
    assert json_order.value.field == "compares[0].value"


async def test_an_expired_key_is_invisible_at_once_and_removed_with_an_event(
    board: Blackboard, store: EmbeddedBlackboardStore, clock: FakeClock
) -> None:
    leased = await board.put(T, "b", PutOp("lease", v("x"), ttl_seconds=10))
    await board.put(T, "b", PutOp("stay", v("y")))
    assert leased.entry.expire_time == clock.now + 10
    clock.now += 10
    assert (await board.get(T, "b", "lease")).entry is None, "visible after its expiry"
    listing = await board.list_entries(T, "b", None, None, 0, 0, "", False)
    assert [e.key for e in listing.entries] == ["stay"]
    # Before the sweep, the history has no EXPIRE yet; a read at the old
    # revision still shows the key as it was.
    assert (await board.get(T, "b", "lease", revision=2)).entry is not None
    assert await board.expire_due() == 1
    (batch,) = await store.history(T, "b", 3, 3, 10, with_previous=True)
    (event,) = batch.events
    assert (event.type, event.key, event.revision) == (EventType.EXPIRE, "lease", 3)
    assert event.previous is not None and event.previous.value == v("x")
    assert await board.expire_due() == 0


async def test_a_write_to_an_expired_key_sees_it_absent(
    board: Blackboard, store: EmbeddedBlackboardStore, clock: FakeClock
) -> None:
    await board.put(T, "b", PutOp("lease", v("old"), ttl_seconds=5))
    clock.now += 6
    created = await board.put(T, "b", PutOp("lease", v("new")), expected_mod_revision=0)
    assert (created.entry.create_revision, created.entry.version) == (3, 1)
    expire, put = await store.history(T, "b", 2, 3, 10, with_previous=False)
    assert [e.type for e in expire.events] == [EventType.EXPIRE]
    assert [e.type for e in put.events] == [EventType.PUT]


async def test_keep_ttl_and_clearing_ttl(board: Blackboard, clock: FakeClock) -> None:
    first = await board.put(T, "b", PutOp("k", v("1"), ttl_seconds=30))
    kept = await board.put(T, "b", PutOp("k", v("2"), keep_ttl=True))
    cleared = await board.put(T, "b", PutOp("k", v("3")))
    assert kept.entry.expire_time == first.entry.expire_time
    assert cleared.entry.expire_time is None
    with pytest.raises(InvalidArgumentError):
        await board.put(T, "b", PutOp("k", v("4"), ttl_seconds=5, keep_ttl=True))
    with pytest.raises(InvalidArgumentError):
        await board.put(T, "b", PutOp("k", v("4"), ttl_seconds=0))
    with pytest.raises(LimitExceededError):
        await board.put(T, "b", PutOp("k", v("4"), ttl_seconds=LIMITS.max_ttl_seconds + 1))


async def test_reads_at_a_past_revision(board: Blackboard) -> None:
    await board.put(T, "b", PutOp("k", v("1")))
    await board.put(T, "b", PutOp("k", v("2")))
    await board.delete(T, "b", "k")
    at_one = await board.get(T, "b", "k", revision=1)
    at_two = await board.get(T, "b", "k", revision=2)
    now = await board.get(T, "b", "k")
    assert at_one.entry is not None and at_one.entry.value == v("1")
    assert at_one.header.revision == 1
    assert at_two.entry is not None and at_two.entry.value == v("2")
    assert now.entry is None and now.header.revision == 3
    with pytest.raises(InvalidArgumentError) as above:
        await board.get(T, "b", "k", revision=4)
    assert above.value.metadata["current_revision"] == "3"


async def test_all_pages_of_a_listing_are_at_one_revision(board: Blackboard) -> None:
    for key in ["a", "b", "c", "d", "e"]:
        await board.put(T, "b", PutOp(key, v(key)))
    first = await board.list_entries(T, "b", None, None, 0, 2, "", False)
    assert [e.key for e in first.entries] == ["a", "b"] and first.next_page_token
    await board.delete(T, "b", "c")
    await board.put(T, "b", PutOp("bb", v("new")))
    second = await board.list_entries(T, "b", None, None, 0, 2, first.next_page_token, False)
    third = await board.list_entries(T, "b", None, None, 0, 2, second.next_page_token, False)
    assert [e.key for e in second.entries] == ["c", "d"]
    assert [e.key for e in third.entries] == ["e"] and third.next_page_token == ""
    assert first.header.revision == second.header.revision == third.header.revision == 5
    with pytest.raises(InvalidArgumentError) as other:
        await board.list_entries(T, "b", "a", None, 0, 2, first.next_page_token, False)
    assert other.value.field == "page_token"
    keys_only = await board.list_entries(T, "b", None, "[ab]*", 0, 0, "", True)
    assert [(e.key, e.value) for e in keys_only.entries] == [("a", None), ("b", None), ("bb", None)]


async def test_compaction_discards_history_but_keeps_current_values(board: Blackboard) -> None:
    await board.put(T, "b", PutOp("old", v("kept")))  # 1, never changed again
    for index in range(4):
        await board.put(T, "b", PutOp("hot", v(str(index))))  # 2..5
    header = await board.compact(T, 4)
    assert header.oldest_revision == 4
    with pytest.raises(RevisionCompactedError) as compacted:
        await board.get(T, "b", "hot", revision=3)
    assert compacted.value.metadata["oldest_revision"] == "4"
    old = await board.get(T, "b", "old", revision=4)
    hot = await board.get(T, "b", "hot", revision=4)
    assert old.entry is not None and old.entry.value == v("kept")
    assert hot.entry is not None and hot.entry.value == v("2")
    listing = await board.list_entries(T, "b", None, None, 4, 0, "", False)
    assert [(e.key, e.mod_revision) for e in listing.entries] == [("hot", 4), ("old", 1)]
    with pytest.raises(RevisionCompactedError):
        await board.compact(T, 4)
    with pytest.raises(InvalidArgumentError):
        await board.compact(T, 99)
    with pytest.raises(RevisionCompactedError):
        await board.list_entries(T, "b", None, None, 3, 0, "", False)


async def test_history_is_compacted_after_its_retention(
    store: EmbeddedBlackboardStore, clock: FakeClock
) -> None:
    limits = dataclasses.replace(LIMITS, history_retention_seconds=60, history_max_revisions=100)
    board = Blackboard(store, limits, clock=clock)
    await board.put(T, "b", PutOp("k", v("1")))
    await board.put(T, "b", PutOp("k", v("2")))
    clock.now += 61
    await board.put(T, "b", PutOp("k", v("3")))
    assert await board.compact_expired_history() == [(T, 3)]
    assert (await board.header(T)).oldest_revision == 3
    capped = Blackboard(store, dataclasses.replace(limits, history_max_revisions=2), clock=clock)
    for index in range(3):
        await capped.put(T, "b", PutOp("k", v(str(index))))
    assert await capped.compact_expired_history() == [(T, 5)]


async def test_the_key_quota_counts_live_keys(store: EmbeddedBlackboardStore) -> None:
    board = Blackboard(store, dataclasses.replace(LIMITS, max_keys_per_tenant=2))
    await board.put(T, "b", PutOp("a", v("1")))
    await board.put(T, "c", PutOp("a", v("1")))
    await board.put(T, "b", PutOp("a", v("2")))  # an overwrite adds no key
    with pytest.raises(LimitExceededError) as full:
        await board.put(T, "b", PutOp("new", v("1")))
    assert full.value.field == "key"
    with pytest.raises(LimitExceededError):
        await board.txn(T, "b", [], [PutOp("x", v("1"))], [])
    await board.delete(T, "b", "a")
    await board.put(T, "b", PutOp("new", v("1")))


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda b: b.put(T, "", PutOp("k", v("1"))), "board"),
        (lambda b: b.put(T, "b", PutOp("", v("1"))), "key"),
        (lambda b: b.put(T, "b", PutOp("k", None)), "value"),
        (lambda b: b.put(T, "b", PutOp("k", v("1")), expected_mod_revision=-1),
         "expected_mod_revision"),
        (lambda b: b.put(T, "b", PutOp("k", v("1")), writer_agent_id="a\x00"), "writer_agent_id"),
        (lambda b: b.delete(T, "b", "k", expected_mod_revision=0), "expected_mod_revision"),
        (lambda b: b.get(T, "b", "k", revision=-1), "revision"),
        (lambda b: b.list_entries(T, "b", None, None, 0, -1, "", False), "page_size"),
        (lambda b: b.compact(T, 0), "revision"),
    ],
)  # fmt: skip
async def test_bad_input_names_the_field(board: Blackboard, call: object, field: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        await call(board)  # type: ignore[operator]
    assert caught.value.field == field


async def test_oversized_values_are_over_the_limit(board: Blackboard) -> None:
    with pytest.raises(LimitExceededError) as caught:
        await board.put(T, "b", PutOp("k", Value.payload(b"x" * (LIMITS.max_value_bytes + 1))))
    assert caught.value.field == "value"
