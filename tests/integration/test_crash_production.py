"""kill -9 of a production server during concurrent writes, 20 cycles: every
acknowledged append is in PostgreSQL afterwards, exactly once, including
after clients retried what they never saw answered."""

from __future__ import annotations

import grpc

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.integration.conftest import ServerFactory
from tests.integration.load import AppendLoad

CYCLES = 20
WRITERS = 6
# Appends acknowledged in each cycle before the kill (however long that takes).
ACKS_PER_CYCLE = 20


def test_acknowledged_appends_survive_20_kill_9(production_server: ServerFactory) -> None:
    server = production_server()
    with grpc.insecure_channel(server.address) as channel:
        SessionServiceStub(channel).CreateSession(
            pb.CreateSessionRequest(session_id="crashy", session=pb.Session(user_id="u"))
        )
    loads: list[AppendLoad] = []
    for cycle in range(CYCLES):
        load = AppendLoad([server.address], "crashy", writers=WRITERS, name=f"c{cycle}w")
        load.start()
        load.wait_for_acks(ACKS_PER_CYCLE, f"before kill {cycle + 1}")
        server.kill()  # SIGKILL while the writers are mid-call
        load.stop()
        loads.append(load)
        server.start()
    acked = sum(len(load.acked) for load in loads)
    unacked = sum(len(load.unacked) for load in loads)
    stored = None
    for load in loads:
        stored = load.settle(server.address)
    assert stored is not None
    for load in loads:
        load.assert_nothing_lost(stored)
    assert set(stored) == {c for load in loads for c in [*load.acked, *load.unacked]}
    assert sum(stored.values()) == acked + unacked
    print(
        f"{CYCLES} kill -9 cycles: {acked} acknowledged, {unacked} unanswered and retried,"
        f" {sum(stored.values())} stored, 0 lost, 0 duplicated"
    )
