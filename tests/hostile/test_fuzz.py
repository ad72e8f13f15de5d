"""A property fuzzer of every RPC of every service the server reflects, on
both backends: whatever a caller sends, the answer is never INTERNAL or
UNKNOWN (bad input is INVALID_ARGUMENT, oversized RESOURCE_EXHAUSTED, and so
on; a hang is cut by a short deadline, which is allowed).

Requests are built from the descriptors the server itself serves through
reflection (so a new RPC or field is fuzzed without touching this file),
with hypothesis drawing each field from edge values: empty, NUL-laden,
huge and non-ASCII strings, integer extremes, NaN and infinities, malformed
and far-out Durations and Timestamps, Structs with NaN or NUL keys, unknown
enum numbers, and a few fixed ids so that calls meet what earlier calls made.

Examples are bounded (FUZZ_EXAMPLES per RPC, environment
STATEKEEPER_FUZZ_EXAMPLES) so a backend takes a minute or so.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness.servers import ServerProcess
from tests.hostile.conftest import ALPHA

FUZZ_EXAMPLES = int(os.environ.get("STATEKEEPER_FUZZ_EXAMPLES", "60"))
CALL_SECONDS = 1.0
MAX_DEPTH = 3
FORBIDDEN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
SERVICE_PREFIX = "statekeeper."

# ----- values -------------------------------------------------------------------------------

FIXED_IDS = ["x", "s1", "agent-1", "board", "k", "user-1", "wf", "c1", "e1"]
EDGE_STRINGS = [
    "",
    "\x00",
    "a\x00b",
    " ",
    "*",
    "**/?[",
    "../..",
    "%s%n",
    "é漢🙂",
    "\u202e\ufeff",
    "a" * 300,
    "z" * 70_000,
    "{}",
    "9999-12-31T23:59:59Z",
    "application/json",
]
INT32_EDGES = [0, 1, -1, 2, 7, 1000, 2**31 - 1, -(2**31)]
INT64_EDGES = [*INT32_EDGES, 2**53, 2**63 - 1, -(2**63)]
FLOAT_EDGES = [0.0, -0.0, 0.5, 1.0, -1.0, 1e-300, 1e300, -1e300, math.nan, math.inf, -math.inf]
DURATION_SECONDS = [0, 1, 5, -1, 60, 3_155_760_000, 3_155_760_001, 315_576_000_000, -(2**63)]
TIMESTAMP_SECONDS = [0, 1_700_000_000, -1, 253_402_300_799, 9_214_646_399, 10**12, -(2**62)]
NANOS = [0, 1, 999_999_999, 1_000_000_000, -1, -999_999_999, 2**31 - 1]


@dataclass(frozen=True)
class Kind:
    """How to draw one kind of value: `plausible` values get a call past
    validation into the domain and the stores; `edge` values probe it."""

    plausible: st.SearchStrategy[Any]
    edge: st.SearchStrategy[Any]


def ints(bits: int, signed: bool) -> Kind:
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    edges = [v for v in (INT64_EDGES if bits == 64 else INT32_EDGES) if low <= v <= high]
    return Kind(st.integers(0, 20), st.one_of(st.sampled_from(edges), st.integers(low, high)))


def seconds_and_nanos(plausible_seconds: st.SearchStrategy[int], edge_seconds: list[int]) -> Kind:
    return Kind(
        st.tuples(plausible_seconds, st.integers(0, 999_999_999)),
        st.tuples(st.sampled_from(edge_seconds), st.sampled_from(NANOS)),
    )


TEXT = Kind(
    st.one_of(st.sampled_from(FIXED_IDS), st.text(max_size=24)), st.sampled_from(EDGE_STRINGS)
)
FLOAT = Kind(st.floats(0.0, 1.0), st.one_of(st.sampled_from(FLOAT_EDGES), st.floats(width=32)))
DURATION = seconds_and_nanos(st.integers(0, 120), DURATION_SECONDS)
TIMESTAMP = seconds_and_nanos(st.integers(946_684_800, 4_102_444_800), TIMESTAMP_SECONDS)
SCALARS: dict[int, Kind] = {
    FieldDescriptor.TYPE_STRING: TEXT,
    FieldDescriptor.TYPE_BYTES: Kind(
        st.binary(max_size=48),
        st.sampled_from([b"", b"\x00", b'{"a": NaN}', b"\xff\xfe", b'{"k": [1, {"x": 1e999}]}']),
    ),
    FieldDescriptor.TYPE_BOOL: Kind(st.booleans(), st.booleans()),
    FieldDescriptor.TYPE_DOUBLE: FLOAT,
    FieldDescriptor.TYPE_FLOAT: FLOAT,
    FieldDescriptor.TYPE_INT32: ints(32, True),
    FieldDescriptor.TYPE_SINT32: ints(32, True),
    FieldDescriptor.TYPE_SFIXED32: ints(32, True),
    FieldDescriptor.TYPE_INT64: ints(64, True),
    FieldDescriptor.TYPE_SINT64: ints(64, True),
    FieldDescriptor.TYPE_SFIXED64: ints(64, True),
    FieldDescriptor.TYPE_UINT32: ints(32, False),
    FieldDescriptor.TYPE_FIXED32: ints(32, False),
    FieldDescriptor.TYPE_UINT64: ints(64, False),
    FieldDescriptor.TYPE_FIXED64: ints(64, False),
}


def json_values(draw_scalar: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        st.one_of(st.none(), st.booleans(), draw_scalar),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(TEXT.plausible, inner, max_size=3)
        ),
        max_leaves=6,
    )


@dataclass(frozen=True)
class Draw:
    """One request's drawing: `hostile` requests give each value a one in
    four chance of being an edge value; the others are all plausible, so
    that both the validation and what lies behind it get exercised."""

    draw: st.DrawFn
    hostile: bool

    def pick(self, kind: Kind) -> Any:
        edge = self.hostile and self.draw(st.integers(0, 3)) == 0
        return self.draw(kind.edge if edge else kind.plausible)

    def scalar(self, field: FieldDescriptor) -> Any:
        if field.type != FieldDescriptor.TYPE_ENUM:
            return self.pick(SCALARS[field.type])
        assert field.enum_type is not None
        numbers = [value.number for value in field.enum_type.values]
        return self.pick(Kind(st.sampled_from(numbers), st.sampled_from([-1, 99, 2**31 - 1])))


@st.composite
def requests(draw: st.DrawFn, descriptor: Descriptor) -> Message:
    return fill(Draw(draw, hostile=draw(st.booleans())), descriptor, 0)


def fill(draw: Draw, descriptor: Descriptor, depth: int) -> Message:
    """A message of `descriptor` with a random subset of its fields set."""
    message = message_factory.GetMessageClass(descriptor)()
    name = descriptor.full_name
    if name in ("google.protobuf.Duration", "google.protobuf.Timestamp"):
        drawn = draw.pick(DURATION if name.endswith("Duration") else TIMESTAMP)
        message.seconds, message.nanos = drawn  # type: ignore[attr-defined]
        return message
    if name == "google.protobuf.Struct":
        leaf = st.one_of(TEXT.plausible, FLOAT.plausible)
        if draw.hostile:
            leaf = st.one_of(leaf, TEXT.edge, FLOAT.edge)
        keys = st.one_of(TEXT.plausible, TEXT.edge) if draw.hostile else TEXT.plausible
        message.update(draw.draw(st.dictionaries(keys, json_values(leaf), max_size=4)))  # type: ignore[attr-defined]
        return message
    for field in descriptor.fields:
        if draw.draw(st.integers(0, 3)) > 0:  # about three quarters of the fields set
            set_field(draw, message, field, depth)
    return message


def set_field(draw: Draw, message: Message, field: FieldDescriptor, depth: int) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        assert field.message_type is not None
        set_message_field(draw, message, field, field.message_type, depth)
        return
    if field.is_repeated:
        count = draw.draw(st.integers(0, 3))
        getattr(message, field.name).extend(draw.scalar(field) for _ in range(count))
    else:
        setattr(message, field.name, draw.scalar(field))


def set_message_field(
    draw: Draw, message: Message, field: FieldDescriptor, type_: Descriptor, depth: int
) -> None:
    if type_.GetOptions().map_entry:
        key_field = type_.fields_by_name["key"]
        value_field = type_.fields_by_name["value"]
        target = getattr(message, field.name)
        for _ in range(draw.draw(st.integers(0, 3))):
            key = draw.scalar(key_field)
            if value_field.message_type is not None:
                if depth < MAX_DEPTH:
                    target[key].CopyFrom(fill(draw, value_field.message_type, depth + 1))
            else:
                target[key] = draw.scalar(value_field)
        return
    if depth >= MAX_DEPTH:
        return
    target = getattr(message, field.name)
    if not field.is_repeated:
        target.CopyFrom(fill(draw, type_, depth + 1))
        return
    for _ in range(draw.draw(st.integers(0, 3))):
        target.add().CopyFrom(fill(draw, type_, depth + 1))


# ----- the server's RPCs, through reflection -------------------------------------------------


def reflected_methods(address: str) -> list[MethodDescriptor]:
    with grpc.insecure_channel(address) as channel:
        database = ProtoReflectionDescriptorDatabase(channel)
        pool = descriptor_pool.DescriptorPool(database)
        services = [s for s in database.get_services() if s.startswith(SERVICE_PREFIX)]
        return [
            method for service in services for method in pool.FindServiceByName(service).methods
        ]


@pytest.fixture(scope="module")
def methods(statekeeper: ServerProcess) -> list[MethodDescriptor]:
    found = reflected_methods(statekeeper.address)
    services = {method.containing_service.name for method in found}
    assert {"SessionService", "MemoryService", "CheckpointService", "BlackboardService"} <= services
    assert {"MessageService", "AdminService"} <= services
    return found


@pytest.fixture(scope="module")
def channel(statekeeper: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(statekeeper.address) as opened:
        yield opened


def call(channel: grpc.Channel, method: MethodDescriptor, request: Message) -> grpc.StatusCode:
    """The status code of one call (OK, or the code it failed with)."""
    path = f"/{method.containing_service.full_name}/{method.name}"
    serialize, keep_bytes = type(request).SerializeToString, None
    try:
        if method.client_streaming:
            return grpc.StatusCode.OK  # the contract has none; nothing to send
        if method.server_streaming:
            stream = channel.unary_stream(path, serialize, keep_bytes)(
                request, metadata=ALPHA, timeout=CALL_SECONDS
            )
            for _ in stream:
                break
            stream.cancel()
        else:
            channel.unary_unary(path, serialize, keep_bytes)(
                request, metadata=ALPHA, timeout=CALL_SECONDS
            )
    except grpc.RpcError as error:
        code: grpc.StatusCode = error.code()
        return code
    return grpc.StatusCode.OK


def fuzz_one(channel: grpc.Channel, method: MethodDescriptor) -> None:
    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(request=requests(method.input_type))
    def property_(request: Message) -> None:
        code = call(channel, method, request)
        assert code not in FORBIDDEN, (
            f"{method.full_name} answered {code.name} to {request!r:.2000}"
        )

    property_()


def test_no_rpc_answers_internal_or_unknown(
    methods: list[MethodDescriptor], channel: grpc.Channel, statekeeper: ServerProcess
) -> None:
    failures = []
    for method in methods:
        try:
            fuzz_one(channel, method)
        except AssertionError as failure:
            failures.append(str(failure).splitlines()[0][:3000])
    assert not failures, (
        "\n".join(failures) + "\n--- server log tail ---\n" + statekeeper.log_tail()
    )
