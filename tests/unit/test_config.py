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
