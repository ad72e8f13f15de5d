"""Store wrappers that seal sensitive fields on the way in and open them on
the way out (storage/sealing.py holds the cryptography and the format).

Each wrapper implements its capability's store contract in front of the
backend's store (embedded, PostgreSQL, or PostgreSQL behind the Redis
cache), so both backends, the cache and the event feeds only ever hold the
sealed form; every method that does not carry a sensitive field is passed
through unchanged. What is sealed, with the ids each value is bound to
(associated data, besides the tenant and the field name):

* sessions: message `content` and tool-call `arguments` (session, message
  id); the record's `context_variables` (sealed whole, names too), pending
  tool-call arguments and `compaction_summary` (session), in the record and
  in every version snapshot.
* memory: episode `user_message`, `assistant_response`, `summary` (episode
  id); fact `object`, deterministically (AES-SIV, tenant), so that equal
  objects still compare equal in the store.
* checkpoints: the state payload (namespace and checkpoint id: both kept by
  `copy_execution`; a server-assigned id, unknown before the commit, binds
  the namespace only), pending-write values (namespace, checkpoint id, task
  id, index, channel), channel values (their content hash).
* blackboard: entry values, in entries, history and events (board, key).
* message bus: payload data (message id).

Sealing a field changes what a backend can compute on it; see README
"Encryption at rest" for what is given up (lexical search of sensitive
episodes, equality of content hashes).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from statekeeper.core.blackboard.models import (
    Decide,
    Decision,
    Entry,
    Event,
    MutationOutcome,
    MutationView,
    ReadResult,
    RevisionBatch,
    Value,
)
from statekeeper.core.blackboard.store import BlackboardEventFeed, BlackboardStore, FeedListener
from statekeeper.core.checkpoints.models import (
    ChannelEntry,
    CheckpointDraft,
    PendingWrite,
    StoredCheckpoint,
    WritesDraft,
)
from statekeeper.core.checkpoints.store import CheckpointStore
from statekeeper.core.memory.lexical import LexicalMatches
from statekeeper.core.memory.models import (
    ConsolidationPlan,
    Episode,
    Fact,
    FactBatch,
    FactCursor,
    FactQuery,
    FactResult,
    Neighbourhood,
    NeighbourhoodQuery,
    content_hash,
    entity_key,
)
from statekeeper.core.memory.store import MemoryStore
from statekeeper.core.messagebus.models import AgentMessage, DeadLetter, Delivery, SendOutcome
from statekeeper.core.messagebus.store import MessageStore, ReplyWaiters
from statekeeper.core.schema_upgrades import Payload
from statekeeper.core.sessions.models import (
    Message,
    SessionChange,
    SessionRecord,
    SessionVersion,
    ToolCall,
)
from statekeeper.core.sessions.store import SessionStore
from statekeeper.storage.sealing import DET_MAGIC, HASH_MAGIC, SealedValueError, Sealer

T = TypeVar("T")
S = TypeVar("S")


class _Forwarding:
    """Passes every attribute it does not define to the wrapped store."""

    def __init__(self, inner: Any, sealer: Sealer) -> None:
        self._inner = inner
        self._sealer = sealer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __dir__(self) -> list[str]:
        # Instrumentation (telemetry's store timings) lists the methods.
        return sorted(set(super().__dir__()) | set(dir(self._inner)))

    @property
    def inner(self) -> Any:
        """The backend's store (rotation and admin tools read it raw)."""
        return self._inner


# -- sessions -------------------------------------------------------------


