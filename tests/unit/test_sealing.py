"""The sealing component and its key ring (storage/sealing.py), and the
encryption settings in their flag, environment and config-file forms."""

from __future__ import annotations

import argparse
import base64
import os
from pathlib import Path

import pytest

from statekeeper import config
from statekeeper.storage.sealing import (
    DET_MAGIC,
    MAGIC,
    KeyRingError,
    SealedValueError,
    Sealer,
    load_key_ring,
    sealer_from,
)


def b64key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


K1, K2 = b64key(), b64key()


def sealer(*tenants: str, env: str = f"k1:{K1}", active: str = "") -> Sealer:
    made = sealer_from("", env, active, tenants, [])
    assert made is not None
    return made


def test_sealed_text_round_trips_and_hides_the_plaintext() -> None:
    s = sealer("alpha")
    token = s.seal_text("alpha", "message.content", ("s1", "m1"), "secret SOMEMARKER")
    assert token.startswith(f"{MAGIC}k1~")
    assert "SOMEMARKER" not in token
    assert s.open_text("alpha", "message.content", ("s1", "m1"), token) == "secret SOMEMARKER"
    # A fresh data key and nonce each time: equal plaintexts seal differently.
    assert token != s.seal_text("alpha", "message.content", ("s1", "m1"), "secret SOMEMARKER")


@pytest.mark.parametrize(
    ("tenant", "field_name", "ids"),
    [
        ("alpha", "message.content", ("s1", "m2")),  # another row
        ("alpha", "message.content", ("s2", "m1")),  # another session
        ("alpha", "episode.summary", ("s1", "m1")),  # another field
        ("beta", "message.content", ("s1", "m1")),  # another tenant
    ],
)
def test_a_sealed_value_moved_elsewhere_fails_to_open(
    tenant: str, field_name: str, ids: tuple[str, ...]
) -> None:
    s = sealer("alpha", "beta")
    token = s.seal_text("alpha", "message.content", ("s1", "m1"), "text")
    with pytest.raises(SealedValueError, match="does not belong"):
        s.open_text(tenant, field_name, ids, token)


def test_an_altered_or_unknown_key_value_fails_to_open() -> None:
    s = sealer("alpha")
    token = s.seal_text("alpha", "f", (), "text")
    body = token.rsplit("~", 1)[1]
    flipped = body[:-3] + ("A" if body[-3] != "A" else "B") + body[-2:]
    with pytest.raises(SealedValueError):
        s.open_text("alpha", "f", (), token.replace(body, flipped))
    with pytest.raises(SealedValueError, match="not in the key ring"):
        sealer("alpha", env=f"k2:{K2}").open_text("alpha", "f", (), token)
    with pytest.raises(SealedValueError, match="malformed"):
        s.open_text("alpha", "f", (), MAGIC + "k1~!!")


def test_plaintext_is_read_as_it_is_and_non_sensitive_tenants_are_not_sealed() -> None:
    s = sealer("alpha")
    assert s.open_text("alpha", "f", (), "written before encryption") == "written before encryption"
    assert s.seal_text("beta", "f", (), "plain") == "plain"
    assert s.seal_bytes("beta", "f", (), b"plain") == b"plain"
    # ... unless a value looks sealed: then it is sealed, so that it is never
    # taken for a sealed value when read.
    lookalike = f"{MAGIC}k1~AAAA"
    sealed = s.seal_text("beta", "f", (), lookalike)
    assert sealed != lookalike
    assert s.open_text("beta", "f", (), sealed) == lookalike
    raw = s.seal_bytes("beta", "f", (), lookalike.encode())
    assert s.open_bytes("beta", "f", (), raw) == lookalike.encode()


def test_json_maps_are_sealed_whole() -> None:
    s = sealer("alpha")
    value = {"goal": "MARK", "nested": {"n": 1}}
    sealed = s.seal_json_map("alpha", "ctx", ("s1",), value)
    assert list(sealed) == ["~sk1"] and "MARK" not in str(sealed) and "goal" not in str(sealed)
    assert s.open_json_map("alpha", "ctx", ("s1",), sealed) == value
    assert s.open_json_map("alpha", "ctx", ("s1",), value) == value


