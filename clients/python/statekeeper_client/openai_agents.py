"""StatekeeperSession: an OpenAI Agents SDK `Session` kept by statekeeper's
SessionService (the `openai-agents` extra).

    from agents import Agent, Runner
    from statekeeper_client.openai_agents import StatekeeperSession

    session = StatekeeperSession("conversation-1", target="127.0.0.1:50051", api_key="sk-...")
    await Runner.run(agent, "Hello", session=session)

Each item is one SessionMessage, so the server's context windows, token
counts, compaction and rollback work on the conversation too. An item is
stored losslessly: its main text travels where the server expects it (the
content, or a function call's arguments in its ToolCall) and the rest of the
item, as JSON, in the message's metadata (split over several entries, since
one entry holds at most 4 KiB). Reading puts the text back where it was.

`pop_item` is a SessionService rollback to the version before the newest
item's append, guarded by the session's etag (a racing writer makes it read
again). When that append carried several items, the others are appended
again right after the rollback: two steps, not one. Between them a reader
sees the session without those items, a concurrent append lands before
them, and a process that dies there leaves them in the history as rolled
back (ListMessages with include_rolled_back), not in the session. The
server has no "remove the newest message" operation that would make this
one step.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any, cast

import grpc
from agents.items import TResponseInputItem
from agents.memory.session import SessionABC
from agents.memory.session_settings import (
    SessionSettings,
    coerce_session_settings,
    resolve_session_limit,
)

from statekeeper_client.aio import AsyncClient
from statekeeper_client.errors import error_info
from statekeeper_client.v1 import session_pb2 as pb

__all__ = ["StatekeeperSession"]

# Metadata keys of a stored item (the SDK's JSON, in chunks) and of where its
# text was taken from.
ITEM_KEY_PREFIX = "openai_agents.item."
TEXT_PATH_KEY = "openai_agents.text_path"
# Bytes of one metadata value (the server's default limit is 4096).
CHUNK_BYTES = 4000
# Reads and rollbacks of one pop_item racing other writers before giving up.
POP_ATTEMPTS = 10
# The server lists at most 1000 messages per page.
PAGE_SIZE = 1000
# Where a function call's arguments go: its ToolCall, not the content.
_ARGUMENTS = "arguments"
_TEXT_FIELDS = frozenset({"text", "content", "output", "refusal", "arguments", "summary"})
_NOT_TEXT = frozenset({"id", "type", "role", "call_id", "status"})
_ROLES = {
    "user": pb.ROLE_USER,
    "system": pb.ROLE_SYSTEM,
    "developer": pb.ROLE_SYSTEM,
    "assistant": pb.ROLE_ASSISTANT,
}


class StatekeeperSession(SessionABC):
    """A conversation history of the OpenAI Agents SDK in a statekeeper
    session named `session_id`, created on the first `add_items` for
    `user_id` (and `agent_id`)."""

    def __init__(
        self,
        session_id: str,
        *,
        target: str,
        api_key: str | None = None,
        bearer_token: str | None = None,
        user_id: str = "openai-agents",
        agent_id: str = "",
        timeout: float = 10.0,
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        self._target = target
        self._api_key = api_key
        self._bearer_token = bearer_token
        self._user_id = user_id
        self._agent_id = agent_id
        self._timeout = timeout
        # grpc.aio channels belong to one event loop; Runner.run_sync runs
        # its own, so there is one client per loop.
        self._clients: dict[asyncio.AbstractEventLoop, AsyncClient] = {}
        self._clients_lock = threading.Lock()

    # ----- the Session protocol -----------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The newest `limit` items (all when None), oldest first."""
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted is not None and wanted <= 0:
            return []
        messages = await self._messages()
        if wanted is not None:
            messages = messages[-wanted:]
        return [decode_item(message) for message in messages]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if not items:
            return
        request = pb.AppendMessagesRequest(
            session_id=self.session_id, messages=[encode_item(item) for item in items]
        )
        try:
            await self._sessions().AppendMessages(request)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND or _reason(error) == "SESSION_EXPIRED":
                raise
            await self._create()
            await self._sessions().AppendMessages(request)

    async def pop_item(self) -> TResponseInputItem | None:
        for _ in range(POP_ATTEMPTS):
            try:
                return await self._pop_once()
            except _SessionMovedError:
                continue  # another writer changed it between our reads: read again
            except grpc.RpcError as error:
                if _reason(error) != "ETAG_MISMATCH":  # the rollback lost the race
                    raise
        raise RuntimeError(
            f"pop_item: session {self.session_id!r} changed under each of {POP_ATTEMPTS} attempts"
        )

    async def clear_session(self) -> None:
        try:
            await self._sessions().DeleteSession(
                pb.DeleteSessionRequest(session_id=self.session_id)
            )
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise

    def close(self) -> None:
        """Forgets every channel (as SQLiteSession.close, callable without a
        loop); `aclose` closes the running loop's one first."""
        with self._clients_lock:
            self._clients.clear()

    async def aclose(self) -> None:
        with self._clients_lock:
            client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    # ----- internals ----------------------------------------------------------------

    def _sessions(self) -> Any:
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            for stale in [known for known in self._clients if known.is_closed()]:
                del self._clients[stale]
            client = self._clients.get(loop)
            if client is None:
                client = AsyncClient(
                    self._target,
                    api_key=self._api_key,
                    bearer_token=self._bearer_token,
                    timeout=self._timeout,
                )
                self._clients[loop] = client
        return client.sessions

    async def _create(self) -> None:
        session = pb.Session(user_id=self._user_id, agent_id=self._agent_id)
        try:
            await self._sessions().CreateSession(
                pb.CreateSessionRequest(session_id=self.session_id, session=session)
            )
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.ALREADY_EXISTS:  # a concurrent add made it
                raise

    async def _session(self) -> pb.Session | None:
        try:
            reply = await self._sessions().GetSession(
                pb.GetSessionRequest(session_id=self.session_id)
            )
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        found: pb.Session = reply.session
        return found

    async def _messages(self) -> list[pb.SessionMessage]:
        """Every message of the session (rolled back ones left out), oldest first."""
        found: list[pb.SessionMessage] = []
        request = pb.ListMessagesRequest(session_id=self.session_id, page_size=PAGE_SIZE)
        while True:
            try:
                reply = await self._sessions().ListMessages(request)
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.NOT_FOUND:
                    return []
                raise
            found.extend(reply.messages)
            if not reply.next_page_token:
                return found
            request.page_token = reply.next_page_token

    async def _pop_once(self) -> TResponseInputItem | None:
        session = await self._session()
        if session is None or session.message_count == 0:
            return None
        target = await self._version_before_last_append(session)
        messages = await self._messages()
        if len(messages) != session.message_count:
            raise _SessionMovedError
        kept_count = target.session.message_count
        again = [_as_new(message) for message in messages[kept_count:-1]]
        rolled = await self._sessions().RollbackSession(
            pb.RollbackSessionRequest(
                session_id=self.session_id,
                target_version=target.version,
                expected_etag=session.etag,
            )
        )
        if again:
            await self._append_again(again, rolled.session.etag)
        return decode_item(messages[-1])

    async def _append_again(self, messages: list[pb.SessionMessage], etag: str) -> None:
        """Appends the items the rollback took along with the popped one:
        right after it when no one wrote in between, else after that write
        (they are never dropped)."""
        request = pb.AppendMessagesRequest(
            session_id=self.session_id, messages=messages, expected_etag=etag
        )
        try:
            await self._sessions().AppendMessages(request)
        except grpc.RpcError as error:
            if _reason(error) != "ETAG_MISMATCH":
                raise
            request.ClearField("expected_etag")
            await self._sessions().AppendMessages(request)

    async def _version_before_last_append(self, session: pb.Session) -> pb.SessionVersion:
        """The newest version the session descends from that has fewer
        messages than now: rolling back to it removes the newest item (and
        any appended with it)."""
        version = session.version
        while True:
            reply = await self._sessions().GetSessionVersion(
                pb.GetSessionVersionRequest(session_id=self.session_id, version=version)
            )
            found: pb.SessionVersion = reply.version
            if found.session.message_count < session.message_count:
                return found
            version = found.parent_version


