"""StatekeeperStore and the ItemService behind it, beyond LangGraph's own
store tests (which have none on TTLs): expiry and refresh, create_time kept
on replace, the server's filters and ranking, refusals, tenants, and a
graph whose nodes read and write the store."""

from __future__ import annotations

import operator
import time
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import grpc
import pytest

pytest.importorskip("langgraph.store.base", reason="langgraph is not installed")

from google.protobuf import duration_pb2
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from statekeeper_client import Client
from statekeeper_client.langgraph import StatekeeperStore
from statekeeper_client.v1 import items_pb2 as pb
from tests.adapters.conftest import API_KEY, OTHER_API_KEY
from tests.adapters.langgraph_embed_test_utils import CharacterEmbeddings
from tests.harness.inproc import InProcessStatekeeper


@pytest.fixture
def namespace() -> tuple[str, ...]:
    return ("tests", uuid.uuid4().hex)


@pytest.fixture
def store(statekeeper_server: InProcessStatekeeper) -> Iterator[StatekeeperStore]:
    with StatekeeperStore(statekeeper_server.address, api_key=API_KEY) as made:
        yield made


@pytest.fixture
def client(statekeeper_server: InProcessStatekeeper) -> Iterator[Client]:
    with Client(statekeeper_server.address, api_key=API_KEY) as made:
        yield made


