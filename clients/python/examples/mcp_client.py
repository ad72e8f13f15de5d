"""An MCP client using statekeeper through `statekeeper-mcp`, as a desktop app would.

Starts `statekeeper-mcp` over stdio with the SDK's client, lists its tools,
stores a memory and recalls it, then subscribes to a blackboard key and sees
the notification of its own put.

    pip install "statekeeper-client[mcp]"
    STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev \\
        python examples/mcp_client.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
import warnings
from typing import Any

import mcp.types as mcp_types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client

# Desktop clients negotiate a 2025 protocol revision, where resources/subscribe
# is how subscriptions work; the SDK warns that 2026-07-28 replaces it.
warnings.filterwarnings("ignore", message="resources/(un)?subscribe is removed")


def result_of(reply: mcp_types.CallToolResult) -> Any:
    """The JSON a statekeeper-mcp tool returned (its first content block)."""
    content = reply.content[0]
    if reply.is_error or not isinstance(content, mcp_types.TextContent):
        raise RuntimeError(f"tool failed: {reply.content}")
    return json.loads(content.text)


async def main() -> None:
    run = uuid.uuid4().hex[:8]
    params = StdioServerParameters(
        command=sys.executable,  # `statekeeper-mcp` in a desktop client's config
        args=[
            "-m",
            "statekeeper_client.mcp",
            "--target",
            os.environ.get("STATEKEEPER_ADDR", "127.0.0.1:50051"),
            "--user-id",
            f"example-{run}",
            "--board",
            f"example-{run}",
        ],
        # The API key, if any, reaches the server through the environment.
        env=dict(os.environ),
    )
    updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            updated.put_nowait(str(message.params.uri))

    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        print("tools:", ", ".join(tool.name for tool in tools.tools))

        result_of(
            await session.call_tool(
                "remember",
                {"user_message": "I take my coffee black.", "assistant_response": "Noted."},
            )
        )
        recalled = result_of(await session.call_tool("recall", {"query": "coffee", "top_k": 1}))
        print("recall:", recalled["episodes"][0]["user_message"])

        uri = "statekeeper://board/status"
        await session.subscribe_resource(uri)
        result_of(
            await session.call_tool("blackboard_put", {"key": "status", "value": {"phase": "done"}})
        )
        print("updated:", await asyncio.wait_for(updated.get(), 10))
        entry = await session.read_resource(uri)
        content = entry.contents[0]
        assert isinstance(content, mcp_types.TextResourceContents)
        print("read:", json.loads(content.text)["value"])


if __name__ == "__main__":
    asyncio.run(main())
