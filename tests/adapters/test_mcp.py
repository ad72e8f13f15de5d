"""statekeeper-mcp end to end: a live statekeeper server, the MCP server as a
real subprocess, and the `mcp` SDK's own client talking to it over stdio and
over streamable HTTP on a loopback port."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import mcp.types as mcp_types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from statekeeper_client.aio import AsyncClient
from statekeeper_client.v1 import blackboard_pb2 as bb
from statekeeper_client.v1 import session_pb2 as sess
from tests.adapters.conftest import API_KEY
from tests.harness.inproc import InProcessStatekeeper

TOOLS = {
    "remember",
    "recall",
    "build_context",
    "forget",
    "facts",
    "blackboard_get",
    "blackboard_put",
    "blackboard_list",
    "session_context",
}


def _args(server: InProcessStatekeeper, board: str, user: str) -> list[str]:
    return ["--target", server.address, "--board", board, "--user-id", user]


def _env() -> dict[str, str]:
    # The key goes through the environment, as the README tells desktop clients.
    return {**os.environ, "STATEKEEPER_API_KEY": API_KEY}


@asynccontextmanager
async def stdio_session(
    server: InProcessStatekeeper,
    board: str,
    user: str,
    updates: asyncio.Queue[str] | None = None,
) -> AsyncIterator[ClientSession]:
    """The SDK's client on a `statekeeper-mcp` subprocess; the URIs of
    resources/updated notifications go to `updates`."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "statekeeper_client.mcp", *_args(server, board, user)],
        env=_env(),
    )

    async def on_message(message: IncomingMessage) -> None:
        if updates is not None and isinstance(message, mcp_types.ResourceUpdatedNotification):
            updates.put_nowait(str(message.params.uri))

    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        await session.initialize()
        yield session


def _result(reply: Any) -> Any:
    assert not reply.is_error, reply.content
    return json.loads(reply.content[0].text)


@pytest.fixture
def names() -> tuple[str, str]:
    return f"board-{uuid.uuid4().hex}", f"user-{uuid.uuid4().hex}"


async def test_lists_every_tool_and_the_board_template(
    statekeeper_server: InProcessStatekeeper, names: tuple[str, str]
) -> None:
    async with stdio_session(statekeeper_server, *names) as mcp:
        tools = {tool.name for tool in (await mcp.list_tools()).tools}
        assert tools == TOOLS
        templates = await mcp.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == [
            "statekeeper://board/{+key}"
        ]


async def test_remember_recall_facts_and_forget(
    statekeeper_server: InProcessStatekeeper, names: tuple[str, str]
) -> None:
    async with stdio_session(statekeeper_server, *names) as mcp:
        stored = _result(
            await mcp.call_tool(
                "remember",
                {
                    "user_message": "My favourite volcano is Eyjafjallajokull.",
                    "assistant_response": "Noted: Eyjafjallajokull.",
                },
            )
        )
        recalled = _result(await mcp.call_tool("recall", {"query": "favourite volcano"}))
        assert [e["episode_id"] for e in recalled["episodes"]] == [stored["episode_id"]]
        assert "Eyjafjallajokull" in recalled["episodes"][0]["user_message"]

        graph = _result(
            await mcp.call_tool(
                "facts",
                {
                    "add": [{"subject": "alice", "predicate": "lives_in", "object": "Reykjavik"}],
                    "entity": "alice",
                },
            )
        )
        assert graph["added"][0]["outcome"] == "FACT_OUTCOME_CREATED"
        assert [(f["subject"], f["predicate"], f["object"]) for f in graph["facts"]] == [
            ("alice", "lives_in", "Reykjavik")
        ]
        context = _result(
            await mcp.call_tool("build_context", {"message": "where does alice live?"})
        )
        assert "Reykjavik" in context["markdown"]

        _result(await mcp.call_tool("forget", {"episode_id": stored["episode_id"]}))
        after = _result(await mcp.call_tool("recall", {"query": "favourite volcano"}))
        assert after["episodes"] == []
        # Forgetting it twice: the server's NOT_FOUND reaches the model.
        again = await mcp.call_tool("forget", {"episode_id": stored["episode_id"]})
        assert again.is_error
        assert "NOT_FOUND" in again.content[0].text


async def test_blackboard_put_get_list_cas_and_resource(
    statekeeper_server: InProcessStatekeeper, names: tuple[str, str]
) -> None:
    async with stdio_session(statekeeper_server, *names) as mcp:
        first = _result(
            await mcp.call_tool(
                "blackboard_put",
                {"key": "plan/step1", "value": {"owner": "a"}, "expected_mod_revision": 0},
            )
        )
        _result(await mcp.call_tool("blackboard_put", {"key": "plan/step2", "value": [1, 2]}))
        _result(await mcp.call_tool("blackboard_put", {"key": "other", "value": "x"}))

        got = _result(await mcp.call_tool("blackboard_get", {"key": "plan/step1"}))
        assert got["value"] == {"owner": "a"}
        assert got["mod_revision"] == first["mod_revision"]
        assert got["writer_agent_id"] == "statekeeper-mcp"
        missing = _result(await mcp.call_tool("blackboard_get", {"key": "nope"}))
        assert missing["found"] is False

        listed = _result(await mcp.call_tool("blackboard_list", {"prefix": "plan/"}))
        assert [(e["key"], e["value"]) for e in listed["entries"]] == [
            ("plan/step1", {"owner": "a"}),
            ("plan/step2", [1, 2]),
        ]

        # A CAS with the revision it read succeeds once; the second writer with
        # the same stale revision gets a tool error naming the conflict.
        ok = _result(
            await mcp.call_tool(
                "blackboard_put",
                {
                    "key": "plan/step1",
                    "value": {"owner": "b"},
                    "expected_mod_revision": got["mod_revision"],
                },
            )
        )
        stale = await mcp.call_tool(
            "blackboard_put",
            {
                "key": "plan/step1",
                "value": {"owner": "c"},
                "expected_mod_revision": got["mod_revision"],
            },
        )
        assert stale.is_error
        text = stale.content[0].text
        assert "REVISION_MISMATCH" in text
        assert f"mod_revision {ok['mod_revision']}" in text
        assert _result(await mcp.call_tool("blackboard_get", {"key": "plan/step1"}))["value"] == {
            "owner": "b"
        }

        resource = await mcp.read_resource("statekeeper://board/plan/step1")
        assert json.loads(resource.contents[0].text)["value"] == {"owner": "b"}