class _SessionMovedError(Exception):
    """The session changed between two reads of one pop."""


def _reason(error: grpc.RpcError) -> str:
    info = error_info(error)
    return info.reason if info is not None else ""


def _as_new(message: pb.SessionMessage) -> pb.SessionMessage:
    """The fields of a stored message a client may send again."""
    return pb.SessionMessage(
        role=message.role,
        content=message.content,
        name=message.name,
        tool_calls=message.tool_calls,
        tool_call_id=message.tool_call_id,
        metadata=message.metadata,
    )


# ----- items <-> messages ------------------------------------------------------------


def encode_item(item: TResponseInputItem) -> pb.SessionMessage:
    """One SDK item as a SessionMessage it can be read back from exactly."""
    body: dict[str, Any] = json.loads(json.dumps(item))
    kind = body.get("type")
    message = pb.SessionMessage(role=_role(body))
    path: list[str | int] | None
    arguments = body.get(_ARGUMENTS)
    if kind == "function_call" and isinstance(arguments, str) and _sendable(arguments):
        message.tool_calls.add(
            id=str(body.get("call_id") or body.get("id") or "call"),
            name=str(body.get("name") or "function"),
            arguments=body.pop(_ARGUMENTS),
        )
        path = [_ARGUMENTS]
    else:
        path = _longest_text(body)
        if path is None:
            # Nothing textual: the content names the item's kind (the server
            # needs content or tool calls); the whole item is in metadata.
            message.content = str(kind or body.get("role") or "item")
        else:
            message.content = _pop_at(body, path)
        if message.role == pb.ROLE_TOOL:
            message.tool_call_id = str(body["call_id"])
    message.metadata[TEXT_PATH_KEY] = json.dumps(path)
    for index, chunk in enumerate(_chunks(json.dumps(body, ensure_ascii=False))):
        message.metadata[f"{ITEM_KEY_PREFIX}{index}"] = chunk
    return message


