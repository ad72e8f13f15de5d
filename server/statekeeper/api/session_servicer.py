"""SessionService: translates requests into SessionManager calls."""

from __future__ import annotations

import grpc

from statekeeper.api import convert
from statekeeper.api.handlers import register_with_serializers
from statekeeper.api.interceptor import current_actor, current_tenant
from statekeeper.core.bounded_cache import BoundedCache, message_bytes
from statekeeper.core.sessions.models import ContextWindow, Message, SessionFilter, WindowRequest
from statekeeper.core.sessions.service import UPDATABLE_PATHS, SessionManager, window_bytes
from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1 import session_pb2_grpc

# Message protos kept for GetContextWindow (a few hundred windows' worth),
# bounded in approximate bytes too, and the largest message worth keeping.
WINDOW_PROTO_CACHE_SIZE = 65_536
WINDOW_PROTO_CACHE_BYTES = 128 * 2**20
WINDOW_PROTO_MAX_MESSAGE_BYTES = 512 * 2**10
# Responses (serialized, when registered through `register`) kept for the
# windows the domain keeps (its WINDOW_MEMO_SIZE).
WINDOW_RESPONSE_CACHE_SIZE = 256
WINDOW_RESPONSE_CACHE_BYTES = 64 * 2**20
WINDOW_RESPONSE_MAX_BYTES = 2 * 2**20


class _ProtoCache:
    """Message protos of recent windows. A live session's windows return
    the same (immutable) `Message` objects call after call, kept by the
    domain, so each is converted once; entries are keyed by identity and
    hold their message, so an id is never reused while its entry lives."""

    def __init__(self) -> None:
        self._entries: BoundedCache[int, tuple[Message, pb.SessionMessage]] = BoundedCache(
            lambda entry: 2 * message_bytes((entry[0],)),  # the message and its proto
            WINDOW_PROTO_CACHE_SIZE,
            WINDOW_PROTO_CACHE_BYTES,
            WINDOW_PROTO_MAX_MESSAGE_BYTES,
        )

    def get(self, message: Message) -> pb.SessionMessage:
        key = id(message)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is message:
            return entry[1]
        proto = convert.message_to_proto(message)
        self._entries.put(key, (message, proto))
        return proto


