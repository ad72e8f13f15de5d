"""Issue 14: API keys that end in `=` and DSN passwords in logs."""

from __future__ import annotations

import argparse
import io
import json
import logging
from collections.abc import Iterator

import pytest

from statekeeper import config, logs
from statekeeper.core.errors import UnauthenticatedError
from statekeeper.core.tenancy import Authenticator

BASE64_KEY = "c2VjcmV0LWtleS0xMjM0NQ=="  # base64 of "secret-key-12345"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    return parser.parse_args(argv)


def test_an_api_key_ending_in_equals_signs_keeps_them() -> None:
    flags = config.load(parse("--api-key", f"{BASE64_KEY}=acme"), environ={})
    environment = config.load(parse(), {"STATEKEEPER_API_KEYS": f"{BASE64_KEY}=acme"})
    assert flags.api_keys == environment.api_keys == {BASE64_KEY: "acme"}


def test_only_the_whole_key_authenticates() -> None:
    settings = config.load(parse("--api-key", f"{BASE64_KEY}=acme"), environ={})
    authenticator = Authenticator(settings.api_keys)
    assert authenticator.authenticate(BASE64_KEY).tenant == "acme"
    for shorter in (BASE64_KEY[:-1], BASE64_KEY[:-2], BASE64_KEY.rstrip("=")):
        with pytest.raises(UnauthenticatedError):
            authenticator.authenticate(shorter)


def test_a_key_without_a_tenant_is_refused() -> None:
    with pytest.raises(config.ConfigError, match="--api-key"):
        config.load(parse("--api-key", "c2VjcmV0=="), environ={})


def test_a_malformed_key_entry_is_refused_without_echoing_the_key() -> None:
    secret = "sk-live-0123456789abcdef"
    with pytest.raises(config.ConfigError) as refused:
        config.load(parse(), {"STATEKEEPER_API_KEYS": f"k1=acme,{secret}"})
    assert "entry 2" in str(refused.value)
    assert secret not in str(refused.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgresql://sk:hunter2@db:5432/sk", "postgresql://sk:***@db:5432/sk"),
        ("postgresql://:hunter2@db/sk", "postgresql://:***@db/sk"),
        ("postgresql://sk@db/sk?password=hunter2", "postgresql://sk@db/sk?password=***"),
        (
            "postgresql://db/sk?sslmode=require&password=hunter2&application_name=x",
            "postgresql://db/sk?sslmode=require&password=***&application_name=x",
        ),
        ("host=db user=sk password='hunter2' dbname=sk", "host=db user=sk password=*** dbname=sk"),
        ("redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0"),
        ("redis://:hun@ter2@cache:6379/0", "redis://:***@cache:6379/0"),
        ("postgresql://sk:a@b@db/sk?x=1 and more", "postgresql://sk:***@db/sk?x=1 and more"),
        ("postgresql://sk@db/sk", "postgresql://sk@db/sk"),
        ("http://ranker:8080/?api_key=K1&x=1", "http://ranker:8080/?api_key=***&x=1"),
        ("https://r/rerank?x=1&Access_Token=T1", "https://r/rerank?x=1&Access_Token=***"),
        ("https://s3/b/o?X-Amz-Date=1&sig=abc#f", "https://s3/b/o?X-Amz-Date=1&sig=***#f"),
        ("https://r/?key=K2 failed", "https://r/?key=*** failed"),
        ("blackboard key=users/u1/prefs", "blackboard key=users/u1/prefs"),
    ],
)
def test_redact_removes_every_password_form(text: str, expected: str) -> None:
    assert logs.redact(text) == expected


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """logs.configure replaces the root handlers; put pytest's back."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    access_level = logging.getLogger("statekeeper.access").level
    yield
    root.handlers[:], root.level = handlers, level
    logging.getLogger("statekeeper.access").setLevel(access_level)


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.usefixtures("restored_logging")
def test_the_log_handler_redacts_whatever_reaches_it(fmt: str) -> None:
    """The net under the sources: messages, extras and tracebacks."""
    logs.configure("INFO", fmt)
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    stream = io.StringIO()
    handler.setStream(stream)
    log = logging.getLogger("statekeeper.test")
    dsn = "postgresql://sk@db/sk?password=hunter2"
    log.info("connecting to %s", dsn, extra={"dsn": dsn})
    try:
        raise ConnectionError(f"cannot reach {dsn}")
    except ConnectionError:
        log.exception("failed")
    output = stream.getvalue()
    assert "hunter2" not in output
    assert output.count("password=***") >= 2
    if fmt == "json":
        first = json.loads(output.splitlines()[0])
        assert first["dsn"] == "postgresql://sk@db/sk?password=***"