class SealedSessions(_Forwarding):
    def _calls(
        self, tenant: str, ids: Sequence[str], calls: tuple[ToolCall, ...], seal: bool
    ) -> tuple[ToolCall, ...]:
        s = self._sealer
        out = []
        for call in calls:
            where = (*ids, call.id)
            args = (
                s.seal_text(tenant, "tool_call.arguments", where, call.arguments)
                if seal
                else s.open_text(tenant, "tool_call.arguments", where, call.arguments)
            )
            out.append(dataclasses.replace(call, arguments=args))
        return tuple(out)

    def _message(self, tenant: str, session_id: str, message: Message, seal: bool) -> Message:
        s = self._sealer
        ids = (session_id, message.message_id)
        content = (
            s.seal_text(tenant, "message.content", ids, message.content)
            if seal
            else s.open_text(tenant, "message.content", ids, message.content)
        )
        return dataclasses.replace(
            message,
            content=content,
            tool_calls=self._calls(tenant, ids, message.tool_calls, seal),
        )

    def _record(self, tenant: str, record: SessionRecord, seal: bool) -> SessionRecord:
        s = self._sealer
        ids = (record.session_id,)
        if seal:
            variables = s.seal_json_map(
                tenant, "session.context_variables", ids, record.context_variables
            )
            summary = s.seal_text(
                tenant, "session.compaction_summary", ids, record.compaction_summary
            )
        else:
            variables = s.open_json_map(
                tenant, "session.context_variables", ids, record.context_variables
            )
            summary = s.open_text(
                tenant, "session.compaction_summary", ids, record.compaction_summary
            )
        return dataclasses.replace(
            record,
            context_variables=variables,
            compaction_summary=summary,
            pending_tool_calls=self._calls(tenant, ids, record.pending_tool_calls, seal),
        )

    def _version(self, tenant: str, version: SessionVersion, seal: bool) -> SessionVersion:
        return dataclasses.replace(version, snapshot=self._record(tenant, version.snapshot, seal))

    async def create_session(self, tenant: str, version: SessionVersion, audit: Any = None) -> None:
        await self._inner.create_session(tenant, self._version(tenant, version, True), audit)

    async def get_session(self, tenant: str, session_id: str) -> SessionRecord | None:
        record = await self._inner.get_session(tenant, session_id)
        return None if record is None else self._record(tenant, record, False)

    async def read_for_change(
        self, tenant: str, session_id: str
    ) -> tuple[SessionRecord | None, object | None]:
        record, ticket = await self._inner.read_for_change(tenant, session_id)
        return (None if record is None else self._record(tenant, record, False)), ticket

    async def list_sessions(self, tenant: str, *args: Any, **kwargs: Any) -> list[SessionRecord]:
        records = await self._inner.list_sessions(tenant, *args, **kwargs)
        return [self._record(tenant, r, False) for r in records]

    async def apply_change(self, tenant: str, change: SessionChange) -> None:
        session_id = change.record.session_id
        sealed = dataclasses.replace(
            change,
            record=self._record(tenant, change.record, True),
            version=self._version(tenant, change.version, True),
            new_messages=tuple(
                self._message(tenant, session_id, m, True) for m in change.new_messages
            ),
        )
        await self._inner.apply_change(tenant, sealed)

    def _messages(self, tenant: str, session_id: str, messages: list[Message]) -> list[Message]:
        return [self._message(tenant, session_id, m, False) for m in messages]

    async def list_messages(
        self, tenant: str, session_id: str, *args: Any, **kwargs: Any
    ) -> list[Message]:
        got = await self._inner.list_messages(tenant, session_id, *args, **kwargs)
        return self._messages(tenant, session_id, got)

    async def get_messages(
        self, tenant: str, session_id: str, *args: Any, **kwargs: Any
    ) -> list[Message]:
        got = await self._inner.get_messages(tenant, session_id, *args, **kwargs)
        return self._messages(tenant, session_id, got)

    async def list_window_messages(
        self, tenant: str, session_id: str, *args: Any, **kwargs: Any
    ) -> list[Message]:
        got = await self._inner.list_window_messages(tenant, session_id, *args, **kwargs)
        return self._messages(tenant, session_id, got)

    async def list_recent_messages(
        self, tenant: str, session_id: str, *args: Any, **kwargs: Any
    ) -> list[Message]:
        got = await self._inner.list_recent_messages(tenant, session_id, *args, **kwargs)
        return self._messages(tenant, session_id, got)

    async def list_versions(self, tenant: str, *args: Any, **kwargs: Any) -> list[SessionVersion]:
        got = await self._inner.list_versions(tenant, *args, **kwargs)
        return [self._version(tenant, v, False) for v in got]

    async def get_version(self, tenant: str, *args: Any, **kwargs: Any) -> SessionVersion | None:
        got = await self._inner.get_version(tenant, *args, **kwargs)
        return None if got is None else self._version(tenant, got, False)


