"""lexical_matches with a `match_budget` (core.lexical.match_terms), on every backend,
and the embedded store's corpus statistics staying exact across writes."""

from __future__ import annotations

from statekeeper.core.memory import lexical
from statekeeper.core.memory.models import EpisodeFilter
from statekeeper.core.memory.store import MemoryStore
from tests.contract.test_memory_store import episode, store

__all__ = ["store"]


async def _fill(store: MemoryStore) -> dict[str, int]:
    """Ten episodes of u1: "coffee" in all, "tea" in two, "cocoa" in one."""
    keys: dict[str, int] = {}
    for number in range(10):
        extra = " tea" if number < 2 else ""
        extra += " cocoa" if number == 9 else ""
        text = f"coffee number{number}{extra}"
        stored, _ = await store.insert_episode(
            "t", episode(f"n{number}").evolve(user_message=text, summary="")
        )
        keys[f"n{number}"] = stored.vector_key
    return keys


async def test_common_terms_are_not_matched_but_still_counted(store: MemoryStore) -> None:
    keys = await _fill(store)
    wanted = lexical.query_terms("coffee tea")
    every = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 50)
    assert len(every.candidates) == 10  # no budget: every term is matched
    fits = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 50, 12)
    assert {c.key for c in fits.candidates} == {c.key for c in every.candidates}
    rare = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 50, 11)
    assert {c.key for c in rare.candidates} == {keys["n0"], keys["n1"]}
    assert rare.document_frequency == {"coffe": 10, "tea": 2} == every.document_frequency
    assert rare.document_count == 10
    # Candidates carry every term, so BM25 still counts the common one.
    assert all("coffe" in c.terms.split() for c in rare.candidates)
    # Over budget with the rarest term alone: that term is still matched.
    tight = await store.lexical_matches(
        "t", "u1", lexical.query_terms("coffee cocoa tea"), EpisodeFilter(), 50, 1
    )
    assert [c.key for c in tight.candidates] == [keys["n9"]]


async def test_statistics_follow_writes(store: MemoryStore) -> None:
    await _fill(store)
    wanted = lexical.query_terms("tea")
    before = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 50)
    again = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 50)
    assert before.document_frequency == again.document_frequency == {"tea": 2}
    await store.insert_episode("t", episode("more").evolve(user_message="tea again"))
    after = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 50)
    assert after.document_frequency == {"tea": 3} and after.document_count == 11
    await store.delete_episodes("t", ["e-n0", "e-more"])
    gone = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 50)
    assert gone.document_frequency == {"tea": 1} and gone.document_count == 9
    assert len(gone.candidates) == 1
