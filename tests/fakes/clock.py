"""Clocks for domain tests: time moves only when the test says so."""

from __future__ import annotations

START = 1_700_000_000.0


class FakeClock:
    """Seconds since the epoch, as `time.time` gives them; advance it by
    assigning to or adding to `now`."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class TickingClockNs:
    """Nanoseconds that advance by `step_ns` on every read, so consecutive
    reads are distinct and increasing (as checkpoint ids need)."""

    def __init__(self, now_ns: int = int(START) * 1_000_000_000, step_ns: int = 1000) -> None:
        self.now_ns = now_ns
        self.step_ns = step_ns

    def __call__(self) -> int:
        self.now_ns += self.step_ns
        return self.now_ns