# -- memory ---------------------------------------------------------------


class SealedMemory(_Forwarding):
    def _episode(self, tenant: str, episode: Episode, seal: bool) -> Episode:
        s = self._sealer
        ids = (episode.episode_id,)
        step = s.seal_indexed_text if seal else s.open_text
        changed = dataclasses.replace(
            episode,
            user_message=step(tenant, "episode.user_message", ids, episode.user_message),
            assistant_response=step(
                tenant, "episode.assistant_response", ids, episode.assistant_response
            ),
            summary=step(tenant, "episode.summary", ids, episode.summary),
        )
        if seal and s.sensitive(tenant) and episode.content_hash:
            return dataclasses.replace(
                changed, content_hash=s.blind_hash(tenant, episode.content_hash)
            )
        if not seal and changed.content_hash.startswith(HASH_MAGIC):
            # The domain's duplicate key again, from the opened texts.
            digest = content_hash(changed.user_message, changed.assistant_response)
            return dataclasses.replace(changed, content_hash=digest)
        return changed

    def _open_all(self, tenant: str, episodes: Sequence[Episode]) -> list[Episode]:
        return [self._episode(tenant, e, False) for e in episodes]

    async def insert_episode(
        self, tenant: str, episode: Episode, audit: Any = None
    ) -> tuple[Episode, bool]:
        stored, inserted = await self._inner.insert_episode(
            tenant, self._episode(tenant, episode, True), audit
        )
        return self._episode(tenant, stored, False), inserted

    async def insert_episodes(
        self, tenant: str, episodes: Sequence[Episode], *args: Any, **kwargs: Any
    ) -> list[Episode]:
        sealed = [self._episode(tenant, e, True) for e in episodes]
        return self._open_all(
            tenant, await self._inner.insert_episodes(tenant, sealed, *args, **kwargs)
        )

    async def find_by_hash(self, tenant: str, user_id: str, digest: str) -> Episode | None:
        found = await self.find_by_hashes(tenant, user_id, [digest])
        return found.get(digest)

    async def find_by_hashes(
        self, tenant: str, user_id: str, digests: Sequence[str]
    ) -> dict[str, Episode]:
        """Stored duplicate keys are keyed for sensitive tenants (under the
        key of the ring that sealed them): every form is looked up."""
        if self._sealer.ring is None:
            got = await self._inner.find_by_hashes(tenant, user_id, digests)
            return {k: self._episode(tenant, e, False) for k, e in got.items()}
        plain_of = {v: d for d in digests for v in self._sealer.hash_variants(tenant, d)}
        got = await self._inner.find_by_hashes(tenant, user_id, list(plain_of))
        found: dict[str, Episode] = {}
        for stored, episode in got.items():
            found.setdefault(plain_of.get(stored, stored), self._episode(tenant, episode, False))
        return found

    async def get_episode(self, tenant: str, *args: Any, **kwargs: Any) -> Episode | None:
        got = await self._inner.get_episode(tenant, *args, **kwargs)
        return None if got is None else self._episode(tenant, got, False)

    async def get_episodes_by_keys(self, tenant: str, *args: Any, **kwargs: Any) -> list[Episode]:
        return self._open_all(
            tenant, await self._inner.get_episodes_by_keys(tenant, *args, **kwargs)
        )

    async def list_episodes(self, tenant: str, *args: Any, **kwargs: Any) -> list[Episode]:
        return self._open_all(tenant, await self._inner.list_episodes(tenant, *args, **kwargs))

    async def delete_episodes(self, tenant: str, *args: Any, **kwargs: Any) -> list[Episode]:
        return self._open_all(tenant, await self._inner.delete_episodes(tenant, *args, **kwargs))

    async def unconsolidated_episodes(
        self, tenant: str, *args: Any, **kwargs: Any
    ) -> list[Episode]:
        return self._open_all(
            tenant, await self._inner.unconsolidated_episodes(tenant, *args, **kwargs)
        )

    async def scan_episodes(self, tenant: str, *args: Any, **kwargs: Any) -> list[Episode]:
        return self._open_all(tenant, await self._inner.scan_episodes(tenant, *args, **kwargs))

    async def lexical_matches(
        self, tenant: str, user_id: str, query_terms: Sequence[str], *args: Any, **kwargs: Any
    ) -> LexicalMatches:
        """Sealed texts are indexed by blind terms (sealing.seal_indexed_text):
        the query asks for both forms of each term, and the answer is given
        back in plain terms, so that BM25 ranks as for any tenant."""
        if not self._sealer.sensitive(tenant):
            return await self._inner.lexical_matches(  # type: ignore[no-any-return]
                tenant, user_id, query_terms, *args, **kwargs
            )
        variants = self._sealer.blind_variants(tenant, query_terms)
        plain_of = {b: t for t, blinds in variants.items() for b in blinds}
        asked = [*query_terms, *plain_of]
        got: LexicalMatches = await self._inner.lexical_matches(
            tenant, user_id, asked, *args, **kwargs
        )
        frequency: dict[str, int] = {}
        for term, count in got.document_frequency.items():
            plain = plain_of.get(term, term)
            frequency[plain] = frequency.get(plain, 0) + count
        candidates = [
            dataclasses.replace(c, terms=" ".join(plain_of.get(t, t) for t in c.terms.split()))
            for c in got.candidates
        ]
        return LexicalMatches(candidates, got.document_count, frequency)

    # Fact objects: sealed deterministically, so that the store still
    # finds equal objects (duplicates, object filters, shared objects in a
    # neighbourhood) by comparing sealed values.

    def _fact(self, tenant: str, fact: Fact) -> Fact:
        return dataclasses.replace(
            fact, object=self._sealer.open_det(tenant, "fact.object", fact.object)
        )

    def _batch(self, tenant: str, batch: FactBatch) -> FactBatch:
        s = self._sealer
        drafts = tuple(
            dataclasses.replace(d, object=s.seal_det_if(tenant, "fact.object", d.object))
            for d in batch.drafts
        )
        return dataclasses.replace(batch, drafts=drafts)

    async def _stable_batch(self, tenant: str, batch: FactBatch) -> FactBatch:
        """The batch sealed as `_batch` does, except that a draft whose
        object is already stored for the same subject and predicate in the
        scope under another key of the ring (a key rotation is under way:
        `keys rotate` has not re-sealed it yet) takes that stored form. A
        deterministic seal depends on the key, so "Paris" under the new key
        would otherwise neither deduplicate with "Paris" under the old one
        nor spare it from contradiction on a single-valued predicate."""
        sealed = self._batch(tenant, batch)
        s = self._sealer
        ring = s.ring
        if ring is None or len(ring.keys) < 2:
            return sealed
        drafts = []
        for draft in sealed.drafts:
            if draft.object.startswith(DET_MAGIC):
                plain = s.open_det(tenant, "fact.object", draft.object)
                for key_id in ring.keys:
                    if key_id == ring.active:
                        continue
                    older = s.seal_det(tenant, "fact.object", plain, key_id)
                    query = FactQuery(
                        user_id=batch.user_id,
                        subject=entity_key(draft.subject),
                        predicate=entity_key(draft.predicate),
                        object=entity_key(older),
                    )
                    stored = await self._inner.list_facts(tenant, query, batch.now, None, 100)
                    if any(f.user_id == batch.user_id and f.object == older for f in stored):
                        draft = dataclasses.replace(draft, object=older)
                        break
            drafts.append(draft)
        return dataclasses.replace(sealed, drafts=tuple(drafts))

    def _results(self, tenant: str, results: list[FactResult]) -> list[FactResult]:
        return [dataclasses.replace(r, fact=self._fact(tenant, r.fact)) for r in results]

    async def apply_facts(
        self, tenant: str, batch: FactBatch, audit: Any = None
    ) -> list[FactResult]:
        got = await self._inner.apply_facts(tenant, await self._stable_batch(tenant, batch), audit)
        return self._results(tenant, got)

    async def consolidate(
        self, tenant: str, plan: ConsolidationPlan, audit: Any = None
    ) -> list[FactResult]:
        sealed_plan = dataclasses.replace(plan, facts=await self._stable_batch(tenant, plan.facts))
        return self._results(tenant, await self._inner.consolidate(tenant, sealed_plan, audit))

    async def get_fact(self, tenant: str, fact_id: str) -> Fact | None:
        got = await self._inner.get_fact(tenant, fact_id)
        return None if got is None else self._fact(tenant, got)

    async def list_facts(
        self,
        tenant: str,
        query: FactQuery,
        now: float,
        after: FactCursor | None,
        limit: int,
    ) -> list[Fact]:
        if not query.object or not self._sealer.sensitive(tenant):
            got = await self._inner.list_facts(tenant, query, now, after, limit)
            return [self._fact(tenant, f) for f in got]
        # The object filter (an entity key) cannot be compared with sealed
        # objects in the store: the facts matching the other filters are
        # read page by page and compared here, after opening.
        wanted = query.object
        unfiltered = dataclasses.replace(query, object="")
        found: list[Fact] = []
        while len(found) < limit:
            page = await self._inner.list_facts(tenant, unfiltered, now, after, limit)
            for raw in page:
                fact = self._fact(tenant, raw)
                if entity_key(fact.object) == wanted:
                    found.append(fact)
            if len(page) < limit:
                break
            after = FactCursor(page[-1].create_time, page[-1].fact_id)
        return found[:limit]

    async def neighbourhood(self, tenant: str, query: NeighbourhoodQuery) -> Neighbourhood:
        got: Neighbourhood = await self._inner.neighbourhood(tenant, query)
        s = self._sealer
        return dataclasses.replace(
            got,
            nodes=[
                dataclasses.replace(n, name=s.open_det(tenant, "fact.object", n.name))
                for n in got.nodes
            ],
            edges=[self._fact(tenant, f) for f in got.edges],
        )

    async def invalidate_fact(self, tenant: str, *args: Any, **kwargs: Any) -> Any:
        got = await self._inner.invalidate_fact(tenant, *args, **kwargs)
        if got is None:
            return None
        fact, already = got
        return self._fact(tenant, fact), already