def test_rotation_rewraps_the_data_key_only() -> None:
    old = sealer("alpha")
    token = old.seal_text("alpha", "f", ("r",), "text")
    both = sealer("alpha", env=f"k1:{K1},k2:{K2}")
    assert both.ring is not None and both.ring.active == "k2"
    new = both.rewrap(token)
    assert new is not None and new.startswith(f"{MAGIC}k2~")
    assert both.rewrap(new) is None  # already current: idempotent
    # Readable with the new key alone, still bound to its row.
    only_new = sealer("alpha", env=f"k2:{K2}")
    assert only_new.open_text("alpha", "f", ("r",), new) == "text"
    with pytest.raises(SealedValueError):
        only_new.open_text("alpha", "f", ("other",), new)
    # Inside a larger document (a JSON record, a cached copy).
    doc = f'{{"a": "{token}", "b": "plain"}}'
    rewritten = both.rewrap_text(doc)
    assert f"{MAGIC}k1~" not in rewritten and '"b": "plain"' in rewritten
    assert both.stale(doc) and not both.stale(rewritten)


def test_deterministic_sealing_compares_equal_within_a_tenant_only() -> None:
    s = sealer("alpha", "beta")
    one = s.seal_det("alpha", "fact.object", "Paris")
    assert one.startswith(DET_MAGIC) and "Paris" not in one
    assert one == s.seal_det("alpha", "fact.object", "Paris")
    assert one != s.seal_det("alpha", "fact.object", "London")
    assert one != s.seal_det("beta", "fact.object", "Paris")
    assert s.open_det("alpha", "fact.object", one) == "Paris"
    with pytest.raises(SealedValueError):
        s.open_det("beta", "fact.object", one)
    rotated = sealer("alpha", env=f"k1:{K1},k2:{K2}")
    again = rotated.redet("alpha", "fact.object", one)
    assert again is not None and again.startswith(f"{DET_MAGIC}k2~")
    assert rotated.open_det("alpha", "fact.object", again) == "Paris"


def test_key_ring_from_files(tmp_path: Path) -> None:
    lines = tmp_path / "keys"
    lines.write_text(f"# comment\nk1 {K1}\nk2 {K2}\n")
    lines.chmod(0o600)
    ring = load_key_ring(str(lines), "", "")
    assert ring is not None and ring.active == "k2" and set(ring.keys) == {"k1", "k2"}
    assert load_key_ring(str(lines), "", "k1").active == "k1"  # type: ignore[union-attr]
    toml = tmp_path / "keys.toml"
    toml.write_text(f'active = "a"\n[keys]\na = "{K1}"\nb = "{K2}"\n')
    toml.chmod(0o600)
    ring = load_key_ring(str(toml), "", "")
    assert ring is not None and ring.active == "a"
    lines.chmod(0o640)
    with pytest.raises(KeyRingError, match="readable by group or others"):
        load_key_ring(str(lines), "", "")


@pytest.mark.parametrize(
    ("env", "active", "message"),
    [
        ("k1", "", "not ID:BASE64"),
        ("k1:notbase64!", "", "not base64"),
        (f"k1:{base64.b64encode(b'short').decode()}", "", "must be 32 bytes"),
        (f"bad id:{K1}", "", "key id"),
        (f"k1:{K1},k1:{K2}", "", "given twice"),
        (f"k1:{K1}", "k9", "not in the key ring"),
        ("", "k1", "no encryption key"),
    ],
)
def test_bad_key_rings_are_refused(env: str, active: str, message: str) -> None:
    with pytest.raises(KeyRingError, match=message):
        load_key_ring("", env, active)


