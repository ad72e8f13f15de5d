"""statekeeper as an MCP server (the `mcp` extra): the `statekeeper-mcp` command.

    statekeeper-mcp --target 127.0.0.1:50051 --user-id alice          # stdio
    statekeeper-mcp --transport streamable-http --port 8765             # HTTP, /mcp

It is built on the official `mcp` SDK (`MCPServer`) and forwards every tool
call to a statekeeper server over gRPC with the Python client:

- memory: `remember` (RecordEpisode), `recall` (Recall by text), `build_context`
  (BuildContext), `forget` (DeleteEpisode), `facts` (AddFacts, then QueryEntity);
- the blackboard of one board (`--board`): `blackboard_get`, `blackboard_put`
  (a compare-and-swap with `expected_mod_revision`), `blackboard_list`;
- sessions: `session_context` (GetContextWindow).

Board keys are also resources, `statekeeper://board/{key}` (`{+key}`, so a
key may contain "/"), with subscriptions: after `resources/subscribe` to a
key's URI, every change of that key (put, delete, expiry), whoever made it,
sends `notifications/resources/updated`. The changes come from one
BlackboardService.Watch of the board, started by the first subscription at
the revision after the one current then (so nothing in between is missed)
and resumed by the client's Watch helper when the connection breaks. This is
the `resources/subscribe` of the protocol revisions negotiated by the
`initialize` handshake (2025-11-25 and earlier, what desktop clients speak);
the 2026-07-28 `subscriptions/listen` stream is not fed.

A failed call is a tool error (`isError`) whose text carries the gRPC status,
the server's ErrorInfo reason in brackets and its metadata, e.g.
`FAILED_PRECONDITION [REVISION_MISMATCH]: ... {"current_revision": "7"}`,
so that a model can tell a CAS conflict from a missing argument.

Every memory tool takes an optional `user_id`; without it the configured one
(`--user-id`, STATEKEEPER_USER_ID) is used. Puts are recorded as written by
`--agent-id` (STATEKEEPER_AGENT_ID).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import mcp.types as mcp_types
from google.protobuf import json_format, struct_pb2
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from statekeeper_client.aio import AsyncClient
from statekeeper_client.errors import StatekeeperRpcError
from statekeeper_client.v1 import blackboard_pb2 as bb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1 import memory_pb2 as mem
from statekeeper_client.v1 import session_pb2 as sess

__all__ = ["Config", "FactIn", "build_server", "main"]

DEFAULT_TARGET = "127.0.0.1:50051"
RESOURCE_PREFIX = "statekeeper://board/"
# Non-object values travel as a JSON payload (the board's `json` kind holds
# objects only); reads turn both kinds back into the JSON value.
JSON_CONTENT_TYPE = "application/json"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Config:
    """Where the statekeeper server is and whom the tools act for."""

    target: str = DEFAULT_TARGET
    api_key: str | None = None
    user_id: str = "mcp"
    agent_id: str = "statekeeper-mcp"
    board: str = "default"
    timeout: float = 10.0


class FactIn(BaseModel):
    """One fact to add: subject --predicate--> object."""

    subject: str
    predicate: str
    object: str
    source: str = ""
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


def _tool_error(error: StatekeeperRpcError) -> ToolError:
    # str(error) already reads "Method: CODE [REASON]: details"; the metadata
    # (e.g. current_revision of a CAS conflict) is what lets the caller retry.
    text = str(error)
    if error.error_metadata:
        text += " " + json.dumps(dict(error.error_metadata), sort_keys=True)
    return ToolError(text)


def encode_value(value: Any) -> bb.BlackboardValue:
    """A JSON value as a board value: objects as `json`, the rest as a JSON payload."""
    if isinstance(value, dict):
        struct = struct_pb2.Struct()
        struct.update(value)
        return bb.BlackboardValue(json=struct)
    return bb.BlackboardValue(
        payload=common_pb2.Payload(
            content_type=JSON_CONTENT_TYPE, data=json.dumps(value).encode("utf-8")
        )
    )


def decode_value(value: bb.BlackboardValue) -> Any:
    """The JSON value of a board value (bytes that are not JSON or text: base64)."""
    kind = value.WhichOneof("kind")
    if kind == "json":
        return json_format.MessageToDict(value.json)
    if kind == "payload":
        payload = value.payload
        if payload.content_type.startswith(JSON_CONTENT_TYPE):
            return json.loads(payload.data)
        if payload.content_type.startswith("text/"):
            return payload.data.decode("utf-8", errors="replace")
        return {
            "content_type": payload.content_type or "application/octet-stream",
            "base64": base64.b64encode(payload.data).decode("ascii"),
        }
    return None


def _entry(entry: bb.BlackboardEntry, *, with_value: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "key": entry.key,
        "mod_revision": entry.mod_revision,
        "create_revision": entry.create_revision,
        "version": entry.version,
        "writer_agent_id": entry.writer_agent_id,
    }
    if with_value:
        out["value"] = decode_value(entry.value)
    return out


def _connection(session: ServerSession) -> Connection:
    # A subscription belongs to the client's connection, which outlives the
    # request: the ServerSession of a request context is made anew for every
    # request (so it cannot be the key that unsubscribe finds again) and the
    # SDK exposes its Connection only as this attribute.
    connection: Connection = session._connection
    return connection


class _Statekeeper:
    """The gRPC client, made on first use: grpc.aio channels belong to the
    event loop they were made in, which is the one `MCPServer.run` starts.
    Also the resource subscriptions of every connected MCP session, and the
    board Watch that feeds them."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._client: AsyncClient | None = None
        self.subscribers: dict[str, set[Connection]] = {}
        self._watch_task: asyncio.Task[None] | None = None

    @property
    def client(self) -> AsyncClient:
        if self._client is None:
            self._client = AsyncClient(
                self.config.target, api_key=self.config.api_key, timeout=self.config.timeout
            )
        return self._client

    async def subscribe(self, client: Connection, uri: str) -> None:
        if not uri.startswith(RESOURCE_PREFIX) or len(uri) == len(RESOURCE_PREFIX):
            raise MCPError(
                mcp_types.INVALID_PARAMS,
                f"only {RESOURCE_PREFIX}{{key}} resources can be subscribed",
            )
        if self._watch_task is None or self._watch_task.done():
            # Start where the board is now, before acknowledging: a change made
            # after the client's subscribe returns is then always delivered,
            # even if the stream is not established yet.
            try:
                now = await self.client.blackboard.ListEntries(
                    bb.ListEntriesRequest(board=self.config.board, page_size=1, keys_only=True)
                )
            except StatekeeperRpcError as error:
                raise MCPError(mcp_types.INTERNAL_ERROR, str(error)) from None
            self._watch_task = asyncio.create_task(self._watch(now.header.revision + 1))
        self.subscribers.setdefault(uri, set()).add(client)

    def unsubscribe(self, client: Connection, uri: str) -> None:
        clients = self.subscribers.get(uri)
        if clients is not None:
            clients.discard(client)
            if not clients:
                del self.subscribers[uri]

    async def _watch(self, start_revision: int) -> None:
        watch = self.client.watch(self.config.board, start_revision=start_revision)
        try:
            async for event in watch:
                uri = RESOURCE_PREFIX + event.entry.key
                for client in list(self.subscribers.get(uri, ())):
                    try:
                        await client.send_resource_updated(uri)
                    except Exception:  # a client that went away: stop notifying it
                        log.info("dropping a closed client's subscription to %s", uri)
                        self.unsubscribe(client, uri)
        except StatekeeperRpcError as error:
            # The Watch helper already retried what can be retried; the next
            # subscribe starts a new Watch.
            log.warning("board watch ended: %s", error)


