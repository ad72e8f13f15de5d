"""A Google ADK agent whose sessions, state and memory live in statekeeper.

    pip install "statekeeper-client[adk]"
    STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev python examples/adk_agent.py

The model is a tiny local stand-in (no API key, no network): it calls the
`remember_favorite` tool when told a favourite drink and answers from the
session state otherwise. Swap in `model="gemini-2.5-flash"` for a real one.

1. A Runner with StatekeeperSessionService and StatekeeperMemoryService.
2. Turn one: the model calls the tool, which writes `user:favorite_drink`
   (user state, shared by the user's sessions) and `temp:` scratch state
   (never stored).
3. A second session of the same user, made by a new service object (as
   another process would): it sees the user state, not the first session's.
4. The first session goes to memory; search_memory recalls it.
"""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from statekeeper_client.adk import StatekeeperMemoryService, StatekeeperSessionService

APP = "drinks_app"


class LocalModel(BaseLlm):
    """Calls remember_favorite for "my favorite drink is X", else answers."""

    model: str = "local-scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1] if llm_request.contents else None
        parts = (last.parts or []) if last is not None else []
        answered = [part.function_response for part in parts if part.function_response]
        said = " ".join(part.text for part in parts if part.text)
        wanted = re.search(r"favou?rite drink is (\w+)", said)
        if answered:
            reply = types.Part(text=f"Noted: {answered[0].response}")
        elif wanted:
            reply = types.Part.from_function_call(
                name="remember_favorite", args={"drink": wanted.group(1)}
            )
        else:
            reply = types.Part(text="Ask me about your favourite drink.")
        yield LlmResponse(content=types.Content(role="model", parts=[reply]))


def remember_favorite(drink: str, tool_context: ToolContext) -> dict[str, Any]:
    """Remembers the user's favourite drink."""
    tool_context.state["user:favorite_drink"] = drink
    tool_context.state["temp:last_tool"] = "remember_favorite"
    tool_context.state["mentions"] = tool_context.state.get("mentions", 0) + 1
    return {"stored": drink}


def agent() -> LlmAgent:
    return LlmAgent(
        name="barista",
        model=LocalModel(),
        instruction="Remember what the user likes to drink.",
        tools=[remember_favorite],
    )


async def say(runner: Runner, user_id: str, session_id: str, text: str) -> str:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    replies: list[str] = []
    async for event in runner.run_async(
        user_id=user_id, session_id=session_id, new_message=message
    ):
        if event.content and event.content.parts:
            replies.extend(part.text for part in event.content.parts if part.text)
    return " ".join(replies)


async def main() -> None:
    target = os.environ.get("STATEKEEPER_ADDR", "127.0.0.1:50051")
    api_key = os.environ.get("STATEKEEPER_API_KEY")
    user = f"alice-{uuid.uuid4().hex[:6]}"
    sessions = StatekeeperSessionService(target, api_key=api_key)
    memory = StatekeeperMemoryService(target, api_key=api_key)
    runner = Runner(app_name=APP, agent=agent(), session_service=sessions, memory_service=memory)

    first = await sessions.create_session(app_name=APP, user_id=user)
    print("reply:", await say(runner, user, first.id, "My favorite drink is matcha"))
    stored = await sessions.get_session(app_name=APP, user_id=user, session_id=first.id)
    assert stored is not None
    print("events in session 1:", len(stored.events))
    print("session 1 state:", stored.state)

    # Another service object, as another process would have.
    elsewhere = StatekeeperSessionService(target, api_key=api_key)
    second = await elsewhere.create_session(app_name=APP, user_id=user)
    print("session 2 state (user: state only):", second.state)
    assert second.state.get("user:favorite_drink") == "matcha"
    assert "mentions" not in second.state

    await memory.add_session_to_memory(stored)
    found = await memory.search_memory(app_name=APP, user_id=user, query="favorite drink matcha")
    for entry in found.memories:
        texts = [part.text for part in entry.content.parts or [] if part.text]
        print("memory:", entry.author, texts)
    assert found.memories, "the session's text should be recalled"

    await sessions.aclose()
    await elsewhere.aclose()
    await memory.aclose()


if __name__ == "__main__":
    asyncio.run(main())