class SessionServicer(session_pb2_grpc.SessionServiceServicer):
    """`serialized_windows`: GetContextWindow answers with the response
    serialized, for a handler whose serializer passes it through (`register`)."""

    def __init__(self, sessions: SessionManager, serialized_windows: bool = False) -> None:
        self._sessions = sessions
        self._serialized_windows = serialized_windows
        self._window_protos = _ProtoCache()
        self._window_responses: BoundedCache[
            int, tuple[ContextWindow, pb.GetContextWindowResponse | convert.SerializedResponse]
        ] = BoundedCache(
            lambda entry: 2 * window_bytes(entry[0]),  # the window and its response
            WINDOW_RESPONSE_CACHE_SIZE,
            WINDOW_RESPONSE_CACHE_BYTES,
            WINDOW_RESPONSE_MAX_BYTES,
        )

    async def CreateSession(
        self, request: pb.CreateSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateSessionResponse:
        record = await self._sessions.create(
            current_actor(), request.session_id, convert.session_draft(request.session)
        )
        return pb.CreateSessionResponse(session=convert.session_to_proto(record))

    async def GetSession(
        self, request: pb.GetSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetSessionResponse:
        record = await self._sessions.get(current_tenant(), request.session_id)
        return pb.GetSessionResponse(session=convert.session_to_proto(record))

    async def ListSessions(
        self, request: pb.ListSessionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListSessionsResponse:
        session_filter = SessionFilter(
            user_id=request.user_id,
            agent_id=request.agent_id,
            status=convert.status_from_proto("status", request.status, allow_unset=True),
        )
        records, next_token = await self._sessions.list_sessions(
            current_tenant(), session_filter, request.page_size, request.page_token
        )
        return pb.ListSessionsResponse(
            sessions=[convert.session_to_proto(r) for r in records], next_page_token=next_token
        )

    async def UpdateSession(
        self, request: pb.UpdateSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.UpdateSessionResponse:
        paths = set(request.update_mask.paths)
        if paths == {"*"}:
            paths = set(UPDATABLE_PATHS)
        elif not paths:
            paths = convert.set_paths(request.session)
        record = await self._sessions.update(
            current_actor(),
            request.session.session_id,
            convert.session_draft(request.session),
            paths,
            request.expected_etag,
        )
        return pb.UpdateSessionResponse(session=convert.session_to_proto(record))

    async def DeleteSession(
        self, request: pb.DeleteSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteSessionResponse:
        await self._sessions.delete(current_actor(), request.session_id, request.expected_etag)
        return pb.DeleteSessionResponse()

    async def AppendMessages(
        self, request: pb.AppendMessagesRequest, context: grpc.aio.ServicerContext
    ) -> pb.AppendMessagesResponse:
        drafts = [
            convert.message_draft(message, f"messages[{index}]")
            for index, message in enumerate(request.messages)
        ]
        result = await self._sessions.append(
            current_actor(),
            request.session_id,
            drafts,
            request.expected_etag,
            request.request_id,
        )
        return pb.AppendMessagesResponse(
            session=convert.session_to_proto(result.record),
            messages=[convert.message_to_proto(m) for m in result.messages],
            replayed=result.replayed,
        )

    async def ListMessages(
        self, request: pb.ListMessagesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListMessagesResponse:
        messages, next_token = await self._sessions.list_messages(
            current_tenant(),
            request.session_id,
            request.page_size,
            request.page_token,
            request.include_rolled_back,
        )
        return pb.ListMessagesResponse(
            messages=[convert.message_to_proto(m) for m in messages], next_page_token=next_token
        )

    async def GetContextWindow(
        self, request: pb.GetContextWindowRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetContextWindowResponse | convert.SerializedResponse:
        window = await self._sessions.context_window(
            current_tenant(),
            request.session_id,
            WindowRequest(
                token_budget=request.token_budget,
                reserved_output_tokens=request.reserved_output_tokens,
                system_prompt=request.system_prompt,
                tools_json=request.tools_json,
                summary_max_tokens=request.summary_max_tokens,
            ),
        )
        # The domain hands a polling client the same window object while the
        # session is unchanged (a new version or request is a new window):
        # build and serialize its response once, and each poll after that
        # costs the event loop no conversion and no encoding.
        cached = self._window_responses.get(id(window))
        if cached is None or cached[0] is not window:
            response = self._window_response(window)
            cached = (window, response)
            if self._serialized_windows:
                cached = (window, convert.SerializedResponse(response.SerializeToString()))
            self._window_responses.put(id(window), cached)
        return cached[1]

    def _window_response(self, window: ContextWindow) -> pb.GetContextWindowResponse:
        accounting = window.accounting
        return pb.GetContextWindowResponse(
            messages=[self._window_protos.get(m) for m in window.messages],
            summary=window.summary,
            summarized_message_count=window.summarized_message_count,
            accounting=pb.TokenAccounting(
                token_budget=accounting.token_budget,
                reserved_output_tokens=accounting.reserved_output_tokens,
                system_prompt_tokens=accounting.system_prompt_tokens,
                tools_tokens=accounting.tools_tokens,
                summary_tokens=accounting.summary_tokens,
                messages_tokens=accounting.messages_tokens,
                framing_tokens=accounting.framing_tokens,
                total_tokens=accounting.total_tokens,
                remaining_tokens=accounting.remaining_tokens,
            ),
            version=window.version,
            summary_is_fallback=window.summary_is_fallback,
        )

    async def CompactSession(
        self, request: pb.CompactSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.CompactSessionResponse:
        record, folded = await self._sessions.compact(
            current_actor(),
            request.session_id,
            request.keep_recent_messages,
            request.expected_etag,
        )
        return pb.CompactSessionResponse(
            session=convert.session_to_proto(record), compacted_message_count=folded
        )

    async def ListSessionVersions(
        self, request: pb.ListSessionVersionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListSessionVersionsResponse:
        versions, next_token = await self._sessions.list_versions(
            current_tenant(), request.session_id, request.page_size, request.page_token
        )
        return pb.ListSessionVersionsResponse(
            versions=[convert.version_to_proto(v) for v in versions], next_page_token=next_token
        )

    async def GetSessionVersion(
        self, request: pb.GetSessionVersionRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetSessionVersionResponse:
        version = await self._sessions.get_version(
            current_tenant(), request.session_id, request.version
        )
        return pb.GetSessionVersionResponse(version=convert.version_to_proto(version))

    async def RollbackSession(
        self, request: pb.RollbackSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.RollbackSessionResponse:
        record = await self._sessions.rollback(
            current_actor(), request.session_id, request.target_version, request.expected_etag
        )
        return pb.RollbackSessionResponse(session=convert.session_to_proto(record))


def register(server: grpc.aio.Server, sessions: SessionManager) -> None:
    """Adds SessionService, backed by `sessions`, to `server`: the generated
    handlers, with GetContextWindow's response serializer passing the
    servicer's cached bytes through (a polled window is encoded once)."""
    register_with_serializers(
        server,
        session_pb2_grpc.add_SessionServiceServicer_to_server,
        SessionServicer(sessions, serialized_windows=True),
        {"GetContextWindow": convert.serialized_response},
    )
