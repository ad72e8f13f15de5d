"""TLS settings (issue 14): every form of the options (flag, environment,
config file), which options need which, client certificate tenants counted
as credentials by the exposure check, and how the authenticator weighs a
certificate name against an API key."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from statekeeper import config
from statekeeper.core.errors import UnauthenticatedError
from statekeeper.core.tenancy import Authenticator


def settings(argv: list[str], environ: dict[str, str] | None = None) -> config.Settings:
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    return config.load(parser.parse_args(argv), environ or {})


MTLS = ["--tls-cert", "s.pem", "--tls-key", "s.key", "--tls-client-ca", "ca.pem"]


def test_tls_options_come_from_flags_environment_and_the_config_file(tmp_path: Path) -> None:
    from_flags = settings(
        [*MTLS, "--tls-client-tenant", "agent-a=acme", "--tls-client-tenant", "b=x"]
    )
    assert (from_flags.tls_cert, from_flags.tls_key, from_flags.tls_client_ca) == (
        "s.pem",
        "s.key",
        "ca.pem",
    )
    assert from_flags.tls_client_tenants == {"agent-a": "acme", "b": "x"}
    from_env = settings(
        [],
        {
            "STATEKEEPER_TLS_CERT": "e.pem",
            "STATEKEEPER_TLS_KEY": "e.key",
            "STATEKEEPER_TLS_CLIENT_CA": "eca.pem",
            "STATEKEEPER_TLS_CLIENT_TENANTS": "n1=t1,n2=t2",
        },
    )
    assert from_env.tls_cert == "e.pem" and from_env.tls_client_ca == "eca.pem"
    assert from_env.tls_client_tenants == {"n1": "t1", "n2": "t2"}
    file = tmp_path / "statekeeper.toml"
    file.write_text(
        'tls_cert = "f.pem"\ntls_key = "f.key"\ntls_client_ca = "fca.pem"\n'
        '[tls_client_tenants]\n"agent.example.com" = "acme"\n'
    )
    from_file = settings(["--config", str(file)])
    assert from_file.tls_key == "f.key"
    assert from_file.tls_client_tenants == {"agent.example.com": "acme"}
    # Flags win over the file.
    assert settings(["--config", str(file), "--tls-key", "g.key"]).tls_key == "g.key"


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--tls-cert", "s.pem"], "tls_key"),
        (["--tls-key", "s.key"], "tls_cert"),
        (["--tls-client-ca", "ca.pem"], "tls_client_ca"),
        (
            ["--tls-cert", "s.pem", "--tls-key", "s.key", "--tls-client-tenant", "a=b"],
            "tls_client_ca",
        ),
    ],
)
def test_tls_options_that_need_another_are_refused(argv: list[str], named: str) -> None:
    with pytest.raises(config.ConfigError, match=named):
        settings(argv)


def test_client_certificate_tenants_count_as_credentials_on_an_exposed_address() -> None:
    exposed = ["--listen", "0.0.0.0:50051"]
    config.check_exposure(settings([*exposed, *MTLS, "--tls-client-tenant", "agent=acme"]))
    # mTLS alone (every verified client is the anonymous tenant) is not.
    with pytest.raises(config.ConfigError, match="--tls-client-tenant"):
        config.check_exposure(settings([*exposed, *MTLS]))


def test_a_mapped_certificate_authenticates_and_an_api_key_decides_when_sent() -> None:
    authenticator = Authenticator({"key-a": "alpha"}, {"agent-b": "beta", "b.example": "beta"})
    assert not authenticator.single_tenant
    principal = authenticator.authenticate(None, ["agent-b"])
    assert (principal.tenant, principal.key_id) == ("beta", "x509:agent-b")
    # A subject alternative name maps as the CN does.
    assert authenticator.authenticate(None, ["unmapped-cn", "b.example"]).tenant == "beta"
    assert authenticator.authenticate("key-a", ["agent-b"]).tenant == "alpha"
    with pytest.raises(UnauthenticatedError, match="unknown API key"):
        authenticator.authenticate("wrong", ["agent-b"])
    with pytest.raises(UnauthenticatedError, match="maps to no tenant"):
        authenticator.authenticate(None, ["stranger"])
    with pytest.raises(UnauthenticatedError, match="missing credentials"):
        authenticator.authenticate(None)
    # Certificate mappings alone make the server multi-tenant.
    assert not Authenticator({}, {"agent-b": "beta"}).single_tenant
    with pytest.raises(UnauthenticatedError):
        Authenticator({}, {"agent-b": "beta"}).authenticate(None)


def test_doctor_reports_the_transport_and_counts_certificate_tenants() -> None:
    from statekeeper import doctor

    plain = doctor._config(settings([]))
    assert plain.status == doctor.WARN and "(plaintext)" in plain.detail
    mtls = doctor._config(settings([*MTLS, "--tls-client-tenant", "agent=acme"]))
    assert mtls.status == doctor.OK, mtls.detail
    assert "(mTLS)" in mtls.detail and "1 client certificate tenant(s)" in mtls.detail
    assert "unauthenticated" not in mtls.detail