# -- checkpoints ----------------------------------------------------------


class SealedCheckpoints(_Forwarding):
    def _payload(
        self, tenant: str, field_name: str, ids: Sequence[str], payload: Payload, seal: bool
    ) -> Payload:
        s = self._sealer
        data = (
            s.seal_bytes(tenant, field_name, ids, payload.data)
            if seal
            else s.open_bytes(tenant, field_name, ids, payload.data)
        )
        return dataclasses.replace(payload, data=data)

    def _channel(self, tenant: str, entry: ChannelEntry, seal: bool) -> ChannelEntry:
        if entry.value is None:
            return entry
        ids = (entry.content_hash,)
        value = self._payload(tenant, "checkpoint.channel_value", ids, entry.value, seal)
        return dataclasses.replace(entry, value=value)

    def _state(self, tenant: str, stored: StoredCheckpoint) -> Payload:
        """The state, bound to (namespace, checkpoint id); a checkpoint saved
        without an id (the store assigns a server id in the commit) is bound
        to its namespace only. `copy_execution` keeps both."""
        ids = (stored.namespace, stored.checkpoint_id)
        try:
            return self._payload(tenant, "checkpoint.state", ids, stored.state, False)
        except SealedValueError:
            if not _SERVER_ID.fullmatch(stored.checkpoint_id):
                raise
            return self._payload(
                tenant, "checkpoint.state", (stored.namespace, ""), stored.state, False
            )

    @staticmethod
    def _write_ids(
        namespace: str, checkpoint_id: str, task_id: str, index: int, channel: str
    ) -> tuple[str, ...]:
        return (namespace, checkpoint_id, task_id, str(index), channel)

    def _stored(self, tenant: str, stored: StoredCheckpoint) -> StoredCheckpoint:
        ns, cid = stored.namespace, stored.checkpoint_id
        return dataclasses.replace(
            stored,
            state=self._state(tenant, stored),
            channels={k: self._channel(tenant, v, False) for k, v in stored.channels.items()},
            pending_writes=tuple(
                dataclasses.replace(
                    w,
                    value=self._payload(
                        tenant,
                        "checkpoint.write",
                        self._write_ids(ns, cid, w.task_id, w.index, w.channel),
                        w.value,
                        False,
                    ),
                )
                for w in stored.pending_writes
            ),
        )

    async def save_checkpoint(
        self, tenant: str, record: CheckpointDraft, *args: Any, **kwargs: Any
    ) -> Any:
        sealed = dataclasses.replace(
            record,
            state=self._payload(
                tenant,
                "checkpoint.state",
                (record.namespace, record.checkpoint_id),
                record.state,
                True,
            ),
            channels={k: self._channel(tenant, v, True) for k, v in record.channels.items()},
        )
        return await self._inner.save_checkpoint(tenant, sealed, *args, **kwargs)

    async def put_writes(self, tenant: str, draft: WritesDraft, *args: Any, **kwargs: Any) -> Any:
        sealed = dataclasses.replace(
            draft,
            writes=tuple(
                dataclasses.replace(
                    w,
                    value=self._payload(
                        tenant,
                        "checkpoint.write",
                        self._write_ids(
                            draft.namespace, draft.checkpoint_id, draft.task_id, w.index, w.channel
                        ),
                        w.value,
                        True,
                    ),
                )
                for w in draft.writes
            ),
        )
        return await self._inner.put_writes(tenant, sealed, *args, **kwargs)

    async def get_checkpoint(
        self, tenant: str, *args: Any, **kwargs: Any
    ) -> StoredCheckpoint | None:
        got = await self._inner.get_checkpoint(tenant, *args, **kwargs)
        return None if got is None else self._stored(tenant, got)

    async def list_checkpoints(
        self, tenant: str, *args: Any, **kwargs: Any
    ) -> list[StoredCheckpoint]:
        return [
            self._stored(tenant, c)
            for c in await self._inner.list_checkpoints(tenant, *args, **kwargs)
        ]

    async def get_channel_values(
        self, tenant: str, content_hashes: Sequence[str]
    ) -> dict[str, Payload]:
        got = await self._inner.get_channel_values(tenant, content_hashes)
        return {
            h: self._payload(tenant, "checkpoint.channel_value", (h,), p, False)
            for h, p in got.items()
        }