def seconds(value: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromNanoseconds(round(value * 1e9))
    return duration


def test_an_item_expires_after_its_ttl_everywhere(
    store: StatekeeperStore, client: Client, namespace: tuple[str, ...]
) -> None:
    put = client.items.PutItem(
        pb.PutItemRequest(
            namespace=list(namespace), key="brief", value_json='{"a": 1}', ttl=seconds(1)
        )
    ).item
    store.put(namespace, "stays", {"a": 2})
    # Not refreshing (LangGraph refreshes on read by default): the expiry
    # stays the put's.
    assert store.get(namespace, "brief", refresh_ttl=False) is not None
    expiry = put.expire_time.ToNanoseconds() / 1e9
    time.sleep(max(0.0, expiry - time.time()) + 0.05)  # until it has expired

    assert store.get(namespace, "brief") is None
    assert [item.key for item in store.search(namespace)] == ["stays"]
    store.delete(namespace, "stays")
    assert store.list_namespaces(prefix=namespace) == []
    with pytest.raises(grpc.RpcError) as gone:
        client.items.GetItem(pb.GetItemRequest(namespace=list(namespace), key="brief"))
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND
    again = client.items.PutItem(
        pb.PutItemRequest(namespace=list(namespace), key="brief", value_json="{}")
    ).item
    assert again.create_time.ToNanoseconds() > put.create_time.ToNanoseconds()


def test_reads_refresh_the_ttl_only_when_asked(client: Client, namespace: tuple[str, ...]) -> None:
    name: dict[str, Any] = {"namespace": list(namespace), "key": "k"}
    put = client.items.PutItem(pb.PutItemRequest(**name, value_json="{}", ttl=seconds(600))).item
    plain = client.items.GetItem(pb.GetItemRequest(**name)).item
    assert plain.expire_time == put.expire_time
    refreshed = client.items.GetItem(pb.GetItemRequest(**name, refresh_ttl=True)).item
    assert refreshed.expire_time.ToNanoseconds() > put.expire_time.ToNanoseconds()
    searched = client.items.SearchItems(
        pb.SearchItemsRequest(namespace_prefix=list(namespace), refresh_ttl=True)
    ).items[0]
    assert searched.item.expire_time.ToNanoseconds() > refreshed.expire_time.ToNanoseconds()
    assert client.items.GetItem(pb.GetItemRequest(**name)).item.expire_time == (
        searched.item.expire_time
    )


def test_the_store_ttl_config_is_in_minutes(
    statekeeper_server: InProcessStatekeeper, namespace: tuple[str, ...]
) -> None:
    with StatekeeperStore(
        statekeeper_server.address, api_key=API_KEY, ttl={"default_ttl": 2.0}
    ) as store:
        store.put(namespace, "k", {"v": 1})
        store.put(namespace, "forever", {"v": 2}, ttl=None)
        with Client(statekeeper_server.address, api_key=API_KEY) as client:
            got = client.items.GetItem(pb.GetItemRequest(namespace=list(namespace), key="k"))
            forever = client.items.GetItem(
                pb.GetItemRequest(namespace=list(namespace), key="forever")
            )
    lifetime = (got.item.expire_time.ToNanoseconds() - got.item.update_time.ToNanoseconds()) / 1e9
    assert lifetime == pytest.approx(120.0, abs=0.01)
    assert not forever.item.HasField("expire_time")


def test_replacing_keeps_create_time_and_moves_update_time(
    store: StatekeeperStore, namespace: tuple[str, ...]
) -> None:
    store.put(namespace, "k", {"v": 1})
    first = store.get(namespace, "k")
    store.put(namespace, "k", {"v": 2})
    second = store.get(namespace, "k")
    assert first is not None and second is not None
    assert second.value == {"v": 2}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at


def test_values_come_back_exactly(store: StatekeeperStore, namespace: tuple[str, ...]) -> None:
    value = {"int": 1, "float": 1.5, "big": 2**60, "text": "é \u0000 ✓", "list": [None, True]}
    store.put(namespace, "k", value)
    found = store.get(namespace, "k")
    assert found is not None and found.value == value
    assert isinstance(found.value["int"], int) and found.value["big"] == 2**60


def test_filters_run_in_the_server(store: StatekeeperStore, namespace: tuple[str, ...]) -> None:
    for index in range(6):
        store.put(
            namespace,
            f"k{index}",
            {"n": index, "kind": "even" if index % 2 == 0 else "odd", "meta": {"i": index}},
        )

    def keys(**kw: Any) -> list[str]:
        return sorted(item.key for item in store.search(namespace, limit=100, **kw))

    assert keys(filter={"kind": "odd"}) == ["k1", "k3", "k5"]
    assert keys(filter={"n": {"$gte": 2, "$lt": 4}}) == ["k2", "k3"]
    assert keys(filter={"n": {"$ne": 0}, "kind": "even"}) == ["k2", "k4"]
    assert keys(filter={"meta": {"i": 5}}) == ["k5"]
    assert keys(filter={"kind": {"$gt": 1}}) == []  # a text is not a number
    with pytest.raises(grpc.RpcError) as refused:
        store.search(namespace, filter={"n": {"$regex": "x"}})
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_ranking_puts_unscored_items_last(
    statekeeper_server: InProcessStatekeeper, namespace: tuple[str, ...]
) -> None:
    embeddings = CharacterEmbeddings(dims=50)
    index = {"dims": 50, "embed": embeddings, "fields": ["text"]}
    with StatekeeperStore(statekeeper_server.address, api_key=API_KEY, index=index) as store:  # type: ignore[arg-type]
        store.put(namespace, "plain", {"text": "apple pie"}, index=False)
        store.put(namespace, "far", {"text": "zzzz qqqq"})
        store.put(namespace, "near", {"text": "apple pies"})
        found = store.search(namespace, query="apple pie")
    assert [item.key for item in found] == ["near", "far", "plain"]
    assert found[0].score is not None and found[1].score is not None
    assert found[0].score > found[1].score and found[2].score is None


def test_refusals_name_the_field(client: Client) -> None:
    cases = [
        (pb.PutItemRequest(namespace=[], key="k", value_json="{}"), "namespace"),
        (pb.PutItemRequest(namespace=["a\x01"], key="k", value_json="{}"), "namespace[0]"),
        (pb.PutItemRequest(namespace=["a"], key="", value_json="{}"), "key"),
        (pb.PutItemRequest(namespace=["a"], key="k", value_json="[1]"), "value_json"),
        (pb.PutItemRequest(namespace=["a"], key="k", value_json="{"), "value_json"),
        # Nesting past the parser's recursion limit, and past the matcher's bound.
        (pb.PutItemRequest(namespace=["a"], key="k", value_json=deep(5000)), "value_json"),
        (pb.PutItemRequest(namespace=["a"], key="k", value_json=deep(100)), "value_json"),
    ]
    for request, field in cases:
        with pytest.raises(grpc.RpcError) as refused:
            client.items.PutItem(request)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert field in (refused.value.details() or "")
    with pytest.raises(grpc.RpcError) as refused:
        client.items.SearchItems(
            pb.SearchItemsRequest(namespace_prefix=["a"], filter_json=deep(900))
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "filter_json" in (refused.value.details() or "")


def deep(levels: int) -> str:
    """A JSON object whose value nests `levels` arrays."""
    return '{"a": ' + "[" * levels + "]" * levels + "}"


def test_tenants_do_not_see_each_other(
    statekeeper_server: InProcessStatekeeper, namespace: tuple[str, ...]
) -> None:
    with StatekeeperStore(statekeeper_server.address, api_key=API_KEY) as store:
        store.put(namespace, "k", {"v": 1})
    with StatekeeperStore(statekeeper_server.address, api_key=OTHER_API_KEY) as other:
        assert other.get(namespace, "k") is None
        assert other.search(namespace) == []


class Conversation(TypedDict):
    said: Annotated[list[str], operator.add]


def test_a_graph_remembers_across_threads(
    store: StatekeeperStore, namespace: tuple[str, ...]
) -> None:
    """Nodes read and write the store; a second thread sees the first's
    memory (the store is cross-thread, the checkpointer per thread)."""

    def remember(state: Conversation, *, store: BaseStore) -> dict[str, Any]:
        known = [item.value["fact"] for item in store.search(namespace)]
        fact = state["said"][-1]
        store.put(namespace, uuid.uuid4().hex, {"fact": fact})
        return {"said": [f"knew {sorted(known)}"]}

    builder = StateGraph(Conversation)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    graph = builder.compile(checkpointer=InMemorySaver(), store=store)
    graph.invoke({"said": ["likes tea"]}, {"configurable": {"thread_id": "one"}})
    out = graph.invoke({"said": ["likes jazz"]}, {"configurable": {"thread_id": "two"}})
    assert out["said"] == ["likes jazz", "knew ['likes tea']"]
