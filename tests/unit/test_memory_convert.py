"""episode_to_proto gives the same messages (bytes and field presence) as the
straightforward construction it replaced, with and without the optional
parts of an episode."""

from __future__ import annotations

import numpy as np
import pytest

from statekeeper.api import memory_convert as convert
from statekeeper.api.convert import timestamp
from statekeeper.core.memory.models import Episode, ValueSource
from statekeeper_client.v1 import memory_pb2 as pb


def reference_episode(episode: Episode, decayed: float) -> pb.Episode:
    return pb.Episode(
        id=episode.episode_id,
        user_id=episode.user_id,
        session_id=episode.session_id,
        user_message=episode.user_message,
        assistant_response=episode.assistant_response,
        summary=episode.summary,
        summary_source=int(episode.summary_source),  # type: ignore[arg-type]
        embedding=[] if episode.embedding is None else episode.embedding.tolist(),
        embedding_source=int(episode.embedding_source),  # type: ignore[arg-type]
        embedding_model=episode.embedding_model,
        importance=episode.importance,
        decayed_importance=decayed,
        metadata=episode.metadata,
        occur_time=timestamp(episode.occur_time),
        create_time=timestamp(episode.create_time),
        consolidate_time=timestamp(episode.consolidate_time),
        derived_fact_ids=list(episode.derived_fact_ids),
    )


BARE = Episode(
    episode_id="e-1",
    user_id="u1",
    session_id="",
    user_message="what the user said",
    assistant_response="",
    summary="",
    summary_source=ValueSource.FALLBACK,
    embedding_source=ValueSource.NONE,
    embedding_model="",
    importance=0.0,
    metadata={},
    occur_time=1_700_000_000.25,
    create_time=1_700_000_001.5,
    content_hash="h",
)
FULL = BARE.evolve(
    session_id="s1",
    assistant_response="the answer",
    summary="a summary",
    summary_source=ValueSource.CLIENT,
    embedding_source=ValueSource.MODEL,
    embedding_model="model-1",
    importance=0.7,
    metadata={"topic": "cats", "lang": "en"},
    dimension=3,
    embedding=np.array([0.6, 0.0, -0.8], dtype=np.float32),
    consolidate_time=1_700_000_100.0,
    derived_fact_ids=("f-1", "f-2"),
)


@pytest.mark.parametrize(
    "episode",
    [BARE, FULL, FULL.evolve(embedding=None), FULL.evolve(embedding=np.zeros(0, np.float32))],
    ids=["bare", "full", "without-embedding", "empty-embedding"],
)
def test_episode_to_proto_is_the_reference_message(episode: Episode) -> None:
    built = convert.episode_to_proto(episode, 0.25)
    expected = reference_episode(episode, 0.25)
    assert built == expected
    assert built.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )
    fields = [descriptor.name for descriptor, _ in built.ListFields()]
    assert fields == [descriptor.name for descriptor, _ in expected.ListFields()]
    assert built.HasField("consolidate_time") == (episode.consolidate_time is not None)


def test_episode_to_proto_without_embedding_is_the_episode_without_one() -> None:
    built = convert.episode_to_proto(FULL, 0.25, with_embedding=False)
    expected = reference_episode(FULL.evolve(embedding=None), 0.25)
    assert built.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )
    assert not built.embedding and built.embedding_source == pb.MEMORY_VALUE_SOURCE_MODEL