# resources/subscribe is what clients negotiating a 2025 revision (desktop
# clients today) use; the SDK warns that the 2026-07-28 revision drops it.
@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_a_put_through_the_server_api_notifies_a_subscribed_resource(
    statekeeper_server: InProcessStatekeeper, names: tuple[str, str]
) -> None:
    board = names[0]
    updates: asyncio.Queue[str] = asyncio.Queue()
    watched = "statekeeper://board/plan/step1"
    async with (
        stdio_session(statekeeper_server, *names, updates=updates) as mcp,
        AsyncClient(statekeeper_server.address, api_key=API_KEY) as sk,
    ):
        initialized = await mcp.initialize()
        assert initialized.capabilities.resources is not None
        assert initialized.capabilities.resources.subscribe
        await mcp.subscribe_resource(watched)

        async def put(key: str, n: int) -> None:
            value = bb.BlackboardValue()
            value.json.update({"n": n})
            await sk.blackboard.PutEntry(bb.PutEntryRequest(board=board, key=key, value=value))

        # Another writer, straight through gRPC: an unwatched key first, so the
        # only notification must be the watched key's.
        await put("plan/step2", 1)
        await put("plan/step1", 2)
        assert await asyncio.wait_for(updates.get(), 10) == watched
        resource = await mcp.read_resource(watched)
        assert json.loads(resource.contents[0].text)["value"] == {"n": 2}
        await sk.blackboard.DeleteEntry(bb.DeleteEntryRequest(board=board, key="plan/step1"))
        assert await asyncio.wait_for(updates.get(), 10) == watched

        # After unsubscribing, changes are no longer sent.
        await mcp.unsubscribe_resource(watched)
        await put("plan/step1", 3)
        await mcp.call_tool("blackboard_get", {"key": "plan/step1"})  # a round trip
        await asyncio.sleep(0.5)
        assert updates.empty()


async def test_session_context_of_a_session_with_messages(
    statekeeper_server: InProcessStatekeeper, names: tuple[str, str]
) -> None:
    session_id = f"s-{uuid.uuid4().hex}"
    async with AsyncClient(statekeeper_server.address, api_key=API_KEY) as sk:
        await sk.sessions.CreateSession(
            sess.CreateSessionRequest(session_id=session_id, session=sess.Session(user_id=names[1]))
        )
        await sk.sessions.AppendMessages(
            sess.AppendMessagesRequest(
                session_id=session_id,
                messages=[
                    sess.SessionMessage(role=sess.ROLE_USER, content="hello there"),
                    sess.SessionMessage(role=sess.ROLE_ASSISTANT, content="general kenobi"),
                ],
            )
        )
    async with stdio_session(statekeeper_server, *names) as mcp:
        window = _result(
            await mcp.call_tool("session_context", {"session_id": session_id, "token_budget": 1000})
        )
        assert [(m["role"], m["content"]) for m in window["messages"]] == [
            ("user", "hello there"),
            ("assistant", "general kenobi"),
        ]
        assert 0 < window["total_tokens"] <= 1000
        unknown = await mcp.call_tool(
            "session_context", {"session_id": "no-such-session", "token_budget": 1000}
        )
        assert unknown.is_error
        assert "NOT_FOUND" in unknown.content[0].text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_mcp(statekeeper_server: InProcessStatekeeper, names: tuple[str, str]) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "statekeeper_client.mcp",
            *_args(statekeeper_server, *names),
            "--transport",
            "streamable-http",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    _, err = process.communicate(timeout=5)
                    pytest.fail(f"statekeeper-mcp did not listen: {err.decode()}")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_streamable_http(
    http_mcp: str, statekeeper_server: InProcessStatekeeper, names: tuple[str, str]
) -> None:
    async with (
        streamable_http_client(http_mcp) as (read, write),
        ClientSession(read, write) as mcp,
    ):
        await mcp.initialize()
        assert {tool.name for tool in (await mcp.list_tools()).tools} == TOOLS
        put = _result(await mcp.call_tool("blackboard_put", {"key": "k", "value": {"n": 1}}))
        got = _result(await mcp.call_tool("blackboard_get", {"key": "k"}))
        assert got["value"] == {"n": 1}
        assert got["mod_revision"] == put["mod_revision"]
    # The write is on the statekeeper server, seen by an ordinary client.
    async with AsyncClient(statekeeper_server.address, api_key=API_KEY) as sk:
        entry = await sk.blackboard.GetEntry(bb.GetEntryRequest(board=names[0], key="k"))
    assert entry.found
    assert entry.entry.mod_revision == put["mod_revision"]
