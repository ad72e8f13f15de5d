"""StatekeeperSessionService and StatekeeperMemoryService beyond ADK's own
tests: a Runner turn with a tool call, what other statekeeper clients see of
it, JSON types of state, ids statekeeper would refuse as they are, tenants,
and the memory service; plus the runnable example. Against a live
`statekeeper serve` (see live_server.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="google-adk is not installed (the adk extra)")

from google.adk.agents import LlmAgent
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from live_server import LiveServer, backends, scaled, serving

from statekeeper_client import AsyncClient
from statekeeper_client.adk import (
    StatekeeperMemoryService,
    StatekeeperSessionService,
    session_key,
    wire_id,
)
from statekeeper_client.v1 import memory_pb2
from statekeeper_client.v1 import session_pb2 as pb

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "adk_agent.py"


@pytest.fixture(scope="module", params=backends())
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with serving(request.param, tmp_path_factory.mktemp("adk")) as live:
        yield live


@pytest.fixture
def api_key(server: LiveServer) -> str:
    return server.fresh_key()


@pytest.fixture
async def sessions(server: LiveServer, api_key: str) -> AsyncIterator[StatekeeperSessionService]:
    service = StatekeeperSessionService(server.address, api_key=api_key)
    yield service
    await service.aclose()


@pytest.fixture
async def memory(server: LiveServer, api_key: str) -> AsyncIterator[StatekeeperMemoryService]:
    service = StatekeeperMemoryService(server.address, api_key=api_key)
    yield service
    await service.aclose()


@pytest.fixture
async def plain(server: LiveServer, api_key: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(server.address, api_key=api_key) as client:
        yield client


class ToolThenTextModel(BaseLlm):
    """Asks for `record_order` once, then answers with the tool's result."""

    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        results = [part.function_response for part in last.parts or [] if part.function_response]
        if results:
            part = types.Part(text=f"Order {(results[0].response or {})['order']} placed.")
        else:
            part = types.Part.from_function_call(
                name="record_order", args={"item": "green tea", "count": 2}
            )
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def record_order(item: str, count: int, tool_context: ToolContext) -> dict[str, Any]:
    """Records an order."""
    tool_context.state["orders"] = tool_context.state.get("orders", 0) + 1
    tool_context.state["user:last_item"] = item
    tool_context.state["app:total_orders"] = tool_context.state.get("app:total_orders", 0) + count
    tool_context.state["temp:scratch"] = "never stored"
    return {"order": "o-1", "item": item, "count": count}


async def test_runner_turn_is_stored_and_read_back_exactly(
    server: LiveServer, api_key: str, sessions: StatekeeperSessionService, plain: AsyncClient
) -> None:
    agent = LlmAgent(name="shop", model=ToolThenTextModel(), tools=[record_order])
    runner = Runner(app_name="shop_app", agent=agent, session_service=sessions)
    session = await sessions.create_session(app_name="shop_app", user_id="bob")
    message = types.Content(role="user", parts=[types.Part(text="Two green teas please")])
    produced = [
        event
        async for event in runner.run_async(
            user_id="bob", session_id=session.id, new_message=message
        )
    ]
    assert produced[-1].content is not None
    assert produced[-1].content.parts is not None
    assert produced[-1].content.parts[0].text == "Order o-1 placed."

    # Another service object (as another process) reads the same session.
    other = StatekeeperSessionService(server.address, api_key=api_key)
    stored = await other.get_session(app_name="shop_app", user_id="bob", session_id=session.id)
    await other.aclose()
    assert stored is not None
    assert [e.model_dump() for e in stored.events[1:]] == [e.model_dump() for e in produced]
    assert stored.events[0].content == message
    assert stored.state == {"orders": 1, "user:last_item": "green tea", "app:total_orders": 2}
    assert all("temp:scratch" not in (e.actions.state_delta or {}) for e in stored.events)

    # What any other statekeeper client sees: a chat with a tool call.
    listed = await plain.sessions.ListMessages(
        pb.ListMessagesRequest(session_id=session_key("shop_app", "bob", session.id))
    )
    roles = [m.role for m in listed.messages]
    assert roles == [pb.ROLE_USER, pb.ROLE_ASSISTANT, pb.ROLE_TOOL, pb.ROLE_ASSISTANT]
    user, call, result, answer = listed.messages
    assert user.content == "Two green teas please"
    function_call = stored.events[1].get_function_calls()[0]
    assert [(c.id, c.name) for c in call.tool_calls] == [(function_call.id, "record_order")]
    assert call.tool_calls[0].arguments == '{"item":"green tea","count":2}'
    assert result.tool_call_id == function_call.id
    assert '"order":"o-1"' in result.content
    assert answer.content == "Order o-1 placed."
    got = await plain.sessions.GetSession(
        pb.GetSessionRequest(session_id=session_key("shop_app", "bob", session.id))
    )
    assert got.session.user_id == "bob"
    assert got.session.agent_id == "shop_app"
    assert got.session.context_variables["orders"] == "1"


