"""ItemService: translates requests into ItemManager calls."""

from __future__ import annotations

import grpc

from statekeeper.api.convert import optional_seconds, timestamp
from statekeeper.api.interceptor import current_tenant
from statekeeper.core.items.models import ItemRecord, ItemVector, NamespaceQuery, SearchQuery
from statekeeper.core.items.service import ItemManager
from statekeeper_client.v1 import items_pb2 as pb
from statekeeper_client.v1 import items_pb2_grpc


class ItemServicer(items_pb2_grpc.ItemServiceServicer):
    def __init__(self, items: ItemManager) -> None:
        self._items = items

    async def PutItem(
        self, request: pb.PutItemRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutItemResponse:
        stored = await self._items.put(
            current_tenant(),
            list(request.namespace),
            request.key,
            request.value_json,
            optional_seconds(request, "ttl"),
            [ItemVector(v.field, tuple(v.values)) for v in request.vectors],
        )
        return pb.PutItemResponse(item=item_to_proto(stored))

    async def GetItem(
        self, request: pb.GetItemRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetItemResponse:
        found = await self._items.get(
            current_tenant(), list(request.namespace), request.key, request.refresh_ttl
        )
        return pb.GetItemResponse(item=item_to_proto(found))

    async def DeleteItem(
        self, request: pb.DeleteItemRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteItemResponse:
        deleted = await self._items.delete(current_tenant(), list(request.namespace), request.key)
        return pb.DeleteItemResponse(deleted=deleted)

    async def SearchItems(
        self, request: pb.SearchItemsRequest, context: grpc.aio.ServicerContext
    ) -> pb.SearchItemsResponse:
        query = SearchQuery(
            namespace_prefix=tuple(request.namespace_prefix),
            filter_json=request.filter_json,
            query_vector=tuple(request.query_vector),
            limit=request.limit,
            offset=request.offset,
            refresh_ttl=request.refresh_ttl,
        )
        found = await self._items.search(current_tenant(), query)
        return pb.SearchItemsResponse(
            items=[pb.ScoredItem(item=item_to_proto(s.record), score=s.score) for s in found]
        )

    async def ListItemNamespaces(
        self, request: pb.ListItemNamespacesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListItemNamespacesResponse:
        query = NamespaceQuery(
            prefix=tuple(request.prefix),
            suffix=tuple(request.suffix),
            max_depth=request.max_depth,
            limit=request.limit,
            offset=request.offset,
        )
        found = await self._items.list_namespaces(current_tenant(), query)
        return pb.ListItemNamespacesResponse(
            namespaces=[pb.ItemNamespace(labels=list(labels)) for labels in found]
        )


def item_to_proto(record: ItemRecord) -> pb.Item:
    return pb.Item(
        namespace=list(record.namespace),
        key=record.key,
        value_json=record.value_json,
        create_time=timestamp(record.create_time),
        update_time=timestamp(record.update_time),
        expire_time=timestamp(record.expire_time),
    )


def register(server: grpc.aio.Server, items: ItemManager) -> None:
    """Adds ItemService, backed by `items`, to `server`."""
    items_pb2_grpc.add_ItemServiceServicer_to_server(  # type: ignore[no-untyped-call]
        ItemServicer(items), server
    )
