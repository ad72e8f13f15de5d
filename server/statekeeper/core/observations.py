"""Observations the domain and the stores report where things happen (a store
call failed, a feed delivered a change, a sweeper finished a run): plain
counters under a lock, cheap whether or not metrics are served. The metrics
endpoint (statekeeper/telemetry.py) reads them at scrape time; nothing here
knows of gRPC or Prometheus."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

# Seconds between a blackboard commit on one replica and its delivery on
# another (clocks of the replicas included).
LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class _Buckets:
    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        index = next((i for i, b in enumerate(self.bounds) if value <= b), len(self.bounds))
        self.counts[index] += 1
        self.total += value

    def cumulative(self) -> list[tuple[str, float]]:
        running = 0
        out: list[tuple[str, float]] = []
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += count
            out.append(("+Inf" if bound == float("inf") else repr(float(bound)), running))
        return out


_hook_lock = threading.Lock()
_errors: dict[tuple[str, str], int] = {}
_feed_lag: dict[str, _Buckets] = {}
_sweeps: dict[str, float] = {}


def store_error(system: str, error: BaseException) -> None:
    """A call to `system` (postgresql, redis) failed with `error`."""
    key = (system, type(error).__name__)
    with _hook_lock:
        _errors[key] = _errors.get(key, 0) + 1


def feed_delivered(feed: str, commit_time: float, remote: bool = True) -> None:
    """A change committed at `commit_time` (unix seconds) reached this
    replica through `feed`; local deliveries (remote False) are not lag."""
    if not remote:
        return
    lag = max(time.time() - commit_time, 0.0)
    with _hook_lock:
        _feed_lag.setdefault(feed, _Buckets(LAG_BUCKETS)).observe(lag)


def swept(sweeper: str) -> None:
    """`sweeper` finished a run."""
    with _hook_lock:
        _sweeps[sweeper] = time.time()


_archive_moves: dict[tuple[str, str], tuple[int, int]] = {}
_archive_failures = [0]


def archive_moved(capability: str, direction: str, units: int, rows: int) -> None:
    """The archive tier moved `units` of `capability` (`rows` rows) in
    `direction`: "archived" (out of the database) or "restored"."""
    key = (capability, direction)
    with _hook_lock:
        before = _archive_moves.get(key, (0, 0))
        _archive_moves[key] = (before[0] + units, before[1] + rows)


def archive_failed() -> None:
    """An archiver pass stopped on an error (it resumes next interval)."""
    with _hook_lock:
        _archive_failures[0] += 1


def archive_snapshot() -> tuple[dict[tuple[str, str], tuple[int, int]], int]:
    """(units, rows) moved by (capability, direction), and failed passes."""
    with _hook_lock:
        return dict(_archive_moves), _archive_failures[0]


def snapshot() -> tuple[
    dict[tuple[str, str], int], dict[str, tuple[list[tuple[str, float]], float]], dict[str, float]
]:
    """Copies of what was observed: error counts by (system, error), feed lag
    histograms (cumulative buckets, sum) by feed, last sweep time by sweeper."""
    with _hook_lock:
        errors = dict(_errors)
        lags = {feed: (b.cumulative(), b.total) for feed, b in _feed_lag.items()}
        sweeps = dict(_sweeps)
    return errors, lags, sweeps
