"""The etcd watch validators catch each violation they exist for; otherwise
the robustness run could pass by checking nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.e2e_inproc.watch_validators import (
    ClientReport,
    WatchEvent,
    WatchOperation,
    WatchResponseRecord,
    validate_all,
    validate_atomic,
    validate_bookmarkable,
    validate_complete,
    validate_ordered,
    validate_reliable,
    validate_resumable,
    validate_unique,
)

A1, B1 = WatchEvent(1, "a", 1), WatchEvent(1, "b", 1)
A2, A3, B4 = WatchEvent(2, "a", 1), WatchEvent(3, "a", 2), WatchEvent(4, "b", 1)
HISTORY = [A1, B1, A2, A3, B4]


def everything(key: str) -> bool:
    return True


def report(*watches: tuple[int, list[WatchResponseRecord]]) -> ClientReport:
    return ClientReport(
        0, [WatchOperation(start, everything, responses) for start, responses in watches]
    )


def events(*items: WatchEvent) -> WatchResponseRecord:
    return WatchResponseRecord(list(items))


def progress(revision: int) -> WatchResponseRecord:
    return WatchResponseRecord([], revision, revision + 1)


def test_a_faithful_recording_passes_every_validator() -> None:
    good = report((1, [events(A1, B1), progress(1), events(A2)]), (3, [events(A3), events(B4)]))
    validate_all(HISTORY, [good])


@pytest.mark.parametrize(
    ("validator", "bad"),
    [
        (validate_ordered, report((1, [events(A2), events(A1, B1)]))),
        (validate_unique, report((1, [events(A1, B1, A2)]), (2, [events(A2)]))),
        (validate_bookmarkable, report((1, [events(A1, B1), progress(2), events(A2)]))),
    ],
    ids=["ordered", "unique", "bookmarkable"],
)
def test_report_validators_catch_their_violation(
    validator: Callable[[ClientReport], None], bad: ClientReport
) -> None:
    with pytest.raises(AssertionError, match=validator.__name__.split("_")[1].capitalize()):
        validator(bad)


@pytest.mark.parametrize(
    ("validator", "bad"),
    [
        # One transaction (revision 1) split over two responses.
        (validate_atomic, report((1, [events(A1), events(B1)]))),
        # Revision 1 delivered without one of its events.
        (validate_atomic, report((1, [events(A1), events(A2)]))),
        # A gap inside one watch: revision 3 is skipped.
        (validate_reliable, report((1, [events(A1, B1), events(A2), events(B4)]))),
        # A resume from 3 that starts at 4.
        (validate_resumable, report((1, [events(A1, B1)]), (3, [events(B4)]))),
        # A gap at a reconnection: each watch is fine, revision 2 is lost between them.
        (validate_complete, report((1, [events(A1, B1)]), (3, [events(A3)]))),
    ],
    ids=["atomic-split", "atomic-partial", "reliable", "resumable", "complete"],
)
def test_history_validators_catch_their_violation(
    validator: Callable[[list[WatchEvent], ClientReport], None], bad: ClientReport
) -> None:
    name = validator.__name__.split("_")[1].capitalize()
    with pytest.raises(AssertionError, match=name):
        validator(HISTORY, bad)
