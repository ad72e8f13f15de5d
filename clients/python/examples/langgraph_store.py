"""A LangGraph graph with long-term memory in statekeeper: a node saves what
the user said in a StatekeeperStore and recalls related memories by semantic
search, across threads.

The embedding is a toy (letter counts) so the example runs offline; pass any
LangChain `Embeddings` or function as `index["embed"]` for real ones.

    pip install "statekeeper-client[langgraph]" langgraph
    STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev python examples/langgraph_store.py
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Sequence
from typing import Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from statekeeper_client.langgraph import StatekeeperStore


def letter_counts(texts: Sequence[str]) -> list[list[float]]:
    """A toy embedding: normalised counts of the letters a-z."""
    vectors = []
    for text in texts:
        counts = [float(text.lower().count(chr(ord("a") + i))) for i in range(26)]
        norm = math.sqrt(sum(c * c for c in counts)) or 1.0
        vectors.append([c / norm for c in counts])
    return vectors


class State(TypedDict):
    said: str
    recalled: list[str]


def main() -> None:
    target = os.environ.get("STATEKEEPER_ADDR", "127.0.0.1:50051")
    user = ("memories", f"user-{uuid.uuid4().hex[:8]}")

    def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
        related = store.search(user, query=state["said"], limit=2)
        store.put(user, uuid.uuid4().hex, {"text": state["said"]})
        return {"recalled": [item.value["text"] for item in related]}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    with StatekeeperStore(
        target,
        api_key=os.environ.get("STATEKEEPER_API_KEY"),
        index={"dims": 26, "embed": letter_counts, "fields": ["text"]},
        ttl={"default_ttl": 24 * 60},  # minutes: memories fade after a day
    ) as store:
        graph = builder.compile(checkpointer=InMemorySaver(), store=store)
        for thread, said in enumerate(["I love green tea", "My cat is Tom", "Any tea ideas?"]):
            out = graph.invoke(
                {"said": said, "recalled": []}, {"configurable": {"thread_id": str(thread)}}
            )
            print(f"{said!r}: recalled {out['recalled']}")


if __name__ == "__main__":
    main()