def decode_item(message: pb.SessionMessage) -> TResponseInputItem:
    """The SDK item `encode_item` stored in `message`."""
    metadata = message.metadata
    parts: list[str] = []
    while (chunk := metadata.get(f"{ITEM_KEY_PREFIX}{len(parts)}")) is not None:
        parts.append(chunk)
    if not parts:
        # A message some other client appended: show it as a plain message.
        role = pb.Role.Name(message.role).removeprefix("ROLE_").lower()
        plain = {"role": role if role in _ROLES else "user", "content": message.content}
        return cast(TResponseInputItem, plain)
    body: dict[str, Any] = json.loads("".join(parts))
    path = json.loads(metadata.get(TEXT_PATH_KEY, "null"))
    if path == [_ARGUMENTS] and message.tool_calls:
        body[_ARGUMENTS] = message.tool_calls[0].arguments
    elif path is not None:
        _put_at(body, path, message.content)
    return cast(TResponseInputItem, body)


def _role(body: dict[str, Any]) -> pb.Role:
    role = body.get("role")
    if isinstance(role, str) and role in _ROLES:
        return _ROLES[role]
    kind = str(body.get("type") or "")
    if kind.endswith("_output") and body.get("call_id"):
        return pb.ROLE_TOOL
    return pb.ROLE_ASSISTANT


def _longest_text(body: dict[str, Any]) -> list[str | int] | None:
    """The path of the string a window should show: the longest sendable one
    under a text field ("text", "content", "output", ...), else the longest
    sendable one anywhere (ties: the first). Ids, types and roles never."""
    best: tuple[bool, int, list[str | int]] | None = None
    for path, text in _strings(body, []):
        if not _sendable(text):
            continue
        found = (bool(path) and path[-1] in _TEXT_FIELDS, len(text), path)
        if best is None or found[:2] > best[:2]:
            best = found
    return best[2] if best else None


def _sendable(text: str) -> bool:
    """Whether the server takes `text` as a message's text (it refuses NUL;
    such a string stays in the JSON, where it is escaped)."""
    return bool(text) and "\x00" not in text


def _strings(value: Any, path: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, child in value.items():
            if key not in _NOT_TEXT:
                yield from _strings(child, [*path, key])
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _strings(child, [*path, index])


def _get_at(value: Any, path: list[str | int]) -> Any:
    for key in path:
        value = value[key]
    return value


def _pop_at(body: dict[str, Any], path: list[str | int]) -> str:
    """The string at `path`, replaced there by None (the content holds it)."""
    parent = _get_at(body, path[:-1])
    text: str = parent[path[-1]]
    parent[path[-1]] = None
    return text


def _put_at(body: dict[str, Any], path: list[str | int], text: str) -> None:
    _get_at(body, path[:-1])[path[-1]] = text


def _chunks(text: str) -> list[str]:
    """`text` cut into pieces of at most CHUNK_BYTES UTF-8 bytes each."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for char in text:
        width = len(char.encode())
        if size + width > CHUNK_BYTES:
            pieces.append("".join(current))
            current, size = [], 0
        current.append(char)
        size += width
    pieces.append("".join(current))
    return pieces
