"""The asyncio client (grpc.aio)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from statekeeper_client._common import (
    KEYED,
    RETRYABLE_CODES,
    SERVICES,
    UNSAFE,
    Metadata,
    RetryPolicy,
    ServiceSpec,
    auth_metadata,
    merge_metadata,
    retry_safety,
    retryable,
    with_request_id,
)
from statekeeper_client.client import DEFAULT_TIMEOUT
from statekeeper_client.errors import StatekeeperRpcError, wrap
from statekeeper_client.inbox import DEFAULT_RECONNECT_TIMEOUT as DEFAULT_INBOX_RECONNECT_TIMEOUT
from statekeeper_client.inbox import (
    DEFAULT_REDELIVERY_BACKOFF,
    AsyncHandler,
    AsyncInboxConsumer,
)
from statekeeper_client.tls import TlsOptions, channel_settings
from statekeeper_client.v1 import admin_pb2
from statekeeper_client.watch import DEFAULT_RECONNECT_TIMEOUT, AsyncWatch, WatchResync, _WatchState

if TYPE_CHECKING:
    from statekeeper_client.v1.admin_pb2_grpc import AdminServiceStub
    from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
    from statekeeper_client.v1.checkpoint_pb2_grpc import CheckpointServiceStub
    from statekeeper_client.v1.items_pb2_grpc import ItemServiceStub
    from statekeeper_client.v1.memory_pb2_grpc import MemoryServiceStub
    from statekeeper_client.v1.message_pb2 import Delivery
    from statekeeper_client.v1.message_pb2_grpc import MessageServiceStub
    from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub


class _AsyncUnaryMethod:
    """A unary method with auth metadata, a deadline and UNAVAILABLE retries."""

    def __init__(self, client: AsyncClient, name: str, full_name: str, call: Any) -> None:
        self._client = client
        self._name = name
        self._full_name = full_name
        self._call = call

    async def __call__(
        self,
        request: Any,
        timeout: float | None = None,
        metadata: Metadata | None = None,
        **kwargs: Any,
    ) -> Any:
        client = self._client
        policy = client.retry
        safety = retry_safety(self._name, request)
        if safety == KEYED:
            request = with_request_id(request)
        elif safety == UNSAFE:
            kwargs.setdefault("wait_for_ready", True)
        budget = client.timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        md = merge_metadata(client._auth, metadata)
        attempt = 1
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            try:
                return await self._call(request, timeout=remaining, metadata=md, **kwargs)
            except grpc.RpcError as error:
                if (
                    not retryable(error, safety, client.retry_codes)
                    or attempt >= policy.max_attempts
                ):
                    raise wrap(error, self._full_name) from None
                pause = policy.backoff(attempt)
                if deadline - time.monotonic() <= pause:
                    raise wrap(error, self._full_name) from None
                await asyncio.sleep(pause)
                attempt += 1


class _AsyncStreamMethod:
    """A server-streaming method with auth metadata (no default deadline, no
    retries); returns the grpc.aio call, to iterate with `async for`."""

    def __init__(self, client: AsyncClient, call: Any) -> None:
        self._client = client
        self._call = call

    def __call__(
        self,
        request: Any,
        timeout: float | None = None,
        metadata: Metadata | None = None,
        **kwargs: Any,
    ) -> Any:
        md = merge_metadata(self._client._auth, metadata)
        return self._call(request, timeout=timeout, metadata=md, **kwargs)


class _AsyncService:
    def __init__(self, client: AsyncClient, spec: ServiceSpec, channel: grpc.aio.Channel) -> None:
        stub = spec.stub(channel)
        self._raw = stub
        for method in spec.descriptor.methods:
            raw = getattr(stub, method.name)
            if spec.is_streaming(method.name):
                wrapped: Any = _AsyncStreamMethod(client, raw)
            else:
                wrapped = _AsyncUnaryMethod(
                    client, method.name, f"{spec.full_name}/{method.name}", raw
                )
            setattr(self, method.name, wrapped)


class AsyncClient:
    """The asyncio statekeeper client; same behaviour as `Client`, with
    awaitable methods:

        async with AsyncClient("127.0.0.1:50051", api_key="sk-...") as sk:
            reply = await sk.sessions.GetSession(
                session_pb2.GetSessionRequest(session_id="s1"), timeout=5
            )
    """

    def __init__(
        self,
        target: str,
        *,
        api_key: str | None = None,
        bearer_token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        retry_codes: Iterable[grpc.StatusCode] | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        tls: TlsOptions | None = None,
        options: Sequence[tuple[str, Any]] | None = None,
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.retry_codes = frozenset(retry_codes) if retry_codes is not None else RETRYABLE_CODES
        self._auth = auth_metadata(api_key, bearer_token)
        self._owns_channel = channel is None
        if channel is None:
            credentials, options = channel_settings(tls, credentials, options)
            if credentials is not None:
                channel = grpc.aio.secure_channel(target, credentials, options=options)
            else:
                channel = grpc.aio.insecure_channel(target, options=options)
        self.channel = channel
        self._services = {spec.attribute: _AsyncService(self, spec, channel) for spec in SERVICES}
        self._health = health_pb2_grpc.HealthStub(channel)

    @property
    def sessions(self) -> SessionServiceStub:
        return cast("SessionServiceStub", self._services["sessions"])

    @property
    def memory(self) -> MemoryServiceStub:
        return cast("MemoryServiceStub", self._services["memory"])

    @property
    def checkpoints(self) -> CheckpointServiceStub:
        return cast("CheckpointServiceStub", self._services["checkpoints"])

    @property
    def blackboard(self) -> BlackboardServiceStub:
        return cast("BlackboardServiceStub", self._services["blackboard"])

    @property
    def messages(self) -> MessageServiceStub:
        return cast("MessageServiceStub", self._services["messages"])

    @property
    def items(self) -> ItemServiceStub:
        return cast("ItemServiceStub", self._services["items"])

    @property
    def admin(self) -> AdminServiceStub:
        return cast("AdminServiceStub", self._services["admin"])

    async def erase_user(
        self,
        user_id: str,
        *,
        dry_run: bool = False,
        blackboard_key_prefixes: Iterable[str] = (),
        agent_ids: Iterable[str] = (),
        item_namespaces: Iterable[Sequence[str]] = (),
        timeout: float | None = None,
    ) -> admin_pb2.EraseUserResponse:
        """AdminService.EraseUser: removes every trace of `user_id` in the
        caller's tenant (sessions, memory, tagged checkpoints and workflows,
        blackboard keys under "users/<user_id>/", the "user:<user_id>" inbox,
        items under ("users", <user_id>), plus the extra selectors) and
        returns the counts per capability and kind. `dry_run` only counts.
        Safe to call again: a repeat finishes an interrupted erasure."""
        request = admin_pb2.EraseUserRequest(
            user_id=user_id,
            dry_run=dry_run,
            blackboard_key_prefixes=list(blackboard_key_prefixes),
            agent_ids=list(agent_ids),
            item_namespaces=[
                admin_pb2.ErasedItemNamespace(labels=list(ns)) for ns in item_namespaces
            ],
        )
        response: admin_pb2.EraseUserResponse = await self.admin.EraseUser(request, timeout=timeout)
        return response

    async def health(self, service: str = "", timeout: float | None = None) -> str:
        """The serving status of `service` ("" = the whole server), e.g.
        "SERVING"."""
        method = _AsyncUnaryMethod(self, "Check", "grpc.health.v1.Health/Check", self._health.Check)
        response = await method(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))

    async def wait_ready(self, timeout: float = 10.0) -> None:
        """Waits until the channel is connected (raises on timeout)."""
        await asyncio.wait_for(self.channel.channel_ready(), timeout)

    def watch(
        self,
        board: str,
        *,
        prefix: str | None = None,
        pattern: str | None = None,
        start_revision: int = 0,
        initial_snapshot: bool = False,
        prev_value: bool = False,
        progress_notify_interval: timedelta | float | None = None,
        event_types: Iterable[int] = (),
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        reconnect_timeout: float | None = DEFAULT_RECONNECT_TIMEOUT,
        resume_slow_consumer: bool = True,
        on_reconnect: Callable[[StatekeeperRpcError | None], Any] | None = None,
        on_compacted: Callable[[WatchResync], Any] | None = None,
    ) -> AsyncWatch:
        """A resuming Watch of `board`: the options of `Client.watch`
        (callbacks may be coroutine functions)."""
        state = _WatchState(
            board,
            prefix=prefix,
            pattern=pattern,
            start_revision=start_revision,
            initial_snapshot=initial_snapshot,
            prev_value=prev_value,
            progress_notify_interval=progress_notify_interval,
            event_types=event_types,
        )
        raw_stub = self._services["blackboard"]._raw
        return AsyncWatch(
            raw_stub,
            state,
            metadata=self._auth,
            retry=retry or self.retry,
            timeout=timeout,
            reconnect_timeout=reconnect_timeout,
            resume_slow_consumer=resume_slow_consumer,
            on_reconnect=on_reconnect,
            on_compacted=on_compacted,
        )

    def inbox(
        self,
        agent_id: str,
        handler: AsyncHandler,
        *,
        types: Iterable[str] = (),
        visibility_timeout: float = 30.0,
        extend_every: float | None = None,
        max_in_flight: int = 1,
        retry: RetryPolicy | None = None,
        redelivery_backoff: RetryPolicy = DEFAULT_REDELIVERY_BACKOFF,
        reconnect_timeout: float | None = DEFAULT_INBOX_RECONNECT_TIMEOUT,
        on_error: Callable[[BaseException, Delivery], Any] | None = None,
    ) -> AsyncInboxConsumer:
        """A consumer of `agent_id`'s inbox that calls `handler(delivery)`
        for each message and acks it (or nacks it: the handler returned
        `Nack(...)` or raised), extending its visibility while the handler
        runs; see `statekeeper_client.inbox`. Start it with `.run()`."""
        return AsyncInboxConsumer(
            self,
            agent_id,
            handler,
            types=types,
            visibility_timeout=visibility_timeout,
            extend_every=extend_every,
            max_in_flight=max_in_flight,
            retry=retry,
            redelivery_backoff=redelivery_backoff,
            reconnect_timeout=reconnect_timeout,
            on_error=on_error,
        )

    async def close(self) -> None:
        if self._owns_channel:
            await self.channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