# Checkpoint ids the store assigns (core.checkpoints.service.server_checkpoint_id).
_SERVER_ID = re.compile(r"\d{20}")
_ = PendingWrite


# -- blackboard -----------------------------------------------------------


class SealedBlackboard(_Forwarding):
    def _entry(self, tenant: str, entry: Entry | None, seal: bool) -> Entry | None:
        if entry is None or entry.value is None:
            return entry
        s = self._sealer
        ids = (entry.board, entry.key)
        value = entry.value
        data = (
            s.seal_bytes(tenant, "blackboard.value", ids, value.data, board=entry.board)
            if seal
            else s.open_bytes(tenant, "blackboard.value", ids, value.data)
        )
        return dataclasses.replace(
            entry, value=Value(value.kind, data, value.content_type, value.schema_version)
        )

    def _event(self, tenant: str, event: Event, seal: bool) -> Event:
        entry = self._entry(tenant, event.entry, seal)
        assert entry is not None
        return dataclasses.replace(
            event, entry=entry, previous=self._entry(tenant, event.previous, seal)
        )

    def _batch(self, batch: RevisionBatch) -> RevisionBatch:
        return dataclasses.replace(
            batch, events=tuple(self._event(batch.tenant, e, False) for e in batch.events)
        )

    def _read(self, tenant: str, result: ReadResult) -> ReadResult:
        entries = [self._entry(tenant, e, False) for e in result.entries]
        return dataclasses.replace(result, entries=[e for e in entries if e is not None])

    @property
    def feed(self) -> BlackboardEventFeed:
        return cast(BlackboardEventFeed, _OpeningFeed(self._inner.feed, self._batch))

    async def mutate(
        self,
        tenant: str,
        board: str,
        keys: Sequence[str],
        now: float,
        decide: Decide[T],
        audit: Any = None,
    ) -> MutationOutcome[T]:
        def sealed_decide(view: MutationView) -> Decision[T]:
            opened = dataclasses.replace(
                view,
                entries={
                    k: e
                    for k, v in view.entries.items()
                    if (e := self._entry(tenant, v, False)) is not None
                },
            )
            decision = decide(opened)
            return dataclasses.replace(
                decision, events=tuple(self._event(tenant, e, True) for e in decision.events)
            )

        outcome: MutationOutcome[T] = await self._inner.mutate(
            tenant, board, keys, now, sealed_decide, audit
        )
        if outcome.batch is None:
            return outcome
        return dataclasses.replace(outcome, batch=self._batch(outcome.batch))

    async def read(self, tenant: str, *args: Any, **kwargs: Any) -> ReadResult:
        return self._read(tenant, await self._inner.read(tenant, *args, **kwargs))

    async def list_entries(self, tenant: str, *args: Any, **kwargs: Any) -> ReadResult:
        return self._read(tenant, await self._inner.list_entries(tenant, *args, **kwargs))

    async def history(self, tenant: str, *args: Any, **kwargs: Any) -> list[RevisionBatch]:
        return [self._batch(b) for b in await self._inner.history(tenant, *args, **kwargs)]

    async def expire_due(self, now: float, limit: int) -> list[RevisionBatch]:
        return [self._batch(b) for b in await self._inner.expire_due(now, limit)]


