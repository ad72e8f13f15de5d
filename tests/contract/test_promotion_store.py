"""The promotion watermark store (core/memory/promotion.py) on every backend:

* a watermark belongs to one incarnation of a session: a session deleted and
  created again under the same id (another create_time) starts from 0, by
  `mark` and by `advance` alike, and the old incarnation's compare-and-set no
  longer matches;
* `prune` removes the rows of sessions that no longer exist (deleted, swept
  after their TTL, erased) and keeps the others;
* `erase_user` removes the user's rows only (a dry run counts them).
"""

from __future__ import annotations

import uuid

from statekeeper.core.memory.promotion import MarkRequest, PromotionStore
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.core.sessions.models import ChangeKind, SessionRecord, SessionVersion
from statekeeper.memory_app import promotion_store
from statekeeper.storage.interfaces import Storage


async def _store(storage: Storage) -> PromotionStore:
    store = promotion_store(storage)
    assert store is not None
    await store.start()
    return store


async def _session(storage: Storage, tenant: str, sid: str, user: str, ct: float) -> SessionRecord:
    record = SessionRecord(session_id=sid, user_id=user, create_time=ct, update_time=ct, version=1)
    await storage.sessions.create_session(
        tenant, SessionVersion(1, 0, ChangeKind.CREATE, ct, record)
    )
    return record


def _tenant() -> str:
    return f"promo-{uuid.uuid4().hex[:10]}"


async def test_a_session_created_again_starts_from_zero(storage: Storage) -> None:
    store = await _store(storage)
    tenant = _tenant()
    first = await _session(storage, tenant, "s", "u", 1000.0)
    await store.mark([MarkRequest(tenant, "s", "u", 1000.0, 8)])
    assert await store.advance(first, tenant, 0, 8, 8)
    mark = await store.get(tenant, "s")
    assert mark is not None
    assert (mark.promoted_through, mark.checked_through, mark.seen_through) == (8, 8, 8)
    assert mark.watermark_for(first) == 8

    # Deleted and created again under the same id: another create_time.
    await storage.sessions.delete_session(tenant, "s", 0)
    second = await _session(storage, tenant, "s", "u", 2000.0)
    assert mark.watermark_for(second) == 0
    await store.mark([MarkRequest(tenant, "s", "u", 2000.0, 2)])
    mark = await store.get(tenant, "s")
    assert mark is not None
    assert (mark.promoted_through, mark.checked_through, mark.seen_through) == (0, 0, 2)
    assert mark.create_time == 2000.0
    # The old incarnation's compare-and-set from its watermark fails...
    assert not await store.advance(first, tenant, 8, 10, 10)
    # ...the new one's from 0 succeeds.
    assert await store.advance(second, tenant, 0, 2, 2)
    mark = await store.get(tenant, "s")
    assert mark is not None
    assert (mark.promoted_through, mark.checked_through) == (2, 2)

    # advance alone (no mark first) also starts a new incarnation from 0.
    third = SessionRecord(session_id="s", user_id="u", create_time=3000.0, version=1)
    assert not await store.advance(third, tenant, 2, 4, 4)
    assert await store.advance(third, tenant, 0, 4, 4)
    mark = await store.get(tenant, "s")
    assert mark is not None
    assert (mark.promoted_through, mark.checked_through, mark.seen_through) == (4, 4, 0)


async def test_prune_removes_the_rows_of_sessions_that_are_gone(storage: Storage) -> None:
    store = await _store(storage)
    tenant = _tenant()
    kept = [await _session(storage, tenant, f"kept-{n}", "u", 1000.0 + n) for n in range(3)]
    gone = [await _session(storage, tenant, f"gone-{n}", "u", 1000.0 + n) for n in range(4)]
    await store.mark(
        [MarkRequest(tenant, r.session_id, "u", r.create_time, 2) for r in kept + gone]
    )
    for record in gone:
        await storage.sessions.delete_session(tenant, record.session_id, 0)
    removed = 0
    after = (tenant, "")
    for _ in range(100):  # bounded: pages of 2 over 7 rows
        count, last = await store.prune(after, 2)
        removed += count
        if last is None or last[0] != tenant:
            break
        after = last
    assert removed == 4
    for record in gone:
        assert await store.get(tenant, record.session_id) is None
    for record in kept:
        assert await store.get(tenant, record.session_id) is not None


async def test_erase_user_removes_the_users_rows_only(storage: Storage) -> None:
    store = await _store(storage)
    tenant = _tenant()
    marks = [MarkRequest(tenant, f"a-{n}", "alice", 1000.0, 2) for n in range(3)]
    marks.append(MarkRequest(tenant, "b-0", "bob", 1000.0, 2))
    marks.append(MarkRequest(_tenant(), "other-tenant", "alice", 1000.0, 2))
    await store.mark(marks)
    dry = await store.erase_user(tenant, ErasureSubject("alice"), True)
    assert dry.counts == {("memory", "promotion_watermarks"): 3}
    assert await store.get(tenant, "a-0") is not None
    done = await store.erase_user(tenant, ErasureSubject("alice"), False)
    assert done.counts == {("memory", "promotion_watermarks"): 3}
    assert all([await store.get(tenant, f"a-{n}") is None for n in range(3)])
    assert await store.get(tenant, "b-0") is not None
    assert await store.get(marks[-1].tenant, "other-tenant") is not None
