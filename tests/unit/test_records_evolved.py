"""core/records: `evolved` gives what dataclasses.replace gives for a frozen
record, and `built` what its constructor gives."""

from __future__ import annotations

import dataclasses

import pytest

from statekeeper.core.records import built, evolved, field_names


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int
    tags: tuple[str, ...] = ()


NAMES = field_names(Point)


def test_a_copy_with_the_changes_equals_replace_and_leaves_the_original() -> None:
    point = Point(1, 2, ("a",))
    moved = evolved(point, NAMES, {"y": 5})
    assert moved == dataclasses.replace(point, y=5) == Point(1, 5, ("a",))
    assert moved is not point and point == Point(1, 2, ("a",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        moved.x = 3  # type: ignore[misc]


def test_an_unknown_field_is_refused_like_replace() -> None:
    with pytest.raises(TypeError, match="Point has no field z"):
        evolved(Point(1, 2), NAMES, {"z": 1})


def test_a_built_record_equals_the_constructed_one_and_stays_frozen() -> None:
    point = built(Point, NAMES, {"x": 1, "y": 2, "tags": ("a",)})
    assert point == Point(1, 2, ("a",)) and type(point) is Point
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]


def test_a_record_is_not_built_from_missing_or_unknown_fields() -> None:
    with pytest.raises(TypeError, match=r"missing \['tags'\], unknown \[\]"):
        built(Point, NAMES, {"x": 1, "y": 2})  # even a field with a default
    with pytest.raises(TypeError, match=r"unknown \['z'\]"):
        built(Point, NAMES, {"x": 1, "y": 2, "tags": (), "z": 0})
