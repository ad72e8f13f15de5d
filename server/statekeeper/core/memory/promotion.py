"""Sessions feed long-term memory: appended turns become episodes in the background.

Opt-in, per session or per agent (`PromotionConfig`): a session whose
metadata has `statekeeper.memory.promote` = "true", or whose agent is listed
in `memory.promotion.agents` ("*": every session; "false" in the session's
metadata opts it out again).

How it runs, per server process:

* `SessionManager` tells the promoter of every committed append
  (`notify`, on the write path: it only notes the session in an in-process
  queue and returns; nothing on the write path waits for the promoter, an
  embedder or an LLM);
* a worker takes the queued sessions (after `delay_seconds`, so the appends
  of one exchange go together), first marks them in the promotion store
  (so a sweep finds them if this process stops now), then for each reads the
  messages after the session's watermark, pairs them into turns and records
  the turns as episodes through `EpisodicMemory.record_many` (content-hash
  and near-duplicate deduplication as for RecordEpisodes), and then moves
  the watermark forward with a compare-and-set;
* a periodic sweep promotes every marked session whose watermark lags (a
  replica stopped between the mark and the promotion, or a turn was still
  incomplete).

Turns: a USER message starts a turn; the ASSISTANT messages after it with
text are its response (joined by a blank line). TOOL messages and the
assistant messages that only call tools are skipped (folded away: the final
answer carries what the user learns), as are SYSTEM messages. A turn is
complete when the next USER message arrives, or when its last assistant
message has text and calls no tool; an incomplete turn waits for the next
append. Assistant text with no user message before it (an agent speaking
first) is a turn of its own. A turn's text is cut to the episode text limit.

Each episode carries the session id and user, `occur_time` = the turn's
first message's time, and metadata `statekeeper.source` = "session",
`statekeeper.session.first_sequence`, `statekeeper.session.last_sequence`
and (when set) `statekeeper.agent_id`.

Exactly once: the watermark (the last promoted sequence) is durable and only
moves forward by compare-and-set; episodes recorded before a crash that
kept the watermark back are found again by their content hash (EXACT
duplicate, nothing stored twice). Two replicas promoting one session at
once record the same turns; the store's unique content hash keeps one.
The same rule means a turn repeating another of the user's episodes word
for word (e.g. "hi" / "hello") is not stored again.

EraseUser: the erasure deletes the user's sessions before their memory; a
promotion that read messages before it checks, after recording, that the
session still exists (same user, same create_time), and deletes the
episodes it just created if not (retried; the watermark does not move
while that delete fails, so the sweep tries again), so no erased turn
comes back as an episode. The user's watermark rows go with the erased
sessions at the next sweeps (below); `PromotionStore.erase_user` deletes
them at once, for EraseUser to call as one of its participants.

A watermark belongs to one incarnation of a session: its row holds the
session's user and create_time, and a session deleted (DeleteSession, TTL
expiry, EraseUser) and created again with the same id has another
create_time, so its watermark starts again from 0. Each sweep also removes,
a few pages at a time (the whole table over successive sweeps), the rows of
sessions that no longer exist. An archived session's row goes that way too
(its hot rows are gone); if it is restored and appended to again, its turns
are read from the start, and the ones already recorded are EXACT duplicates
(nothing stored twice; turns forgotten since then come back).

Queue overflow: beyond `max_queued_sessions`, appended sessions go to an
overflow set of the same bound, marked in the store in one batch by the
worker (the sweep then promotes them); only beyond that are sessions left to
their next append, with one WARNING per minute at most, with the count.

Facts: with an LLM endpoint configured, each new episode then goes through
`SemanticMemory.extract_facts` (as ExtractFacts with `episode_id`), in a
second background queue; without one nothing is extracted.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from statekeeper.core.audit.service import Actor, system_actor
from statekeeper.core.errors import NotFoundError, SessionExpiredError
from statekeeper.core.memory.config import PromotionConfig
from statekeeper.core.memory.episodes import EpisodeDraft, RecordOutcome
from statekeeper.core.memory.episodic import EpisodicMemory
from statekeeper.core.memory.semantic import SemanticMemory
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.sessions.models import Message, Role, SessionRecord
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.tasks import cancel_and_wait, repeat_every

log = logging.getLogger(__name__)

PROMOTE_KEY = "statekeeper.memory.promote"
SOURCE_KEY = "statekeeper.source"
FIRST_KEY = "statekeeper.session.first_sequence"
LAST_KEY = "statekeeper.session.last_sequence"
AGENT_KEY = "statekeeper.agent_id"
SOURCE_SESSION = "session"
# Messages read per pass over one session.
READ_PAGE = 500
# Sessions taken from the store per sweep round.
SWEEP_PAGE = 200
# Passes over one session in one promotion (READ_PAGE messages each).
MAX_PASSES = 1000


# Rows looked at per round of the sweep's removal of rows whose session is
# gone, and rounds per sweep (the next sweep goes on from there).
PRUNE_PAGE = 500
PRUNE_ROUNDS = 10
# Attempts at deleting the episodes recorded from a session erased meanwhile.
DELETE_ATTEMPTS = 5
# Seconds between two warnings about sessions the full queue left behind.
OVERFLOW_LOG_SECONDS = 60.0


@dataclass(frozen=True)
class PromotionMark:
    """A session's promotion state: every turn through `promoted_through` is
    recorded; the session was read through `checked_through`; appends were
    seen through `seen_through` (the sweep revisits it while seen > checked).
    `user_id` and `create_time` name the session's incarnation (0: a row
    written before they were stored, taken as the current one)."""

    promoted_through: int
    checked_through: int
    seen_through: int
    user_id: str = ""
    create_time: float = 0.0

    def watermark_for(self, record: SessionRecord) -> int:
        """The promoted sequence for this incarnation of the session: 0 when
        the row belongs to an earlier session of the same id."""
        return self.promoted_through if self.same_session(record) else 0

    def same_session(self, record: SessionRecord) -> bool:
        return self.create_time in (0.0, record.create_time)


@dataclass(frozen=True)
class MarkRequest:
    """An appended session to mark: its identity and its last sequence."""

    tenant: str
    session_id: str
    user_id: str
    create_time: float
    last_sequence: int


class PromotionStore(abc.ABC):
    """Durable promotion watermarks, one row per promoted session."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Applies pending migrations. Idempotent."""

    @abc.abstractmethod
    async def mark(self, marks: Sequence[MarkRequest]) -> None:
        """For each request: creates the row if missing and raises
        `seen_through` to `last_sequence` (never lowers it). A row of another
        incarnation (a different, non-zero create_time) starts again:
        promoted and checked 0, seen `last_sequence`, the request's user and
        create_time."""

    @abc.abstractmethod
    async def get(self, tenant: str, session_id: str) -> PromotionMark | None:
        """The session's row, or None."""

    @abc.abstractmethod
    async def advance(
        self, record: SessionRecord, tenant: str, expected: int, promoted_through: int, checked: int
    ) -> bool:
        """Sets `promoted_through` of `record`'s session if it still equals
        `expected` (a missing row, or a row of another incarnation, counts as
        0 and becomes this one's), and raises `checked_through` to `checked`;
        False (nothing changed) when another writer moved it."""

    @abc.abstractmethod
    async def lagging(self, after: tuple[str, str], limit: int) -> list[tuple[str, str]]:
        """Up to `limit` (tenant, session_id) with seen_through >
        checked_through, ascending, strictly after `after`."""

    @abc.abstractmethod
    async def forget(self, tenant: str, session_id: str) -> None:
        """Drops the session's row (the session is gone)."""

    @abc.abstractmethod
    async def prune(self, after: tuple[str, str], limit: int) -> tuple[int, tuple[str, str] | None]:
        """Looks at the next `limit` rows strictly after `after` (ascending)
        and deletes those whose session no longer exists in the session
        store's table; returns (rows deleted, the last row looked at), the
        latter None when the table ended."""

    @abc.abstractmethod
    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """EraseUser: deletes (or, dry, counts) the rows of the user's
        sessions, as ("memory", "promotion_watermarks")."""