def test_sensitive_tenants_need_a_key_and_boards_their_tenant() -> None:
    assert sealer_from("", "", "", [], []) is None
    with pytest.raises(KeyRingError, match="no encryption key"):
        sealer_from("", "", "", ["alpha"], [])
    with pytest.raises(KeyRingError, match="TENANT/BOARD"):
        sealer_from("", f"k1:{K1}", "", [], ["secret"])
    s = sealer_from("", f"k1:{K1}", "", [], ["beta/secret"])
    assert s is not None
    assert s.sensitive("beta", "secret") and not s.sensitive("beta", "plans")
    assert not s.sensitive("beta")
    everyone = sealer("all")
    assert everyone.sensitive("anyone")


def settings_from(argv: list[str], environ: dict[str, str]) -> config.Settings:
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    return config.load(parser.parse_args(argv), environ)


def test_encryption_settings_in_every_form(tmp_path: Path) -> None:
    file = tmp_path / "statekeeper.toml"
    file.write_text(
        '[encryption]\nkeys_file = "/k"\nactive_key = "k2"\n'
        'tenants = ["alpha", "beta"]\nboards = ["gamma/secret"]\n'
    )
    from_file = settings_from(["--config", str(file)], {})
    assert from_file.encryption_keys_file == "/k"
    assert from_file.encryption_active_key == "k2"
    assert from_file.sensitive_tenants == "alpha,beta"
    assert from_file.sensitive_boards == "gamma/secret"
    from_env = settings_from(
        [],
        {
            "STATEKEEPER_ENCRYPTION_KEYS": f"k1:{K1}",
            "STATEKEEPER_SENSITIVE_TENANTS": "all",
        },
    )
    assert from_env.encryption_keys == f"k1:{K1}" and from_env.sensitive_tenants == "all"
    from_flags = settings_from(
        ["--sensitive-tenant", "a", "--sensitive-tenant", "b", "--sensitive-board", "c/d"],
        {"STATEKEEPER_SENSITIVE_TENANTS": "ignored"},
    )
    assert from_flags.sensitive_tenants == "a,b" and from_flags.sensitive_boards == "c/d"
    bad = tmp_path / "bad.toml"
    bad.write_text('[encryption]\nkeyfile = "/k"\n')
    with pytest.raises(config.ConfigError, match="unknown \\[encryption\\] option"):
        settings_from(["--config", str(bad)], {})


def test_sealed_episode_texts_carry_blind_terms_that_queries_find() -> None:
    from statekeeper.core.memory import lexical

    s = sealer("alpha", env=f"k1:{K1},k2:{K2}")
    text = "Hiking in the Alps with MARKER"
    sealed = s.seal_indexed_text("alpha", "episode.user_message", ("e1",), text)
    assert "MARKER" not in sealed and "hik" not in sealed.lower()
    assert s.open_text("alpha", "episode.user_message", ("e1",), sealed) == text
    stored_terms = lexical.document_terms(sealed).split()
    variants = s.blind_variants("alpha", lexical.query_terms("hikes marker"))
    assert set(variants) == {"hike", "marker"}
    for blinds in variants.values():
        assert len(blinds) == 2  # one per key of the ring
        assert any(b in stored_terms for b in blinds)
    # Another tenant's blind terms differ.
    other = s.blind_variants("beta", ["hike"])["hike"]
    assert not set(other) & set(variants["hike"])
    # Not sensitive: left as it is.
    assert s.seal_indexed_text("beta", "episode.user_message", ("e1",), text) == text


def test_duplicate_keys_are_keyed_per_tenant_and_key() -> None:
    s = sealer("alpha", env=f"k1:{K1},k2:{K2}")
    digest = "ab" * 32
    keyed = s.blind_hash("alpha", digest)
    assert keyed.startswith("~skh~k2~") and digest not in keyed
    assert keyed == s.blind_hash("alpha", digest)
    assert keyed != s.blind_hash("beta", digest)
    assert s.hash_variants("alpha", digest) == [
        digest,
        s.blind_hash("alpha", digest, "k1"),
        keyed,
    ]
