"""`StatekeeperSaver`: LangGraph's BaseCheckpointSaver over CheckpointService.

Mapping:

* thread_id -> execution_id, checkpoint_ns -> namespace, checkpoint id ->
  checkpoint_id, the config's checkpoint_id on `put` -> parent.
* The checkpoint without its channel values, plus the exact metadata, is the
  `state` payload (LangGraph's serde, so ints stay ints and anything the serde
  can encode round-trips). The metadata is also sent as a Struct, which is
  what the server filters on.
* Channel values go in `channels`: inline when the channel is in
  `new_versions`, by version otherwise (the server reuses the stored value).
* Writes use LangGraph's WRITES_IDX_MAP, so special channels get negative
  indexes and replace, while regular writes are first-write-wins.

Install with the extra: `pip install "statekeeper-client[langgraph]"`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

import grpc
from google.protobuf import struct_pb2, timestamp_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from statekeeper_client.v1 import checkpoint_pb2 as pb
from statekeeper_client.v1 import checkpoint_pb2_grpc, common_pb2

log = logging.getLogger(__name__)

T = TypeVar("T")

# Content type of every payload this saver writes: LangGraph's serde type
# name after the prefix ("msgpack", "json", "bytes", "null", ...).
SERDE_CONTENT_TYPE = "application/x-langgraph-serde; type="
MAX_BATCH = 1000
LIST_PAGE_SIZE = 100


class OwnershipLostError(RuntimeError):
    """Another saver claimed the thread after this one; stop writing to it."""


class StatekeeperSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer backed by a statekeeper server.

    `target` is "host:port". `api_key` is sent as `x-api-key`. Pass
    `credentials` for TLS. Calls time out after `timeout` seconds.
    """

    def __init__(
        self,
        target: str,
        *,
        api_key: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        serde: SerializerProtocol | None = None,
        timeout: float = 30.0,
        write_wait_seconds: float = 10.0,
    ) -> None:
        super().__init__(serde=serde)
        self._target = target
        self._credentials = credentials
        self._metadata: tuple[tuple[str, str], ...] = (("x-api-key", api_key),) if api_key else ()
        self._timeout = timeout
        self._write_wait_seconds = write_wait_seconds
        self._channel = self._open_sync_channel()
        self._stub = checkpoint_pb2_grpc.CheckpointServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._epochs: dict[str, int] = {}
        self._lock = threading.Lock()

    # ----- lifecycle -------------------------------------------------------------

    def __enter__(self) -> StatekeeperSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> StatekeeperSaver:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def close(self) -> None:
        self._channel.close()

    async def aclose(self) -> None:
        entry = self._async.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].close()
        self.close()

    # ----- ownership ---------------------------------------------------------------

    def claim(self, thread_id: str) -> int:
        """Claims write ownership of `thread_id`: savers that claimed it
        before can no longer write to it. Returns the epoch."""
        reply = self._call(
            self._stub.ClaimExecution, pb.ClaimExecutionRequest(execution_id=thread_id)
        )
        self._epochs[thread_id] = reply.ownership_epoch
        return int(reply.ownership_epoch)

    async def aclaim(self, thread_id: str) -> int:
        reply = await self._acall(
            "ClaimExecution", pb.ClaimExecutionRequest(execution_id=thread_id)
        )
        self._epochs[thread_id] = reply.ownership_epoch
        return int(reply.ownership_epoch)

    # ----- reads -----------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        try:
            reply = self._call(self._stub.GetCheckpoint, _get_request(config))
        except grpc.RpcError as error:
            if _code(error) == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return self._to_tuple(reply.checkpoint)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        try:
            reply = await self._acall("GetCheckpoint", _get_request(config))
        except grpc.RpcError as error:
            if _code(error) == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return self._to_tuple(reply.checkpoint)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        request, only_id = _list_request(config, filter, before, limit)
        remaining = limit
        while True:
            reply = self._call(self._stub.ListCheckpoints, request)
            for item in reply.checkpoints:
                if only_id and item.checkpoint_id != only_id:
                    continue
                yield self._to_tuple(item)
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return
            if not reply.next_page_token:
                return
            request.page_token = reply.next_page_token

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        request, only_id = _list_request(config, filter, before, limit)
        remaining = limit
        while True:
            reply = await self._acall("ListCheckpoints", request)
            for item in reply.checkpoints:
                if only_id and item.checkpoint_id != only_id:
                    continue
                yield self._to_tuple(item)
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return
            if not reply.next_page_token:
                return
            request.page_token = reply.next_page_token

    # ----- writes ------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        request = self._save_request(config, checkpoint, metadata, new_versions, inline_all=False)
        try:
            self._call(self._stub.SaveCheckpoint, request)
        except grpc.RpcError as error:
            if _condition(error) == "CHANNEL_VALUE_MISSING":
                # The server lost (pruned) a value we referenced by version:
                # we hold every value, so send them all.
                full = self._save_request(config, checkpoint, metadata, new_versions, True)
                self._call_unless_deleted(self._stub.SaveCheckpoint, full)
            elif not self._dropped_after_delete(error, request.checkpoint.execution_id):
                raise
        return _stored_config(config, checkpoint)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        request = self._save_request(config, checkpoint, metadata, new_versions, inline_all=False)
        try:
            await self._acall("SaveCheckpoint", request)
        except grpc.RpcError as error:
            if _condition(error) == "CHANNEL_VALUE_MISSING":
                full = self._save_request(config, checkpoint, metadata, new_versions, True)
                await self._acall_unless_deleted("SaveCheckpoint", full)
            elif not self._dropped_after_delete(error, request.checkpoint.execution_id):
                raise
        return _stored_config(config, checkpoint)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        request = self._writes_request(config, writes, task_id, task_path)
        if not request.writes:
            return
        deadline = time.monotonic() + self._write_wait_seconds
        for delay in _backoff_delays():
            try:
                self._call_unless_deleted(self._stub.PutWrites, request)
                return
            except grpc.RpcError as error:
                if not _checkpoint_in_flight(error, deadline):
                    raise
            time.sleep(delay)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        request = self._writes_request(config, writes, task_id, task_path)
        if not request.writes:
            return
        deadline = time.monotonic() + self._write_wait_seconds
        for delay in _backoff_delays():
            try:
                await self._acall_unless_deleted("PutWrites", request)
                return
            except grpc.RpcError as error:
                if not _checkpoint_in_flight(error, deadline):
                    raise
            await asyncio.sleep(delay)

    # ----- removals and copies ---------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        self._call(self._stub.DeleteExecution, pb.DeleteExecutionRequest(execution_id=thread_id))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._acall("DeleteExecution", pb.DeleteExecutionRequest(execution_id=thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        for batch in _batches(run_ids):
            self._call(self._stub.DeleteRuns, pb.DeleteRunsRequest(run_ids=batch))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        for batch in _batches(run_ids):
            await self._acall("DeleteRuns", pb.DeleteRunsRequest(run_ids=batch))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        request = pb.CopyExecutionRequest(
            source_execution_id=source_thread_id, target_execution_id=target_thread_id
        )
        try:
            self._call(self._stub.CopyExecution, request)
        except grpc.RpcError as error:
            if _code(error) != grpc.StatusCode.NOT_FOUND:  # nothing to copy
                raise

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        request = pb.CopyExecutionRequest(
            source_execution_id=source_thread_id, target_execution_id=target_thread_id
        )
        try:
            await self._acall("CopyExecution", request)
        except grpc.RpcError as error:
            if _code(error) != grpc.StatusCode.NOT_FOUND:
                raise

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        keep_last = _keep_last(strategy)
        for batch in _batches(thread_ids):
            request = pb.PruneCheckpointsRequest(execution_ids=batch, keep_last=keep_last)
            self._call(self._stub.PruneCheckpoints, request)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        keep_last = _keep_last(strategy)
        for batch in _batches(thread_ids):
            request = pb.PruneCheckpointsRequest(execution_ids=batch, keep_last=keep_last)
            await self._acall("PruneCheckpoints", request)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Like InMemorySaver: a zero-padded counter plus a random suffix, so
        that two forks of a thread never give different values one version."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    # ----- requests and replies ------------------------------------------------------

    def _dump(self, value: Any) -> common_pb2.Payload:
        kind, data = self.serde.dumps_typed(value)
        return common_pb2.Payload(content_type=SERDE_CONTENT_TYPE + kind, data=data)

    def _load(self, payload: common_pb2.Payload) -> Any:
        kind = payload.content_type.removeprefix(SERDE_CONTENT_TYPE)
        return self.serde.loads_typed((kind, payload.data))

    def _save_request(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        inline_all: bool,
    ) -> pb.SaveCheckpointRequest:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        exact_metadata = get_serializable_checkpoint_metadata(config, metadata)
        body = {key: value for key, value in checkpoint.items() if key != "channel_values"}
        versions = checkpoint["channel_versions"]
        channels = {
            name: pb.ChannelValue(
                version=str(versions[name]),
                value=self._dump(value) if inline_all or name in new_versions else None,
            )
            for name, value in checkpoint["channel_values"].items()
            # A value without a version is not part of the checkpoint.
            if name in versions
        }
        step = exact_metadata.get("step")
        run_id = exact_metadata.get("run_id")
        return pb.SaveCheckpointRequest(
            checkpoint=pb.Checkpoint(
                execution_id=thread_id,
                namespace=configurable.get("checkpoint_ns", ""),
                checkpoint_id=checkpoint["id"],
                parent_checkpoint_id=configurable.get("checkpoint_id") or "",
                step=step if isinstance(step, int) else 0,
                step_name=str(exact_metadata.get("source", "")),
                state=self._dump({"checkpoint": body, "metadata": exact_metadata}),
                channels=channels,
                metadata=_struct(dict(exact_metadata)),
                run_id=run_id if isinstance(run_id, str) else "",
                create_time=_timestamp(checkpoint.get("ts")),
            ),
            ownership_epoch=self._epochs.get(thread_id, 0),
        )

    def _writes_request(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> pb.PutWritesRequest:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        by_index: dict[int, pb.WriteInput] = {}
        for position, (channel, value) in enumerate(writes):
            index = WRITES_IDX_MAP.get(channel, position)
            # A special channel written twice in one call: the last wins, as
            # it would on the server.
            by_index[index] = pb.WriteInput(index=index, channel=channel, value=self._dump(value))
        return pb.PutWritesRequest(
            execution_id=thread_id,
            namespace=configurable.get("checkpoint_ns", ""),
            checkpoint_id=configurable["checkpoint_id"],
            task_id=task_id,
            task_path=task_path,
            writes=list(by_index.values()),
            ownership_epoch=self._epochs.get(thread_id, 0),
        )

    def _to_tuple(self, item: pb.Checkpoint) -> CheckpointTuple:
        state = self._load(item.state)
        checkpoint = cast(
            Checkpoint,
            {
                **state["checkpoint"],
                "channel_values": {
                    name: self._load(channel.value) for name, channel in item.channels.items()
                },
            },
        )
        return CheckpointTuple(
            config=_config(item.execution_id, item.namespace, item.checkpoint_id),
            checkpoint=checkpoint,
            metadata=state["metadata"],
            parent_config=(
                _config(item.execution_id, item.namespace, item.parent_checkpoint_id)
                if item.parent_checkpoint_id
                else None
            ),
            pending_writes=[
                (write.task_id, write.channel, self._load(write.value))
                for write in item.pending_writes
            ],
        )

    # ----- transport -------------------------------------------------------------------

    def _open_sync_channel(self) -> grpc.Channel:
        if self._credentials is not None:
            return grpc.secure_channel(self._target, self._credentials, options=_CHANNEL_OPTIONS)
        return grpc.insecure_channel(self._target, options=_CHANNEL_OPTIONS)

    def _async_stub(self) -> Any:
        """One aio channel per event loop: aio channels are bound to theirs."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async.get(loop)
            if entry is None:
                if self._credentials is not None:
                    channel = grpc.aio.secure_channel(
                        self._target, self._credentials, options=_CHANNEL_OPTIONS
                    )
                else:
                    channel = grpc.aio.insecure_channel(self._target, options=_CHANNEL_OPTIONS)
                stub = checkpoint_pb2_grpc.CheckpointServiceStub(channel)  # type: ignore[no-untyped-call]
                entry = (channel, stub)
                self._async[loop] = entry
        return entry[1]

    def _call(self, method: Any, request: Any) -> Any:
        return method(request, metadata=self._metadata, timeout=self._timeout)

    async def _acall(self, method: str, request: Any) -> Any:
        rpc = getattr(self._async_stub(), method)
        return await rpc(request, metadata=self._metadata, timeout=self._timeout)

    def _call_unless_deleted(self, method: Any, request: Any) -> None:
        try:
            self._call(method, request)
        except grpc.RpcError as error:
            if not self._dropped_after_delete(error, request_execution(request)):
                raise

    async def _acall_unless_deleted(self, method: str, request: Any) -> None:
        try:
            await self._acall(method, request)
        except grpc.RpcError as error:
            if not self._dropped_after_delete(error, request_execution(request)):
                raise

    def _dropped_after_delete(self, error: grpc.RpcError, thread_id: str) -> bool:
        """True if the server refused the write because the thread (or run)
        was deleted: a late write LangGraph expects to vanish quietly.
        Raises OwnershipLostError if another saver owns the thread now."""
        condition = _condition(error)
        if condition == "OWNERSHIP_SUPERSEDED":
            raise OwnershipLostError(
                f"thread {thread_id!r} was claimed by another saver; this one may not write"
            ) from error
        if condition == "CHECKPOINT_DELETED":
            log.warning("dropped a write to deleted thread %r: %s", thread_id, _details(error))
            return True
        return False


_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 8 * 1024 * 1024),
    ("grpc.max_send_message_length", 8 * 1024 * 1024),
]


def request_execution(request: Any) -> str:
    if isinstance(request, pb.SaveCheckpointRequest):
        return str(request.checkpoint.execution_id)
    return str(getattr(request, "execution_id", ""))


def _config(thread_id: str, namespace: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": namespace,
            "checkpoint_id": checkpoint_id,
        }
    }


def _stored_config(config: RunnableConfig, checkpoint: Checkpoint) -> RunnableConfig:
    configurable = config["configurable"]
    return _config(
        configurable["thread_id"], configurable.get("checkpoint_ns", ""), checkpoint["id"]
    )


def _get_request(config: RunnableConfig) -> pb.GetCheckpointRequest:
    configurable = config["configurable"]
    return pb.GetCheckpointRequest(
        execution_id=str(configurable["thread_id"]),
        namespace=configurable.get("checkpoint_ns", ""),
        checkpoint_id=get_checkpoint_id(config) or "",
    )


def _list_request(
    config: RunnableConfig | None,
    filter: dict[str, Any] | None,
    before: RunnableConfig | None,
    limit: int | None,
) -> tuple[pb.ListCheckpointsRequest, str]:
    """The first page's request, and the one checkpoint id the config names
    (LangGraph lists only that checkpoint then), or ""."""
    configurable = (config or {}).get("configurable", {})
    before_conf = (before or {}).get("configurable", {})
    # `before` bounds by id only, as in LangGraph's own savers: its thread and
    # namespace do not narrow the listing, and its id may name a checkpoint
    # of another namespace (a subgraph replayed from a parent's checkpoint).
    request = pb.ListCheckpointsRequest(
        execution_id=str(configurable.get("thread_id") or ""),
        before_checkpoint_id=before_conf.get("checkpoint_id") or "",
        page_size=min(limit, LIST_PAGE_SIZE) if limit else LIST_PAGE_SIZE,
    )
    if "checkpoint_ns" in configurable:
        request.namespace = configurable["checkpoint_ns"]
    if filter:
        request.metadata_filter.CopyFrom(_struct(filter))
    return request, configurable.get("checkpoint_id") or ""


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(_json_safe(value))
    return struct


def _json_safe(value: Any) -> Any:
    """`value` as plain JSON for the server's Struct copy of the metadata
    (the exact metadata travels in the state payload)."""
    if isinstance(value, dict):
        return {str(key): _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.loads(json.dumps(value, default=str))


def _timestamp(ts: str | None) -> timestamp_pb2.Timestamp | None:
    if not ts:
        return None
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None  # the server stamps its own time
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def _keep_last(strategy: str) -> int:
    if strategy == "keep_latest":
        return 1
    if strategy == "delete":
        return 0
    raise ValueError(f"unknown prune strategy {strategy!r}; use 'keep_latest' or 'delete'")


def _batches(items: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), MAX_BATCH):
        yield list(items[start : start + MAX_BATCH])


def _backoff_delays() -> Iterator[float]:
    delay = 0.005
    while True:
        yield delay
        delay = min(delay * 2, 0.2)


def _checkpoint_in_flight(error: grpc.RpcError, deadline: float) -> bool:
    """LangGraph sends writes while the checkpoint's own put may still be on
    its way: NOT_FOUND is worth a wait until `deadline`."""
    return _code(error) == grpc.StatusCode.NOT_FOUND and time.monotonic() < deadline


def _code(error: grpc.RpcError) -> grpc.StatusCode | None:
    code = getattr(error, "code", None)
    return code() if callable(code) else None


def _details(error: grpc.RpcError) -> str:
    details = getattr(error, "details", None)
    return str(details()) if callable(details) else str(error)


def _condition(error: grpc.RpcError) -> str:
    """metadata["condition"] of the error's google.rpc.ErrorInfo, or ""."""
    try:
        status = rpc_status.from_call(error)
    except ValueError:
        return ""
    if status is None:
        return ""
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return str(info.metadata.get("condition", ""))
    return ""


# The BaseStore lives in its own module; it is part of this extra's API.
from statekeeper_client.langgraph_store import StatekeeperStore  # noqa: E402

__all__ = ["OwnershipLostError", "StatekeeperSaver", "StatekeeperStore"]
