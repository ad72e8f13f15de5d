"""BuildContext: working window, then facts, then episodes, within budget,
never cutting an entry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.core.audit.service import system_actor
from statekeeper.core.errors import InvalidArgumentError, NotFoundError
from statekeeper.core.memory.context import ContextRequest
from statekeeper.core.memory.episodes import EpisodeDraft
from statekeeper.core.memory.models import FactDraft, Ranking
from statekeeper.core.sessions.models import MessageDraft, Role, SessionDraft, ToolCall
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.tokens import TokenCounter
from statekeeper.memory_app import MemoryApp
from tests.memory.helpers import memory_app

T = "tenant-a"
ACTOR = system_actor("test", T)


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[tuple[MemoryApp, SessionManager]]:
    async with memory_app(tmp_path) as pair:
        app, sessions = pair
        await sessions.create(ACTOR, "s1", SessionDraft(user_id="u1"))
        drafts = [
            MessageDraft(Role.USER, f"message number {i} about the garden") for i in range(30)
        ]
        drafts.append(
            MessageDraft(Role.ASSISTANT, "", tool_calls=(ToolCall("c1", "weather", "{}"),))
        )
        drafts.append(MessageDraft(Role.TOOL, "sunny", tool_call_id="c1"))
        await sessions.append(ACTOR, "s1", drafts, "", "")
        await app.domain.semantic.add_facts(
            T, "u1", [FactDraft("Alice", "grows", "tomatoes"), FactDraft("tomatoes", "need", "sun")]
        )
        for i in range(6):
            await app.domain.episodes.record(
                T,
                EpisodeDraft(
                    "u1",
                    user_message=f"Alice asked about tomatoes, day {i}",
                    assistant_response="Water them in the morning.",
                ),
            )
        yield pair


async def test_all_three_layers_fit_the_budget_in_order(
    setup: tuple[MemoryApp, SessionManager],
) -> None:
    app, _ = setup
    built = await app.domain.context.build(
        T,
        ContextRequest(
            user_id="u1",
            session_id="s1",
            message="How are Alice's tomatoes?",
            token_budget=400,
            reserved_output_tokens=50,
        ),
    )
    tokens = built.tokens
    assert tokens.total == TokenCounter().count(built.markdown)
    assert tokens.total <= 400 - 50
    assert tokens.total == tokens.overhead + tokens.working + tokens.episodes + tokens.facts
    assert tokens.remaining == 400 - 50 - tokens.total
    # Working window: newest messages, at most half the memory budget, oldest first.
    assert built.working[-1].role == Role.TOOL and built.working[-2].role == Role.ASSISTANT
    assert tokens.working <= (400 - 50) // 2
    assert built.omitted_messages == 32 - len(built.working)
    assert {f.fact.object for f in built.facts} == {"tomatoes", "sun"}
    assert built.episodes and built.ranking == Ranking.LEXICAL
    sections = [line for line in built.markdown.splitlines() if line.startswith("## ")]
    assert sections == ["## Known facts", "## Relevant memories", "## Recent conversation"]
    for entry in [*built.working, *built.episodes, *built.facts]:
        assert entry.text in built.markdown  # whole entries only


async def test_tiny_budget_leaves_entries_out_whole(
    setup: tuple[MemoryApp, SessionManager],
) -> None:
    app, _ = setup
    built = await app.domain.context.build(
        T,
        ContextRequest(
            user_id="u1", session_id="s1", message="tomatoes", token_budget=60, max_working_tokens=0
        ),
    )
    assert built.working == [] and built.tokens.total <= 60
    assert built.omitted_messages == 32
    assert built.omitted_episodes + len(built.episodes) >= 1


async def test_bad_requests_name_their_field(setup: tuple[MemoryApp, SessionManager]) -> None:
    app, _ = setup
    context = app.domain.context
    with pytest.raises(InvalidArgumentError) as raised:
        await context.build(
            T, ContextRequest(user_id="u1", token_budget=10, reserved_output_tokens=10)
        )
    assert raised.value.field == "reserved_output_tokens"
    with pytest.raises(InvalidArgumentError) as raised:
        await context.build(T, ContextRequest(user_id=""))
    assert raised.value.field == "user_id"
    with pytest.raises(NotFoundError):
        await context.build(T, ContextRequest(user_id="u1", session_id="missing"))
    empty = await context.build(T, ContextRequest(user_id="u1"))
    assert empty.markdown == "" and empty.ranking == Ranking.UNSPECIFIED