async def test_state_values_keep_their_json_types(sessions: StatekeeperSessionService) -> None:
    state = {"i": 1, "f": 1.5, "n": None, "l": [1, "a", 2.0], "d": {"x": True, "y": {"z": 3}}}
    session = await sessions.create_session(app_name="a", user_id="u", state=state)
    await sessions.append_event(
        session, Event(author="agent", actions=EventActions(state_delta={"i": 2, "big": 2**53}))
    )
    got = await sessions.get_session(app_name="a", user_id="u", session_id=session.id)
    assert got is not None
    assert got.state == {**state, "i": 2, "big": 2**53}
    assert type(got.state["i"]) is int
    assert type(got.state["big"]) is int
    assert type(got.state["l"][2]) is float
    listed = await sessions.list_sessions(app_name="a", user_id="u")
    assert listed.sessions[0].state == got.state


async def test_names_statekeeper_would_refuse_as_ids(sessions: StatekeeperSessionService) -> None:
    app, user, session_id = "My App / v2", "alice@example.com", "chat: 日本語 #1"
    assert wire_id(user) != user  # not a statekeeper id as it is
    session = await sessions.create_session(
        app_name=app, user_id=user, session_id=session_id, state={"user:lang": "ja"}
    )
    assert session.id == session_id
    await sessions.append_event(
        session,
        Event(author="user", content=types.Content(role="user", parts=[types.Part(text="hi")])),
    )
    got = await sessions.get_session(app_name=app, user_id=user, session_id=session_id)
    assert got is not None
    assert (got.app_name, got.user_id, got.id) == (app, user, session_id)
    assert got.state == {"user:lang": "ja"}
    listed = (await sessions.list_sessions(app_name=app, user_id=user)).sessions
    assert [(s.app_name, s.user_id, s.id) for s in listed] == [(app, user, session_id)]
    assert await sessions.get_user_state(app_name=app, user_id=user) == {"lang": "ja"}


async def test_only_adk_sessions_of_the_app_are_listed(
    sessions: StatekeeperSessionService, plain: AsyncClient
) -> None:
    await sessions.create_session(app_name="app1", user_id="u", session_id="mine")
    await sessions.create_session(app_name="app2", user_id="u", session_id="theirs")
    # A session another client made for the same user and agent id.
    await plain.sessions.CreateSession(
        pb.CreateSessionRequest(
            session_id="not-adk", session=pb.Session(user_id="u", agent_id="app1")
        )
    )
    listed = (await sessions.list_sessions(app_name="app1")).sessions
    assert [s.id for s in listed] == ["mine"]


async def test_messages_and_variables_other_clients_wrote_are_read(
    sessions: StatekeeperSessionService, plain: AsyncClient
) -> None:
    session = await sessions.create_session(app_name="app", user_id="u", state={"mine": [1]})
    key = session_key("app", "u", session.id)
    await plain.sessions.AppendMessages(
        pb.AppendMessagesRequest(
            session_id=key,
            messages=[
                pb.SessionMessage(role=pb.ROLE_USER, content="typed in another app"),
                pb.SessionMessage(role=pb.ROLE_ASSISTANT, content="answered", name="helper"),
            ],
        )
    )
    current = (await plain.sessions.GetSession(pb.GetSessionRequest(session_id=key))).session
    current.context_variables["plain"] = "not json"
    current.context_variables["number"] = 3
    await plain.sessions.UpdateSession(
        pb.UpdateSessionRequest(
            session=pb.Session(session_id=key, context_variables=current.context_variables),
            update_mask={"paths": ["context_variables"]},
        )
    )
    got = await sessions.get_session(app_name="app", user_id="u", session_id=session.id)
    assert got is not None
    assert [
        (e.author, e.content.parts[0].text) for e in got.events if e.content and e.content.parts
    ] == [
        ("user", "typed in another app"),
        ("helper", "answered"),
    ]
    assert got.state == {"mine": [1], "plain": "not json", "number": 3}
    # The session object is current again: appending to it works.
    await sessions.append_event(
        got, Event(author="user", actions=EventActions(state_delta={"x": 1}))
    )
    again = await sessions.get_session(app_name="app", user_id="u", session_id=session.id)
    assert again is not None and len(again.events) == 3 and again.state["x"] == 1


