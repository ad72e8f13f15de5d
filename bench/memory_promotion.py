"""Sessions feeding memory: what promotion costs an append, and how fast turns become episodes.

    .venv/bin/python -m bench.memory_promotion [--turns 400] [--embedder-kind none|auto]

In process, on a fresh embedded store: AppendMessages (one user/assistant
turn per call) to an opted-in session and to a plain one, interleaved, the
p50/p95 of each side by side (the promoter only queues on the write path, so
the ratio should stay near 1); then the seconds until every opted-in turn
is an episode, as turns/s. Prints the load average, since this 2-core
machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
import tempfile
import time
from pathlib import Path

from statekeeper.core.audit.service import system_actor
from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import MemoryConfig
from statekeeper.core.memory.models import EpisodeFilter
from statekeeper.core.sessions.models import MessageDraft, Role, SessionDraft
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tokens import TokenCounter
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from statekeeper.storage.embedded.sessions import EmbeddedStorage

TENANT = "default"


def _p(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] * 1e3


async def run(turns: int, embedder_kind: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        storage = EmbeddedStorage(Path(folder))
        await storage.start()
        counter = TokenCounter()
        sessions = SessionManager(
            storage.sessions, counter, ExtractiveSummarizer(counter), Limits()
        )
        defaults = MemoryConfig()
        config = dataclasses.replace(
            defaults,
            forgetting_interval_seconds=0.0,
            consolidation_interval_seconds=0.0,
            promotion=dataclasses.replace(defaults.promotion, sweep_interval_seconds=1.0),
        )
        app = MemoryApp(
            storage,
            sessions,
            counter,
            None,
            Limits(),
            config,
            ModelEndpoints(embedder_kind=embedder_kind),
        )
        await app.start(wait_for_indexes=True)
        actor = system_actor("bench", TENANT)
        try:
            if app.embedder is not None:
                await app.embedder.embed(["load the model"])
            meta = {"statekeeper.memory.promote": "true"}
            await sessions.create(actor, "promoted", SessionDraft(user_id="u", metadata=meta))
            await sessions.create(actor, "plain", SessionDraft(user_id="u"))
            latency: dict[str, list[float]] = {"promoted": [], "plain": []}
            started = time.perf_counter()
            for index in range(turns):
                for session_id in ("promoted", "plain"):
                    drafts = [
                        MessageDraft(Role.USER, f"question {index}: where is item {index * 7}?"),
                        MessageDraft(Role.ASSISTANT, f"item {index * 7} is on shelf {index}"),
                    ]
                    begin = time.perf_counter()
                    await sessions.append(actor, session_id, drafts, "", "")
                    latency[session_id].append(time.perf_counter() - begin)
            deadline = time.monotonic() + 600
            found = 0
            while time.monotonic() < deadline:  # bounded wait for the promoter
                found = len(
                    await app.store.list_episodes(
                        TENANT, "u", EpisodeFilter(session_id="promoted"), None, turns + 1, False
                    )
                )
                if found >= turns:
                    break
                await asyncio.sleep(0.05)
            seconds = time.perf_counter() - started
        finally:
            await app.stop()
            await storage.close()
    promoted, plain = latency["promoted"], latency["plain"]
    print(f"AppendMessages, {turns} turns each, embedder {embedder_kind}:")
    print(
        f"  opted-in session p50 {_p(promoted, 0.5):.2f} ms p95 {_p(promoted, 0.95):.2f} ms;"
        f" plain session p50 {_p(plain, 0.5):.2f} ms p95 {_p(plain, 0.95):.2f} ms;"
        f" ratio of p50s {statistics.median(promoted) / statistics.median(plain):.2f}"
    )
    print(
        f"  {found} of {turns} turns promoted {seconds:.1f} s after the first append"
        f" ({found / seconds:.0f} turns/s while appending)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--embedder-kind", default="none", choices=["none", "auto"])
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    asyncio.run(run(args.turns, args.embedder_kind))
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
