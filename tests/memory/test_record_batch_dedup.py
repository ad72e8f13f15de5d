"""RecordEpisodes deduplication and vector checks, batched, on both backends:
a batch mixing users, new episodes, exact and near duplicates of stored
episodes and of earlier items gives what recording its items one at a time
gives (statuses, which episode each duplicate names, stored vectors bit for
bit), and each user's episodes are deduplicated only against that user's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest

from statekeeper.core.errors import InvalidArgumentError, LimitExceededError
from statekeeper.core.memory.episodes import EpisodeDraft, ItemError, RecordOutcome
from statekeeper.core.memory.models import DimensionMismatchError
from statekeeper_client.v1 import common_pb2 as common_pb
from statekeeper_client.v1 import memory_pb2 as pb
from tests.harness.memory import Backend, auth
from tests.memory.helpers import memory_app
from tests.memory.test_memory_grpc import error_info

DIMENSION = 16
ALPHA, BETA = auth("key-alpha"), auth("key-beta")  # two tenants of one server


def vector(seed: int, near: int | None = None, noise: float = 0.01) -> list[float]:
    """A random direction, or one within `noise` of direction `near`."""
    rng = np.random.default_rng(seed)
    if near is None:
        return [float(v) for v in rng.standard_normal(DIMENSION).astype(np.float32)]
    base = np.asarray(vector(near), dtype=np.float32)
    moved = base + rng.normal(0.0, noise * float(np.linalg.norm(base)), DIMENSION)
    return [float(v) for v in moved.astype(np.float32)]


def item(user: str, text: str, embedding: list[float], **fields: Any) -> pb.RecordEpisodeRequest:
    return pb.RecordEpisodeRequest(
        user_id=user, user_message=text, assistant_response="noted", embedding=embedding, **fields
    )


STORED = [item("u1", "the stored one", vector(1)), item("u2", "u2 stored", vector(2))]
BATCH = [
    item("u1", "about cats", vector(10)),  # 0 created
    item("u2", "the stored one", vector(1)),  # 1 created: u1's episode, not u2's
    item("u1", "parking again", vector(11, near=1)),  # 2 near duplicate of stored u1
    item("u1", "cats, said again", vector(12, near=10)),  # 3 near duplicate of item 0
    item("u2", "cats for u2", vector(13, near=10)),  # 4 created: item 0 is u1's
    item("u1", "THE  stored one", vector(14)),  # 5 exact duplicate of stored u1
    item("u1", "about cats", vector(15)),  # 6 exact duplicate of item 0
    item("u1", "kept apart", vector(16, near=10), near_duplicate_threshold=1.0),  # 7 created
    item("u1", "zero vector", [0.0] * DIMENSION),  # 8 error
    item("u2", "dogs", vector(17)),  # 9 created
    item("u2", "u2 stored, near", vector(18, near=2)),  # 10 near duplicate of stored u2
    item("u1", "near the stored one too", vector(19, near=1)),  # 11 near duplicate of stored u1
    item("u1", "short", vector(20)[:8]),  # 12 error: u1's vectors have 16 dimensions
    item("u2", "dogs, said again", vector(21, near=17)),  # 13 near duplicate of item 9
]
EXPECTED = [
    ("created", "", ""),
    ("created", "", ""),
    ("duplicate", "NEAR", "stored 0"),
    ("duplicate", "NEAR", "item 0"),
    ("created", "", ""),
    ("duplicate", "EXACT", "stored 0"),
    ("duplicate", "EXACT", "item 0"),
    ("created", "", ""),
    ("error", "episodes[8].embedding", "INVALID_FIELD"),
    ("created", "", ""),
    ("duplicate", "NEAR", "stored 1"),
    ("duplicate", "NEAR", "stored 0"),
    ("error", "episodes[12].embedding", "DIMENSION_MISMATCH"),
    ("duplicate", "NEAR", "item 9"),
]


def described(
    results: Sequence[pb.RecordEpisodesResult], stored: Sequence[str]
) -> list[tuple[str, str, str]]:
    """Each result as (status, duplicate kind or error field, what it names):
    ids become "stored N" or "item N" so two tenants' runs compare."""
    names = {episode_id: f"stored {n}" for n, episode_id in enumerate(stored)}
    for index, result in enumerate(results):
        if result.status == pb.RECORD_EPISODE_STATUS_CREATED:
            names[result.result.episode.id] = f"item {index}"
    rows = []
    for result in results:
        if result.status == pb.RECORD_EPISODE_STATUS_ERROR:
            reason = common_pb.ErrorReason.Name(result.error_reason)
            rows.append(("error", result.error_field, reason.removeprefix("ERROR_REASON_")))
        elif result.result.duplicate:
            kind = pb.DuplicateKind.Name(result.result.duplicate_kind).removeprefix(
                "DUPLICATE_KIND_"
            )
            rows.append(("duplicate", kind, names[result.result.duplicate_of]))
        else:
            rows.append(("created", "", ""))
    return rows