class _OpeningFeed:
    """The store's feed, whose listeners get the batches opened."""

    def __init__(
        self, inner: BlackboardEventFeed, opener: Callable[[RevisionBatch], RevisionBatch]
    ):
        self._inner = inner
        self._opener = opener

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def listen(self, listener: FeedListener) -> Callable[[], None]:
        opener = self._opener

        def opened(batch: RevisionBatch) -> None:
            listener(opener(batch))

        return self._inner.listen(opened)


# -- message bus ----------------------------------------------------------


def _message(s: Sealer, tenant: str, message: AgentMessage, seal: bool) -> AgentMessage:
    """The message with its payload sealed (or opened), bound to its id."""
    ids = (message.message_id,)
    data = (
        s.seal_bytes(tenant, "message.payload", ids, message.payload.data)
        if seal
        else s.open_bytes(tenant, "message.payload", ids, message.payload.data)
    )
    return dataclasses.replace(message, payload=dataclasses.replace(message.payload, data=data))


class SealedMessages(_Forwarding):
    def _message(self, tenant: str, message: AgentMessage, seal: bool) -> AgentMessage:
        return _message(self._sealer, tenant, message, seal)

    async def insert(
        self, tenant: str, message: AgentMessage, *args: Any, **kwargs: Any
    ) -> SendOutcome:
        outcome: SendOutcome = await self._inner.insert(
            tenant, self._message(tenant, message, True), *args, **kwargs
        )
        return dataclasses.replace(outcome, message=self._message(tenant, outcome.message, False))

    async def claim(self, tenant: str, *args: Any, **kwargs: Any) -> list[Delivery]:
        got: list[Delivery] = await self._inner.claim(tenant, *args, **kwargs)
        return [
            dataclasses.replace(d, message=self._message(tenant, d.message, False)) for d in got
        ]

    async def get(self, tenant: str, message_id: str) -> AgentMessage | None:
        got = await self._inner.get(tenant, message_id)
        return None if got is None else self._message(tenant, got, False)

    async def list_dead_letters(self, tenant: str, *args: Any, **kwargs: Any) -> list[DeadLetter]:
        got: list[DeadLetter] = await self._inner.list_dead_letters(tenant, *args, **kwargs)
        return [
            dataclasses.replace(d, message=self._message(tenant, d.message, False)) for d in got
        ]


