"""Quota rules, quota settings and the keys file format, in process (the
live behaviour is in tests/hostile/test_quotas.py and test_api_keys_file.py).
The clock is a plain counter the test advances: the rules, not the timing."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import pytest

from statekeeper import config, keys
from statekeeper.api.interceptor import FailedAuthentications
from statekeeper.core.errors import UnauthenticatedError
from statekeeper.core.quotas import (
    QuotaEnforcer,
    QuotaExceededError,
    TenantQuota,
    build,
    grows_storage,
)
from statekeeper.core.tenancy import Authenticator, hash_key, key_id


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def enforcer(quotas: object, clock: Clock) -> QuotaEnforcer:
    assert isinstance(quotas, dict)
    entries = [(None, name, value) for name, value in quotas.items()]
    return QuotaEnforcer(build(entries), usage_interval_seconds=60, clock=clock)


def test_request_bucket_burst_then_rate_and_retry_delay() -> None:
    clock = Clock()
    quotas = enforcer({"requests_per_second": 2, "requests_burst": 4}, clock)
    for _ in range(4):
        quotas.admit("t", "/s/GetEntry", 0)
    with pytest.raises(QuotaExceededError) as refused:
        quotas.admit("t", "/s/GetEntry", 0)
    assert refused.value.quota == "requests_per_second"
    assert refused.value.retry_delay == pytest.approx(0.5)
    assert refused.value.metadata == {
        "field": "requests_per_second",
        "quota": "requests_per_second",
        "limit": "2",
    }
    clock.now += 0.5
    quotas.admit("t", "/s/GetEntry", 0)
    with pytest.raises(QuotaExceededError):
        quotas.admit("t", "/s/GetEntry", 0)
    # Refusals took nothing: exactly one token a half second later.
    clock.now += 0.5
    quotas.admit("t", "/s/GetEntry", 0)


def test_byte_bucket_admits_an_oversized_request_from_a_full_bucket() -> None:
    clock = Clock()
    quotas = enforcer({"bytes_per_second": 100, "bytes_burst": 200}, clock)
    quotas.admit("t", "/s/PutItem", 150)
    with pytest.raises(QuotaExceededError) as refused:
        quotas.admit("t", "/s/PutItem", 100)
    assert refused.value.retry_delay == pytest.approx(0.5)
    clock.now += 1.5  # full again
    quotas.admit("t", "/s/PutItem", 1000)  # over the burst: admitted, now owes 800
    with pytest.raises(QuotaExceededError) as owing:
        quotas.admit("t", "/s/PutItem", 1)
    assert owing.value.retry_delay == pytest.approx(8.01)


def test_a_byte_refusal_takes_no_request_token() -> None:
    clock = Clock()
    quotas = enforcer(
        {"requests_per_second": 1, "requests_burst": 1, "bytes_per_second": 10, "bytes_burst": 20},
        clock,
    )
    quotas.admit("t", "/s/PutItem", 20)
    clock.now += 1  # one request token, 10 bytes
    with pytest.raises(QuotaExceededError) as refused:
        quotas.admit("t", "/s/PutItem", 15)
    assert refused.value.quota == "bytes_per_second"
    quotas.admit("t", "/s/PutItem", 5)  # the request token is still there
    with pytest.raises(QuotaExceededError) as now_rate:
        quotas.admit("t", "/s/PutItem", 0)
    assert now_rate.value.quota == "requests_per_second"


def test_streams_and_stored_bytes() -> None:
    clock = Clock()
    quotas = enforcer({"max_streams": 1, "max_stored_bytes": 1000}, clock)
    with quotas.stream("t", "/s/Watch"):
        with pytest.raises(QuotaExceededError) as refused, quotas.stream("t", "/s/Watch"):
            pass
        assert refused.value.quota == "max_streams"
        with quotas.stream("other", "/s/Watch"):
            pass
    with quotas.stream("t", "/s/Watch"):
        pass
    quotas.set_usage({"t": 1000})
    for method in ("/statekeeper.v1.ItemService/PutItem", "/x/AppendMessages", "/x/Txn"):
        with pytest.raises(QuotaExceededError) as full:
            quotas.admit("t", method, 0)
        assert full.value.quota == "max_stored_bytes"
        assert full.value.retry_delay == 60
    for method in ("/x/GetItem", "/x/DeleteItem", "/x/ListEntries", "/x/Watch", "/x/Recall"):
        quotas.admit("t", method, 0)
    quotas.admit("u", "/x/PutItem", 0)
    quotas.set_usage({"t": 900})
    quotas.admit("t", "/x/PutItem", 0)
    assert quotas.refusals[("t", "max_stored_bytes")] == 3
    # Admitted writes count until the next measurement; reads do not.
    assert quotas.needs_size("t")
    quotas.admit("t", "/x/PutItem", 50)
    quotas.admit("t", "/x/GetItem", 500)
    quotas.admit("t", "/x/PutItem", 60)
    assert quotas.stored_bytes("t") == 1010
    with pytest.raises(QuotaExceededError):
        quotas.admit("t", "/x/PutItem", 1)
    quotas.set_usage({"t": 0})
    quotas.admit("t", "/x/PutItem", 1)


def test_grows_storage_allows_reads_deletes_and_settling() -> None:
    assert grows_storage("/statekeeper.v1.SessionService/AppendMessages")
    assert grows_storage("RecordEpisode") and grows_storage("PutEntry")
    assert not grows_storage("GetContextWindow") and not grows_storage("DeleteSession")
    assert not grows_storage("AckMessages") and not grows_storage("PruneCheckpoints")
    # A tenant over its stored bytes can still erase a user, renew a lease
    # it holds and roll a session back.
    assert not grows_storage("/statekeeper.v1.AdminService/EraseUser")
    assert not grows_storage("RenewStepLease") and not grows_storage("RollbackSession")


def test_quota_settings_from_file_env_and_flags(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        "[quotas.default]\nrequests_per_second = 10\nmax_streams = 4\n"
        "[quotas.tenants.acme]\nmax_streams = 2\n"
        '[quotas.tenants."team.b"]\nbytes_per_second = 1e6\n'
    )
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    args = parser.parse_args(
        [
            "--config",
            str(path),
            "--quota",
            "requests_per_second=20",
            "--quota",
            "acme:max_streams=3",
        ]
    )
    env = {"STATEKEEPER_QUOTA_MAX_STORED_BYTES": "5000", "STATEKEEPER_QUOTAS": "beta:max_streams=9"}
    settings = config.load(args, env)
    quotas = settings.quotas
    assert quotas.default == TenantQuota(
        requests_per_second=20, max_streams=4, max_stored_bytes=5000
    )
    # Overrides change their fields and inherit the rest from the default.
    assert quotas.of("acme") == TenantQuota(
        requests_per_second=20, max_streams=3, max_stored_bytes=5000
    )
    assert quotas.of("team.b").bytes_per_second == 1e6
    assert quotas.of("beta").max_streams == 9
    assert quotas.of("nobody") == quotas.default
    assert quotas.stored_bytes


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("requests_per_secnd=1", "unknown quota"),
        ("max_streams=-1", "0 or more"),
        ("bytes_per_second=nan", "0 or more"),
        ("acme:max_streams=lots", "quotas.tenants.acme.max_streams"),
    ],
)
def test_bad_quota_settings_are_one_line_errors(flag: str, message: str) -> None:
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    with pytest.raises(config.ConfigError, match=message):
        config.load(parser.parse_args(["--quota", flag]), {})


def test_keys_file_parse_and_errors_never_echo_the_line() -> None:
    key = keys.new_key()
    text = f"# team\n{keys.file_line(key, 'acme')}   # a comment\n\n"
    assert keys.parse(text) == {hash_key(key): "acme"}
    with pytest.raises(keys.KeysFileError, match="line 2: this key is given to another"):
        keys.parse(f"{hash_key(key)} acme\n{hash_key(key)} beta\n")
    for bad in (f"{key} acme", "sha256:abc acme", f"{hash_key(key)}", f"{hash_key(key)} a b"):
        with pytest.raises(keys.KeysFileError, match="line 1") as error:
            keys.parse(bad)
        assert key not in str(error.value)


def test_authenticator_hashed_plain_and_replaced_keys() -> None:
    plain, hashed, later = keys.new_key(), keys.new_key(), keys.new_key()
    auth = Authenticator({plain: "p"}, hashed_keys={hash_key(hashed): "h"}, keys_file=True)
    assert auth.authenticate(plain).tenant == "p"
    principal = auth.authenticate(hashed)
    assert principal.tenant == "h" and principal.key_id == key_id(hashed)
    auth.replace_hashed_keys({hash_key(later): "h"})
    assert auth.authenticate(later).tenant == "h"
    assert auth.authenticate(plain).tenant == "p"
    with pytest.raises(UnauthenticatedError):
        auth.authenticate(hashed)
    # A keys file, even empty, means authentication is on.
    empty = Authenticator({}, keys_file=True)
    assert not empty.single_tenant
    with pytest.raises(UnauthenticatedError):
        empty.authenticate(None)


def test_failed_authentications_one_line_a_second_per_host(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr("statekeeper.api.interceptor.time.monotonic", lambda: now[0])
    failures = FailedAuthentications(max_hosts=2)
    secret = "secret-" + keys.new_key()
    with caplog.at_level(logging.WARNING, logger="statekeeper.access"):
        for _ in range(5):
            failures.record("ipv4:10.0.0.1:5000", "/s/M", secret, "unknown API key")
        now[0] += 1.0
        failures.record("ipv4:10.0.0.1:5001", "/s/M", secret, "unknown API key")
        for host in range(5):
            failures.record(f"ipv4:10.0.1.{host}:1", "/s/M", None, "missing credentials")
    lines = [r for r in caplog.records if "failed authentication" in r.getMessage()]
    # 10.0.0.1: its first failure, then the next second's line counting 5;
    # 10.0.1.0 tracked; the others share one line.
    assert [getattr(r, "failures", None) for r in lines] == [1, 5, 1, 1]
    assert all(secret not in r.getMessage() for r in lines)
    assert key_id(secret) in lines[0].getMessage()
    assert "other hosts" in lines[-1].getMessage()


def test_keys_file_setting_in_every_form_counts_as_credentials(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('api_keys_file = "/etc/from-file"\nlisten = "0.0.0.0:50051"\n')
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    from_file = config.load(parser.parse_args(["--config", str(path)]), {})
    assert from_file.api_keys_file == "/etc/from-file"
    config.check_exposure(from_file)  # an exposed server with a keys file is not anonymous
    from_env = config.load(
        parser.parse_args(["--config", str(path)]), {"STATEKEEPER_API_KEYS_FILE": "/env"}
    )
    assert from_env.api_keys_file == "/env"
    from_flag = config.load(parser.parse_args(["--api-keys-file", "/flag"]), {})
    assert from_flag.api_keys_file == "/flag"
    no_keys = config.load(parser.parse_args(["--listen", "0.0.0.0:50051"]), {})
    with pytest.raises(config.ConfigError, match="--api-keys-file"):
        config.check_exposure(no_keys)
