"""Watch responses are serialized once per dispatch: watchers that share an
events tuple and header get the very same bytes, which parse to what the
proto conversion builds; anything else is encoded on its own."""

from __future__ import annotations

from statekeeper.api.blackboard_convert import (
    SerializedWatchResponses,
    serialized_watch_response,
    watch_message_to_proto,
)
from statekeeper.core.blackboard.models import Entry, Event, EventType, Header, Value
from statekeeper.core.blackboard.watch import WatchMessage, WatchMessageKind
from statekeeper_client.v1 import blackboard_pb2 as pb


def events_at(revision: int) -> tuple[Event, ...]:
    entry = Entry("b", f"k{revision}", Value.payload(b"v"), revision, revision, 1)
    return (Event(EventType.PUT, entry, None),)


def message(events: tuple[Event, ...], header: Header) -> WatchMessage:
    last = events[-1].revision
    return WatchMessage(WatchMessageKind.EVENTS, header, last + 1, events=events)


def test_watchers_sharing_a_dispatch_get_the_same_bytes() -> None:
    encode = SerializedWatchResponses()
    events = events_at(7)
    first = encode(message(events, Header(7, 1)))
    second = encode(message(events, Header(7, 1)))
    assert first is second
    parsed = pb.WatchResponse.FromString(first)
    assert parsed == watch_message_to_proto(message(events, Header(7, 1)))
    assert [e.entry.key for e in parsed.events.events] == ["k7"]
    assert parsed.resume_revision == 8


def test_another_header_or_equal_events_of_another_dispatch_are_encoded_anew() -> None:
    encode = SerializedWatchResponses()
    events = events_at(7)
    shared = encode(message(events, Header(7, 1)))
    later = encode(message(events, Header(9, 1)))
    assert pb.WatchResponse.FromString(later).header.revision == 9
    assert pb.WatchResponse.FromString(shared).header.revision == 7
    # Equal but not the same tuple: keyed by identity, never by a stale id.
    copy = encode(message(events_at(7), Header(7, 1)))
    assert copy == shared and copy is not shared


def test_the_cache_stays_small_and_other_messages_are_not_kept() -> None:
    encode = SerializedWatchResponses(size=4)
    kept = [events_at(revision) for revision in range(1, 20)]
    for events in kept:
        encode(message(events, Header(events[0].revision, 1)))
    assert len(encode._recent) == 4
    started = WatchMessage(WatchMessageKind.STARTED, Header(3, 1), 4, revision=4)
    parsed = pb.WatchResponse.FromString(encode(started))
    assert parsed.started.start_revision == 4
    assert len(encode._recent) == 4


def test_the_watch_serializer_passes_bytes_through_and_encodes_messages() -> None:
    response = pb.WatchResponse(resume_revision=5)
    assert serialized_watch_response(b"abc") == b"abc"
    assert serialized_watch_response(response) == response.SerializeToString()
