"""Lexical terms (core/memory/lexical.py) and the migrations that index episodes
stored before the lexical index existed, on both backends."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import asyncpg

from statekeeper.core.memory import lexical
from statekeeper.core.memory.lexical import LexicalCandidate, LexicalMatches
from statekeeper.core.memory.models import EpisodeFilter
from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
from statekeeper.storage.embedded.memory_schema import MEMORY_MIGRATIONS
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.sessions_schema import DATABASE_FILE
from statekeeper.storage.postgres.memory import PostgresMemoryStore
from statekeeper.storage.postgres.memory_schema import index_missing_terms
from statekeeper.storage.postgres.sessions import PostgresStorage
from tests.services import configured, fresh_database, reachable

OLD_ROW = (
    "INSERT INTO memory_episodes (tenant, episode_id, user_id, session_id, user_message,"
    " assistant_response, summary, summary_source, embedding, dimension, embedding_source,"
    " embedding_model, importance, metadata, occur_time, create_time, content_hash,"
    " consolidate_time, derived_fact_ids) VALUES ('t', 'e-old', 'u1', '', ?, '', '', 0, NULL,"
    " 0, 0, '', 0.5, '{}', 1.0, 1.0, 'h', NULL, '[]')"
)


def test_words_are_folded_stemmed_and_stop_words_dropped() -> None:
    assert lexical.terms("The Hikers were HIKING; she hikes!") == ["hiker", "hike", "hike"]
    assert lexical.query_terms("tea, Tea and TEA") == ["tea"]
    assert lexical.terms("key " + "x" * 101) == ["key"]  # blobs are not words


def test_cjk_runs_become_characters_and_bigrams_and_mixed_text_splits() -> None:
    assert lexical.terms("团子三岁") == ["团", "子", "三", "岁", "团子", "子三", "三岁"]
    assert lexical.terms("猫") == ["猫"]
    assert lexical.terms("我买了iPhone15手机") == [
        "我",
        "买",
        "了",
        "我买",
        "买了",
        "iphone15",
        "手",
        "机",
        "手机",
    ]
    # Full-width letters and digits fold to their ASCII forms (NFKC).
    assert lexical.terms("\uff21\uff22\uff23\uff11\uff12\uff13") == ["abc123"]


def test_bm25_prefers_rarer_terms_and_scores_non_matches_zero() -> None:
    scores = lexical.bm25_texts(
        "green tea", ["green tea", "green door", "green hat", "blue sky", "tea time"]
    )
    assert scores[0] == max(scores) and scores[3] == 0.0
    assert scores[4] > scores[1]  # "tea" is rarer than "green"


def test_bm25_uses_the_stores_document_frequency() -> None:
    candidates = [LexicalCandidate(1, "a b", 0.5, 0.0), LexicalCandidate(2, "b b", 0.5, 0.0)]
    common_a = LexicalMatches(candidates, 100, {"a": 90, "b": 2})
    rare_a = LexicalMatches(candidates, 100, {"a": 2, "b": 90})
    first, second = lexical.bm25_scores(["a", "b"], common_a)
    assert second > first
    first, second = lexical.bm25_scores(["a", "b"], rare_a)
    assert first > second


async def test_sqlite_migration_indexes_episodes_stored_before_it(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        db.execute(
            "CREATE TABLE memory_schema_migrations"
            " (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        for statement in MEMORY_MIGRATIONS[0][1]:
            db.execute(statement)
        db.execute("INSERT INTO memory_schema_migrations VALUES (1, 0)")
        db.execute(OLD_ROW, ("我们家的猫叫团子",))
    db.close()
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    try:
        store = EmbeddedMemoryStore(storage)
        await store.start()
        found = await store.lexical_matches("t", "u1", ["团子"], EpisodeFilter(), 10)
        assert [c.terms for c in found.candidates] == [
            "我 们 家 的 猫 叫 团 子 我们 们家 家的 的猫 猫叫 叫团 团子"
        ]
    finally:
        await storage.close()


async def test_postgres_backfill_indexes_rows_without_terms() -> None:
    services = configured()
    await reachable(services)
    async with fresh_database(services) as dsn:
        storage = PostgresStorage(dsn, pool_size=2, migrate_on_start=True)
        await storage.start()
        store = PostgresMemoryStore(storage)
        try:
            await store.start()
            conn = await asyncpg.connect(dsn)
            try:
                # A row as migration 1 left it: no terms yet.
                # ('{}' is PostgreSQL's empty array literal for derived_fact_ids.)
                row = OLD_ROW.replace("?", "$1").replace("'[]')", "'{}')")
                await conn.execute(row, "I adore green tea in the morning")
                assert await index_missing_terms(conn) == 1
            finally:
                await conn.close()
            found = await store.lexical_matches("t", "u1", ["tea"], EpisodeFilter(), 10)
            assert [c.terms for c in found.candidates] == ["ador green tea morn"]
        finally:
            await store.close()
            await storage.close()
