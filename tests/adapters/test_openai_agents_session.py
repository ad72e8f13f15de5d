"""StatekeeperSession beyond the SDK's own tests: items of every kind come
back exactly as stored, the server sees them as a conversation (roles, tool
calls, tool results), pop_item undoes one item of a multi-item append, and an
agent run with a tool call and a local scripted model resumes from the
server."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest

pytest.importorskip("agents", reason="openai-agents is not installed")

from agents import Agent, Runner, TResponseInputItem, function_tool
from agents.testing import ScriptedModel
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from statekeeper_client.aio import AsyncClient
from statekeeper_client.openai_agents import StatekeeperSession
from statekeeper_client.v1 import session_pb2 as pb
from tests.adapters.conftest import API_KEY
from tests.harness.inproc import InProcessStatekeeper

BIG_TEXT = "".join(f"línea {index}: 数据 ✓\n" for index in range(900))  # ~20 KB, not ASCII

ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "What is the weather in Paris?"},
    {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "and this picture?"},
            {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "auto"},
        ],
    },
    {"role": "developer", "content": "Answer briefly."},
    {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "The user wants weather."}],
        "encrypted_content": "gAAAA" + "x" * 6000,
    },
    {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_1",
        "name": "weather",
        "arguments": json.dumps({"city": "Paris", "notes": BIG_TEXT}),
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21°C"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": BIG_TEXT, "annotations": [], "logprobs": []}],
    },
    {"type": "item_reference", "id": "msg_0"},
    {"role": "assistant", "content": ""},
    {"role": "user", "content": "nothing \u0000 odd", "extra": {"nested": [1, 2.5, None, True]}},
]


@pytest.fixture
async def session(statekeeper_server: InProcessStatekeeper) -> AsyncIterator[StatekeeperSession]:
    made = StatekeeperSession(
        f"adapter-{uuid.uuid4().hex}", target=statekeeper_server.address, api_key=API_KEY
    )
    yield made
    await made.aclose()


def items(values: list[dict[str, Any]]) -> list[TResponseInputItem]:
    return [cast(TResponseInputItem, value) for value in values]


async def stored_messages(server: InProcessStatekeeper, session_id: str) -> list[Any]:
    async with AsyncClient(server.address, api_key=API_KEY) as client:
        reply = await client.sessions.ListMessages(
            pb.ListMessagesRequest(session_id=session_id, page_size=1000)
        )
    return list(reply.messages)


async def test_every_kind_of_item_comes_back_exactly(session: StatekeeperSession) -> None:
    await session.add_items(items(ITEMS[:4]))
    await session.add_items(items(ITEMS[4:]))
    assert await session.get_items() == ITEMS
    assert await session.get_items(limit=3) == ITEMS[-3:]
    assert await session.get_items(limit=0) == []


async def test_the_server_sees_a_conversation(
    session: StatekeeperSession, statekeeper_server: InProcessStatekeeper
) -> None:
    """Roles, tool calls and tool results are the server's own fields, so its
    context windows, token counts and compaction work on the conversation."""
    await session.add_items(items(ITEMS))
    stored = await stored_messages(statekeeper_server, session.session_id)
    assert [message.role for message in stored[:7]] == [
        pb.ROLE_USER,
        pb.ROLE_USER,
        pb.ROLE_SYSTEM,
        pb.ROLE_ASSISTANT,
        pb.ROLE_ASSISTANT,
        pb.ROLE_TOOL,
        pb.ROLE_ASSISTANT,
    ]
    assert stored[0].content == "What is the weather in Paris?"
    assert stored[1].content == "and this picture?"
    (call,) = stored[4].tool_calls
    assert (call.id, call.name, call.arguments) == ("call_1", "weather", ITEMS[4]["arguments"])
    assert stored[5].tool_call_id == "call_1" and stored[5].content == "sunny, 21°C"
    assert stored[6].content == BIG_TEXT


async def test_pop_item_undoes_one_item_of_a_multi_item_append(
    session: StatekeeperSession,
) -> None:
    assert await session.pop_item() is None  # no session yet
    await session.add_items(items(ITEMS[:3]))
    await session.add_items(items(ITEMS[3:6]))
    assert await session.pop_item() == ITEMS[5]
    assert await session.get_items() == ITEMS[:5]
    assert await session.pop_item() == ITEMS[4]
    assert await session.pop_item() == ITEMS[3]
    assert await session.pop_item() == ITEMS[2]
    await session.add_items(items(ITEMS[6:7]))
    assert await session.get_items() == [*ITEMS[:2], ITEMS[6]]
    for expected in (ITEMS[6], ITEMS[1], ITEMS[0]):
        assert await session.pop_item() == expected
    assert await session.pop_item() is None
    assert await session.get_items() == []


async def test_clear_session_then_reuse(session: StatekeeperSession) -> None:
    await session.clear_session()  # nothing to clear is fine
    await session.add_items(items(ITEMS[:2]))
    await session.clear_session()
    assert await session.get_items() == []
    await session.add_items(items(ITEMS[2:3]))
    assert await session.get_items() == ITEMS[2:3]


def text_reply(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_reply",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])],
    )


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


async def test_an_agent_run_with_a_tool_call_resumes_from_the_server(
    statekeeper_server: InProcessStatekeeper,
) -> None:
    """Two turns, each with a fresh StatekeeperSession object (as two
    processes would have): the second turn's model input is the whole first
    turn, tool call and tool result included, then the new question."""
    session_id = f"agent-{uuid.uuid4().hex}"
    model = ScriptedModel()
    agent = Agent(name="forecaster", model=model, tools=[weather])
    call = ResponseFunctionToolCall(
        id="fc_9",
        type="function_call",
        call_id="call_9",
        name="weather",
        arguments='{"city":"Oslo"}',
    )
    model.enqueue([call])
    model.enqueue([text_reply("It is sunny in Oslo.")])
    first = StatekeeperSession(session_id, target=statekeeper_server.address, api_key=API_KEY)
    result = await Runner.run(agent, "Weather in Oslo?", session=first)
    assert result.final_output == "It is sunny in Oslo."
    await first.aclose()

    model.enqueue([text_reply("You asked about Oslo.")])
    second = StatekeeperSession(session_id, target=statekeeper_server.address, api_key=API_KEY)
    result = await Runner.run(agent, "What did I ask?", session=second)
    assert result.final_output == "You asked about Oslo."
    sent = model.calls[-1].input
    assert isinstance(sent, list)
    kinds = [(item.get("type"), item.get("role")) for item in sent]
    assert kinds == [
        (None, "user"),
        ("function_call", None),
        ("function_call_output", None),
        ("message", "assistant"),
        (None, "user"),
    ]
    assert sent[1]["arguments"] == '{"city":"Oslo"}' and sent[2]["output"] == "sunny in Oslo"
    history = await second.get_items()
    assert history[:4] == sent[:4]
    assert len(history) == 6
    await second.aclose()