async def test_tenants_do_not_see_each_other(
    server: LiveServer, sessions: StatekeeperSessionService
) -> None:
    await sessions.create_session(
        app_name="app", user_id="u", session_id="s", state={"app:k": 1, "user:k": 2}
    )
    stranger = StatekeeperSessionService(server.address, api_key=server.fresh_key())
    try:
        assert await stranger.get_session(app_name="app", user_id="u", session_id="s") is None
        assert (await stranger.list_sessions(app_name="app")).sessions == []
        assert await stranger.get_user_state(app_name="app", user_id="u") == {}
        # Its own session of the same names does not collide either.
        own = await stranger.create_session(app_name="app", user_id="u", session_id="s")
        assert own.state == {}
    finally:
        await stranger.aclose()


async def test_append_to_a_deleted_session_raises_not_found(
    sessions: StatekeeperSessionService,
) -> None:
    session = await sessions.create_session(app_name="app", user_id="u")
    await sessions.delete_session(app_name="app", user_id="u", session_id=session.id)
    with pytest.raises(SessionNotFoundError):
        await sessions.append_event(session, Event(author="user"))
    # Deleting again is not an error, as in ADK's services.
    await sessions.delete_session(app_name="app", user_id="u", session_id=session.id)


def _said(author: str, text: str, timestamp: float) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        timestamp=timestamp,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


async def test_memory_records_each_event_once_and_recalls_it(
    sessions: StatekeeperSessionService, memory: StatekeeperMemoryService, plain: AsyncClient
) -> None:
    session = await sessions.create_session(app_name="app", user_id="carol")
    for event in (
        _said("user", "I am planning a hiking trip to the Alps in July", 1_700_000_000.0),
        _said("guide", "Pack layers: July nights in the Alps are cold", 1_700_000_001.0),
        Event(author="guide", actions=EventActions(state_delta={"k": 1})),  # no text
    ):
        await sessions.append_event(session, event)
    stored = await sessions.get_session(app_name="app", user_id="carol", session_id=session.id)
    assert stored is not None

    await memory.add_session_to_memory(stored)
    await memory.add_session_to_memory(stored)  # again: nothing new
    episodes = await plain.memory.ListEpisodes(
        memory_pb2.ListEpisodesRequest(user_id="carol", page_size=100)
    )
    assert len(episodes.episodes) == 2
    by_author = {e.metadata["adk.author"]: e for e in episodes.episodes}
    assert by_author["user"].user_message.startswith("I am planning a hiking trip")
    assert by_author["guide"].assistant_response.startswith("Pack layers")

    found = await memory.search_memory(app_name="app", user_id="carol", query="hiking in the Alps")
    assert {m.author for m in found.memories} == {"user", "guide"}
    entry = next(m for m in found.memories if m.author == "user")
    assert entry.content == stored.events[0].content
    assert entry.timestamp is not None and entry.timestamp.startswith("2023-11-14T22:13:20")

    # Scoped to the app and the user.
    assert (
        await memory.search_memory(app_name="other", user_id="carol", query="Alps")
    ).memories == []
    assert (await memory.search_memory(app_name="app", user_id="dave", query="Alps")).memories == []

    # Deleting one memory by the id search returned.
    await memory.delete_memory(app_name="app", user_id="carol", memory_id=entry.id)
    again = await memory.search_memory(app_name="app", user_id="carol", query="hiking in the Alps")
    assert [m.author for m in again.memories] == ["guide"]


async def test_memory_events_delta(memory: StatekeeperMemoryService, plain: AsyncClient) -> None:
    first = _said("user", "My cat is called Miso", 1_700_000_000.0)
    await memory.add_events_to_memory(
        app_name="app", user_id="erin", events=[first], session_id="s1"
    )
    await memory.add_events_to_memory(
        app_name="app",
        user_id="erin",
        events=[first, _said("pet_bot", "Miso is a lovely name", 1_700_000_002.0)],
        session_id="s1",
        custom_metadata={"source": "test"},
    )
    episodes = await plain.memory.ListEpisodes(
        memory_pb2.ListEpisodesRequest(user_id="erin", page_size=100)
    )
    assert sorted(e.metadata["adk.author"] for e in episodes.episodes) == ["pet_bot", "user"]
    assert {e.metadata.get("source") for e in episodes.episodes} == {None, "test"}


def test_example_runs(server: LiveServer) -> None:
    env = dict(os.environ, STATEKEEPER_ADDR=server.address, STATEKEEPER_API_KEY=server.fresh_key())
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "reply: Noted: {'stored': 'matcha'}" in done.stdout
    assert "session 2 state (user: state only): {'user:favorite_drink': 'matcha'}" in done.stdout
    assert re.search(r"memory: user \['My favorite drink is matcha'\]", done.stdout)
