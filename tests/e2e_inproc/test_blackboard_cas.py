"""Compare-and-swap under contention: 32 clients x 300 increments of one
counter through CAS retries, spread over 2 replicas, and the recorded
history checked against a register model."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.e2e_inproc.conftest import ALPHA, Deployment, aio_channel

CLIENTS = 32
INCREMENTS = 300
MAX_ATTEMPTS = 10_000  # per increment; a correct server needs a handful
BOARD, KEY = "cas", "counter"


@dataclass(frozen=True)
class Op:
    """One recorded call: a successful CAS write, or a failed one whose
    failure branch read the register."""

    client: int
    start: float
    end: float
    revision: int  # the write's revision, or the revision the failed txn read at
    value: int  # written, or read
    expected_mod: int  # the mod_revision the CAS was conditioned on
    read_mod: int = 0  # for a failed CAS: the mod_revision it read
    ok: bool = True


# Jittered exponential backoff after a lost CAS (as etcd's clients do): with
# 32 contenders on a ~3 ms fsync per commit, this keeps most attempts useful.
BACKOFF_BASE_SECONDS = 0.004
BACKOFF_CAP_SECONDS = 0.256


def backoff(rng: random.Random, attempt: int) -> float:
    return rng.uniform(0, min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt))


def payload(value: int) -> pb.BlackboardValue:
    return pb.BlackboardValue(payload=common_pb2.Payload(data=str(value).encode()))


def cas_request(expected_mod: int, value: int) -> pb.TxnRequest:
    return pb.TxnRequest(
        board=BOARD,
        compares=[
            pb.TxnCompare(
                key=KEY, operator=pb.TXN_COMPARE_OPERATOR_EQUAL, mod_revision=expected_mod
            )
        ],
        success=[pb.TxnOp(put_entry=pb.TxnPut(key=KEY, value=payload(value)))],
        failure=[pb.TxnOp(get_entry=pb.TxnGet(key=KEY))],
    )


async def client(index: int, address: str, history: list[Op]) -> int:
    """Does INCREMENTS increments, each retried until its CAS succeeds."""
    rng = random.Random(index)
    async with aio_channel(address) as channel:
        stub = BlackboardServiceStub(channel)
        got = await stub.GetEntry(pb.GetEntryRequest(board=BOARD, key=KEY), metadata=ALPHA)
        value = int(got.entry.value.payload.data) if got.found else 0
        mod = got.entry.mod_revision if got.found else 0
        for _ in range(INCREMENTS):
            for attempt in range(MAX_ATTEMPTS):
                start = time.monotonic()
                reply = await stub.Txn(cas_request(mod, value + 1), metadata=ALPHA)
                end = time.monotonic()
                if reply.succeeded:
                    written = reply.results[0].put_entry.entry
                    history.append(Op(index, start, end, written.mod_revision, value + 1, mod))
                    value, mod = value + 1, written.mod_revision
                    break
                seen = reply.results[0].get_entry
                read_value = int(seen.entry.value.payload.data) if seen.found else 0
                read_mod = seen.entry.mod_revision if seen.found else 0
                history.append(
                    Op(index, start, end, reply.header.revision, read_value, mod, read_mod, False)
                )
                value, mod = read_value, read_mod
                await asyncio.sleep(backoff(rng, attempt))
            else:
                raise AssertionError(f"client {index} never won a CAS in {MAX_ATTEMPTS} tries")
    return INCREMENTS


def check_register_model(history: list[Op]) -> None:
    """The history is linearizable against a single register: the writes,
    ordered by revision, form one chain 1, 2, 3, ... in which each write was
    conditioned on the previous one; every failed CAS read the state of the
    register at its revision; and real-time order never contradicts
    revision order."""
    writes = sorted((op for op in history if op.ok), key=lambda op: op.revision)
    state_at: list[tuple[int, int, int]] = [(0, 0, 0)]  # (revision, value, mod)
    for number, op in enumerate(writes, start=1):
        assert op.value == number, f"write #{number} stored {op.value}"
        assert op.expected_mod == state_at[-1][2], (
            f"write at revision {op.revision} was conditioned on mod {op.expected_mod}, but the"
            f" register was at {state_at[-1][2]}"
        )
        state_at.append((op.revision, op.value, op.revision))
    revisions = [rev for rev, _, _ in state_at]
    for op in history:
        if op.ok:
            continue
        index = _bisect_right(revisions, op.revision) - 1
        _, value, mod = state_at[index]
        assert (op.value, op.read_mod) == (value, mod), (
            f"a failed CAS read ({op.value}, mod {op.read_mod}) at revision {op.revision};"
            f" the register held ({value}, mod {mod})"
        )
        assert op.expected_mod != mod, "a CAS failed although its condition held"
    _check_real_time(history)


def _bisect_right(items: list[int], value: int) -> int:
    low, high = 0, len(items)
    while low < high:
        middle = (low + high) // 2
        if items[middle] <= value:
            low = middle + 1
        else:
            high = middle
    return low


def _check_real_time(history: list[Op]) -> None:
    """An operation that started after another ended has a revision at
    least as high (strictly higher between two writes)."""
    by_end = sorted(history, key=lambda op: op.end)
    highest, highest_write, position = 0, 0, 0
    for op in sorted(history, key=lambda op: op.start):
        while position < len(by_end) and by_end[position].end < op.start:
            done = by_end[position]
            highest = max(highest, done.revision)
            if done.ok:
                highest_write = max(highest_write, done.revision)
            position += 1
        assert op.revision >= highest, f"revision {op.revision} after a completed {highest}"
        if op.ok:
            assert op.revision > highest_write, "a write is ordered before a completed write"


async def test_concurrent_cas_increments_form_one_chain(server: Deployment) -> None:
    history: list[Op] = []
    addresses = server.addresses
    done = await asyncio.gather(
        *(client(i, addresses[i % len(addresses)], history) for i in range(CLIENTS))
    )
    async with aio_channel(addresses[0]) as channel:
        stub = BlackboardServiceStub(channel)
        final = await stub.GetEntry(pb.GetEntryRequest(board=BOARD, key=KEY), metadata=ALPHA)
    successes = [op for op in history if op.ok]
    assert sum(done) == CLIENTS * INCREMENTS == len(successes)
    assert int(final.entry.value.payload.data) == len(successes)
    assert final.entry.version == len(successes)
    assert len({op.revision for op in successes}) == len(successes), "a revision was reused"
    check_register_model(history)
    failures = len(history) - len(successes)
    print(f"\nCAS: {len(successes)} writes, {failures} failed attempts")


def test_register_model_rejects_a_lost_update() -> None:
    """The checker itself: two writes conditioned on the same revision (a
    lost update) are caught."""
    history = [
        Op(0, 0.0, 1.0, 1, 1, 0),
        Op(1, 0.0, 1.0, 2, 2, 0),
    ]
    try:
        check_register_model(history)
    except AssertionError:
        return
    raise AssertionError("the lost update went unnoticed")


def test_register_model_rejects_a_stale_read() -> None:
    history = [
        Op(0, 0.0, 1.0, 1, 1, 0),
        Op(1, 2.0, 3.0, 1, 0, 5, 0, ok=False),  # read 0 at revision 1: stale
    ]
    try:
        check_register_model(history)
    except AssertionError:
        return
    raise AssertionError("the stale read went unnoticed")
