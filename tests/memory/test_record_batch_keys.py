"""RecordEpisodes gives every created episode its own vector key on both
backends, also when the store's key counter is ahead of the largest key
left (the newest episode deleted): a vector recall of each item's vector
finds that item's episode, and a text recall finds it by its words."""

from __future__ import annotations

from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc
from tests.harness.memory import auth
from tests.memory.test_record_episodes import (  # noqa: F401 (fixtures)
    CREATED,
    ONLY_SIMILARITY,
    item,
    memory,
)

DIMENSION = 8


def axis(position: int) -> list[float]:
    """A unit vector orthogonal to every other position's."""
    return [1.0 if i == position else 0.0 for i in range(DIMENSION)]


async def record(
    stub: memory_pb2_grpc.MemoryServiceStub, words: list[str], first_axis: int
) -> list[str]:
    batch = [item(f"about {word}", axis(first_axis + i)) for i, word in enumerate(words)]
    response = await stub.RecordEpisodes(pb.RecordEpisodesRequest(episodes=batch), metadata=auth())
    assert [r.status for r in response.results] == [CREATED] * len(words)
    return [r.result.episode.id for r in response.results]


async def best_by_vector(stub: memory_pb2_grpc.MemoryServiceStub, position: int) -> str:
    found = await stub.Recall(
        pb.RecallRequest(
            user_id="u1",
            query_vector=pb.QueryVector(values=axis(position)),
            weights=ONLY_SIMILARITY,
            top_k=1,
        ),
        metadata=auth(),
    )
    return found.results[0].episode.id


async def best_by_text(stub: memory_pb2_grpc.MemoryServiceStub, word: str) -> str:
    found = await stub.Recall(pb.RecallRequest(user_id="u1", query_text=word), metadata=auth())
    return found.results[0].episode.id


async def test_keys_of_a_batch_after_the_newest_episode_was_deleted(
    memory: memory_pb2_grpc.MemoryServiceStub,  # noqa: F811
) -> None:
    first = await record(memory, ["apples", "pears", "plums"], 0)
    await memory.DeleteEpisode(pb.DeleteEpisodeRequest(episode_id=first[-1]), metadata=auth())
    words = ["cherries", "grapes", "melons", "lemons"]
    second = await record(memory, words, 3)
    for position, episode_id in enumerate(first[:-1] + second):
        vector_position = position if position < 2 else position + 1
        assert await best_by_vector(memory, vector_position) == episode_id
    for word, episode_id in zip(words, second, strict=True):
        assert await best_by_text(memory, word) == episode_id
