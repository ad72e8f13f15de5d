"""Where the archive keeps each object (ids that are not plain are
hex-encoded behind a `~`, so no id climbs out of its tenant's prefix):

  v1/<tenant>/<capability>/<unit>/chunk-<sha256 prefix>.ndjson.zst   rows
  v1/<tenant>/<capability>/<unit>/manifest.json   the unit's index entry
  v1/<tenant>/users/<user>/<capability>/<unit>    marker: a user's units
      (EraseUser and a per-user restore list them)

A capability is a unit kind's name (`sessions`, `checkpoints`, ...), never
`users`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ROOT = "v1"
USERS = "users"
_SIMPLE_SEGMENT = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")


def segment(text: str) -> str:
    """One key segment naming an id: the id itself when it is plain, else
    `~` and its UTF-8 bytes in hex (two ids never share a segment)."""
    if _SIMPLE_SEGMENT.fullmatch(text):
        return text
    return "~" + text.encode().hex()


def unsegment(text: str) -> str:
    """The id a segment names."""
    if text.startswith("~"):
        try:
            return bytes.fromhex(text[1:]).decode()
        except ValueError:  # not a key this archive wrote
            return text
    return text


def tenant_prefix(tenant: str) -> str:
    return f"{ROOT}/{segment(tenant)}/"


def capability_prefix(tenant: str, capability: str) -> str:
    return f"{tenant_prefix(tenant)}{capability}/"


def unit_prefix(tenant: str, capability: str, unit: str) -> str:
    return f"{capability_prefix(tenant, capability)}{segment(unit)}/"


def manifest_key(tenant: str, capability: str, unit: str) -> str:
    return unit_prefix(tenant, capability, unit) + "manifest.json"


def chunk_key(tenant: str, capability: str, unit: str, digest: str) -> str:
    return unit_prefix(tenant, capability, unit) + f"chunk-{digest[:16]}.ndjson.zst"


def user_prefix(tenant: str, user_id: str, capability: str = "") -> str:
    """The user's markers, of one capability or (empty) of all."""
    prefix = f"{tenant_prefix(tenant)}{USERS}/{segment(user_id)}/"
    return f"{prefix}{capability}/" if capability else prefix


def marker_key(tenant: str, user_id: str, capability: str, unit: str) -> str:
    return user_prefix(tenant, user_id, capability) + segment(unit)


@dataclass(frozen=True)
class ParsedKey:
    """What a key is: a `manifest`, a `chunk`, a `marker` or `other`."""

    kind: str
    capability: str = ""
    unit: str = ""


def parse_key(key: str) -> ParsedKey:
    parts = key.split("/")
    if len(parts) == 6 and parts[0] == ROOT and parts[2] == USERS:
        return ParsedKey("marker", parts[4], unsegment(parts[5]))
    if len(parts) == 5 and parts[0] == ROOT and parts[2] != USERS:
        name = parts[4]
        if name == "manifest.json":
            return ParsedKey("manifest", parts[2], unsegment(parts[3]))
        if name.startswith("chunk-"):
            return ParsedKey("chunk", parts[2], unsegment(parts[3]))
    return ParsedKey("other")
