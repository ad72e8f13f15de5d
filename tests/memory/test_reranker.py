"""The optional reranker stage of text recall (core/memory/recall.py,
adapters/rerank_endpoint.py), on a real embedded store, against a stand-in
cross-encoder: a real HTTP server on 127.0.0.1 speaking the Text Embeddings
Inference rerank protocol, which scores a text by how many distinct query
words it holds (not what BM25 ranks by: rare words weigh no more there).

The stage reorders (the stand-in's order differs from the order without it,
checked first); an endpoint that is down, slow, failing or malformed leaves
the recall exactly as without one; nothing reaches the endpoint unless it
is configured, or for a vector query; bad settings are config errors."""

from __future__ import annotations

import argparse
import json
import logging
import re
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from statekeeper import config
from statekeeper.adapters.rerank_endpoint import RerankEndpoint, parse_rerank
from statekeeper.core.memory.config import MemoryConfig, RerankConfig
from statekeeper.core.memory.episodes import EpisodeDraft, RecallOutcome, RecallQuery
from statekeeper.core.memory.models import Ranking
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from statekeeper_client.v1 import memory_pb2 as pb
from tests.harness.deadlines import scaled
from tests.harness.memory import auth, quiet_config, served_memory
from tests.memory.helpers import memory_app

T = "tenant-rerank"
USER = "anna"
WHEN = datetime(2024, 5, 1, 12, tzinfo=UTC).timestamp()
QUERY = "Did Anna enjoy the mountain trip in Norway?"

# Without reranking BM25 puts the turn with the one rare word ("norway")
# first; the stand-in puts the turn holding most query words first and the
# rare word's turn (one query word) last.
EPISODES = [
    "Norway! Fjords of Norway, lakes of Norway.",
    "Anna did enjoy the mountain trip.",
    *[f"Anna planned mountain trip {n} to enjoy with friends." for n in range(8)],
]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def overlap_score(query: str, text: str) -> float:
    """The stand-in's relevance: the share of the query's words in `text`."""
    wanted = _words(query)
    return len(wanted & _words(text)) / len(wanted)


class StandIn:
    """A TEI `/rerank` endpoint on 127.0.0.1 in a thread. `mode`: "ok"
    (overlap scores, in descending order as TEI answers), "slow" (answers
    only at shutdown), "status" (503), "not-json", "short" (one result
    missing), "duplicate" (an index twice), "nan" (a non-finite score)."""

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(length))
                stand_in.requests.append({"path": self.path, **body})
                status, answer = stand_in.answer(self.path, body)
                payload = answer.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except ConnectionError:  # the client timed out and left (mode "slow")
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, str]:
        if path != "/rerank":
            return 404, "{}"
        scores = [overlap_score(body["query"], text) for text in body["texts"]]
        results: list[dict[str, Any]] = [{"index": i, "score": s} for i, s in enumerate(scores)]
        results.sort(key=lambda r: -r["score"])
        if self.mode == "slow":
            self.release.wait(scaled(60))
        elif self.mode == "status":
            return 503, '{"error": "model loading"}'
        elif self.mode == "not-json":
            return 200, "<html>bad gateway</html>"
        elif self.mode == "short":
            results = results[:-1]
        elif self.mode == "duplicate":
            results[-1] = {"index": results[0]["index"], "score": 0.0}
        elif self.mode == "nan":
            results[0]["score"] = float("nan")
        return 200, json.dumps(results)

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(scaled(10))


def reranking(url: str, timeout: float | None = None, depth: int = 30) -> MemoryConfig:
    seconds = scaled(30) if timeout is None else timeout
    return quiet_config(rerank=RerankConfig(url=url, depth=depth, timeout_seconds=seconds))


async def _record_all(app: MemoryApp, tenant: str = T) -> dict[str, str]:
    """Each text in its own session (no neighbour gains), all at the same
    time with the same importance: similarity alone orders them."""
    ids = {}
    for number, text in enumerate(EPISODES):
        outcome = await app.domain.episodes.record(
            tenant,
            EpisodeDraft(
                user_id=USER,
                session_id=f"s{number}",
                user_message=text,
                occur_time=WHEN,
                near_duplicate_threshold=1.0,
            ),
        )
        ids[outcome.episode.episode_id] = text
    return ids


async def _recall(app: MemoryApp, query: str = QUERY) -> RecallOutcome:
    return await app.domain.episodes.recall(T, RecallQuery(USER, query_text=query, top_k=5))


def _texts(outcome: RecallOutcome) -> list[str]:
    return [r.episode.user_message for r in outcome.results]


def _scores(outcome: RecallOutcome) -> list[tuple[float, float]]:
    return [(r.score.similarity, r.score.combined) for r in outcome.results]


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    with StandIn() as server:
        yield server