class SealedReplyWaiters(_Forwarding):
    """RequestReply waiters whose offered replies cross replicas sealed
    (the Redis waiters PUBLISH the message to the replica that waits): the
    payload is sealed as the stored message's is, and opened on the waiting
    replica before the waiter gets it."""

    def _message(self, tenant: str, message: AgentMessage, seal: bool) -> AgentMessage:
        return _message(self._sealer, tenant, message, seal)

    async def offer(self, tenant: str, message: AgentMessage) -> bool:
        return bool(await self._inner.offer(tenant, self._message(tenant, message, True)))

    async def register(
        self, tenant: str, agent: str, correlation_id: str
    ) -> asyncio.Future[AgentMessage]:
        inner: asyncio.Future[AgentMessage] = await self._inner.register(
            tenant, agent, correlation_id
        )
        outer: asyncio.Future[AgentMessage] = asyncio.get_running_loop().create_future()

        def relay(done: asyncio.Future[AgentMessage]) -> None:
            if outer.done():
                return
            if done.cancelled():
                outer.cancel()
                return
            error = done.exception()
            if error is not None:
                outer.set_exception(error)
                return
            try:
                outer.set_result(self._message(tenant, done.result(), False))
            except Exception as exc:  # a reply that does not open
                outer.set_exception(exc)

        def cancel_inner(done: asyncio.Future[AgentMessage]) -> None:
            # A waiter that left (timeout, cancellation) takes no more offers.
            if done.cancelled() and not inner.done():
                inner.cancel()

        inner.add_done_callback(relay)
        outer.add_done_callback(cancel_inner)
        return outer


# -- assembly -------------------------------------------------------------


def sessions(store: SessionStore, sealer: Sealer | None) -> SessionStore:
    return store if sealer is None else cast(SessionStore, SealedSessions(store, sealer))


def memory(store: MemoryStore, sealer: Sealer | None) -> MemoryStore:
    return store if sealer is None else cast(MemoryStore, SealedMemory(store, sealer))


def checkpoints(store: CheckpointStore, sealer: Sealer | None) -> CheckpointStore:
    return store if sealer is None else cast(CheckpointStore, SealedCheckpoints(store, sealer))


def blackboard(store: BlackboardStore, sealer: Sealer | None) -> BlackboardStore:
    return store if sealer is None else cast(BlackboardStore, SealedBlackboard(store, sealer))


def messages(store: MessageStore, sealer: Sealer | None) -> MessageStore:
    return store if sealer is None else cast(MessageStore, SealedMessages(store, sealer))


def waiters(inner: ReplyWaiters, sealer: Sealer | None) -> ReplyWaiters:
    return inner if sealer is None else cast(ReplyWaiters, SealedReplyWaiters(inner, sealer))
