"""Sessions feed long-term memory (issue 13, item 3), through real server processes,
on both backends.

* an opted-in session (metadata `statekeeper.memory.promote`, or its agent in
  `memory.promotion.agents`) becomes one episode per user -> assistant turn,
  with the session id and the turn's first and last sequence; tool turns are
  folded into the final answer; a session not opted in stays out, and Recall
  finds the promoted turns;
* a server killed (SIGKILL) while promoting a long session, then restarted,
  promotes the rest: every turn exactly once;
* production: two replicas appending to the same sessions promote every
  turn exactly once;
* with an LLM endpoint, promoted turns feed fact extraction.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.protobuf import field_mask_pb2

from statekeeper_client.v1 import (
    memory_pb2,
    memory_pb2_grpc,
    session_pb2,
    session_pb2_grpc,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.harness.backends import BACKENDS, PRODUCTION, backend
from tests.harness.deadlines import wait_until
from tests.harness.deploy import statekeeper_replicas
from tests.harness.servers import ServerProcess

AUTH = [("x-api-key", "key-alpha")]
PROMOTE = {"statekeeper.memory.promote": "true"}
FIRST, LAST = "statekeeper.session.first_sequence", "statekeeper.session.last_sequence"
BASE_ARGS = [
    "--embedder-kind",
    "none",
    "--limit",
    "memory.promotion.agents=auto-agent",
    "--limit",
    "memory.promotion.sweep_interval_seconds=0.5",
    "--limit",
    "memory.promotion.delay_seconds=0.05",
]


@dataclass
class Stubs:
    sessions: session_pb2_grpc.SessionServiceStub
    memory: memory_pb2_grpc.MemoryServiceStub


@contextmanager
def stubs_for(server: ServerProcess) -> Iterator[Stubs]:
    with grpc.insecure_channel(server.address) as channel:
        yield Stubs(
            session_pb2_grpc.SessionServiceStub(channel),  # type: ignore[no-untyped-call]
            memory_pb2_grpc.MemoryServiceStub(channel),  # type: ignore[no-untyped-call]
        )


def create(
    stub: Stubs, session_id: str, user: str, metadata: dict[str, str], agent: str = ""
) -> None:
    stub.sessions.CreateSession(
        session_pb2.CreateSessionRequest(
            session_id=session_id,
            session=session_pb2.Session(user_id=user, agent_id=agent, metadata=metadata),
        ),
        metadata=AUTH,
    )


def message(role: int, content: str, **extra: object) -> session_pb2.SessionMessage:
    return session_pb2.SessionMessage(role=role, content=content, **extra)  # type: ignore[arg-type]


def append(stub: Stubs, session_id: str, *messages: session_pb2.SessionMessage) -> None:
    stub.sessions.AppendMessages(
        session_pb2.AppendMessagesRequest(session_id=session_id, messages=list(messages)),
        metadata=AUTH,
    )


def turn(stub: Stubs, session_id: str, index: int) -> None:
    append(
        stub,
        session_id,
        message(session_pb2.ROLE_USER, f"question {index} of {session_id}"),
        message(session_pb2.ROLE_ASSISTANT, f"answer {index} of {session_id}"),
    )


def episodes(stub: Stubs, user: str, session_id: str = "") -> list[memory_pb2.Episode]:
    found: list[memory_pb2.Episode] = []
    token = ""
    for _ in range(1000):  # bounded paging
        reply = stub.memory.ListEpisodes(
            memory_pb2.ListEpisodesRequest(
                user_id=user,
                filter=memory_pb2.EpisodeFilter(session_id=session_id),
                page_size=500,
                page_token=token,
            ),
            metadata=AUTH,
        )
        found.extend(reply.episodes)
        token = reply.next_page_token
        if not token:
            break
    return found


def count_at_least(stub: Stubs, user: str, session_id: str, wanted: int) -> bool:
    return len(episodes(stub, user, session_id)) >= wanted


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_opted_in_sessions_become_episodes(backend_name: str, tmp_path: Path) -> None:
    with (
        backend(backend_name, "promo") as where,
        statekeeper_replicas(tmp_path, where, extra_args=BASE_ARGS) as servers,
        stubs_for(servers[0]) as stub,
    ):
        log = servers[0].log_tail
        user = "promo-user"
        create(stub, "opted", user, {**PROMOTE, "note": "x"})
        create(stub, "plain", user, {"note": "y"})
        create(stub, "by-agent", user, {}, agent="auto-agent")
        create(stub, "opted-out", user, {"statekeeper.memory.promote": "false"}, "auto-agent")
        # Not opted in: appended first, so it was seen before the others.
        turn(stub, "plain", 0)
        turn(stub, "opted-out", 0)
        append(stub, "opted", message(session_pb2.ROLE_SYSTEM, "be brief"))
        append(stub, "opted", message(session_pb2.ROLE_USER, "Where does Ana keep the violin?"))
        append(
            stub,
            "opted",
            message(
                session_pb2.ROLE_ASSISTANT,
                "",
                tool_calls=[session_pb2.ToolCall(id="c1", name="lookup", arguments="{}")],
            ),
            message(session_pb2.ROLE_TOOL, "attic", tool_call_id="c1"),
        )
        # Incomplete until the final answer: nothing promoted yet for it.
        append(stub, "opted", message(session_pb2.ROLE_ASSISTANT, "In the attic, in a blue case."))
        append(
            stub,
            "opted",
            message(session_pb2.ROLE_USER, "And the piano?"),
            message(session_pb2.ROLE_ASSISTANT, "Sold in 2019."),
        )
        # A user message without an answer yet stays unpromoted.
        append(stub, "opted", message(session_pb2.ROLE_USER, "Who bought it?"))
        turn(stub, "by-agent", 0)

        wait_until(lambda: count_at_least(stub, user, "opted", 2), 60, "opted promoted", log)
        wait_until(lambda: count_at_least(stub, user, "by-agent", 1), 60, "agent promoted", log)
        opted = sorted(episodes(stub, user, "opted"), key=lambda e: int(e.metadata[FIRST]))
        assert [(e.user_message, e.assistant_response) for e in opted] == [
            ("Where does Ana keep the violin?", "In the attic, in a blue case."),
            ("And the piano?", "Sold in 2019."),
        ]
        assert [(e.metadata[FIRST], e.metadata[LAST]) for e in opted] == [("2", "5"), ("6", "7")]
        assert all(e.session_id == "opted" and e.user_id == user for e in opted)
        assert all(e.metadata["statekeeper.source"] == "session" for e in opted)
        (agent_episode,) = episodes(stub, user, "by-agent")
        assert agent_episode.metadata["statekeeper.agent_id"] == "auto-agent"
        assert agent_episode.user_message == "question 0 of by-agent"

        # The pending question becomes a turn once answered.
        append(stub, "opted", message(session_pb2.ROLE_ASSISTANT, "A school in Porto."))
        wait_until(lambda: count_at_least(stub, user, "opted", 3), 60, "third turn", log)
        texts = {e.user_message for e in episodes(stub, user, "opted")}
        assert "Who bought it?" in texts

        assert episodes(stub, user, "plain") == []
        assert episodes(stub, user, "opted-out") == []
        reply = stub.memory.Recall(
            memory_pb2.RecallRequest(user_id=user, query_text="violin attic", top_k=3),
            metadata=AUTH,
        )
        assert reply.results, "Recall found no promoted turn"
        assert reply.results[0].episode.assistant_response == "In the attic, in a blue case."
        assert len(episodes(stub, user)) == 4


TURNS = 240


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_restart_mid_promotion_promotes_every_turn_once(backend_name: str, tmp_path: Path) -> None:
    args = [*BASE_ARGS, "--limit", "memory.promotion.batch_turns=1"]
    with (
        backend(backend_name, "promo") as where,
        statekeeper_replicas(tmp_path, where, extra_args=args) as servers,
    ):
        server = servers[0]
        user = "restart-user"
        with stubs_for(server) as stub:
            create(stub, "long", user, {})
            # Appended before opting in: the first opted-in append promotes all.
            for index in range(TURNS):
                turn(stub, "long", index)
            stub.sessions.UpdateSession(
                session_pb2.UpdateSessionRequest(
                    session=session_pb2.Session(session_id="long", metadata=PROMOTE),
                    update_mask=field_mask_pb2.FieldMask(paths=["metadata"]),
                ),
                metadata=AUTH,
            )
            turn(stub, "long", TURNS)
            started = wait_until(
                lambda: len(episodes(stub, user, "long")) or None,
                60,
                "promotion started",
                server.log_tail,
            )
            server.kill()
        print(f"killed with {started} of {TURNS + 1} turns promoted")
        server.start()
        with stubs_for(server) as stub:
            wait_until(
                lambda: count_at_least(stub, user, "long", TURNS + 1),
                120,
                "every turn promoted after the restart",
                server.log_tail,
            )
            found = episodes(stub, user, "long")
            firsts = collections.Counter(int(e.metadata[FIRST]) for e in found)
            assert len(found) == TURNS + 1
            assert sorted(firsts) == [1 + 2 * i for i in range(TURNS + 1)]
            assert {e.user_message for e in found} == {
                f"question {i} of long" for i in range(TURNS + 1)
            }


@pytest.mark.parametrize("backend_name", [PRODUCTION])
def test_two_replicas_promote_each_turn_once(backend_name: str, tmp_path: Path) -> None:
    with (
        backend(backend_name, "promo") as where,
        statekeeper_replicas(tmp_path, where, replicas=2, extra_args=BASE_ARGS) as servers,
        stubs_for(servers[0]) as one,
        stubs_for(servers[1]) as two,
    ):
        user = "replica-user"
        sessions = [f"shared-{n}" for n in range(3)]
        for session_id in sessions:
            create(one, session_id, user, PROMOTE)
        rounds = 20
        for index in range(rounds):
            for session_id in sessions:
                turn(one if index % 2 == 0 else two, session_id, index)
        for session_id in sessions:
            wait_until(
                lambda s=session_id: count_at_least(two, user, s, rounds),  # type: ignore[misc]
                120,
                f"{session_id} promoted",
                lambda: servers[0].log_tail() + servers[1].log_tail(),
            )
        for session_id in sessions:
            found = episodes(one, user, session_id)
            firsts = collections.Counter(int(e.metadata[FIRST]) for e in found)
            assert len(found) == rounds, firsts
            assert sorted(firsts) == [1 + 2 * i for i in range(rounds)]


def test_promoted_turns_feed_fact_extraction_with_an_llm(tmp_path: Path) -> None:
    """With --llm-url, each promoted episode goes through ExtractFacts in the
    background (the endpoint here is a local stand-in for an OpenAI-compatible
    one, answering one scripted extraction)."""
    llm = FakeOpenAI().start()
    llm.chat_replies.append(
        '{"facts": [{"subject": "Ana", "predicate": "keeps_violin_in", "object": "attic",'
        ' "confidence": 0.9}]}'
    )
    try:
        args = [*BASE_ARGS, "--llm-url", llm.base_url]
        with (
            statekeeper_replicas(tmp_path, None, extra_args=args) as servers,
            stubs_for(servers[0]) as stub,
        ):
            create(stub, "facts", "fact-user", PROMOTE)
            append(
                stub,
                "facts",
                message(session_pb2.ROLE_USER, "Where does Ana keep the violin?"),
                message(session_pb2.ROLE_ASSISTANT, "In the attic."),
            )

            def facts() -> list[memory_pb2.Fact]:
                reply = stub.memory.ListFacts(
                    memory_pb2.ListFactsRequest(user_id="fact-user"), metadata=AUTH
                )
                return list(reply.facts)

            (fact,) = wait_until(facts, 60, "a fact extracted", servers[0].log_tail)
            (promoted,) = episodes(stub, "fact-user", "facts")
            assert (fact.subject, fact.predicate, fact.object) == (
                "Ana",
                "keeps_violin_in",
                "attic",
            )
            assert list(fact.source_episode_ids) == [promoted.id]
            prompts = [body for path, body in llm.requests if path.endswith("/chat/completions")]
            assert "Where does Ana keep the violin?" in json.dumps(prompts)
    finally:
        llm.stop()
