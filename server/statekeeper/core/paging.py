"""Opaque page tokens (AIP-158).

A token carries the position after the last item of a page plus a digest of
the filters it was issued for, so that a token replayed with other filters is
rejected instead of silently returning the wrong page.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from statekeeper.core.errors import InvalidArgumentError

_FIELD = "page_token"


def _digest(kind: str, filters: Any) -> str:
    raw = json.dumps([kind, filters], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def encode(kind: str, filters: Any, position: Any) -> str:
    payload = json.dumps({"f": _digest(kind, filters), "p": position}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode(token: str, kind: str, filters: Any) -> Any:
    """Returns the position of `token`, or None for an empty token."""
    if not token:
        return None
    try:
        padded = token + "=" * (-len(token) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()))
        digest, position = payload["f"], payload["p"]
    except (binascii.Error, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise InvalidArgumentError(_FIELD, "is malformed") from exc
    if digest != _digest(kind, filters):
        raise InvalidArgumentError(_FIELD, "was issued for a different request")
    return position
