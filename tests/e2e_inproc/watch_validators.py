"""The watch guarantees of etcd's robustness tests
(tests/robustness/validate/watch.go), ported to recorded Watch streams.

A `ClientReport` is what one watching client saw: its watch operations in
order (each a request and the responses it got before it disconnected).
`history` is the authoritative list of every event of the board, in
revision order, taken from the writers' own replies, not from any watch.
Each validator raises AssertionError naming the broken guarantee.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class WatchEvent:
    revision: int
    key: str
    type: int


@dataclass
class WatchResponseRecord:
    events: list[WatchEvent] = field(default_factory=list)
    progress_revision: int | None = None
    resume_revision: int = 0


@dataclass
class WatchOperation:
    start_revision: int
    matches: Callable[[str], bool]
    responses: list[WatchResponseRecord] = field(default_factory=list)

    def events(self) -> Iterator[WatchEvent]:
        for response in self.responses:
            yield from response.events


@dataclass
class ClientReport:
    client_id: int
    watches: list[WatchOperation] = field(default_factory=list)

    def events(self) -> Iterator[WatchEvent]:
        for watch in self.watches:
            yield from watch.events()


def validate_all(history: list[WatchEvent], reports: list[ClientReport]) -> None:
    for report in reports:
        validate_ordered(report)
        validate_unique(report)
        validate_atomic(history, report)
        validate_bookmarkable(report)
        validate_reliable(history, report)
        validate_resumable(history, report)
        validate_complete(history, report)


def validate_ordered(report: ClientReport) -> None:
    """Events come in ascending revision order, across resumes too."""
    last = 0
    for event in report.events():
        assert event.revision >= last, (
            f"Ordered: client {report.client_id} got revision {event.revision} after {last}"
        )
        last = event.revision


def validate_unique(report: ClientReport) -> None:
    """No (revision, key) event is delivered twice, across resumes too."""
    seen: set[tuple[int, str]] = set()
    for event in report.events():
        marker = (event.revision, event.key)
        assert marker not in seen, (
            f"Unique: client {report.client_id} got {event.key!r}@{event.revision} twice"
        )
        seen.add(marker)


def validate_atomic(history: list[WatchEvent], report: ClientReport) -> None:
    """A revision is never split over responses: as etcd checks, a response
    never starts with the revision the previous one ended with; and, with
    the history at hand, every revision in a response carries all of its
    matching events."""
    for watch in report.watches:
        last_revision = 0
        for response in watch.responses:
            if not response.events:
                continue
            first = response.events[0].revision
            assert first != last_revision, (
                f"Atomic: client {report.client_id} got revision {first} split over responses"
            )
            last_revision = response.events[-1].revision
            for revision in {e.revision for e in response.events}:
                expected = [e for e in history if e.revision == revision and watch.matches(e.key)]
                got = [e for e in response.events if e.revision == revision]
                assert got == expected, (
                    f"Atomic: revision {revision} delivered as {got}, it holds {expected}"
                )


def validate_bookmarkable(report: ClientReport) -> None:
    """After a progress notification at P, no event at or below P."""
    for watch in report.watches:
        bookmark = 0
        for response in watch.responses:
            for event in response.events:
                assert event.revision > bookmark, (
                    f"Bookmarkable: client {report.client_id} got revision {event.revision}"
                    f" after progress {bookmark}"
                )
            if response.progress_revision is not None:
                bookmark = response.progress_revision


def validate_reliable(history: list[WatchEvent], report: ClientReport) -> None:
    """Within each watch, the events received are a gap-free run of the
    matching history, from the first one received."""
    for watch in report.watches:
        received = list(watch.events())
        if not received:
            continue
        matching = [
            e for e in history if e.revision >= received[0].revision and watch.matches(e.key)
        ]
        assert received == matching[: len(received)], (
            f"Reliable: client {report.client_id} watch from {watch.start_revision} got"
            f" {_first_difference(received, matching)}"
        )


def validate_resumable(history: list[WatchEvent], report: ClientReport) -> None:
    """The first event of a watch is the first matching event at or after
    its requested start revision."""
    for watch in report.watches:
        first = next(watch.events(), None)
        if first is None:
            continue
        expected = next(
            (e for e in history if e.revision >= watch.start_revision and watch.matches(e.key)),
            None,
        )
        assert first == expected, (
            f"Resumable: client {report.client_id} watch from {watch.start_revision} began"
            f" with {first}, expected {expected}"
        )


def validate_complete(history: list[WatchEvent], report: ClientReport) -> None:
    """Across all its resumes, the client saw every matching event from its
    first start revision, exactly once (no gap at any reconnection)."""
    if not report.watches:
        return
    start = report.watches[0].start_revision
    matches = report.watches[0].matches
    expected = [e for e in history if e.revision >= start and matches(e.key)]
    received = list(report.events())
    assert received == expected[: len(received)], (
        f"Complete: client {report.client_id} {_first_difference(received, expected)}"
    )


def _first_difference(received: list[WatchEvent], expected: list[WatchEvent]) -> str:
    for index, (got, want) in enumerate(zip(received, expected, strict=False)):
        if got != want:
            return f"event #{index} is {got}, expected {want}"
    if len(received) > len(expected):
        return f"{len(received) - len(expected)} events more than the history holds"
    return "no difference"
