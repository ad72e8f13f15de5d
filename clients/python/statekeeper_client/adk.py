"""Google ADK services kept by statekeeper (the `adk` extra).

    from google.adk.runners import Runner
    from statekeeper_client.adk import StatekeeperMemoryService, StatekeeperSessionService

    sessions = StatekeeperSessionService("127.0.0.1:50051", api_key="sk-...")
    memory = StatekeeperMemoryService("127.0.0.1:50051", api_key="sk-...")
    runner = Runner(agent=agent, app_name="my_app", session_service=sessions,
                    memory_service=memory)

StatekeeperSessionService is a `BaseSessionService` over SessionService:

* An ADK session (app name, user id, session id) is one statekeeper session.
  Its id is derived from the three (`adk.` and a SHA-256 prefix, since
  statekeeper ids are unique per tenant and limited to [A-Za-z0-9._:-]); the
  ADK names are kept in the session's metadata (`adk.app_name`, `adk.user_id`,
  `adk.session_id`). The statekeeper `user_id` is the ADK user id and its
  `agent_id` the app name (each as is when it is a valid statekeeper id, else
  `adk-h.` and a hash), so ListSessions filters by both.
* Each event is one SessionMessage: the author `user` is a USER message,
  every other author an ASSISTANT one; its text parts are the content,
  function calls with ids are ToolCalls, a function response with an id is a
  TOOL message answering it (its response JSON as the content). The whole
  event, as ADK's JSON, is in the message's metadata (`adk.event.N` chunks of
  4000 bytes), and is what reading returns, so events come back exactly.
  An event with neither text nor calls gets the content `[<author> event]`,
  since the server refuses an empty message.
* Session-scoped state is in the session's `context_variables`, one entry per
  key holding the value as JSON text (JSON types kept exactly). It is set at
  create and rewritten after each append; reading folds the state deltas of
  the stored events over it, so the state read is right even when that
  rewrite did not happen. `app:` state (shared by every user of the app) and
  `user:` state (shared by a user's sessions in the app) are ItemService
  items in the namespaces (`statekeeper.adk`, `app`, <app>) and
  (`statekeeper.adk`, `user`, <app>, <user>), one item per key. `temp:` state
  is never sent.
* `append_event` appends with the session's etag as `expected_etag`: a
  session object that is no longer the stored one (another writer appended
  since it was read) gets `StaleSessionError` (a ValueError, as ADK's
  database service raises) and nothing is written. The append is the commit
  point: app/user state and the context-variables rewrite follow it, so a
  process dying in between keeps the event (and with it the session state)
  but may lose that event's `app:`/`user:` values.

StatekeeperMemoryService is a `BaseMemoryService` over MemoryService: each
event with text becomes an episode of the (statekeeper) user (the user's
text as `user_message`, anyone else's as `assistant_response`), with the app,
session, event id, author and content in its metadata; `search_memory` is a
Recall of the user's episodes of that app, best first.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import grpc
from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from google.genai import types
from google.protobuf import field_mask_pb2, json_format, struct_pb2, timestamp_pb2
from pydantic_core import to_jsonable_python

from statekeeper_client.aio import AsyncClient
from statekeeper_client.errors import error_info
from statekeeper_client.tls import TlsOptions
from statekeeper_client.v1 import items_pb2, memory_pb2
from statekeeper_client.v1 import session_pb2 as pb

__all__ = ["StatekeeperMemoryService", "StatekeeperSessionService"]

# Session metadata: the ADK names and the last update time (an event's
# timestamp, as ADK keeps it).
APP_KEY = "adk.app_name"
USER_KEY = "adk.user_id"
SESSION_KEY = "adk.session_id"
UPDATE_TIME_KEY = "adk.last_update_time"
# Message metadata: the event JSON in chunks, and the event id.
EVENT_KEY_PREFIX = "adk.event."
EVENT_ID_KEY = "adk.event_id"
# Episode metadata.
EVENT_AUTHOR_KEY = "adk.author"
EVENT_CONTENT_KEY = "adk.content"
EVENT_TIME_KEY = "adk.timestamp"
# First label of the item namespaces holding app: and user: state.
STATE_NAMESPACE = "statekeeper.adk"
# Bytes of one metadata value (the server's default limit is 4096).
CHUNK_BYTES = 4000
METADATA_VALUE_BYTES = 4096
# The server lists at most 1000 messages, sessions or items per page.
PAGE_SIZE = 1000
# Episodes recorded per RecordEpisodes call.
EPISODE_BATCH = 100
# Reads of one get_session racing a writer before giving up.
READ_ATTEMPTS = 10
SEARCH_RESULTS = 10
_STALE_MESSAGE = (
    "The session has been modified in storage since it was loaded. "
    "Please reload the session before appending more events."
)
_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


# ----- ids ----------------------------------------------------------------------------


def wire_id(value: str) -> str:
    """`value` as a statekeeper id (user or agent): itself when it is one,
    else `adk-h.` and a SHA-256 prefix of it."""
    if _ID.fullmatch(value):
        return value
    return "adk-h." + hashlib.sha256(value.encode()).hexdigest()[:48]


def session_key(app_name: str, user_id: str, session_id: str) -> str:
    """The statekeeper session id of an ADK session."""
    digest = hashlib.sha256(json.dumps([app_name, user_id, session_id]).encode()).hexdigest()
    return "adk." + digest[:48]


def _label(value: str) -> str:
    """`value` as an item namespace label or key: itself unless it is empty,
    too long or holds control characters."""
    if value and len(value.encode()) <= 256 and value.isprintable():
        return value
    return "adk-h." + hashlib.sha256(value.encode()).hexdigest()[:48]


def _app_namespace(app_name: str) -> list[str]:
    return [STATE_NAMESPACE, "app", _label(app_name)]


def _user_namespace(app_name: str, user_id: str) -> list[str]:
    return [STATE_NAMESPACE, "user", _label(app_name), _label(user_id)]


# ----- state ----------------------------------------------------------------------------


def split_state(state: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(app, user, session) parts of a state or delta, app/user keys without
    their prefix; temp: keys dropped."""
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    own: dict[str, Any] = {}
    for key, value in state.items():
        if key.startswith(State.APP_PREFIX):
            app[key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            user[key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            own[key] = value
    return app, user, own


def _json(value: Any) -> str:
    return json.dumps(to_jsonable_python(value), ensure_ascii=False, separators=(",", ":"))


def _encode_state(state: Mapping[str, Any]) -> struct_pb2.Struct:
    variables = struct_pb2.Struct()
    for key, value in state.items():
        variables[key] = _json(value)
    return variables


def _decode_state(variables: struct_pb2.Struct) -> dict[str, Any]:
    """The state `_encode_state` wrote; a variable another client set to
    something other than JSON text is taken as it is."""
    state: dict[str, Any] = {}
    for key, value in json_format.MessageToDict(variables).items():
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        state[key] = value
    return state


def _merge_scoped(state: dict[str, Any], app: Mapping[str, Any], user: Mapping[str, Any]) -> None:
    for key, value in app.items():
        state[State.APP_PREFIX + key] = value
    for key, value in user.items():
        state[State.USER_PREFIX + key] = value


# ----- events <-> messages -------------------------------------------------------------


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


def _sendable(text: str) -> str:
    """`text` as the server takes it in a message (it refuses NUL)."""
    return text.replace("\x00", "")


def _text(content: types.Content | None) -> str:
    if content is None or not content.parts:
        return ""
    return "\n".join(part.text for part in content.parts if part.text)


def encode_event(event: Event) -> pb.SessionMessage:
    """An event as a SessionMessage it can be read back from exactly."""
    body = event.model_dump_json(exclude_none=True)
    metadata = {f"{EVENT_KEY_PREFIX}{index}": chunk for index, chunk in enumerate(_chunks(body))}
    metadata[EVENT_ID_KEY] = event.id
    text = _sendable(_text(event.content))
    calls = [
        pb.ToolCall(id=call.id, name=call.name, arguments=_json(call.args or {}))
        for call in event.get_function_calls()
        if call.id and call.name
    ]
    responses = [response for response in event.get_function_responses() if response.id]
    if responses and not calls:
        answer = responses[0]
        return pb.SessionMessage(
            role=pb.ROLE_TOOL,
            content=text or _sendable(_json(answer.response or {})),
            tool_call_id=answer.id or "",
            metadata=metadata,
        )
    role = pb.ROLE_USER if event.author == "user" else pb.ROLE_ASSISTANT
    if role == pb.ROLE_USER:
        calls = []
    if not text and not calls:
        text = f"[{_sendable(event.author) or 'unknown'} event]"
    return pb.SessionMessage(role=role, content=text, tool_calls=calls, metadata=metadata)


def decode_event(message: pb.SessionMessage) -> Event:
    """The event stored in `message` by `encode_event`; a message another
    client appended becomes an event of its text (author `user` for a USER
    message, else the message's name or `model`)."""
    chunks: list[str] = []
    while f"{EVENT_KEY_PREFIX}{len(chunks)}" in message.metadata:
        chunks.append(message.metadata[f"{EVENT_KEY_PREFIX}{len(chunks)}"])
    if chunks:
        return Event.model_validate_json("".join(chunks))
    user = message.role == pb.ROLE_USER
    return Event(
        id=message.message_id or Event.new_id(),
        invocation_id="",
        author="user" if user else (message.name or "model"),
        content=types.Content(
            role="user" if user else "model", parts=[types.Part(text=message.content)]
        ),
        timestamp=message.create_time.ToMicroseconds() / 1e6,
    )


# ----- shared plumbing ------------------------------------------------------------------


def _reason(error: grpc.RpcError) -> str:
    info = error_info(error)
    return info.reason if info is not None else ""


class _Clients:
    """One AsyncClient per event loop (grpc.aio channels belong to one)."""

    def __init__(
        self,
        target: str,
        api_key: str | None,
        bearer_token: str | None,
        tls: TlsOptions | None,
        timeout: float,
    ) -> None:
        self._target = target
        self._api_key = api_key
        self._bearer_token = bearer_token
        self._tls = tls
        self._timeout = timeout
        self._clients: dict[asyncio.AbstractEventLoop, AsyncClient] = {}
        self._lock = threading.Lock()

    def get(self) -> AsyncClient:
        loop = asyncio.get_running_loop()
        with self._lock:
            for stale in [known for known in self._clients if known.is_closed()]:
                del self._clients[stale]
            client = self._clients.get(loop)
            if client is None:
                client = AsyncClient(
                    self._target,
                    api_key=self._api_key,
                    bearer_token=self._bearer_token,
                    tls=self._tls,
                    timeout=self._timeout,
                )
                self._clients[loop] = client
            return client

    async def aclose(self) -> None:
        with self._lock:
            client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def forget(self) -> None:
        with self._lock:
            self._clients.clear()


async def _items(client: AsyncClient, namespace: list[str]) -> dict[str, Any]:
    """The state stored in one namespace (raw keys)."""
    state: dict[str, Any] = {}
    offset = 0
    while True:
        reply = await client.items.SearchItems(
            items_pb2.SearchItemsRequest(namespace_prefix=namespace, limit=PAGE_SIZE, offset=offset)
        )
        for scored in reply.items:
            if list(scored.item.namespace) != namespace:
                continue
            stored = json.loads(scored.item.value_json)
            state[stored["key"]] = stored["value"]
        if len(reply.items) < PAGE_SIZE:
            return state
        offset += len(reply.items)


async def _put_items(client: AsyncClient, namespace: list[str], delta: Mapping[str, Any]) -> None:
    for key, value in delta.items():
        await client.items.PutItem(
            items_pb2.PutItemRequest(
                namespace=namespace,
                key=_label(key),
                value_json=json.dumps(
                    {"key": key, "value": to_jsonable_python(value)}, ensure_ascii=False
                ),
            )
        )


def _timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    whole = int(seconds // 1)
    stamp.seconds = whole
    stamp.nanos = min(round((seconds - whole) * 1e9), 999_999_999)
    return stamp


# ----- the session service ----------------------------------------------------------------


class StatekeeperSessionService(BaseSessionService):
    """ADK sessions, their events and their app/user/session state kept by a
    statekeeper server at `target`."""

    def __init__(
        self,
        target: str,
        *,
        api_key: str | None = None,
        bearer_token: str | None = None,
        tls: TlsOptions | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._clients = _Clients(target, api_key, bearer_token, tls, timeout)

    def close(self) -> None:
        """Forgets every channel (callable without a loop); `aclose` closes
        the running loop's one first."""
        self._clients.forget()

    async def aclose(self) -> None:
        await self._clients.aclose()

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        client = self._clients.get()
        session_id = (session_id.strip() if session_id else "") or str(uuid.uuid4())
        app_delta, user_delta, own = split_state(state or {})
        now = time.time()
        stored = pb.Session(
            user_id=wire_id(user_id),
            agent_id=wire_id(app_name),
            context_variables=_encode_state(own),
            metadata={
                APP_KEY: app_name,
                USER_KEY: user_id,
                SESSION_KEY: session_id,
                UPDATE_TIME_KEY: repr(now),
            },
        )
        try:
            reply = await client.sessions.CreateSession(
                pb.CreateSessionRequest(
                    session_id=session_key(app_name, user_id, session_id), session=stored
                )
            )
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.ALREADY_EXISTS:
                raise AlreadyExistsError(f"Session with id {session_id} already exists.") from error
            raise
        await _put_items(client, _app_namespace(app_name), app_delta)
        await _put_items(client, _user_namespace(app_name, user_id), user_delta)
        session = Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=json.loads(_json(own)),
            last_update_time=now,
        )
        await self._merge_scoped(client, session)
        session._storage_update_marker = reply.session.etag
        return session

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        client = self._clients.get()
        session_id = session_id.strip() if session_id else session_id
        key = session_key(app_name, user_id, session_id)
        for _ in range(READ_ATTEMPTS):
            stored = await self._stored(client, key, app_name, user_id, session_id)
            if stored is None:
                return None
            messages = await self._messages(client, key)
            if messages is None:
                return None
            if len(messages) == stored.message_count:
                break
            # A writer appended between the two reads: read both again, so
            # the etag kept for the next append is the one of these events.
        else:
            raise RuntimeError(
                f"get_session: session {session_id!r} changed under each of {READ_ATTEMPTS} reads"
            )
        events = [decode_event(message) for message in messages]
        state = _decode_state(stored.context_variables)
        last_update_time = float(stored.metadata.get(UPDATE_TIME_KEY, "0") or 0)
        for event in events:
            if event.actions and event.actions.state_delta:
                state.update(split_state(event.actions.state_delta)[2])
            last_update_time = event.timestamp
        if config is not None:
            if config.num_recent_events is not None:
                events = events[-config.num_recent_events :] if config.num_recent_events else []
            if config.after_timestamp is not None:
                events = [event for event in events if event.timestamp >= config.after_timestamp]
        session = Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=state,
            events=events,
            last_update_time=last_update_time,
        )
        await self._merge_scoped(client, session)
        session._storage_update_marker = stored.etag
        return session

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        client = self._clients.get()
        request = pb.ListSessionsRequest(page_size=PAGE_SIZE, agent_id=wire_id(app_name))
        if user_id is not None:
            request.user_id = wire_id(user_id)
        found: list[Session] = []
        while True:
            reply = await client.sessions.ListSessions(request)
            for stored in reply.sessions:
                if stored.metadata.get(APP_KEY) != app_name or SESSION_KEY not in stored.metadata:
                    continue  # not an ADK session of this app
                owner = stored.metadata.get(USER_KEY, "")
                if user_id is not None and owner != user_id:
                    continue
                found.append(
                    Session(
                        id=stored.metadata[SESSION_KEY],
                        app_name=app_name,
                        user_id=owner,
                        state=_decode_state(stored.context_variables),
                        last_update_time=float(stored.metadata.get(UPDATE_TIME_KEY, "0") or 0),
                    )
                )
            if not reply.next_page_token:
                break
            request.page_token = reply.next_page_token
        app_state = await _items(client, _app_namespace(app_name))
        user_states: dict[str, dict[str, Any]] = {}
        for session in found:
            if session.user_id not in user_states:
                user_states[session.user_id] = await _items(
                    client, _user_namespace(app_name, session.user_id)
                )
            _merge_scoped(session.state, app_state, user_states[session.user_id])
        found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=found)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        client = self._clients.get()
        session_id = session_id.strip() if session_id else session_id
        try:
            await client.sessions.DeleteSession(
                pb.DeleteSessionRequest(session_id=session_key(app_name, user_id, session_id))
            )
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        return await _items(self._clients.get(), _user_namespace(app_name, user_id))

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        client = self._clients.get()
        # temp: values reach this session object (later agents of the same
        # invocation read them), never the server.
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        key = session_key(session.app_name, session.user_id, session.id)
        marker = session._storage_update_marker
        try:
            reply = await client.sessions.AppendMessages(
                pb.AppendMessagesRequest(
                    session_id=key, messages=[encode_event(event)], expected_etag=marker or ""
                )
            )
        except grpc.RpcError as error:
            if _reason(error) == "ETAG_MISMATCH":
                raise StaleSessionError(_STALE_MESSAGE) from error
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise SessionNotFoundError(f"Session {session.id} not found.") from error
            raise
        self._commit_event_to_session(session, event)
        session.last_update_time = event.timestamp
        session._storage_update_marker = reply.session.etag
        if event.actions and event.actions.state_delta:
            app_delta, user_delta, _ = split_state(event.actions.state_delta)
            await _put_items(client, _app_namespace(session.app_name), app_delta)
            await _put_items(client, _user_namespace(session.app_name, session.user_id), user_delta)
        await self._rewrite_state(client, key, session, reply.session)
        return event

    # ----- internals ------------------------------------------------------------------

    async def _stored(
        self, client: AsyncClient, key: str, app_name: str, user_id: str, session_id: str
    ) -> pb.Session | None:
        try:
            reply = await client.sessions.GetSession(pb.GetSessionRequest(session_id=key))
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        stored: pb.Session = reply.session
        names = (
            stored.metadata.get(APP_KEY),
            stored.metadata.get(USER_KEY),
            stored.metadata.get(SESSION_KEY),
        )
        if names != (app_name, user_id, session_id):
            return None
        return stored

    async def _messages(self, client: AsyncClient, key: str) -> list[pb.SessionMessage] | None:
        found: list[pb.SessionMessage] = []
        request = pb.ListMessagesRequest(session_id=key, page_size=PAGE_SIZE)
        while True:
            try:
                reply = await client.sessions.ListMessages(request)
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.NOT_FOUND:
                    return None
                raise
            found.extend(reply.messages)
            if not reply.next_page_token:
                return found
            request.page_token = reply.next_page_token

    async def _merge_scoped(self, client: AsyncClient, session: Session) -> None:
        app_state = await _items(client, _app_namespace(session.app_name))
        user_state = await _items(client, _user_namespace(session.app_name, session.user_id))
        _merge_scoped(session.state, app_state, user_state)

    async def _rewrite_state(
        self, client: AsyncClient, key: str, session: Session, stored: pb.Session
    ) -> None:
        """Writes the session state and last update time of `session` (just
        appended to, so current) into the stored session, unless another
        writer appended since: that writer's own rewrite covers this event."""
        own = split_state(session.state)[2]
        metadata = dict(stored.metadata)
        metadata[UPDATE_TIME_KEY] = repr(session.last_update_time)
        update = pb.Session(session_id=key, context_variables=_encode_state(own), metadata=metadata)
        try:
            reply = await client.sessions.UpdateSession(
                pb.UpdateSessionRequest(
                    session=update,
                    update_mask=field_mask_pb2.FieldMask(paths=["context_variables", "metadata"]),
                    expected_etag=stored.etag,
                )
            )
        except grpc.RpcError as error:
            if _reason(error) == "ETAG_MISMATCH":
                return  # the session's marker stays at our append: it is stale now
            raise
        session._storage_update_marker = reply.session.etag


# ----- the memory service -----------------------------------------------------------------


class StatekeeperMemoryService(BaseMemoryService):
    """ADK memory kept as statekeeper episodes of the user, recalled by
    MemoryService.Recall."""

    def __init__(
        self,
        target: str,
        *,
        api_key: str | None = None,
        bearer_token: str | None = None,
        tls: TlsOptions | None = None,
        timeout: float = 30.0,
        top_k: int = SEARCH_RESULTS,
    ) -> None:
        self._clients = _Clients(target, api_key, bearer_token, tls, timeout)
        self._top_k = top_k

    def close(self) -> None:
        self._clients.forget()

    async def aclose(self) -> None:
        await self._clients.aclose()

    async def add_session_to_memory(self, session: Session) -> None:
        await self.add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            events=session.events,
            session_id=session.id,
        )

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Records each event with text as an episode, once: events already
        recorded for this app and session (by event id) are skipped."""
        client = self._clients.get()
        scope = {APP_KEY: app_name}
        if session_id is not None:
            scope[SESSION_KEY] = session_id
        known = await self._recorded_event_ids(client, wire_id(user_id), scope)
        extra = {str(k): str(v) for k, v in (custom_metadata or {}).items()}
        episodes: list[memory_pb2.RecordEpisodeRequest] = []
        for event in events:
            text = _sendable(_text(event.content))
            if not text.strip() or event.id in known:
                continue
            known.add(event.id)
            episodes.append(self._episode(app_name, user_id, session_id, event, text, extra))
        for start in range(0, len(episodes), EPISODE_BATCH):
            batch = episodes[start : start + EPISODE_BATCH]
            reply = await client.memory.RecordEpisodes(
                memory_pb2.RecordEpisodesRequest(episodes=batch)
            )
            for result in reply.results:
                if result.status == memory_pb2.RECORD_EPISODE_STATUS_ERROR:
                    raise ValueError(
                        f"statekeeper refused a memory: {result.error_field}: "
                        f"{result.error_message}"
                    )

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        if not query.strip():
            return SearchMemoryResponse()
        reply = await self._clients.get().memory.Recall(
            memory_pb2.RecallRequest(
                user_id=wire_id(user_id),
                query_text=query,
                top_k=self._top_k,
                filter=memory_pb2.EpisodeFilter(metadata={APP_KEY: app_name}),
            )
        )
        return SearchMemoryResponse(
            memories=[_memory_entry(result.episode) for result in reply.results]
        )

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Deletes the episode `memory_id` (a MemoryEntry.id from
        search_memory) if it is one of this user's in this app."""
        if not memory_id:
            return
        client = self._clients.get()
        try:
            reply = await client.memory.GetEpisode(
                memory_pb2.GetEpisodeRequest(episode_id=memory_id)
            )
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return
            raise
        episode = reply.episode
        if episode.user_id != wire_id(user_id) or episode.metadata.get(APP_KEY) != app_name:
            return
        try:
            await client.memory.DeleteEpisode(memory_pb2.DeleteEpisodeRequest(episode_id=memory_id))
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise

    # ----- internals ------------------------------------------------------------------

    async def _recorded_event_ids(
        self, client: AsyncClient, user: str, scope: Mapping[str, str]
    ) -> set[str]:
        known: set[str] = set()
        request = memory_pb2.ListEpisodesRequest(
            user_id=user, filter=memory_pb2.EpisodeFilter(metadata=scope), page_size=PAGE_SIZE
        )
        while True:
            reply = await client.memory.ListEpisodes(request)
            known.update(
                episode.metadata[EVENT_ID_KEY]
                for episode in reply.episodes
                if EVENT_ID_KEY in episode.metadata
            )
            if not reply.next_page_token:
                return known
            request.page_token = reply.next_page_token

    @staticmethod
    def _episode(
        app_name: str,
        user_id: str,
        session_id: str | None,
        event: Event,
        text: str,
        extra: Mapping[str, str],
    ) -> memory_pb2.RecordEpisodeRequest:
        metadata = {
            key: value
            for key, value in extra.items()
            if len(value.encode()) <= METADATA_VALUE_BYTES and not key.startswith("adk.")
        }
        metadata.update(
            {
                APP_KEY: app_name,
                USER_KEY: user_id,
                EVENT_ID_KEY: event.id,
                EVENT_AUTHOR_KEY: event.author,
                EVENT_TIME_KEY: repr(event.timestamp),
            }
        )
        if session_id is not None:
            metadata[SESSION_KEY] = session_id
        if event.content is not None:
            content = event.content.model_dump_json(exclude_none=True)
            if len(content.encode()) <= METADATA_VALUE_BYTES:
                metadata[EVENT_CONTENT_KEY] = content
        episode = memory_pb2.RecordEpisodeRequest(
            user_id=wire_id(user_id),
            metadata={key: _sendable(value) for key, value in metadata.items()},
            occur_time=_timestamp(event.timestamp),
        )
        if session_id is not None:
            episode.session_id = session_key(app_name, user_id, session_id)
        if event.author == "user":
            episode.user_message = text
        else:
            episode.assistant_response = text
        return episode


def _memory_entry(episode: memory_pb2.Episode) -> MemoryEntry:
    stored = episode.metadata.get(EVENT_CONTENT_KEY)
    if stored:
        content = types.Content.model_validate_json(stored)
    else:
        text = episode.user_message or episode.assistant_response
        role = "user" if episode.user_message else "model"
        content = types.Content(role=role, parts=[types.Part(text=text)])
    when = episode.metadata.get(EVENT_TIME_KEY)
    seconds = float(when) if when else episode.occur_time.ToMicroseconds() / 1e6
    return MemoryEntry(
        id=episode.id,
        content=content,
        author=episode.metadata.get(EVENT_AUTHOR_KEY) or None,
        timestamp=datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat(),
    )
