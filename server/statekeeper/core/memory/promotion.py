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
session still exists, and deletes the episodes it just created if not, so
no erased turn comes back as an episode.

Facts: with an LLM endpoint configured, each new episode then goes through
`SemanticMemory.extract_facts` (as ExtractFacts with `episode_id`), in a
second background queue; without one nothing is extracted.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from statekeeper.core.audit.service import system_actor
from statekeeper.core.errors import NotFoundError, SessionExpiredError
from statekeeper.core.memory.config import PromotionConfig
from statekeeper.core.memory.episodes import EpisodeDraft, RecordOutcome
from statekeeper.core.memory.episodic import EpisodicMemory
from statekeeper.core.memory.semantic import SemanticMemory
from statekeeper.core.sessions.models import Message, Role, SessionRecord
from statekeeper.core.sessions.service import SessionManager

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


@dataclass(frozen=True)
class PromotionMark:
    """A session's promotion state: every turn through `promoted_through` is
    recorded; the session was read through `checked_through`; appends were
    seen through `seen_through` (the sweep revisits it while seen > checked)."""

    promoted_through: int
    checked_through: int
    seen_through: int


class PromotionStore(abc.ABC):
    """Durable promotion watermarks, one row per promoted session."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Applies pending migrations. Idempotent."""

    @abc.abstractmethod
    async def mark(self, marks: Sequence[tuple[str, str, int]]) -> None:
        """For each (tenant, session_id, last_sequence): creates the row if
        missing and raises `seen_through` to `last_sequence` (never lowers it)."""

    @abc.abstractmethod
    async def get(self, tenant: str, session_id: str) -> PromotionMark | None:
        """The session's row, or None."""

    @abc.abstractmethod
    async def advance(
        self, tenant: str, session_id: str, expected: int, promoted_through: int, checked: int
    ) -> bool:
        """Sets `promoted_through` if it still equals `expected` (a missing
        row counts as 0 and is created), and raises `checked_through` to
        `checked`; False (nothing changed) when another writer moved it."""

    @abc.abstractmethod
    async def lagging(self, after: tuple[str, str], limit: int) -> list[tuple[str, str]]:
        """Up to `limit` (tenant, session_id) with seen_through >
        checked_through, ascending, strictly after `after`."""

    @abc.abstractmethod
    async def forget(self, tenant: str, session_id: str) -> None:
        """Drops the session's row (the session is gone)."""


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
        self._queue: OrderedDict[tuple[str, str], int] = OrderedDict()
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
        blocks and never raises for a full queue (the session is then left
        to the next append or, once marked, the sweep)."""
        if not record.user_id or not opted_in(record, self._agents):
            return
        key = (tenant, record.session_id)
        if key not in self._queue and len(self._queue) >= self._config.max_queued_sessions:
            log.warning("promotion queue full; session left for a later append", extra={})
            return
        self._queue[key] = max(self._queue.get(key, 0), record.last_sequence)
        self._wake.set()

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
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if self._queue:
            pending = [(t, s, seq) for (t, s), seq in self._queue.items()]
            self._queue.clear()
            try:
                await self._store.mark(pending)
            except Exception:
                log.exception("marking queued sessions for promotion at shutdown failed")

    # ----- background work -------------------------------------------------------

    async def _work_forever(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(self._config.delay_seconds)
            self._wake.clear()
            batch = [(t, s, seq) for (t, s), seq in self._queue.items()]
            self._queue.clear()
            if not batch:
                continue
            try:
                await self._store.mark(batch)
            except Exception:
                log.exception("marking sessions for promotion failed; retrying")
                for tenant, session_id, seq in batch:
                    key = (tenant, session_id)
                    self._queue[key] = max(self._queue.get(key, 0), seq)
                self._wake.set()
                await asyncio.sleep(1.0)
                continue
            for tenant, session_id, _ in batch:
                await self._promote_logged(tenant, session_id)

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self._config.sweep_interval_seconds)
            try:
                await self.sweep()
            except Exception:
                log.exception("promotion sweep failed; will retry")

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
        return visited

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
        watermark = 0 if mark is None else mark.promoted_through
        if not record.user_id or not opted_in(record, self._agents):
            await self._store.advance(
                tenant, session_id, watermark, watermark, record.last_sequence
            )
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
            if not await self._store.advance(tenant, session_id, watermark, through, checked):
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
        if new and not await self._still_there(tenant, record.session_id):
            # The session went while its turns were being recorded (EraseUser
            # deletes sessions before memory: an episode recorded from
            # messages read before the erasure may land after it): the new
            # episodes go too.
            await self._episodes.delete_many(tenant, new, actor)
            return 0
        if self._semantic is not None:
            for episode_id in new:
                try:
                    self._extractions.put_nowait((tenant, record.user_id, episode_id))
                except asyncio.QueueFull:
                    log.warning("fact extraction queue full; a promoted episode skipped")
        self.promoted += len(new)
        return len(new)

    async def _still_there(self, tenant: str, session_id: str) -> bool:
        try:
            await self._sessions.get(tenant, session_id)
        except NotFoundError:
            return False
        except SessionExpiredError:
            return True  # expired, not erased: its promoted turns stay
        return True

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
