"""Blackboard Watch helpers that resume where they stopped.

`BlackboardService.Watch` promises that every response carries a
`resume_revision`, and that a new Watch started at that revision continues
exactly after the last delivered message, without a gap and without a repeat.
These helpers keep that revision and, when the stream breaks with UNAVAILABLE
(server restart, lost connection) or RESOURCE_EXHAUSTED/SLOW_CONSUMER, open a
new stream from it after an exponential backoff. Any other error ends the
iteration: UNIMPLEMENTED as `ServiceNotImplementedError` (the server does not
have the blackboard yet), OUT_OF_RANGE/REVISION_COMPACTED as a
`StatekeeperRpcError` (the history is gone: start again with a snapshot).

    watch = client.watch("team-1", prefix="plan/")
    for event in watch:                 # BlackboardEvent, in revision order
        print(event.type, event.entry.key, event.revision)
    # watch.resume_revision is where a later Watch would continue.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import timedelta
from typing import Any, cast

import grpc

from statekeeper_client._common import Metadata, RetryPolicy, merge_metadata
from statekeeper_client.errors import StatekeeperRpcError, wrap
from statekeeper_client.v1 import blackboard_pb2

_METHOD = "statekeeper.v1.BlackboardService/Watch"


class _WatchState:
    """Which request resumes the watch, given what has been received."""

    def __init__(
        self,
        board: str,
        *,
        prefix: str | None,
        pattern: str | None,
        start_revision: int,
        initial_snapshot: bool,
        prev_value: bool,
        progress_notify_interval: timedelta | float | None,
        event_types: Iterable[int],
    ) -> None:
        if prefix is not None and pattern is not None:
            raise ValueError("pass prefix or pattern, not both")
        if start_revision < 0:
            raise ValueError("start_revision must be >= 0")
        self.board = board
        self.prefix = prefix
        self.pattern = pattern
        #: The start revision of the next stream: the last response's
        #: `resume_revision` once one was received.
        self.resume_revision = start_revision
        self.snapshot_pending = initial_snapshot
        self.prev_value = prev_value
        if isinstance(progress_notify_interval, (int, float)):
            progress_notify_interval = timedelta(seconds=progress_notify_interval)
        self.progress_notify_interval = progress_notify_interval
        self.event_types = list(event_types)

    def request(self) -> blackboard_pb2.WatchRequest:
        request = blackboard_pb2.WatchRequest(
            board=self.board,
            start_revision=self.resume_revision,
            initial_snapshot=self.snapshot_pending,
            prev_value=self.prev_value,
            event_types=cast(Any, self.event_types),
        )
        if self.prefix is not None:
            request.prefix = self.prefix
        elif self.pattern is not None:
            request.pattern = self.pattern
        if self.progress_notify_interval is not None:
            request.progress_notify_interval.FromTimedelta(self.progress_notify_interval)
        return request

    def observe(self, response: blackboard_pb2.WatchResponse) -> None:
        kind = response.WhichOneof("kind")
        if kind == "snapshot_end":
            self.snapshot_pending = False
        if self.snapshot_pending:
            # A snapshot cannot be resumed half way: a broken stream starts
            # again with a new snapshot from the original start revision.
            return
        if response.resume_revision > 0:
            self.resume_revision = response.resume_revision
        elif kind == "started" and response.started.start_revision > 0:
            self.resume_revision = response.started.start_revision


def _resumable(error: grpc.RpcError) -> bool:
    code = error.code() if callable(getattr(error, "code", None)) else None
    if code == grpc.StatusCode.UNAVAILABLE:
        return True
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return wrap(error).reason == "SLOW_CONSUMER"
    return False


class Watch:
    """A resuming blackboard watch over a sync channel. Iterate it for events,
    or call `responses()` for every stream message (started, snapshot,
    progress, events)."""

    def __init__(
        self,
        stub: Any,
        state: _WatchState,
        *,
        metadata: Metadata,
        retry: RetryPolicy,
        timeout: float | None,
    ) -> None:
        self._stub = stub
        self._state = state
        self._metadata = metadata
        self._retry = retry
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._call: Any = None
        self._cancelled = False
        #: Number of streams opened so far (1 + reconnects).
        self.streams_opened = 0

    @property
    def resume_revision(self) -> int:
        """The revision a new Watch would start at to continue this one."""
        return self._state.resume_revision

    def _remaining(self) -> float | None:
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def responses(self) -> Iterator[blackboard_pb2.WatchResponse]:
        failures = 0
        while not self._cancelled:
            self._call = self._stub.Watch(
                self._state.request(),
                metadata=merge_metadata(self._metadata, None),
                timeout=self._remaining(),
            )
            self.streams_opened += 1
            last: StatekeeperRpcError | None = None
            try:
                for response in self._call:
                    failures = 0
                    self._state.observe(response)
                    yield response
            except grpc.RpcError as error:
                if self._cancelled:
                    return
                if not _resumable(error):
                    raise wrap(error, _METHOD) from None
                last = wrap(error, _METHOD)
            if self._cancelled:
                return
            failures += 1
            if failures >= self._retry.max_attempts:
                if last is not None:
                    raise last
                raise RuntimeError("Watch stream kept ending without an error")
            pause = self._retry.backoff(failures)
            remaining = self._remaining()
            if remaining is not None and remaining <= pause:
                if last is not None:
                    raise last
                return
            time.sleep(pause)

    def __iter__(self) -> Iterator[blackboard_pb2.BlackboardEvent]:
        for response in self.responses():
            if response.WhichOneof("kind") == "events":
                yield from response.events.events

    def cancel(self) -> None:
        """Ends the watch; an iteration in progress stops."""
        self._cancelled = True
        if self._call is not None:
            self._call.cancel()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


class AsyncWatch:
    """The asyncio twin of `Watch`: `async for event in watch`, or
    `async for response in watch.responses()`."""

    def __init__(
        self,
        stub: Any,
        state: _WatchState,
        *,
        metadata: Metadata,
        retry: RetryPolicy,
        timeout: float | None,
    ) -> None:
        self._stub = stub
        self._state = state
        self._metadata = metadata
        self._retry = retry
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._call: Any = None
        self._cancelled = False
        self.streams_opened = 0

    @property
    def resume_revision(self) -> int:
        """The revision a new Watch would start at to continue this one."""
        return self._state.resume_revision

    def _remaining(self) -> float | None:
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    async def responses(self) -> AsyncIterator[blackboard_pb2.WatchResponse]:
        failures = 0
        while not self._cancelled:
            self._call = self._stub.Watch(
                self._state.request(),
                metadata=merge_metadata(self._metadata, None),
                timeout=self._remaining(),
            )
            self.streams_opened += 1
            last: StatekeeperRpcError | None = None
            try:
                async for response in self._call:
                    failures = 0
                    self._state.observe(response)
                    yield response
            except asyncio.CancelledError:
                self.cancel()
                raise
            except grpc.RpcError as error:
                if self._cancelled:
                    return
                if not _resumable(error):
                    raise wrap(error, _METHOD) from None
                last = wrap(error, _METHOD)
            if self._cancelled:
                return
            failures += 1
            if failures >= self._retry.max_attempts:
                if last is not None:
                    raise last
                raise RuntimeError("Watch stream kept ending without an error")
            pause = self._retry.backoff(failures)
            remaining = self._remaining()
            if remaining is not None and remaining <= pause:
                if last is not None:
                    raise last
                return
            await asyncio.sleep(pause)

    async def __aiter__(self) -> AsyncIterator[blackboard_pb2.BlackboardEvent]:
        async for response in self.responses():
            if response.WhichOneof("kind") == "events":
                for event in response.events.events:
                    yield event

    def cancel(self) -> None:
        """Ends the watch; an iteration in progress stops."""
        self._cancelled = True
        if self._call is not None:
            self._call.cancel()

    async def __aenter__(self) -> AsyncWatch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cancel()