def opted_in(record: SessionRecord, agents: frozenset[str]) -> bool:
    flag = record.metadata.get(PROMOTE_KEY, "").strip().lower()
    if flag in ("true", "1", "yes"):
        return True
    if flag in ("false", "0", "no"):
        return False
    return "*" in agents or (bool(record.agent_id) and record.agent_id in agents)


def agent_set(spec: str) -> frozenset[str]:
    return frozenset(part.strip() for part in spec.split(",") if part.strip())


@dataclass
class Turn:
    first: int
    last: int
    occur_time: float
    user: list[str]
    assistant: list[str]
    complete: bool = False


def pair_turns(messages: Sequence[Message]) -> list[Turn]:
    """The turns of `messages` (ascending), the last one possibly incomplete
    (see the module docstring)."""
    turns: list[Turn] = []
    current: Turn | None = None
    for message in messages:
        if message.role == Role.SYSTEM:
            continue
        if message.role == Role.USER:
            if current is not None:
                current.complete = True
                turns.append(current)
            current = Turn(message.sequence, message.sequence, message.create_time, [], [])
            if message.content.strip():
                current.user.append(message.content)
            continue
        if current is None:
            current = Turn(message.sequence, message.sequence, message.create_time, [], [])
        current.last = message.sequence
        if message.role == Role.ASSISTANT:
            if message.content.strip():
                current.assistant.append(message.content)
            current.complete = bool(message.content.strip()) and not message.tool_calls
        else:  # a tool result: the assistant has not answered yet
            current.complete = False
    if current is not None:
        turns.append(current)
    return turns


