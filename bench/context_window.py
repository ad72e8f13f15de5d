"""GetContextWindow as a user sees it, through gRPC, on both backends.

Two measurements per backend (embedded; production = PostgreSQL + Redis),
each against itself in the same run, rounds interleaved:

1. Latency with a 4,000-token budget on sessions of 100, 1,000 and 10,000
   messages. A window holds ~150-250 messages whatever the history, so a
   window that costs what it returns has the same p50 at 10,000 messages
   as at 100. Goal: p50(10k) / p50(100) <= 1.5 and p50(10k) <= 15 ms.
   Measured on unchanged sessions (a client polling: the server answers
   from the window it computed for that version), and in an agent's loop
   (append one message, then the window: computed anew each time).
2. Isolation: one client appends to its own session, alone and then while
   another client loops GetContextWindow on the 10,000-message session.
   Goal: append rate while loaded / alone >= 0.7. Each round measures
   alone and then loaded, back to back; the median of the rounds' own
   ratios is printed next to the ratio of the medians, as it is less
   swayed by other work on a shared machine changing between rounds.

The machine is shared, so the load average is printed with the figures.
Needs Redis and PostgreSQL for the production rows (see bench.production).

Run: `make bench-context-window` (or `.venv/bin/python -m bench.context_window`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from bench.production import fresh_database, server, services
from bench.sessions import percentiles
from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub

SIZES = (100, 1_000, 10_000)
BUDGET = 4_000
ISOLATION_ROUNDS = 5
APPEND_CHUNK = 100  # the server's default max_messages_per_append
SessionMessage = pb.SessionMessage


def conversation(count: int) -> list[Any]:
    """`count` messages of a tool-using conversation (a call and its result
    every third turn), like an agent's."""
    messages: list[Any] = []
    turn = 0
    while len(messages) < count:
        messages.append(
            SessionMessage(
                role=pb.ROLE_USER,
                content=f"Question {turn}: what is the weather in city {turn} tomorrow morning?",
            )
        )
        if turn % 3 == 0:
            call = pb.ToolCall(
                id=f"call_{turn}", name="weather", arguments=json.dumps({"city": turn})
            )
            messages.append(SessionMessage(role=pb.ROLE_ASSISTANT, tool_calls=[call]))
            messages.append(
                SessionMessage(
                    role=pb.ROLE_TOOL, content=f"Sunny, {turn % 30} degrees.", tool_call_id=call.id
                )
            )
        messages.append(
            SessionMessage(
                role=pb.ROLE_ASSISTANT,
                content=f"Answer {turn}: it will be sunny in city {turn}, take sunglasses.",
            )
        )
        turn += 1
    return messages[:count]


def fill(stub: SessionServiceStub, session_id: str, count: int) -> None:
    stub.CreateSession(
        pb.CreateSessionRequest(session_id=session_id, session=pb.Session(user_id="u"))
    )
    messages = conversation(count)
    for start in range(0, count, APPEND_CHUNK):
        chunk = messages[start : start + APPEND_CHUNK]
        stub.AppendMessages(pb.AppendMessagesRequest(session_id=session_id, messages=chunk))


def window_request(session_id: str) -> pb.GetContextWindowRequest:
    return pb.GetContextWindowRequest(
        session_id=session_id, token_budget=BUDGET, system_prompt="You are a travel agent."
    )


def window_latency(stub: SessionServiceStub, rounds: int) -> dict[int, list[float]]:
    """Per session size, one sample per round; sizes interleaved."""
    samples: dict[int, list[float]] = {size: [] for size in SIZES}
    requests = {size: window_request(f"s{size}") for size in SIZES}
    for size in SIZES:  # warm: first call per session fills caches
        stub.GetContextWindow(requests[size])
    for _ in range(rounds):
        for size in SIZES:
            start = time.perf_counter()
            stub.GetContextWindow(requests[size])
            samples[size].append(time.perf_counter() - start)
    return samples


def live_window_latency(stub: SessionServiceStub, rounds: int) -> dict[int, list[float]]:
    """An agent's loop: append one message, then ask for the window (timed);
    the session changed, so nothing computed before answers it."""
    samples: dict[int, list[float]] = {size: [] for size in SIZES}
    message = SessionMessage(role=pb.ROLE_USER, content="And what about the day after?")
    for _ in range(rounds):
        for size in SIZES:
            session_id = f"s{size}"
            stub.AppendMessages(pb.AppendMessagesRequest(session_id=session_id, messages=[message]))
            start = time.perf_counter()
            stub.GetContextWindow(window_request(session_id))
            samples[size].append(time.perf_counter() - start)
    return samples


def append_rate(stub: SessionServiceStub, session_id: str, seconds: float) -> float:
    message = SessionMessage(role=pb.ROLE_USER, content="One more question about the train.")
    request = pb.AppendMessagesRequest(session_id=session_id, messages=[message])
    done, deadline = 0, time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        stub.AppendMessages(request)
        done += 1
    return done / (time.perf_counter() - start)