async def one_at_a_time(backend: Backend, items: Sequence[pb.RecordEpisodeRequest]) -> list[Any]:
    """RecordEpisode per item, as RecordEpisodes results (an error as its
    field with the batch's item prefix, like RecordEpisodes names it)."""
    results = []
    for index, request in enumerate(items):
        try:
            response = await backend.memory.RecordEpisode(request, metadata=BETA)
        except grpc.aio.AioRpcError as exc:
            info = error_info(exc)
            field = f"episodes[{index}].{info.metadata['field']}"
            reason = common_pb.ErrorReason.Value("ERROR_REASON_" + info.reason)
            results.append(
                pb.RecordEpisodesResult(
                    status=pb.RECORD_EPISODE_STATUS_ERROR, error_field=field, error_reason=reason
                )
            )
            continue
        status = (
            pb.RECORD_EPISODE_STATUS_DUPLICATE
            if response.duplicate
            else pb.RECORD_EPISODE_STATUS_CREATED
        )
        results.append(pb.RecordEpisodesResult(status=status, result=response))
    return results


async def stored_ids(backend: Backend, tenant: list[tuple[str, str]]) -> list[str]:
    ids = []
    for request in STORED:
        response = await backend.memory.RecordEpisode(request, metadata=tenant)
        ids.append(response.episode.id)
    return ids


async def embedding_of(backend: Backend, episode_id: str, tenant: Any) -> list[float]:
    got = await backend.memory.GetEpisode(
        pb.GetEpisodeRequest(episode_id=episode_id, include_embedding=True), metadata=tenant
    )
    return list(got.episode.embedding)


async def test_a_batch_gives_what_its_items_give_one_at_a_time(backend: Backend) -> None:
    batch_stored = await stored_ids(backend, ALPHA)
    response = await backend.memory.RecordEpisodes(
        pb.RecordEpisodesRequest(episodes=BATCH), metadata=ALPHA
    )
    assert described(response.results, batch_stored) == EXPECTED
    assert (response.created_count, response.duplicate_count, response.error_count) == (5, 7, 2)
    single_stored = await stored_ids(backend, BETA)
    singles = await one_at_a_time(backend, BATCH)
    assert described(singles, single_stored) == EXPECTED
    # The same vectors are stored, bit for bit, whichever way they came.
    for batch_result, single in zip(response.results, singles, strict=True):
        if batch_result.status == pb.RECORD_EPISODE_STATUS_CREATED:
            batched = await embedding_of(backend, batch_result.result.episode.id, ALPHA)
            alone = await embedding_of(backend, single.result.episode.id, BETA)
            assert batched == alone and len(batched) == DIMENSION


async def test_sending_a_batch_again_finds_every_item_stored(backend: Backend) -> None:
    first = await backend.memory.RecordEpisodes(
        pb.RecordEpisodesRequest(episodes=BATCH), metadata=ALPHA
    )
    again = await backend.memory.RecordEpisodes(
        pb.RecordEpisodesRequest(episodes=BATCH), metadata=ALPHA
    )
    assert again.created_count == 0 and again.error_count == 2
    for before, after in zip(first.results, again.results, strict=True):
        if before.status == pb.RECORD_EPISODE_STATUS_CREATED:
            # Each item is an exact duplicate of what it created the first time.
            assert after.result.duplicate_of == before.result.episode.id
            assert after.result.duplicate_kind == pb.DUPLICATE_KIND_EXACT


