"""EraseUser and the session promoter (core/memory/promotion.py) do not race:
turns the promoter read before the erasure are not recorded as episodes
after it. The erasure runs exactly between the promoter's read of the
messages and its recording (a SessionManager that erases right after
serving the read), on the embedded store."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

from statekeeper.core.audit.service import system_actor
from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import PromotionConfig
from statekeeper.core.memory.promotion import PROMOTE_KEY, SessionPromoter
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.core.sessions.models import Message, MessageDraft, Role, SessionDraft
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tokens import TokenCounter
from statekeeper.memory_app import promotion_store
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from tests.harness.memory import memory_app, quiet_config

T = "tenant-a"
ACTOR = system_actor("test", T)
# No background promotion: the test promotes on demand.
IDLE = PromotionConfig(delay_seconds=3600.0, sweep_interval_seconds=3600.0)


class ErasingAfterRead(SessionManager):
    """Serves the promoter's read, then erases the user before returning."""

    erase: Callable[[], Awaitable[None]] | None = None

    async def messages_after(
        self, tenant: str, session_id: str, after: int, limit: int
    ) -> list[Message]:
        messages = await super().messages_after(tenant, session_id, after, limit)
        if self.erase is not None:
            erase, self.erase = self.erase, None
            await erase()
        return messages


async def count_episodes(storage: EmbeddedStorage, user_id: str) -> int:
    def read(db: sqlite3.Connection) -> int:
        sql = "SELECT count(*) FROM memory_episodes WHERE tenant = ? AND user_id = ?"
        return int(db.execute(sql, (T, user_id)).fetchone()[0])

    return await storage.read(read)


async def test_turns_read_before_an_erasure_are_not_recorded_after_it(tmp_path: Path) -> None:
    config = dataclasses.replace(quiet_config(), promotion=IDLE)
    async with memory_app(tmp_path, config) as (app, sessions):
        storage = app.storage
        assert isinstance(storage, EmbeddedStorage)
        for session_id, user in (("s1", "u1"), ("s2", "u2")):
            draft = SessionDraft(user_id=user, metadata={PROMOTE_KEY: "true"})
            await sessions.create(ACTOR, session_id, draft)
            turn = [
                MessageDraft(Role.USER, f"my secret for {session_id} is the blue door"),
                MessageDraft(Role.ASSISTANT, "noted: the blue door"),
            ]
            await sessions.append(ACTOR, session_id, turn, "", "")
        counter = TokenCounter()
        reader = ErasingAfterRead(
            storage.sessions, counter, ExtractiveSummarizer(counter), Limits()
        )
        promotions = promotion_store(storage)
        assert promotions is not None
        promoter = SessionPromoter(
            reader, app.domain.episodes, promotions, IDLE, config.limits.max_text_bytes
        )

        async def erase() -> None:
            # The erasure's order: sessions first, then memory.
            subject = ErasureSubject("u1")
            assert (await storage.sessions.erase_user(T, subject, False)).total > 0
            await app.store.erase_user(T, subject, False)

        reader.erase = erase
        assert await promoter.promote(T, "s1") == 0
        assert await count_episodes(storage, "u1") == 0
        # Another user's session, not erased, is promoted as usual.
        assert await promoter.promote(T, "s2") == 1
        assert await count_episodes(storage, "u2") == 1
