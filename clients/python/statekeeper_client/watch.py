"""Blackboard Watch helpers that resume where they stopped.

`BlackboardService.Watch` promises that every response carries a
`resume_revision`, and that a new Watch started at that revision continues
exactly after the last delivered message, without a gap and without a repeat.
These helpers keep that revision and, when the stream breaks, open a new
stream from it after an exponential backoff (the client's RetryPolicy), on
whichever server answers the channel's target:

* UNAVAILABLE (server restart, lost connection, server shutting down):
  resumed, until `reconnect_timeout` seconds pass without a working stream
  (then the last error is raised);
* RESOURCE_EXHAUSTED/SLOW_CONSUMER (this reader fell too far behind):
  resumed the same way and counted in `slow_consumer_count`; with
  `resume_slow_consumer=False` it is raised as `errors.SlowConsumerError`;
* OUT_OF_RANGE/REVISION_COMPACTED (the revisions to replay are gone): raised
  as `errors.RevisionCompactedError` (metadata["oldest_revision"]), unless
  `on_compacted` is given: then the helper re-lists and watches again, as
  the contract prescribes: a new stream with `initial_snapshot` from the
  current revision, whose entries (the board as of revision R) are handed to
  `on_compacted(WatchResync(...))` before the events after R follow;
* anything else ends the iteration with its typed error (UNIMPLEMENTED as
  `ServiceNotImplementedError`).

`on_reconnect(error)` is called before each resume with the error that ended
the stream. Progress notifications (`progress_notify_interval`) move
`resume_revision` and `progress_revision` on a quiet board; iterate
`responses()` to see them (and the started/snapshot messages) rather than
only the events.

    with client.watch("team-1", prefix="plan/") as watch:
        for event in watch:             # BlackboardEvent, in revision order
            print(event.type, event.entry.key, event.revision)
    # watch.resume_revision is where a later Watch would continue.

While the events of one revision (a Txn that changed several keys) are
handed out one by one, `resume_revision` stays at that revision until its
last event was yielded: a caller that checkpoints it after each event and
stops half way repeats the start of that revision, and loses none of it.
Leaving the loop (`break`) closes the stream at once; iterating the same
Watch again continues from `resume_revision`.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, cast

import grpc

from statekeeper_client._common import Metadata, RetryPolicy, merge_metadata
from statekeeper_client.errors import StatekeeperRpcError, wrap
from statekeeper_client.v1 import blackboard_pb2

_METHOD = "statekeeper.v1.BlackboardService/Watch"


#: Seconds a Watch keeps reconnecting without a working stream by default.
DEFAULT_RECONNECT_TIMEOUT = 60.0


@dataclass
class WatchResync:
    """What `on_compacted` receives when the Watch re-listed after
    REVISION_COMPACTED: every matching entry as of `revision`, after which
    the Watch delivers the events of the revisions above it. Replace what
    you derived from the events before (some changes between your last event
    and `revision` were never delivered)."""

    #: The matching entries live at `revision`, by key.
    entries: list[blackboard_pb2.BlackboardEntry] = field(default_factory=list)
    #: The revision the listing was taken at.
    revision: int = 0
    #: The error that ended the stream (reason REVISION_COMPACTED).
    error: StatekeeperRpcError | None = None

    @property
    def oldest_revision(self) -> int:
        """The oldest revision still available when the stream ended."""
        if self.error is None:
            return 0
        return int(self.error.error_metadata.get("oldest_revision", "0") or 0)


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
        #: The last progress bookmark received (0: none yet).
        self.progress_revision = 0
        #: The resync under way after REVISION_COMPACTED, until its snapshot
        #: ends.
        self.resync: WatchResync | None = None

    def start_resync(self, error: StatekeeperRpcError) -> None:
        """Re-list then watch: the next stream starts with a snapshot of the
        current revision."""
        self.resync = WatchResync(error=error)
        self.resume_revision = 0
        self.snapshot_pending = True

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

    def observe(self, response: blackboard_pb2.WatchResponse) -> WatchResync | None:
        """Takes note of a response; returns the finished resync, if this
        response ends one."""
        kind = response.WhichOneof("kind")
        done: WatchResync | None = None
        if self.resync is not None:
            if kind == "snapshot_begin":
                self.resync.entries = []
                self.resync.revision = response.snapshot_begin.revision
            elif kind == "snapshot_chunk":
                self.resync.entries.extend(response.snapshot_chunk.entries)
            elif kind == "snapshot_end":
                self.resync.revision = response.snapshot_end.revision
                done, self.resync = self.resync, None
        if kind == "progress":
            self.progress_revision = response.progress.revision
        if kind == "snapshot_end":
            self.snapshot_pending = False
        self._move(response, kind)
        return done

    def _move(self, response: blackboard_pb2.WatchResponse, kind: str | None) -> None:
        if self.snapshot_pending:
            # A snapshot cannot be resumed half way: a broken stream starts
            # again with a new snapshot from the original start revision.
            return
        if response.resume_revision > 0:
            self.resume_revision = response.resume_revision
        elif kind == "started" and response.started.start_revision > 0:
            self.resume_revision = response.started.start_revision


class _Reconnects:
    """What to do when a stream ended: the rules of the module docstring,
    shared by Watch and AsyncWatch."""

    def __init__(
        self,
        state: _WatchState,
        retry: RetryPolicy,
        timeout: float | None,
        reconnect_timeout: float | None,
        resume_slow_consumer: bool,
        compacted: bool,
    ) -> None:
        self.state = state
        self.retry = retry
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.reconnect_timeout = reconnect_timeout
        self.resume_slow_consumer = resume_slow_consumer
        self.compacted = compacted
        self.failures = 0
        self.failing_since: float | None = None
        self.slow_consumer_count = 0
        self.resync_count = 0

    def remaining(self) -> float | None:
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def received(self) -> None:
        self.failures = 0
        self.failing_since = None

    def ended(self, error: StatekeeperRpcError | None) -> float | None:
        """The pause before the next stream, or None to end the watch
        quietly (the watch's own deadline passed); raises what ends it."""
        code = error.code() if error is not None else None
        if code == grpc.StatusCode.DEADLINE_EXCEEDED and self.remaining() == 0.0:
            return None  # the watch's own `timeout` passed: the iteration ends
        if error is not None and error.reason == "SLOW_CONSUMER":
            self.slow_consumer_count += 1
            if not self.resume_slow_consumer:
                raise error
        elif error is not None and error.reason == "REVISION_COMPACTED" and self.compacted:
            self.resync_count += 1
            self.state.start_resync(error)
            self.received()
            return 0.0
        elif error is not None and code != grpc.StatusCode.UNAVAILABLE:
            raise error
        now = time.monotonic()
        if self.failing_since is None:
            self.failing_since = now
        self.failures += 1
        pause = self.retry.backoff(self.failures)
        if (
            self.reconnect_timeout is not None
            and now + pause - self.failing_since > self.reconnect_timeout
        ):
            if error is not None:
                raise error
            raise RuntimeError("Watch streams kept ending without an error")
        remaining = self.remaining()
        if remaining is not None and remaining <= pause:
            if error is not None:
                raise error
            return None
        return pause


class _WatchBase:
    def __init__(
        self,
        stub: Any,
        state: _WatchState,
        *,
        metadata: Metadata,
        retry: RetryPolicy,
        timeout: float | None,
        reconnect_timeout: float | None = DEFAULT_RECONNECT_TIMEOUT,
        resume_slow_consumer: bool = True,
        on_reconnect: Callable[[StatekeeperRpcError | None], Any] | None = None,
        on_compacted: Callable[[WatchResync], Any] | None = None,
    ) -> None:
        self._stub = stub
        self._state = state
        self._metadata = metadata
        self._rules = _Reconnects(
            state,
            retry,
            timeout,
            reconnect_timeout,
            resume_slow_consumer,
            compacted=on_compacted is not None,
        )
        self._on_reconnect = on_reconnect
        self._on_compacted = on_compacted
        self._call: Any = None
        self._cancelled = False
        #: The resume point while the events of a response are handed out
        #: one by one (None between responses).
        self._event_resume: int | None = None
        #: Number of streams opened so far (1 + reconnects).
        self.streams_opened = 0
        #: The error that ended the last stream (None before any).
        self.last_error: StatekeeperRpcError | None = None

    @property
    def resume_revision(self) -> int:
        """The revision a new Watch would start at to continue this one
        (while the events of one revision are being yielded: that revision,
        until its last event)."""
        if self._event_resume is not None:
            return self._event_resume
        return self._state.resume_revision

    @property
    def progress_revision(self) -> int:
        """The last progress bookmark: every matching event at or below it
        has been delivered (0: no progress notification yet)."""
        return self._state.progress_revision

    @property
    def slow_consumer_count(self) -> int:
        """How many streams the server ended with SLOW_CONSUMER."""
        return self._rules.slow_consumer_count

    @property
    def resync_count(self) -> int:
        """How many times the watch re-listed after REVISION_COMPACTED."""
        return self._rules.resync_count

    def _open(self) -> Any:
        self._call = self._stub.Watch(
            self._state.request(),
            metadata=merge_metadata(self._metadata, None),
            timeout=self._rules.remaining(),
        )
        self.streams_opened += 1
        return self._call

    def _end_events(self) -> None:
        """The event iteration stopped: a later stream starts where the
        caller stopped (possibly inside a revision, which then repeats)."""
        if self._event_resume is not None:
            self._state.resume_revision = self._event_resume
            self._event_resume = None

    def _close_call(self) -> None:
        call, self._call = self._call, None
        if call is not None:
            call.cancel()

    def cancel(self) -> None:
        """Ends the watch; an iteration in progress stops."""
        self._cancelled = True
        if self._call is not None:
            self._call.cancel()


class Watch(_WatchBase):
    """A resuming blackboard watch over a sync channel. Iterate it for events,
    or call `responses()` for every stream message (started, snapshot,
    progress, events)."""

    def responses(self) -> Generator[blackboard_pb2.WatchResponse, None, None]:
        try:
            while not self._cancelled:
                call = self._open()
                error: StatekeeperRpcError | None = None
                try:
                    for response in call:
                        self._rules.received()
                        resync = self._state.observe(response)
                        if resync is not None and self._on_compacted is not None:
                            self._on_compacted(resync)
                        yield response
                except grpc.RpcError as raw:
                    if self._cancelled:
                        return
                    error = wrap(raw, _METHOD)
                if self._cancelled:
                    return
                self.last_error = error
                pause = self._rules.ended(error)
                if pause is None:
                    return
                if self._on_reconnect is not None:
                    self._on_reconnect(error)
                time.sleep(pause)
        finally:
            # Also when the caller leaves the loop: the stream ends now, not
            # when the generator is garbage.
            self._close_call()

    def __iter__(self) -> Iterator[blackboard_pb2.BlackboardEvent]:
        responses = self.responses()
        try:
            for response in responses:
                if response.WhichOneof("kind") == "events":
                    events = response.events.events
                    for i in range(len(events)):
                        self._event_resume = _resume_at(events, i, self._state.resume_revision)
                        yield events[i]
                    self._event_resume = None
        finally:
            self._end_events()
            responses.close()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


class AsyncWatch(_WatchBase):
    """The asyncio twin of `Watch`: `async for event in watch`, or
    `async for response in watch.responses()`. `on_compacted` and
    `on_reconnect` may be coroutine functions."""

    async def responses(self) -> AsyncGenerator[blackboard_pb2.WatchResponse, None]:
        try:
            while not self._cancelled:
                call = self._open()
                error: StatekeeperRpcError | None = None
                try:
                    async for response in call:
                        self._rules.received()
                        resync = self._state.observe(response)
                        if resync is not None and self._on_compacted is not None:
                            await _maybe_await(self._on_compacted(resync))
                        yield response
                except asyncio.CancelledError:
                    self.cancel()
                    raise
                except grpc.RpcError as raw:
                    if self._cancelled:
                        return
                    error = wrap(raw, _METHOD)
                if self._cancelled:
                    return
                self.last_error = error
                pause = self._rules.ended(error)
                if pause is None:
                    return
                if self._on_reconnect is not None:
                    await _maybe_await(self._on_reconnect(error))
                await asyncio.sleep(pause)
        finally:
            self._close_call()

    async def __aiter__(self) -> AsyncIterator[blackboard_pb2.BlackboardEvent]:
        responses = self.responses()
        try:
            async for response in responses:
                if response.WhichOneof("kind") == "events":
                    events = response.events.events
                    for i in range(len(events)):
                        self._event_resume = _resume_at(events, i, self._state.resume_revision)
                        yield events[i]
                    self._event_resume = None
        finally:
            self._end_events()
            await responses.aclose()

    async def __aenter__(self) -> AsyncWatch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cancel()


async def _maybe_await(result: Any) -> None:
    if inspect.isawaitable(result):
        await result


def _resume_at(events: Any, i: int, after: int) -> int:
    """Where a later Watch continues if the caller stops while holding
    events[i] of one response whose resume revision is `after`: after the
    event's revision when that revision is complete, else at it (the rest of
    that revision is not lost; its first events repeat)."""
    if i + 1 >= len(events):
        return after
    revision = int(events[i].revision)
    return revision + 1 if int(events[i + 1].revision) != revision else revision
