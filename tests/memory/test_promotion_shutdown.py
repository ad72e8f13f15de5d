"""The promoter (core/memory/promotion.py) loses no queued session when it
stops while its worker is marking them: the sessions leave the queue only
once the mark succeeded, so stop() marks them (before, the queue was cleared
first and a stop cancelling the mark lost them until their next append).
The embedded store is real; its mark is held until the stop cancels it."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from statekeeper.core.audit.service import system_actor
from statekeeper.core.memory.config import PromotionConfig
from statekeeper.core.memory.promotion import PROMOTE_KEY, MarkRequest, SessionPromoter
from statekeeper.core.sessions.models import MessageDraft, Role, SessionDraft
from statekeeper.storage.embedded.memory_promotion import EmbeddedPromotionStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from tests.harness.memory import memory_app, quiet_config

T = "tenant-a"
ACTOR = system_actor("test", T)
CONFIG = PromotionConfig(delay_seconds=0.0, sweep_interval_seconds=3600.0)
# The app's own promoter stays idle: the test runs its own.
IDLE = PromotionConfig(delay_seconds=3600.0, sweep_interval_seconds=3600.0)


class HeldMark(EmbeddedPromotionStore):
    """The first mark waits (as a slow database would) until cancelled."""

    def __init__(self, backend: EmbeddedStorage) -> None:
        super().__init__(backend)
        self.held = asyncio.Event()
        self.release = asyncio.Event()

    async def mark(self, marks: Sequence[MarkRequest]) -> None:
        if not self.held.is_set():
            self.held.set()
            await self.release.wait()
        await super().mark(marks)


async def test_a_stop_during_the_mark_keeps_the_queued_sessions(tmp_path: Path) -> None:
    config = dataclasses.replace(quiet_config(), promotion=IDLE)
    async with memory_app(tmp_path, config) as (app, sessions):
        storage = app.storage
        assert isinstance(storage, EmbeddedStorage)
        store = HeldMark(storage)
        promoter = SessionPromoter(
            sessions, app.domain.episodes, store, CONFIG, config.limits.max_text_bytes
        )
        await promoter.start()
        await sessions.create(
            ACTOR, "s1", SessionDraft(user_id="u1", metadata={PROMOTE_KEY: "true"})
        )
        turn = [
            MessageDraft(Role.USER, "where is the key?"),
            MessageDraft(Role.ASSISTANT, "under the mat"),
        ]
        result = await sessions.append(ACTOR, "s1", turn, "", "")
        promoter.notify(T, result.record)
        await asyncio.wait_for(store.held.wait(), 30)
        await promoter.stop()  # cancels the worker inside its mark
        mark = await store.get(T, "s1")
        assert mark is not None, "the queued session was lost at shutdown"
        assert mark.seen_through == 2 and mark.promoted_through == 0
        # The next start's sweep promotes it.
        assert await promoter.sweep() == 1
        assert promoter.promoted == 1
