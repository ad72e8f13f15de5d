"""EraseUser and the promoter (core/memory/promotion.py): a session erased
and created again under the same id between the promoter's read and its
recording is another session (another create_time), so the turns read from
the erased one are not kept as episodes (before, the check after recording
only asked whether the id existed)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from statekeeper.core.limits import Limits
from statekeeper.core.memory.promotion import PROMOTE_KEY, SessionPromoter
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.core.sessions.models import MessageDraft, Role, SessionDraft
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tokens import TokenCounter
from statekeeper.memory_app import promotion_store
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from tests.harness.memory import memory_app, quiet_config
from tests.memory.test_erase_during_promotion import (
    ACTOR,
    IDLE,
    ErasingAfterRead,
    T,
    count_episodes,
)


async def test_turns_of_an_erased_session_created_again_are_not_kept(tmp_path: Path) -> None:
    config = dataclasses.replace(quiet_config(), promotion=IDLE)
    async with memory_app(tmp_path, config) as (app, sessions):
        storage = app.storage
        assert isinstance(storage, EmbeddedStorage)
        draft = SessionDraft(user_id="u1", metadata={PROMOTE_KEY: "true"})
        await sessions.create(ACTOR, "s1", draft)
        turn = [
            MessageDraft(Role.USER, "my secret is the green gate"),
            MessageDraft(Role.ASSISTANT, "noted: the green gate"),
        ]
        await sessions.append(ACTOR, "s1", turn, "", "")
        counter = TokenCounter()
        reader = ErasingAfterRead(
            storage.sessions, counter, ExtractiveSummarizer(counter), Limits()
        )
        promotions = promotion_store(storage)
        assert promotions is not None
        promoter = SessionPromoter(
            reader, app.domain.episodes, promotions, IDLE, config.limits.max_text_bytes
        )

        async def erase_and_recreate() -> None:
            subject = ErasureSubject("u1")
            assert (await storage.sessions.erase_user(T, subject, False)).total > 0
            await app.store.erase_user(T, subject, False)
            # The user comes back and opens a session under the same id.
            await sessions.create(ACTOR, "s1", draft)

        reader.erase = erase_and_recreate
        assert await promoter.promote(T, "s1") == 0
        assert await count_episodes(storage, "u1") == 0
