"""Issue 14 defects through gRPC on both backends: far-future times (refused
at the edge, and already stored ones read back), NUL characters, NaN in JSON,
the DSN password in the log, and stream teardown."""

from __future__ import annotations

import asyncio
import math
import sqlite3
import uuid
from collections.abc import Callable, Iterator

import asyncpg
import grpc
import pytest
from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2

from statekeeper_client.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    blackboard_pb2,
    blackboard_pb2_grpc,
    checkpoint_pb2,
    checkpoint_pb2_grpc,
    common_pb2,
    memory_pb2,
    memory_pb2_grpc,
    message_pb2,
    message_pb2_grpc,
    session_pb2,
    session_pb2_grpc,
)
from tests.e2e.errors import bad_field
from tests.harness.servers import ServerProcess
from tests.hostile.conftest import ALPHA, DSN_PASSWORD, postgres_dsn_of

# 9999-12-31T23:59:59.999999999Z: a valid Timestamp, past what int64 nanoseconds hold.
LAST_TIMESTAMP = timestamp_pb2.Timestamp(seconds=253_402_300_799, nanos=999_999_999)
# What a server before the range check stored for it (float seconds round up).
STORED_FAR_FUTURE = 253_402_300_800.0


@pytest.fixture
def channel(statekeeper: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(statekeeper.address) as opened:
        yield opened


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def refused_field(call: Callable[[], object]) -> str:
    with pytest.raises(grpc.RpcError) as failure:
        call()
    assert failure.value.code() == grpc.StatusCode.INVALID_ARGUMENT, failure.value.details()
    return bad_field(failure.value)


# ----- far-future timestamps ----------------------------------------------------------------


def test_far_future_times_are_refused_where_they_are_written(channel: grpc.Channel) -> None:
    memory = memory_pb2_grpc.MemoryServiceStub(channel)
    episode = memory_pb2.RecordEpisodeRequest(
        user_id=unique("u"), user_message="hi", occur_time=LAST_TIMESTAMP
    )
    assert refused_field(lambda: memory.RecordEpisode(episode, metadata=ALPHA)) == "occur_time"
    facts = memory_pb2.AddFactsRequest(user_id=unique("u"))
    facts.facts.add(subject="alice", predicate="likes", object="tea", valid_from=LAST_TIMESTAMP)
    assert refused_field(lambda: memory.AddFacts(facts, metadata=ALPHA)) == "facts[0].valid_from"
    checkpoints = checkpoint_pb2_grpc.CheckpointServiceStub(channel)
    save = checkpoint_pb2.SaveCheckpointRequest()
    save.checkpoint.execution_id, save.checkpoint.checkpoint_id = unique("e"), "c1"
    save.checkpoint.create_time.CopyFrom(LAST_TIMESTAMP)
    field = refused_field(lambda: checkpoints.SaveCheckpoint(save, metadata=ALPHA))
    assert field == "checkpoint.create_time"


async def store_far_future_occur_time(server: ServerProcess, episode_id: str) -> None:
    """Sets the episode's stored occur_time as an older server stored it."""
    sql = "UPDATE memory_episodes SET occur_time = {} WHERE episode_id = {}"
    dsn = postgres_dsn_of(server)
    if dsn is None:
        with sqlite3.connect(server.data_dir / "statekeeper.sqlite3") as db:
            updated = db.execute(sql.format("?", "?"), (STORED_FAR_FUTURE, episode_id)).rowcount
    else:
        conn = await asyncpg.connect(dsn)
        try:
            status = await conn.execute(sql.format("$1", "$2"), STORED_FAR_FUTURE, episode_id)
        finally:
            await conn.close()
        updated = int(status.split()[-1])
    assert updated == 1


def test_reads_answer_for_a_far_future_time_already_stored(
    statekeeper: ServerProcess, channel: grpc.Channel
) -> None:
    memory = memory_pb2_grpc.MemoryServiceStub(channel)
    user = unique("u")
    recorded = memory.RecordEpisode(
        memory_pb2.RecordEpisodeRequest(
            user_id=user, user_message="the tea is green", assistant_response="noted"
        ),
        metadata=ALPHA,
    )
    asyncio.run(store_far_future_occur_time(statekeeper, recorded.episode.id))
    listed = memory.ListEpisodes(memory_pb2.ListEpisodesRequest(user_id=user), metadata=ALPHA)
    (episode,) = listed.episodes
    assert episode.occur_time.ToJsonString() == "9999-12-31T23:59:59Z"
    recalled = memory.Recall(
        memory_pb2.RecallRequest(user_id=user, query_text="green tea"), metadata=ALPHA
    )
    assert [r.episode.id for r in recalled.results] == [episode.id]
    assert all(math.isfinite(r.score.combined) for r in recalled.results)
    context = memory.BuildContext(
        memory_pb2.BuildContextRequest(user_id=user, message="green tea", token_budget=2000),
        metadata=ALPHA,
    )
    assert context.ByteSize() > 0


# ----- NUL characters -----------------------------------------------------------------------


def nul_requests(channel: grpc.Channel) -> dict[str, tuple[Callable[[], object], str]]:
    """One call per RPC the issue found answering INTERNAL for a NUL, with
    the field each must name."""
    sessions = session_pb2_grpc.SessionServiceStub(channel)
    memory = memory_pb2_grpc.MemoryServiceStub(channel)
    bus = message_pb2_grpc.MessageServiceStub(channel)
    admin = admin_pb2_grpc.AdminServiceStub(channel)
    checkpoints = checkpoint_pb2_grpc.CheckpointServiceStub(channel)
    nul, user = "a\x00b", unique("u")

    append = session_pb2.AppendMessagesRequest(session_id=unique("s"))
    append.messages.add(role=session_pb2.ROLE_USER, content=nul)
    facts = memory_pb2.AddFactsRequest(user_id=user)
    facts.facts.add(subject="alice", predicate="likes", object=nul)
    recall = memory_pb2.RecallRequest(user_id=user, query_text="tea")
    recall.filter.metadata["topic"] = nul
    list_checkpoints = checkpoint_pb2.ListCheckpointsRequest(execution_id=unique("e"))
    list_checkpoints.metadata_filter.update({"source": nul})
    writes = checkpoint_pb2.PutWritesRequest(
        execution_id=unique("e"), checkpoint_id="c1", task_id="t1"
    )
    writes.writes.add(index=0, channel="c", value=common_pb2.Payload(content_type=nul))
    a = ALPHA
    return {
        "AppendMessages": (
            lambda: sessions.AppendMessages(append, metadata=a),
            "messages[0].content",
        ),
        "RecordEpisode": (
            lambda: memory.RecordEpisode(
                memory_pb2.RecordEpisodeRequest(user_id=user, user_message=nul), metadata=a
            ),
            "user_message",
        ),
        "AddFacts": (lambda: memory.AddFacts(facts, metadata=a), "facts[0].object"),
        "DeclarePredicate": (
            lambda: memory.DeclarePredicate(
                memory_pb2.DeclarePredicateRequest(name="likes", description=nul), metadata=a
            ),
            "description",
        ),
        "ListFacts": (
            lambda: memory.ListFacts(
                memory_pb2.ListFactsRequest(user_id=user, subject=nul), metadata=a
            ),
            "subject",
        ),
        "QueryEntity": (
            lambda: memory.QueryEntity(
                memory_pb2.QueryEntityRequest(user_id=user, entity=nul), metadata=a
            ),
            "entity",
        ),
        "Recall": (lambda: memory.Recall(recall, metadata=a), "filter.metadata['topic']"),
        "PullMessages": (
            lambda: bus.PullMessages(
                message_pb2.PullMessagesRequest(agent_id=unique("a"), types=[nul]), metadata=a
            ),
            "types[0]",
        ),
        "ReceiveMessages": (
            lambda: next(
                iter(
                    bus.ReceiveMessages(
                        message_pb2.ReceiveMessagesRequest(agent_id=unique("a"), types=["x", nul]),
                        metadata=a,
                    )
                )
            ),
            "types[1]",
        ),
        "RedriveDeadLetters": (
            lambda: bus.RedriveDeadLetters(
                message_pb2.RedriveDeadLettersRequest(agent_id=unique("a"), message_ids=[nul]),
                metadata=a,
            ),
            "message_ids[0]",
        ),
        "ListAuditRecords": (
            lambda: admin.ListAuditRecords(
                admin_pb2.ListAuditRecordsRequest(entity_id=nul), metadata=a
            ),
            "entity_id",
        ),
        "ListCheckpoints": (
            lambda: checkpoints.ListCheckpoints(list_checkpoints, metadata=a),
            "metadata_filter['source']",
        ),
        "PutWrites": (
            lambda: checkpoints.PutWrites(writes, metadata=a),
            "writes[0].value.content_type",
        ),
    }


NUL_RPCS = [
    "AppendMessages",
    "RecordEpisode",
    "AddFacts",
    "DeclarePredicate",
    "ListFacts",
    "QueryEntity",
    "Recall",
    "PullMessages",
    "ReceiveMessages",
    "RedriveDeadLetters",
    "ListAuditRecords",
    "ListCheckpoints",
    "PutWrites",
]


@pytest.mark.parametrize("rpc", NUL_RPCS)
def test_a_nul_character_is_refused_naming_the_field(channel: grpc.Channel, rpc: str) -> None:
    call, field = nul_requests(channel)[rpc]
    assert refused_field(call) == field


def test_nul_in_a_json_key_is_refused(channel: grpc.Channel) -> None:
    stub = blackboard_pb2_grpc.BlackboardServiceStub(channel)
    value = struct_pb2.Struct()
    value.update({"ok": {"bad\x00key": 1}})
    request = blackboard_pb2.PutEntryRequest(
        board=unique("b"), key="k", value=blackboard_pb2.BlackboardValue(json=value)
    )
    field = refused_field(lambda: stub.PutEntry(request, metadata=ALPHA))
    assert field == "value.json['ok']['bad\\x00key']"  # the key itself, escaped


# ----- NaN ----------------------------------------------------------------------------------


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_put_entry_with_a_non_finite_json_number_is_refused(
    channel: grpc.Channel, number: float
) -> None:
    stub = blackboard_pb2_grpc.BlackboardServiceStub(channel)
    value = struct_pb2.Struct()
    value.update({"scores": [1.0, number]})
    request = blackboard_pb2.PutEntryRequest(
        board=unique("b"), key="k", value=blackboard_pb2.BlackboardValue(json=value)
    )
    assert (
        refused_field(lambda: stub.PutEntry(request, metadata=ALPHA)) == "value.json['scores'][1]"
    )
    listed = stub.ListEntries(
        blackboard_pb2.ListEntriesRequest(board=request.board), metadata=ALPHA
    )
    assert list(listed.entries) == []


# ----- the DSN password, stream teardown ----------------------------------------------------


def test_the_log_never_shows_the_dsn_password(statekeeper: ServerProcess) -> None:
    """The production DSN carries ?password=... (conftest): logged redacted
    at start and by the memory change feed."""
    log = statekeeper.log()
    assert DSN_PASSWORD not in log
    if postgres_dsn_of(statekeeper) is not None:
        feed = [line for line in log.splitlines() if "memory change feed listening" in line]
        assert feed and all('password=***"' in line for line in feed), feed
        assert "password=***" in log


async def open_and_cancel_watches(address: str, count: int) -> None:
    async with grpc.aio.insecure_channel(address) as opened:
        stub = blackboard_pb2_grpc.BlackboardServiceStub(opened)
        board = unique("b")
        # Progress notifications as often as allowed: streams are busy writing
        # when they are cancelled, the moment the old interceptor mishandled.
        request = blackboard_pb2.WatchRequest(
            board=board, progress_notify_interval=duration_pb2.Duration(nanos=50_000_000)
        )
        calls = [stub.Watch(request, metadata=ALPHA) for _ in range(count)]
        await asyncio.gather(*(call.wait_for_connection() for call in calls))
        await stub.PutEntry(
            blackboard_pb2.PutEntryRequest(
                board=board,
                key="k",
                value=blackboard_pb2.BlackboardValue(payload=common_pb2.Payload(data=b"v")),
            ),
            metadata=ALPHA,
        )
        for call in calls[::2]:
            await call.read()
        for call in calls:
            call.cancel()
    await asyncio.sleep(1.0)  # let the server finish tearing the streams down


def test_stream_teardown_leaves_no_error_in_the_log(statekeeper: ServerProcess) -> None:
    asyncio.run(open_and_cancel_watches(statekeeper.address, 200))
    log = statekeeper.log()
    assert "different Context" not in log
    assert "Task exception was never retrieved" not in log
    assert "Traceback" not in log
