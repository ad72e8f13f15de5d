"""kill -9 of the server process: acknowledged blackboard writes and
unacknowledged messages survive the restart, and a watch resumes across it,
on the embedded store and on the production tier (PostgreSQL + Redis)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from statekeeper_client.v1 import blackboard_pb2 as bb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1 import message_pb2 as mb
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from statekeeper_client.v1.message_pb2_grpc import MessageServiceStub
from tests.e2e_inproc.conftest import ALPHA, BACKENDS, aio_channel, backend_options, start_server
from tests.harness.deadlines import scaled


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[dict[str, object]]:
    """Server options of each backend (production: a fresh database)."""
    with backend_options(request.param) as settings:
        yield settings


async def test_state_survives_kill_9_and_watches_resume(
    tmp_path: Path, backend: dict[str, object]
) -> None:
    server = start_server(tmp_path, **backend)
    try:
        value = bb.BlackboardValue(payload=common_pb2.Payload(data=b"v"))
        async with aio_channel(server.addresses[0]) as channel:
            board, bus = BlackboardServiceStub(channel), MessageServiceStub(channel)
            revisions = [
                (
                    await board.PutEntry(
                        bb.PutEntryRequest(board="b", key=f"k{i}", value=value), metadata=ALPHA
                    )
                ).header.revision
                for i in range(5)
            ]
            for index in range(10):
                await bus.SendMessage(
                    mb.SendMessageRequest(to_agent="worker", type=str(index)), metadata=ALPHA
                )
            pull = mb.PullMessagesRequest(agent_id="worker", max_messages=4)
            pull.visibility_timeout.FromMilliseconds(300)
            taken = await bus.PullMessages(pull, metadata=ALPHA)
            assert len(taken.deliveries) == 4  # in flight, never acked
        server.restart()  # kill -9, then start on the same data
        async with aio_channel(server.addresses[0]) as channel:
            board, bus = BlackboardServiceStub(channel), MessageServiceStub(channel)
            call = board.Watch(bb.WatchRequest(board="b", start_revision=3), metadata=ALPHA)
            started, replay = [await asyncio.wait_for(call.read(), scaled(5)) for _ in range(2)]
            call.cancel()
            assert started.header.revision == revisions[-1]
            assert [e.revision for e in replay.events.events] == revisions[2:]
            after = await board.PutEntry(
                bb.PutEntryRequest(board="b", key="after", value=value), metadata=ALPHA
            )
            assert after.header.revision == revisions[-1] + 1, "the revision counter went back"
            await asyncio.sleep(0.35)  # the four in-flight deliveries time out
            pull = mb.PullMessagesRequest(agent_id="worker", max_messages=20)
            everything = await bus.PullMessages(pull, metadata=ALPHA)
            assert sorted(int(d.message.type) for d in everything.deliveries) == list(range(10))
            counts = sorted(d.delivery_count for d in everything.deliveries)
            assert counts == [1] * 6 + [2] * 4
    finally:
        server.stop()
