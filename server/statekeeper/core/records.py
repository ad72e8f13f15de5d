"""Frozen dataclass records built and copied without their __init__."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

R = TypeVar("R")


def field_names(record_type: type[Any]) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(record_type))


def evolved(record: R, names: frozenset[str], changes: dict[str, Any]) -> R:
    """What dataclasses.replace(record, **changes) gives for a frozen
    dataclass without __post_init__ or slots (`names`: its field names),
    without running its __init__ (a setattr per field, an order of
    magnitude slower) - for records copied on every write."""
    unknown = changes.keys() - names
    if unknown:
        raise TypeError(f"{type(record).__name__} has no field {', '.join(sorted(unknown))}")
    copy = object.__new__(type(record))
    # Frozen blocks setattr, not the instance dict.
    state = copy.__dict__
    state.update(record.__dict__)
    state.update(changes)
    return copy


def built(record_type: type[R], names: frozenset[str], values: dict[str, Any]) -> R:
    """`record_type(**values)` for a frozen dataclass without __post_init__
    or slots, `values` naming every field (`names`), without running its
    __init__ - for records read by the thousand (see `evolved`)."""
    if values.keys() != names:
        missing, unknown = names - values.keys(), values.keys() - names
        raise TypeError(
            f"{record_type.__name__}: missing {sorted(missing)}, unknown {sorted(unknown)}"
        )
    record = object.__new__(record_type)
    record.__dict__.update(values)
    return record
