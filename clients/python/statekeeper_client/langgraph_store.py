"""StatekeeperStore: a LangGraph BaseStore kept by statekeeper's ItemService
(the `langgraph` extra; importable as statekeeper_client.langgraph.StatekeeperStore).

    from statekeeper_client.langgraph import StatekeeperStore

    store = StatekeeperStore("127.0.0.1:50051", api_key="sk-...",
                             index={"dims": 1536, "embed": embeddings, "fields": ["text"]},
                             ttl={"default_ttl": 60})
    graph = builder.compile(checkpointer=saver, store=store)

The server keeps the items, matches filters, expires items by TTL (minutes
here, as in LangGraph) and ranks by vector similarity. Embeddings are
computed here with the index config's `embed`, for its `fields` (or a put's
`index`), exactly as LangGraph's own stores do, and sent with the item; a
search's query is embedded the same way. Sync (`batch`) and async
(`abatch`) both work; the async side keeps one channel per event loop.

As in LangGraph's stores, the reads of one batch see the items as they were
before the batch, and its puts apply after them (the last put of a key wins).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any, cast

import grpc
from google.protobuf import duration_pb2
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from statekeeper_client.aio import AsyncClient
from statekeeper_client.client import Client
from statekeeper_client.v1 import items_pb2 as pb

__all__ = ["StatekeeperStore"]

Fields = list[tuple[str, str | list[str]]]
_ALL = "$"


class StatekeeperStore(BaseStore):
    """LangGraph's BaseStore over a statekeeper server (ItemService)."""

    supports_ttl = True

    def __init__(
        self,
        target: str,
        *,
        api_key: str | None = None,
        bearer_token: str | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.index_config = index
        self.ttl_config = ttl
        self.embeddings: Embeddings | None = (
            ensure_embeddings(index.get("embed")) if index is not None else None
        )
        self._fields: Fields = _tokenized((index or {}).get("fields") or [_ALL])
        self._target = target
        self._auth: dict[str, Any] = {
            "api_key": api_key,
            "bearer_token": bearer_token,
            "timeout": timeout,
        }
        self._client: Client | None = None
        self._aclients: dict[asyncio.AbstractEventLoop, AsyncClient] = {}
        self._lock = threading.Lock()

    # ----- BaseStore -----------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        plan = _Plan(ops)
        stub = self._sync_items()
        queries = {q: self._embed_query(q) for q in plan.queries() if self.embeddings}
        results = [self._read(stub, op, queries) for op in plan.reads_in_order()]
        vectors = self._embed_puts(plan.puts)
        for op in plan.puts:
            _write(stub, op, vectors.get((op.namespace, op.key), []))
        return plan.answers(results)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        plan = _Plan(ops)
        stub = self._async_items()
        queries = {}
        if self.embeddings:
            for query in plan.queries():
                queries[query] = await self.embeddings.aembed_query(query)
        results = [await self._aread(stub, op, queries) for op in plan.reads_in_order()]
        vectors = await self._aembed_puts(plan.puts)
        for op in plan.puts:
            await _awrite(stub, op, vectors.get((op.namespace, op.key), []))
        return plan.answers(results)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
            self._aclients.clear()

    async def aclose(self) -> None:
        with self._lock:
            client = self._aclients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def __enter__(self) -> StatekeeperStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- reads ---------------------------------------------------------------------

    def _read(self, stub: Any, op: Op, queries: dict[str, list[float]]) -> Result:
        request = _read_request(op, queries)
        try:
            reply = getattr(stub, _READ_METHODS[type(op)])(request)
        except grpc.RpcError as error:
            if isinstance(op, GetOp) and error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return _read_result(op, reply)

    async def _aread(self, stub: Any, op: Op, queries: dict[str, list[float]]) -> Result:
        request = _read_request(op, queries)
        try:
            reply = await getattr(stub, _READ_METHODS[type(op)])(request)
        except grpc.RpcError as error:
            if isinstance(op, GetOp) and error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return _read_result(op, reply)

    # ----- embeddings ----------------------------------------------------------------

    def _embed_query(self, query: str) -> list[float]:
        assert self.embeddings is not None
        return self.embeddings.embed_query(query)

    def _embed_puts(self, puts: Sequence[PutOp]) -> dict[tuple[tuple[str, ...], str], Any]:
        texts = self._texts(puts)
        if not texts:
            return {}
        assert self.embeddings is not None
        embedded = self.embeddings.embed_documents([text for _, _, text in texts])
        return _vectors_by_item(texts, embedded)

    async def _aembed_puts(self, puts: Sequence[PutOp]) -> dict[tuple[tuple[str, ...], str], Any]:
        texts = self._texts(puts)
        if not texts:
            return {}
        assert self.embeddings is not None
        embedded = await self.embeddings.aembed_documents([text for _, _, text in texts])
        return _vectors_by_item(texts, embedded)

    def _texts(self, puts: Sequence[PutOp]) -> list[tuple[tuple[tuple[str, ...], str], str, str]]:
        """(item, field, text) of every text to embed, as LangGraph's stores
        pick them: the put's `index` fields, else the index config's."""
        if self.embeddings is None:
            return []
        found = []
        for op in puts:
            if op.value is None or op.index is False:
                continue
            fields = self._fields if op.index is None else _tokenized(op.index)
            for path, tokens in fields:
                texts = get_text_at_path(op.value, tokens)
                for position, text in enumerate(texts):
                    field = path if len(texts) == 1 else f"{path}.{position}"
                    found.append(((op.namespace, op.key), field, text))
        return found

    # ----- channels ------------------------------------------------------------------

    def _sync_items(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = Client(self._target, **self._auth)
            return self._client.items

    def _async_items(self) -> Any:
        loop = asyncio.get_running_loop()
        with self._lock:
            for stale in [known for known in self._aclients if known.is_closed()]:
                del self._aclients[stale]
            client = self._aclients.get(loop)
            if client is None:
                client = AsyncClient(self._target, **self._auth)
                self._aclients[loop] = client
            return client.items


class _Plan:
    """The ops of one batch: reads in order, then the puts (last per key)."""

    def __init__(self, ops: Iterable[Op]) -> None:
        self.ops = list(ops)
        for op in self.ops:
            validate_op_namespace(op)
            if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
                raise ValueError(f"Unknown operation type: {type(op)}")
        latest: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in self.ops:
            if isinstance(op, PutOp):
                latest[(op.namespace, op.key)] = op
        self.puts = list(latest.values())

    def queries(self) -> set[str]:
        return {op.query for op in self.ops if isinstance(op, SearchOp) and op.query}

    def reads_in_order(self) -> list[Op]:
        return [op for op in self.ops if not isinstance(op, PutOp)]

    def answers(self, read_results: list[Result]) -> list[Result]:
        results = iter(read_results)
        return [None if isinstance(op, PutOp) else next(results) for op in self.ops]


_READ_METHODS: dict[type, str] = {
    GetOp: "GetItem",
    SearchOp: "SearchItems",
    ListNamespacesOp: "ListItemNamespaces",
}


def _read_request(op: Op, queries: dict[str, list[float]]) -> Any:
    if isinstance(op, GetOp):
        return pb.GetItemRequest(
            namespace=list(op.namespace), key=str(op.key), refresh_ttl=op.refresh_ttl
        )
    if isinstance(op, SearchOp):
        return pb.SearchItemsRequest(
            namespace_prefix=list(op.namespace_prefix),
            filter_json=json.dumps(op.filter) if op.filter else "",
            query_vector=queries.get(op.query or "", []),
            limit=op.limit,
            offset=op.offset,
            refresh_ttl=op.refresh_ttl,
        )
    assert isinstance(op, ListNamespacesOp)
    request = pb.ListItemNamespacesRequest(
        max_depth=op.max_depth or 0, limit=op.limit, offset=op.offset
    )
    for condition in op.match_conditions or ():
        target = request.prefix if condition.match_type == "prefix" else request.suffix
        target.extend(condition.path)
    return request


def _read_result(op: Op, reply: Any) -> Result:
    if isinstance(op, GetOp):
        return _item(reply.item)
    if isinstance(op, SearchOp):
        return [_search_item(found) for found in reply.items]
    return [tuple(namespace.labels) for namespace in reply.namespaces]


def _put_request(op: PutOp, vectors: list[tuple[str, list[float]]]) -> Any:
    request = pb.PutItemRequest(
        namespace=list(op.namespace),
        key=str(op.key),
        value_json=json.dumps(op.value),
        vectors=[pb.ItemVector(field=field, values=values) for field, values in vectors],
    )
    if op.ttl is not None:
        request.ttl.CopyFrom(_minutes(op.ttl))
    return request


def _write(stub: Any, op: PutOp, vectors: list[tuple[str, list[float]]]) -> None:
    if op.value is None:
        stub.DeleteItem(pb.DeleteItemRequest(namespace=list(op.namespace), key=str(op.key)))
    else:
        stub.PutItem(_put_request(op, vectors))


async def _awrite(stub: Any, op: PutOp, vectors: list[tuple[str, list[float]]]) -> None:
    if op.value is None:
        await stub.DeleteItem(pb.DeleteItemRequest(namespace=list(op.namespace), key=str(op.key)))
    else:
        await stub.PutItem(_put_request(op, vectors))


def _minutes(minutes: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromNanoseconds(round(minutes * 60 * 1e9))
    return duration


def _tokenized(fields: Sequence[str]) -> Fields:
    return [(path, path if path == _ALL else tokenize_path(path)) for path in fields]


def _vectors_by_item(
    texts: list[tuple[tuple[tuple[str, ...], str], str, str]], embedded: list[list[float]]
) -> dict[tuple[tuple[str, ...], str], Any]:
    by_item: dict[tuple[tuple[str, ...], str], list[tuple[str, list[float]]]] = {}
    for (name, field, _), vector in zip(texts, embedded, strict=True):
        by_item.setdefault(name, []).append((field, vector))
    return by_item


def _time(stamp: Any) -> datetime:
    return cast(datetime, stamp.ToDatetime(tzinfo=timezone.utc))


def _item(item: Any) -> Item:
    return Item(
        value=json.loads(item.value_json),
        key=item.key,
        namespace=tuple(item.namespace),
        created_at=_time(item.create_time),
        updated_at=_time(item.update_time),
    )


def _search_item(found: Any) -> SearchItem:
    item = found.item
    return SearchItem(
        namespace=tuple(item.namespace),
        key=item.key,
        value=json.loads(item.value_json),
        created_at=_time(item.create_time),
        updated_at=_time(item.update_time),
        score=found.score if found.HasField("score") else None,
    )