async def test_lexical_recall_is_reordered_by_the_cross_encoder(
    tmp_path: Path, stand_in: StandIn
) -> None:
    async with memory_app(tmp_path / "plain") as (app, _):
        await _record_all(app)
        plain = await _recall(app)
    assert plain.ranking == Ranking.LEXICAL
    assert _texts(plain)[0] == EPISODES[0]  # BM25: the rare word wins
    async with memory_app(tmp_path / "reranked", reranking(stand_in.url)) as (app, _):
        await _record_all(app)
        reranked = await _recall(app)
    assert reranked.reranked and not plain.reranked
    # The stand-in's best first, its worst (one query word) out of the top 5.
    assert _texts(reranked)[0] == EPISODES[1]
    assert EPISODES[0] not in _texts(reranked)
    # The protocol: one request, the query and the candidates' texts.
    (request,) = stand_in.requests
    assert request["path"] == "/rerank" and request["query"] == QUERY
    assert request["truncate"] is True
    assert set(request["texts"]) <= set(EPISODES) and EPISODES[1] in request["texts"]
    # The similarities the candidates held are dealt out again: the best
    # keeps the highest (1), results stay ordered by combined score.
    assert reranked.results[0].score.similarity == pytest.approx(1.0)
    combined = [r.score.combined for r in reranked.results]
    assert combined == sorted(combined, reverse=True)


async def test_only_the_best_depth_candidates_are_sent(tmp_path: Path, stand_in: StandIn) -> None:
    async with memory_app(tmp_path, reranking(stand_in.url, depth=3)) as (app, _):
        await _record_all(app)
        outcome = await _recall(app)
    (request,) = stand_in.requests
    assert len(request["texts"]) == 3
    assert outcome.reranked


async def test_hybrid_recall_is_reranked_too(tmp_path: Path, stand_in: StandIn) -> None:
    endpoints = ModelEndpoints(embedder_kind="multilingual")
    async with memory_app(tmp_path, reranking(stand_in.url), endpoints) as (app, _):
        await _record_all(app)
        outcome = await _recall(app)
    assert outcome.ranking == Ranking.HYBRID
    assert outcome.reranked
    assert len(stand_in.requests) == 1
    assert _texts(outcome)[0] == EPISODES[1]  # the stand-in's best


async def test_off_by_default(tmp_path: Path, stand_in: StandIn) -> None:
    assert MemoryConfig().rerank.url == ""
    async with memory_app(tmp_path) as (app, _):
        assert app.reranker is None
        await _record_all(app)
        outcome = await _recall(app)
    assert not outcome.reranked
    assert stand_in.requests == []


async def test_a_vector_query_is_not_reranked(tmp_path: Path, stand_in: StandIn) -> None:
    async with memory_app(tmp_path, reranking(stand_in.url)) as (app, _):
        for number, vector in enumerate(([1.0, 0.0], [0.6, 0.8], [0.0, 1.0])):
            draft = EpisodeDraft(USER, f"s{number}", f"turn {number}", embedding=vector)
            await app.domain.episodes.record(T, draft)
        query = RecallQuery(USER, query_vector=[1.0, 0.1])
        outcome = await app.domain.episodes.recall(T, query)
    assert outcome.ranking == Ranking.VECTOR and len(outcome.results) == 3
    assert not outcome.reranked
    assert stand_in.requests == []