def _later(old: MarkRequest | None, new: MarkRequest) -> MarkRequest:
    """The request to keep for one session: the newest incarnation's, with
    the highest sequence seen."""
    if old is None or old.create_time != new.create_time:
        return new
    return new if new.last_sequence >= old.last_sequence else old


def _remove_marked(
    pending: dict[tuple[str, str], MarkRequest], marked: Sequence[MarkRequest]
) -> None:
    """Takes the marked requests off `pending`, unless a later append
    replaced one meanwhile (that one stays for the next batch)."""
    for request in marked:
        key = (request.tenant, request.session_id)
        if pending.get(key) is request:
            del pending[key]


def _cut(text: str, max_bytes: int) -> str:
    data = text.encode()
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode(errors="ignore")


class SessionPromoter:
    """The background promoter of one server process (see the module docstring)."""

    def __init__(
        self,
        sessions: SessionManager,
        episodes: EpisodicMemory,
        store: PromotionStore,
        config: PromotionConfig,
        max_text_bytes: int,
        semantic: SemanticMemory | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._sessions = sessions
        self._episodes = episodes
        self._store = store
        self._config = config
        self._agents = agent_set(config.agents)
        self._max_text = max_text_bytes
        self._semantic = semantic
        self._clock = clock
        self._queue: OrderedDict[tuple[str, str], MarkRequest] = OrderedDict()
        # Sessions the full queue turned away, marked in one batch by the
        # worker (bounded like the queue); beyond it, `_dropped` counts.
        self._overflow: dict[tuple[str, str], MarkRequest] = {}
        self._dropped = 0
        self._dropped_logged_at = float("-inf")
        self._prune_after: tuple[str, str] = ("", "")
        self._wake = asyncio.Event()
        self._extractions: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue(
            maxsize=max(1, config.max_queued_extractions)
        )
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.promoted = 0  # episodes created, for logs and tests

    # ----- the write path ----------------------------------------------------

    def notify(self, tenant: str, record: SessionRecord) -> None:
        """An append committed: queue the session if it is opted in. Never
        blocks and never raises for a full queue (the session then goes to
        the overflow set, marked for the sweep; beyond that, it is left to
        its next append)."""
        if not record.user_id or not opted_in(record, self._agents):
            return
        key = (tenant, record.session_id)
        request = MarkRequest(
            tenant, record.session_id, record.user_id, record.create_time, record.last_sequence
        )
        limit = self._config.max_queued_sessions
        if key in self._queue or len(self._queue) < limit:
            self._queue[key] = _later(self._queue.get(key), request)
        elif key in self._overflow or len(self._overflow) < limit:
            self._overflow[key] = _later(self._overflow.get(key), request)
        else:
            self._dropped += 1
            self._log_dropped()
            return
        self._wake.set()

    def _log_dropped(self) -> None:
        now = time.monotonic()
        if self._dropped and now - self._dropped_logged_at >= OVERFLOW_LOG_SECONDS:
            log.warning(
                "promotion queue and overflow full: %d appended sessions left for a later append",
                self._dropped,
            )
            self._dropped = 0
            self._dropped_logged_at = now

    # ----- lifecycle -----------------------------------------------------------

    async def start(self) -> None:
        await self._store.start()
        self._tasks = [asyncio.create_task(self._work_forever(), name="memory-promotion")]
        if self._config.sweep_interval_seconds > 0:
            self._tasks.append(
                asyncio.create_task(self._sweep_forever(), name="memory-promotion-sweep")
            )
        if self._semantic is not None:
            self._tasks.append(
                asyncio.create_task(self._extract_forever(), name="memory-promotion-facts")
            )

    async def stop(self) -> None:
        """Marks what is still queued (so the next start's sweep promotes it)
        and stops the background tasks."""
        tasks, self._tasks = self._tasks, []
        await cancel_and_wait(tasks)
        pending = [*self._queue.values(), *self._overflow.values()]
        if pending:
            try:
                await self._store.mark(pending)
            except Exception:
                log.exception("marking queued sessions for promotion at shutdown failed")
            else:
                self._queue.clear()
                self._overflow.clear()

    # ----- background work -------------------------------------------------------

    async def _work_forever(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(self._config.delay_seconds)
            self._wake.clear()
            self._log_dropped()
            batch = list(self._queue.values())
            overflow = list(self._overflow.values())
            if not batch and not overflow:
                continue
            # Taken off the queue only once marked: a failure (or a stop
            # cancelling this task) leaves them queued, and stop() marks them.
            try:
                await self._store.mark([*batch, *overflow])
            except Exception:
                log.exception("marking sessions for promotion failed; retrying")
                self._wake.set()
                await asyncio.sleep(1.0)
                continue
            _remove_marked(self._queue, batch)
            _remove_marked(self._overflow, overflow)
            # The overflow is left to the sweep (marked); the queue goes now.
            for request in batch:
                await self._promote_logged(request.tenant, request.session_id)

    async def _sweep_forever(self) -> None:
        await repeat_every(self._config.sweep_interval_seconds, self.sweep, "promotion sweep", log)

    async def sweep(self) -> int:
        """Promotes every marked session whose watermark lags; returns how
        many sessions it visited."""
        after = ("", "")
        visited = 0
        for _ in range(1_000_000):  # bounded: each round moves `after` forward
            page = await self._store.lagging(after, SWEEP_PAGE)
            for tenant, session_id in page:
                await self._promote_logged(tenant, session_id)
            visited += len(page)
            if len(page) < SWEEP_PAGE:
                break
            after = page[-1]
        await self.prune()
        return visited

    async def prune(self, rounds: int = PRUNE_ROUNDS) -> int:
        """Removes the rows of sessions that no longer exist, `rounds` pages
        from where the previous call stopped (wrapping at the end of the
        table); returns how many."""
        removed = 0
        for _ in range(rounds):
            count, last = await self._store.prune(self._prune_after, PRUNE_PAGE)
            removed += count
            self._prune_after = last if last is not None else ("", "")
            if last is None:
                break
        return removed

    async def _promote_logged(self, tenant: str, session_id: str) -> None:
        try:
            await self.promote(tenant, session_id)
        except Exception:
            log.exception(
                "promoting a session to memory failed; the sweep retries",
                extra={"tenant": tenant, "session_id": session_id},
            )

    async def promote(self, tenant: str, session_id: str) -> int:
        """Records the session's complete turns after its watermark; returns
        the episodes created."""
        key = (tenant, session_id)
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with lock:
                return await self._promote(tenant, session_id)
        finally:
            if not lock.locked() and self._locks.get(key) is lock:
                del self._locks[key]

    async def _promote(self, tenant: str, session_id: str) -> int:
        try:
            record = await self._sessions.get(tenant, session_id)
        except (NotFoundError, SessionExpiredError):
            await self._store.forget(tenant, session_id)
            return 0
        mark = await self._store.get(tenant, session_id)
        watermark = 0 if mark is None else mark.watermark_for(record)
        if not record.user_id or not opted_in(record, self._agents):
            await self._store.advance(record, tenant, watermark, watermark, record.last_sequence)
            return 0
        created = 0
        for _ in range(MAX_PASSES):
            messages = await self._sessions.messages_after(tenant, session_id, watermark, READ_PAGE)
            turns = pair_turns(messages)
            full_page = len(messages) == READ_PAGE
            if turns and full_page and not turns[0].complete:
                turns[0].complete = True  # a turn longer than a page: cut there
            # Only a prefix of complete turns moves the watermark.
            ready: list[Turn] = []
            for turn in turns:
                if not turn.complete:
                    break
                ready.append(turn)
            more = full_page or len(ready) > self._config.batch_turns
            ready = ready[: self._config.batch_turns]
            if ready:
                created += await self._record(tenant, record, ready)
            through = ready[-1].last if ready else watermark
            checked = watermark if more else record.last_sequence
            if not await self._store.advance(record, tenant, watermark, through, checked):
                return created  # another replica moved it: it goes on from there
            watermark = through
            if not more or not ready:
                return created
        return created

    async def _record(self, tenant: str, record: SessionRecord, turns: Sequence[Turn]) -> int:
        drafts = [d for d in (self._draft(record, turn) for turn in turns) if d is not None]
        if not drafts:
            return 0
        actor = system_actor("PromoteSession", tenant)
        outcomes = await self._episodes.record_many(tenant, drafts, actor)
        new: list[str] = []
        for outcome in outcomes:
            if not isinstance(outcome, RecordOutcome):
                log.warning(
                    "a session turn was not promoted",
                    extra={"field": outcome.field, "reason": outcome.reason},
                )
                continue
            if not outcome.duplicate:
                new.append(outcome.episode.episode_id)
        if new and not await self._still_there(tenant, record):
            # The session went while its turns were being recorded (EraseUser
            # deletes sessions before memory: an episode recorded from
            # messages read before the erasure may land after it): the new
            # episodes go too. Retried; if it still fails, this raises and
            # the watermark stays, so the sweep does not forget the row
            # (the session, if it exists again, is another incarnation).
            await self._delete_recorded(tenant, new, actor)
            return 0
        if self._semantic is not None:
            for episode_id in new:
                try:
                    self._extractions.put_nowait((tenant, record.user_id, episode_id))
                except asyncio.QueueFull:
                    log.warning("fact extraction queue full; a promoted episode skipped")
        self.promoted += len(new)
        return len(new)

    async def _delete_recorded(self, tenant: str, episode_ids: list[str], actor: Actor) -> None:
        for attempt in range(1, DELETE_ATTEMPTS + 1):
            try:
                await self._episodes.delete_many(tenant, episode_ids, actor)
                return
            except Exception:
                if attempt == DELETE_ATTEMPTS:
                    raise
                log.warning(
                    "deleting the episodes of a session erased while promoting failed; retrying",
                    exc_info=True,
                )
                await asyncio.sleep(0.5 * attempt)

    async def _still_there(self, tenant: str, record: SessionRecord) -> bool:
        """Whether the session `record` was read from still exists: same id,
        same user, same create_time (not deleted and created again)."""
        try:
            current = await self._sessions.get(tenant, record.session_id)
        except NotFoundError:
            return False
        except SessionExpiredError:
            return True  # expired, not erased: its promoted turns stay
        return current.user_id == record.user_id and current.create_time == record.create_time

    def _draft(self, record: SessionRecord, turn: Turn) -> EpisodeDraft | None:
        user = _cut("\n\n".join(turn.user), self._max_text)
        assistant = _cut("\n\n".join(turn.assistant), self._max_text)
        if not user and not assistant:
            return None
        metadata = {
            SOURCE_KEY: SOURCE_SESSION,
            FIRST_KEY: str(turn.first),
            LAST_KEY: str(turn.last),
        }
        if record.agent_id:
            metadata[AGENT_KEY] = record.agent_id
        return EpisodeDraft(
            user_id=record.user_id,
            session_id=record.session_id,
            user_message=user,
            assistant_response=assistant,
            metadata=metadata,
            occur_time=turn.occur_time,
        )

    async def _extract_forever(self) -> None:
        assert self._semantic is not None
        while True:
            tenant, user_id, episode_id = await self._extractions.get()
            try:
                await self._semantic.extract_facts(
                    tenant,
                    user_id,
                    "",
                    episode_id,
                    "",
                    False,
                    system_actor("PromoteSession", tenant),
                )
            except Exception:
                log.exception("extracting facts from a promoted episode failed")