async def test_many_items_near_one_stored_episode(backend: Backend) -> None:
    """Near duplicates of a few stored episodes, many per episode, and the
    episodes of another user near them: each names its own user's episode."""
    stored = await stored_ids(backend, ALPHA)
    batch = [
        item(user, f"{user} variation {n}", vector(100 + n, near=1 if n % 2 else 2, noise=0.005))
        for n in range(40)
        for user in ("u1", "u3")
    ]
    response = await backend.memory.RecordEpisodes(
        pb.RecordEpisodesRequest(episodes=batch), metadata=ALPHA
    )
    u1 = [r for r, i in zip(response.results, batch, strict=True) if i.user_id == "u1"]
    u3 = [r for r, i in zip(response.results, batch, strict=True) if i.user_id == "u3"]
    # u1 holds only the first stored episode (the second is u2's): the odd
    # items repeat it, the even ones are new (the first of them) or repeat
    # the first even item of the batch.
    assert [r.result.duplicate_of for r in u1[1::2]] == [stored[0]] * 20
    first_even = u1[0].result.episode.id
    assert u1[0].status == pb.RECORD_EPISODE_STATUS_CREATED
    assert [r.result.duplicate_of for r in u1[2::2]] == [first_even] * 19
    # u3 has nothing stored: its first item of each direction is created.
    assert [r.status for r in u3[:2]] == [pb.RECORD_EPISODE_STATUS_CREATED] * 2
    assert all(r.result.duplicate for r in u3[2:])
    assert {r.result.duplicate_of for r in u3[2:]} == {
        u3[0].result.episode.id,
        u3[1].result.episode.id,
    }


# ----- the domain: item errors of client vectors -----------------------------


def draft(embedding: Sequence[float], **fields: Any) -> EpisodeDraft:
    return EpisodeDraft(user_id="u1", embedding=embedding, **fields)


async def test_batched_vector_checks_give_record_errors(tmp_path: Path) -> None:
    """Each bad client vector of a batch fails with the error RecordEpisode
    gives for it (non-finite, zero, too long, wrong dimension), a bad field
    before it still wins, and good vectors around them are stored."""
    drafts = [
        draft([1.0, 0.0, 0.0], user_message="first"),
        draft([float("nan"), 1.0, 0.0], user_message="not finite"),
        draft([0.0, 0.0, 0.0], user_message="zero"),
        draft([1.0] * 4097, user_message="too long"),
        draft([1.0, 2.0], user_message="wrong dimension"),
        draft([0.0, 0.0, 0.0], user_message="bad importance", importance=2.0),
        draft([0.0, 1.0, 0.0], user_message="last"),
    ]
    async with memory_app(tmp_path) as (app, _):
        episodes = app.domain.episodes
        outcomes = await episodes.record_many("t", drafts)
        assert isinstance(outcomes[0], RecordOutcome) and not outcomes[0].duplicate
        assert isinstance(outcomes[6], RecordOutcome) and not outcomes[6].duplicate
        for index in range(1, 6):
            outcome = outcomes[index]
            assert isinstance(outcome, ItemError), index
            with pytest.raises((InvalidArgumentError, LimitExceededError)) as raised:
                await episodes.record("t", drafts[index])
            error = raised.value
            field = f"episodes[{index}].{error.field}"
            assert (outcome.field, outcome.reason) == (field, error.reason)
            assert outcome.message == error.message.replace(error.field, field, 1)
        assert [o.field for o in outcomes[1:6] if isinstance(o, ItemError)] == [
            "episodes[1].embedding",
            "episodes[2].embedding",
            "episodes[3].embedding",
            "episodes[4].embedding",
            "episodes[5].importance",
        ]
        assert isinstance(outcomes[4], ItemError)
        assert outcomes[4].reason == DimensionMismatchError.reason