class WindowLoop:
    """Another client looping GetContextWindow on the 10k session, in a
    process of its own (so that it does not share this process's GIL with
    the appending client)."""

    def __init__(self, address: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._calls = context.Value("l", 0)
        self._process = context.Process(
            target=_loop_windows, args=(address, self._stop, self._calls), daemon=True
        )

    @property
    def calls(self) -> int:
        return int(self._calls.value)

    def __enter__(self) -> WindowLoop:
        self._process.start()
        while self.calls == 0:  # started and answered once
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._process.join()


def _loop_windows(address: str, stop: Any, calls: Any) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = SessionServiceStub(channel)
        request = window_request(f"s{SIZES[-1]}")
        while not stop.is_set():
            stub.GetContextWindow(request)
            with calls.get_lock():
                calls.value += 1


def isolation(
    address: str, stub: SessionServiceStub, rounds: int, seconds: float
) -> tuple[list[float], list[float], int]:
    """Append rates of another session alone and under the window loop,
    alternating; and how many windows the loop got."""
    stub.CreateSession(pb.CreateSessionRequest(session_id="other", session=pb.Session(user_id="u")))
    alone: list[float] = []
    loaded: list[float] = []
    windows = 0
    for _ in range(rounds):
        alone.append(append_rate(stub, "other", seconds))
        with WindowLoop(address) as loop:
            before = loop.calls
            loaded.append(append_rate(stub, "other", seconds))
            windows += loop.calls - before
    return alone, loaded, windows


def measure(
    address: str, rounds: int, seconds: float, isolation_rounds: int = ISOLATION_ROUNDS
) -> dict[str, Any]:
    with grpc.insecure_channel(address) as channel:
        stub = SessionServiceStub(channel)
        for size in SIZES:
            fill(stub, f"s{size}", size)
        window = stub.GetContextWindow(window_request(f"s{SIZES[-1]}"))
        latency = window_latency(stub, rounds)
        live = live_window_latency(stub, rounds)
        alone, loaded, windows = isolation(address, stub, isolation_rounds, seconds)
    return {
        "latency": latency,
        "live": live,
        "returned": len(window.messages),
        "alone": alone,
        "loaded": loaded,
        "windows": windows,
        "seconds": isolation_rounds * seconds,
    }


def report(backend: str, result: dict[str, Any], load: tuple[float, float, float]) -> None:
    print(f"\n{backend}: GetContextWindow, budget {BUDGET}, through gRPC (load {load_text(load)})")
    print(f"  the 10k window returns {result['returned']} messages")
    medians = {}
    for size in SIZES:
        p50, p99 = percentiles(result["latency"][size])
        medians[size] = p50
        print(f"  {size:>6} messages: p50 {p50 / 1000:7.2f} ms   p99 {p99 / 1000:7.2f} ms")
    ratio = medians[SIZES[-1]] / medians[SIZES[0]]
    ten_k = medians[SIZES[-1]] / 1000
    print(
        f"  p50 10k / 100: {ratio:.2f}x (goal <= 1.5x: {verdict(ratio <= 1.5)});"
        f" p50 10k {ten_k:.2f} ms (goal <= 15 ms: {verdict(ten_k <= 15)})"
    )
    live = {size: percentiles(result["live"][size]) for size in SIZES}
    print(
        "  agent loop (append one message, then the window; nothing reusable):"
        + "".join(
            f"  {size}: p50 {live[size][0] / 1000:.2f} ms p99 {live[size][1] / 1000:.2f} ms"
            for size in SIZES
        )
        + f"  -> 10k/100 {live[SIZES[-1]][0] / live[SIZES[0]][0]:.2f}x"
    )
    alone = statistics.median(result["alone"])
    loaded = statistics.median(result["loaded"])
    share = loaded / alone
    paired = statistics.median(
        b / a for a, b in zip(result["alone"], result["loaded"], strict=True)
    )
    print(
        f"  another session's appends/s: alone {alone:.0f}, while a client loops the 10k"
        f" window {loaded:.0f} ({result['windows'] / result['seconds']:.0f} windows/s)"
        f" -> {share:.2f}x (goal >= 0.7x: {verdict(share >= 0.7)});"
        f" median of the rounds' own ratios {paired:.2f}x"
    )
    print(
        "  rounds (alone/loaded): "
        + ", ".join(
            f"{a:.0f}/{b:.0f}" for a, b in zip(result["alone"], result["loaded"], strict=True)
        )
    )


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def load_text(load: tuple[float, float, float]) -> str:
    return "/".join(f"{value:.2f}" for value in load)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=3.0, help="per isolation round")
    parser.add_argument(
        "--isolation-rounds",
        type=int,
        default=ISOLATION_ROUNDS,
        help="rounds of appends alone then under the window loop",
    )
    parser.add_argument("--embedded-only", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {load_text(os.getloadavg())}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        with server(Path(tmp) / "embedded") as address:
            result = measure(address, args.rounds, args.seconds, args.isolation_rounds)
        report("embedded", result, os.getloadavg())
        if args.embedded_only:
            return
        with services() as (dsn, url):
            database = asyncio.run(fresh_database(dsn))
            extra = ["--postgres-dsn", database, "--migrate-on-start", "--redis-url", url]
            with server(Path(tmp) / "production", *extra) as address:
                result = measure(address, args.rounds, args.seconds, args.isolation_rounds)
            report("production (PostgreSQL + Redis)", result, os.getloadavg())


if __name__ == "__main__":
    main()