def build_server(config: Config) -> MCPServer[Any]:
    """An MCPServer whose tools and resources call the statekeeper at `config.target`."""
    sk = _Statekeeper(config)
    server: MCPServer[Any] = MCPServer(
        name="statekeeper",
        instructions=(
            "Long-term memory (remember, recall, build_context, forget, facts), a shared "
            f"blackboard (board {config.board!r}) and session context windows, kept by a "
            "statekeeper server."
        ),
    )

    def user(user_id: str | None) -> str:
        return user_id or config.user_id

    @server.tool()
    async def remember(
        user_message: str = "",
        assistant_response: str = "",
        summary: str = "",
        session_id: str = "",
        importance: float | None = None,
        user_id: str | None = None,
    ) -> dict[str, Any]:
        """Store one interaction as an episode of long-term memory. At least one of
        user_message and assistant_response is needed; without a summary the server
        writes one. importance is in [0, 1]."""
        request = mem.RecordEpisodeRequest(
            user_id=user(user_id),
            session_id=session_id,
            user_message=user_message,
            assistant_response=assistant_response,
            summary=summary,
        )
        if importance is not None:
            request.importance = importance
        try:
            reply = await sk.client.memory.RecordEpisode(request)
        except StatekeeperRpcError as error:
            raise _tool_error(error) from None
        return {
            "episode_id": reply.episode.id,
            "summary": reply.episode.summary,
            "duplicate": reply.duplicate,
            "duplicate_of": reply.duplicate_of,
        }

    @server.tool()
    async def recall(query: str, top_k: int = 5, user_id: str | None = None) -> dict[str, Any]:
        """The episodes of long-term memory most relevant to `query`, best first."""
        try:
            reply = await sk.client.memory.Recall(
                mem.RecallRequest(user_id=user(user_id), query_text=query, top_k=top_k)
            )
        except StatekeeperRpcError as error:
            raise _tool_error(error) from None
        return {
            "ranking": mem.RecallRanking.Name(reply.ranking),
            "episodes": [
                {
                    "episode_id": r.episode.id,
                    "summary": r.episode.summary,
                    "user_message": r.episode.user_message,
                    "assistant_response": r.episode.assistant_response,
                    "session_id": r.episode.session_id,
                    "score": round(r.score.combined, 4),
                }
                for r in reply.results
            ],
        }

    @server.tool()
    async def build_context(
        message: str,
        session_id: str = "",
        token_budget: int = 0,
        user_id: str | None = None,
    ) -> dict[str, Any]:
        """Facts, relevant memories and the session's recent conversation for
        `message`, packed into `token_budget` tokens (0: the server default), as
        one markdown block ready for a prompt."""
        try:
            reply = await sk.client.memory.BuildContext(
                mem.BuildContextRequest(
                    user_id=user(user_id),
                    session_id=session_id,
                    message=message,
                    token_budget=token_budget,
                )
            )
        except StatekeeperRpcError as error:
            raise _tool_error(error) from None
        return {
            "markdown": reply.markdown,
            "episodes": len(reply.episodes),
            "facts": len(reply.facts),
            "working_messages": len(reply.working_messages),
            "omitted": {
                "messages": reply.omitted_messages,
                "episodes": reply.omitted_episodes,
                "facts": reply.omitted_facts,
            },
        }

    @server.tool()
    async def forget(episode_id: str) -> dict[str, Any]:
        """Delete one episode of long-term memory (its id comes from remember or recall)."""
        try:
            reply = await sk.client.memory.DeleteEpisode(
                mem.DeleteEpisodeRequest(episode_id=episode_id)
            )
        except StatekeeperRpcError as error:
            raise _tool_error(error) from None
        return {"deleted": reply.episode_id}

    @server.tool()
    async def facts(
        add: list[FactIn] | None = None,
        entity: str = "",
        depth: int = 1,
        user_id: str | None = None,
    ) -> dict[str, Any]:
        """Add facts (subject, predicate, object) to the knowledge graph, and/or
        read the facts around `entity` up to `depth` hops (1 to 3). A new fact
        that contradicts a valid one invalidates it."""
        if not add and not entity:
            raise ToolError("give facts to add, an entity to query, or both")
        out: dict[str, Any] = {}
        try:
            if add:
                inputs = []
                for fact in add:
                    item = mem.FactInput(
                        subject=fact.subject,
                        predicate=fact.predicate,
                        object=fact.object,
                        source=fact.source,
                    )
                    if fact.confidence is not None:
                        item.confidence = fact.confidence
                    inputs.append(item)
                added = await sk.client.memory.AddFacts(
                    mem.AddFactsRequest(user_id=user(user_id), facts=inputs)
                )
                out["added"] = [
                    {
                        "fact_id": r.fact.id,
                        "outcome": mem.FactOutcome.Name(r.outcome),
                        "invalidated_fact_ids": list(r.invalidated_fact_ids),
                    }
                    for r in added.results
                ]
            if entity:
                graph = await sk.client.memory.QueryEntity(
                    mem.QueryEntityRequest(user_id=user(user_id), entity=entity, depth=depth)
                )
                out["entities"] = [{"name": n.name, "depth": n.depth} for n in graph.nodes]
                out["facts"] = [
                    {
                        "fact_id": f.id,
                        "subject": f.subject,
                        "predicate": f.predicate,
                        "object": f.object,
                        "confidence": round(f.confidence, 4),
                    }
                    for f in graph.edges
                ]
                out["truncated"] = graph.truncated
        except StatekeeperRpcError as error:
            raise _tool_error(error) from None
        return out

    @server.tool()
    async def blackboard_get(key: str) -> dict[str, Any]:
        """One key of the shared blackboard: its JSON value and mod_revision (pass
        that to blackboard_put as expected_mod_revision to update it safely)."""
        try:
            reply = await sk.client.blackboard.GetEntry(
                bb.GetEntryRequest(board=config.board, key=key)
            )
        except StatekeeperRpcError as error:
            raise _tool_error(error) from None
        if not reply.found:
            return {"key": key, "found": False, "revision": reply.header.revision}
        return {"found": True, **_entry(reply.entry)}

    @server.tool()
    async def blackboard_put(
        key: str,
        value: Any,
        expected_mod_revision: int | None = None,
        ttl_seconds: float | None = None,
    ) -> dict[str, Any]:
        """Write a JSON value under `key`. With expected_mod_revision it is a
        compare-and-swap: 0 = the key must not exist yet, N = the key must still
        be at mod_revision N; otherwise the put fails with REVISION_MISMATCH and
        the key's current_revision (read it again, then retry)."""
        request = bb.PutEntryRequest(
            board=config.board,
            key=key,
            value=encode_value(value),
            writer_agent_id=config.agent_id,
        )
        if expected_mod_revision is not None:
            request.expected_mod_revision = expected_mod_revision
        if ttl_seconds is not None:
            request.ttl.FromNanoseconds(int(ttl_seconds * 1e9))
        try:
            reply = await sk.client.blackboard.PutEntry(request)
        except StatekeeperRpcError as error:
            if error.reason == "REVISION_MISMATCH":
                current = error.error_metadata.get("current_revision", "?")
                raise ToolError(
                    f"CAS conflict [REVISION_MISMATCH]: {key!r} is at mod_revision {current}, "
                    f"not {expected_mod_revision} (0 means absent); nothing was written. "
                    "Read it again and retry."
                ) from None
            raise _tool_error(error) from None
        return _entry(reply.entry, with_value=False)

    @server.tool()
    async def blackboard_list(prefix: str = "", limit: int = 100) -> dict[str, Any]:
        """The keys of the shared blackboard starting with `prefix`, with values
        (at most `limit`; `truncated` says whether there were more)."""
        request = bb.ListEntriesRequest(board=config.board, page_size=max(1, min(limit, 1000)))
        if prefix:
            request.prefix = prefix
        try:
            reply = await sk.client.blackboard.ListEntries(request)
        except StatekeeperRpcError as error:
            raise _tool_error(error) from None
        return {
            "entries": [_entry(e) for e in reply.entries],
            "revision": reply.header.revision,
            "truncated": bool(reply.next_page_token),
        }

    @server.tool()
    async def session_context(
        session_id: str, token_budget: int, system_prompt: str = ""
    ) -> dict[str, Any]:
        """The context window of a conversation session that fits `token_budget`
        tokens: the newest messages, and a summary of the older ones."""
        try:
            reply = await sk.client.sessions.GetContextWindow(
                sess.GetContextWindowRequest(
                    session_id=session_id, token_budget=token_budget, system_prompt=system_prompt
                )
            )
        except StatekeeperRpcError as error:
            raise _tool_error(error) from None
        messages = []
        for m in reply.messages:
            message: dict[str, Any] = {
                "role": sess.Role.Name(m.role).removeprefix("ROLE_").lower(),
                "content": m.content,
            }
            if m.name:
                message["name"] = m.name
            if m.tool_call_id:
                message["tool_call_id"] = m.tool_call_id
            if m.tool_calls:
                message["tool_calls"] = [
                    json_format.MessageToDict(call, preserving_proto_field_name=True)
                    for call in m.tool_calls
                ]
            messages.append(message)
        return {
            "messages": messages,
            "summary": reply.summary,
            "summarized_message_count": reply.summarized_message_count,
            "total_tokens": reply.accounting.total_tokens,
            "remaining_tokens": reply.accounting.remaining_tokens,
            "version": reply.version,
        }

    @server.resource(
        RESOURCE_PREFIX + "{+key}",
        name="blackboard-entry",
        description=f"A key of the statekeeper blackboard {config.board!r}, as JSON.",
        mime_type="application/json",
    )
    async def board_entry(key: str) -> str:
        try:
            reply = await sk.client.blackboard.GetEntry(
                bb.GetEntryRequest(board=config.board, key=key)
            )
        except StatekeeperRpcError as error:
            raise ResourceError(str(error)) from None
        if not reply.found:
            raise ResourceError(f"no key {key!r} on board {config.board!r}")
        return json.dumps(_entry(reply.entry))

    async def on_subscribe(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.SubscribeRequestParams
    ) -> mcp_types.EmptyResult:
        await sk.subscribe(_connection(ctx.session), str(params.uri))
        return mcp_types.EmptyResult()

    async def on_unsubscribe(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.UnsubscribeRequestParams
    ) -> mcp_types.EmptyResult:
        sk.unsubscribe(_connection(ctx.session), str(params.uri))
        return mcp_types.EmptyResult()

    # MCPServer has no decorator for resources/subscribe; its low-level server
    # takes the handlers, and registering them is also what makes it advertise
    # the `resources.subscribe` capability.
    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler(
        "resources/subscribe", mcp_types.SubscribeRequestParams, on_subscribe
    )
    lowlevel.add_request_handler(
        "resources/unsubscribe", mcp_types.UnsubscribeRequestParams, on_unsubscribe
    )
    return server


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    env = os.environ
    parser = argparse.ArgumentParser(
        prog="statekeeper-mcp",
        description="An MCP server (stdio or streamable HTTP) over a statekeeper server.",
    )
    parser.add_argument(
        "--target",
        default=env.get("STATEKEEPER_TARGET", DEFAULT_TARGET),
        help="statekeeper gRPC address HOST:PORT (env STATEKEEPER_TARGET; default %(default)s)",
    )
    parser.add_argument(
        "--api-key",
        default=env.get("STATEKEEPER_API_KEY"),
        help="API key (env STATEKEEPER_API_KEY; prefer the environment: argv is visible)",
    )
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (endpoint /mcp)")
    parser.add_argument(
        "--user-id",
        default=env.get("STATEKEEPER_USER_ID", "mcp"),
        help="user of the memory tools when a call names none (env STATEKEEPER_USER_ID)",
    )
    parser.add_argument(
        "--agent-id",
        default=env.get("STATEKEEPER_AGENT_ID", "statekeeper-mcp"),
        help="writer_agent_id recorded on blackboard puts (env STATEKEEPER_AGENT_ID)",
    )
    parser.add_argument(
        "--board",
        default=env.get("STATEKEEPER_BOARD", "default"),
        help="the blackboard the board tools and resources use (env STATEKEEPER_BOARD)",
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="gRPC deadline, seconds")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    config = Config(
        target=args.target,
        api_key=args.api_key or None,
        user_id=args.user_id,
        agent_id=args.agent_id,
        board=args.board,
        timeout=args.timeout,
    )
    server = build_server(config)
    transport: Literal["stdio", "streamable-http"] = args.transport
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