def _unused_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.parametrize(
    "mode", ["down", "slow", "status", "not-json", "short", "duplicate", "nan"]
)
async def test_a_failing_endpoint_changes_nothing(
    tmp_path: Path, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with memory_app(tmp_path / "plain") as (app, _):
        await _record_all(app)
        plain = await _recall(app)
    with StandIn("ok" if mode == "down" else mode) as server:
        url = _unused_port_url() if mode == "down" else server.url
        # The slow stand-in never answers in time; the others answer at once.
        timeout = 0.5 if mode == "slow" else None
        with caplog.at_level(logging.WARNING, "statekeeper.adapters.rerank_endpoint"):
            async with memory_app(tmp_path / "failing", reranking(url, timeout)) as (app, _):
                await _record_all(app)
                first = await _recall(app)
                second = await _recall(app)
                assert app.reranker is not None and app.reranker.failures == 2
    for outcome in (first, second):
        assert not outcome.reranked
        assert _texts(outcome) == _texts(plain)
        # The same similarities; combined alike but for recency, which moved
        # on with the clock between the two recalls.
        assert [s for s, _ in _scores(outcome)] == [s for s, _ in _scores(plain)]
        assert [c for _, c in _scores(outcome)] == pytest.approx([c for _, c in _scores(plain)])
    if mode != "down":
        assert len(server.requests) == 2
    # One warning for two failures: at most one a minute.
    warnings = [r for r in caplog.records if "reranker endpoint" in r.getMessage()]
    assert len(warnings) == 1


@pytest.mark.parametrize(
    "body",
    [
        [{"index": 1, "score": 0.5}, {"index": 0, "score": 2}],
        [{"index": 0, "score": -3.5}, {"index": 1, "score": -1e9}],
    ],
)
def test_parse_rerank_orders_by_index(body: list[dict[str, Any]]) -> None:
    scores = parse_rerank(body, 2)
    by_index = {item["index"]: float(item["score"]) for item in body}
    assert scores == [by_index[0], by_index[1]]


@pytest.mark.parametrize(
    "body",
    [
        {"results": []},
        [{"index": 0, "score": 1.0}],
        [{"index": 0, "score": 1.0}, {"index": 2, "score": 1.0}],
        [{"index": 0, "score": 1.0}, {"index": True, "score": 1.0}],
        [{"index": 0, "score": 1.0}, {"index": 1, "score": "high"}],
        [{"index": 0, "score": 1.0}, {"index": 1, "score": float("inf")}],
        [{"index": 0, "score": 1.0}, {"index": 1}],
        [{"index": 0, "score": 1.0}, ["index", 1]],
    ],
)
def test_parse_rerank_refuses_malformed_answers(body: Any) -> None:
    with pytest.raises((ValueError, KeyError, TypeError)):
        parse_rerank(body, 2)


async def test_the_warning_is_repeated_after_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    endpoint = RerankEndpoint(_unused_port_url(), scaled(10), clock=lambda: now[0])
    try:
        with caplog.at_level(logging.WARNING, "statekeeper.adapters.rerank_endpoint"):
            assert await endpoint.scores("q", ["a", "b"]) is None
            now[0] += 59.0
            assert await endpoint.scores("q", ["a", "b"]) is None
            now[0] += 1.0
            assert await endpoint.scores("q", ["a", "b"]) is None
    finally:
        await endpoint.aclose()
    assert endpoint.failures == 3
    assert len([r for r in caplog.records if "reranker endpoint" in r.getMessage()]) == 2


def _settings(limits: list[str]) -> config.Settings:
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    argv = [arg for limit in limits for arg in ("--limit", limit)]
    return config.load(parser.parse_args(argv), {})


def test_the_settings_reach_the_memory_config() -> None:
    chosen = _settings(
        [
            "memory.rerank.url=http://127.0.0.1:8080",
            "memory.rerank.depth=50",
            "memory.rerank.timeout_seconds=0.5",
        ]
    )
    rerank = chosen.capability_limits.memory.rerank
    assert rerank == RerankConfig("http://127.0.0.1:8080", 50, 0.5)
    assert _settings([]).capability_limits.memory.rerank == RerankConfig()


@pytest.mark.parametrize(
    ("limit", "named"),
    [
        ("memory.rerank.url=127.0.0.1:8080", "memory.rerank.url"),
        ("memory.rerank.url=ftp://host", "memory.rerank.url"),
        ("memory.rerank.url=http://", "memory.rerank.url"),
        ("memory.rerank.depth=1", "memory.rerank.depth"),
        ("memory.rerank.depth=0", "memory.rerank.depth"),
        ("memory.rerank.depth=ten", "memory.rerank.depth"),
        ("memory.rerank.timeout_seconds=0", "memory.rerank.timeout_seconds"),
        ("memory.rerank.timeout_seconds=-1", "memory.rerank.timeout_seconds"),
    ],
)
def test_bad_settings_are_config_errors(limit: str, named: str) -> None:
    with pytest.raises(config.ConfigError, match=re.escape(named)):
        _settings([limit])


async def test_the_response_says_it_was_reranked(tmp_path: Path, stand_in: StandIn) -> None:
    """Over gRPC, RecallResponse.reranked is set when the stage reordered
    the results, and not when the endpoint could not answer."""
    async with served_memory(tmp_path / "served", reranking(stand_in.url)) as served:
        await _record_all(served.app, tenant="alpha")
        request = pb.RecallRequest(user_id=USER, query_text=QUERY, top_k=5)
        reply = await served.memory.Recall(request, metadata=auth())
        assert reply.reranked
        assert reply.results[0].episode.user_message == EPISODES[1]
    down = _unused_port_url()
    async with served_memory(tmp_path / "down", reranking(down, timeout=scaled(5))) as served:
        await _record_all(served.app, tenant="alpha")
        reply = await served.memory.Recall(request, metadata=auth())
        assert not reply.reranked
        assert reply.results[0].episode.user_message == EPISODES[0]


async def test_the_warning_does_not_show_a_password_in_the_url(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = _unused_port_url().replace("http://", "http://ranker:s3cret-token@")
    endpoint = RerankEndpoint(url, scaled(10))
    try:
        with caplog.at_level(logging.WARNING, "statekeeper.adapters.rerank_endpoint"):
            assert await endpoint.scores("q", ["a", "b"]) is None
    finally:
        await endpoint.aclose()
    (warning,) = [r.getMessage() for r in caplog.records if "reranker endpoint" in r.getMessage()]
    assert "s3cret-token" not in warning and "ranker:***@" in warning
