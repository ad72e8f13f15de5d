"""An OpenAI Agents SDK agent whose conversation lives in statekeeper.

Two turns, each with a new StatekeeperSession object (as two processes would
have): the second turn's model sees the first turn, tool call included. The
model is the SDK's local ScriptedModel, so no API key is needed; put a real
model in `Agent(model=...)` to talk to one.

    pip install "statekeeper-client[openai-agents]"
    STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev \\
        python examples/openai_agents_session.py
"""

from __future__ import annotations

import asyncio
import os
import uuid

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from statekeeper_client.openai_agents import StatekeeperSession


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def reply(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=f"msg_{uuid.uuid4().hex[:8]}",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[])],
    )


async def main() -> None:
    target = os.environ.get("STATEKEEPER_ADDR", "127.0.0.1:50051")
    api_key = os.environ.get("STATEKEEPER_API_KEY")
    session_id = f"example-{uuid.uuid4().hex[:8]}"

    set_tracing_disabled(True)  # no OpenAI account: keep the traces local
    model = ScriptedModel()
    model.enqueue(
        [
            ResponseFunctionToolCall(
                id="fc_1",
                type="function_call",
                call_id="call_1",
                name="weather",
                arguments='{"city": "Oslo"}',
            )
        ]
    )
    model.enqueue([reply("It is sunny in Oslo.")])
    model.enqueue([reply("You asked about the weather in Oslo.")])
    agent = Agent(name="forecaster", model=model, tools=[weather])

    for question in ("What is the weather in Oslo?", "What did I ask you?"):
        session = StatekeeperSession(session_id, target=target, api_key=api_key)
        result = await Runner.run(agent, question, session=session)
        print(f"> {question}\n{result.final_output}")
        await session.aclose()

    session = StatekeeperSession(session_id, target=target, api_key=api_key)
    for item in await session.get_items():
        print(item.get("type") or "message", item.get("role", ""))
    await session.aclose()


if __name__ == "__main__":
    asyncio.run(main())
