"""Settings precedence: defaults < config file < environment < flags."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from statekeeper import config


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    return parser.parse_args(argv)


def test_defaults() -> None:
    settings = config.load(parse(), environ={})
    assert settings.listen == "127.0.0.1:50051"
    assert settings.api_keys == {}
    assert settings.limits.max_page_size == 1000


def test_precedence(tmp_path: Path) -> None:
    file = tmp_path / "sk.toml"
    file.write_text(
        'listen = "127.0.0.1:1"\nlog_level = "DEBUG"\ndata_dir = "/from/file"\n'
        '[api_keys]\nk1 = "t1"\n[limits]\nmax_page_size = 7\nmax_id_length = 64\n'
    )
    environ = {
        "STATEKEEPER_CONFIG": str(file),
        "STATEKEEPER_LISTEN": "127.0.0.1:2",
        "STATEKEEPER_DATA_DIR": "/from/env",
        "STATEKEEPER_LIMIT_MAX_PAGE_SIZE": "8",
    }
    settings = config.load(parse("--listen", "127.0.0.1:3", "--limit", "max_id_length=32"), environ)
    assert settings.listen == "127.0.0.1:3"  # flag beats env and file
    assert settings.data_dir == "/from/env"  # env beats file
    assert settings.log_level == "DEBUG"  # file beats default
    assert settings.api_keys == {"k1": "t1"}
    assert settings.limits.max_page_size == 8
    assert settings.limits.max_id_length == 32
    keyed = config.load(parse("--api-key", "a=x", "--api-key", "b=y"), environ)
    assert keyed.api_keys == {"a": "x", "b": "y"}
    env_keys = config.load(parse(), {"STATEKEEPER_API_KEYS": "p=q, r=s"})
    assert env_keys.api_keys == {"p": "q", "r": "s"}


@pytest.mark.parametrize(
    ("argv", "environ", "message"),
    [
        (("--listen", "nohostport"), {}, "listen"),
        (("--log-format", "xml"), {}, "log_format"),
        (("--limit", "max_page_size=lots"), {}, "max_page_size"),
        (("--limit", "no_such_limit=1"), {}, "no_such_limit"),
        (("--api-key", "missing-tenant"), {}, "--api-key"),
        ((), {"STATEKEEPER_SWEEP_INTERVAL_SECONDS": "0"}, "sweep_interval_seconds"),
    ],
)
def test_bad_settings_name_the_option(
    argv: tuple[str, ...], environ: dict[str, str], message: str
) -> None:
    with pytest.raises(config.ConfigError, match=message):
        config.load(parse(*argv), environ)


def test_unknown_option_in_file(tmp_path: Path) -> None:
    file = tmp_path / "sk.toml"
    file.write_text('listne = "typo"\n')
    with pytest.raises(config.ConfigError, match="listne"):
        config.load(parse("--config", str(file)), {})


def test_production_options_in_every_form(tmp_path: Path) -> None:
    from statekeeper.storage.factory import build_storage

    assert not config.load(parse(), {}).production
    flags = config.load(
        parse(
            "--postgres-dsn",
            "postgresql://sk:secret@db:5432/sk",
            "--redis-url",
            "redis://cache:6379/0",
            "--migrate-on-start",
        ),
        {},
    )
    assert flags.production and flags.migrate_on_start and flags.redis_url
    described = build_storage(flags).description
    assert "secret" not in described and "PostgreSQL" in described and "Redis" in described
    environ = {
        "STATEKEEPER_POSTGRES_DSN": "postgres://db/sk",
        "STATEKEEPER_MIGRATE_ON_START": "true",
        "STATEKEEPER_CACHE_TTL_SECONDS": "60",
    }
    from_env = config.load(parse("--migrate-on-start=false"), environ)
    assert from_env.postgres_dsn == "postgres://db/sk"
    assert from_env.migrate_on_start is False  # flag beats env
    assert from_env.cache_ttl_seconds == 60.0
    assert "no cache" in build_storage(from_env).description
    file = tmp_path / "sk.toml"
    file.write_text(
        'postgres_dsn = "postgresql://db/sk"\nmigrate_on_start = true\npostgres_pool_size = 3\n'
    )
    from_file = config.load(parse("--config", str(file)), {})
    assert (from_file.migrate_on_start, from_file.postgres_pool_size) == (True, 3)
    assert "embedded" in build_storage(config.load(parse(), {})).description


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--redis-url", "redis://cache"), "redis_url: needs postgres_dsn"),
        (("--postgres-dsn", "mysql://db"), "postgres_dsn"),
        (("--postgres-dsn", "postgresql://db", "--redis-url", "http://x"), "redis_url"),
        (("--postgres-dsn", "postgresql://db", "--postgres-pool-size", "0"), "pool_size"),
        (("--cache-ttl-seconds", "0"), "cache_ttl_seconds"),
    ],
)
def test_bad_production_settings(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(config.ConfigError, match=message):
        config.load(parse(*argv), {})


def test_capability_limits_in_every_form(tmp_path: Path) -> None:
    path = tmp_path / "statekeeper.toml"
    path.write_text(
        "[limits.blackboard]\nmax_value_bytes = 2048\nmax_txn_ops = 9\n"
        "[limits.memory.limits]\ndefault_top_k = 7\n"
    )
    environ = {
        "STATEKEEPER_LIMIT_BLACKBOARD__MAX_TXN_OPS": "11",
        "STATEKEEPER_LIMIT_ITEMS__MAX_FILTER_BYTES": "4096",
    }
    settings = config.load(
        parse("--config", str(path), "--limit", "messagebus.max_payload_bytes=5000"), environ
    )
    limits = settings.capability_limits
    assert limits.blackboard.max_value_bytes == 2048  # file
    assert limits.blackboard.max_txn_ops == 11  # environment over file
    assert limits.memory.limits.default_top_k == 7  # nested table
    assert limits.items.max_filter_bytes == 4096
    assert limits.messagebus.max_payload_bytes == 5000  # flag
    assert limits.checkpoints == config.CapabilityLimits().checkpoints  # untouched


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("blackboard.no_such_field=1", "blackboard.no_such_field"),
        ("nowhere.max_value_bytes=1", "nowhere.max_value_bytes"),
        ("blackboard.max_value_bytes=big", "blackboard.max_value_bytes"),
        ("memory.recall=3", "memory.recall"),
        ("blackboard.max_value_bytes.deeper=3", "blackboard.max_value_bytes.deeper"),
        ("blackboard.max_value_bytes=-1", "blackboard.max_value_bytes"),
        ("memory.recall.recency_weight=nan", "memory.recall.recency_weight"),
        ("memory.recall.recency_weight=inf", "memory.recall.recency_weight"),
        ("max_page_size=-5", "max_page_size"),
    ],
)
def test_bad_capability_limits_name_the_limit(item: str, message: str) -> None:
    with pytest.raises(config.ConfigError, match=message.replace(".", r"\.")):
        config.load(parse("--limit", item), {})
