"""Glob and prefix selectors: semantics, escaping, malformed patterns, and
key ranges that never leave the prefix."""

from __future__ import annotations

import pytest

from statekeeper.core.blackboard.keys import compile_glob, prefix_end, selector
from statekeeper.core.blackboard.models import BlackboardLimits
from statekeeper.core.errors import InvalidArgumentError, LimitExceededError

LIMITS = BlackboardLimits()


def glob(pattern: str) -> object:
    return compile_glob("pattern", pattern, LIMITS)


@pytest.mark.parametrize(
    ("pattern", "matching", "not_matching"),
    [
        ("plan/*", ["plan/a", "plan/", "plan/step-3"], ["plan/a/b", "plans/a", "xplan/a"]),
        ("plan/**", ["plan/a", "plan/a/b/c", "plan/"], ["plan", "other/plan/a"]),
        ("**/done", ["a/done", "a/b/done", "/done"], ["done", "a/done/x"]),
        ("step-?", ["step-1", "step-x"], ["step-", "step-10", "step-/"]),
        ("k[abc]", ["ka", "kc"], ["kd", "k", "kab"]),
        ("k[a-c0-1]", ["kb", "k0", "k1"], ["kd", "k2"]),
        ("k[-a]", ["k-", "ka"], ["kb"]),
        ("a*b*c", ["abc", "aXbYc", "abbc"], ["ab", "a/b/c", "acb"]),
        ("a**b**c", ["a/x/b/y/c", "abc"], ["a/x/c"]),
        ("*", ["x", ""], ["a/b"]),
        ("日本/*", ["日本/語"], ["日本語"]),
    ],
)
def test_glob_semantics(pattern: str, matching: list[str], not_matching: list[str]) -> None:
    matcher = compile_glob("pattern", pattern, LIMITS)
    for key in matching:
        assert matcher.matches(key), f"{pattern!r} should match {key!r}"
    for key in not_matching:
        assert not matcher.matches(key), f"{pattern!r} should not match {key!r}"


@pytest.mark.parametrize(
    ("pattern", "literal_key", "wildcard_key"),
    [
        ("a\\*", "a*", "ab"),
        ("a\\?", "a?", "ab"),
        ("\\[x]", "[x]", "x"),
        ("a\\\\b", "a\\b", "ab"),
        ("k[\\]]", "k]", "k\\"),
    ],
)
def test_escaped_characters_match_only_themselves(
    pattern: str, literal_key: str, wildcard_key: str
) -> None:
    matcher = compile_glob("pattern", pattern, LIMITS)
    assert matcher.matches(literal_key)
    assert not matcher.matches(wildcard_key)


def test_sql_and_regex_characters_are_plain_characters() -> None:
    for key in ["%", "_", ".", "^$", "(a|b)", "a+", "{1}", "'; DROP TABLE x; --"]:
        assert compile_glob("pattern", key, LIMITS).matches(key)
    assert not compile_glob("pattern", "%", LIMITS).matches("anything")
    assert not compile_glob("pattern", "_", LIMITS).matches("x")
    assert not compile_glob("pattern", ".*", LIMITS).matches("abc")


def test_the_literal_prefix_narrows_the_key_range() -> None:
    assert compile_glob("pattern", "plan/step-*", LIMITS).prefix == "plan/step-"
    assert compile_glob("pattern", "a\\*b*", LIMITS).prefix == "a*b"
    assert compile_glob("pattern", "*x", LIMITS).prefix == ""
    assert compile_glob("pattern", "ab[c]d*", LIMITS).prefix == "abcd"


@pytest.mark.parametrize("pattern", ["k[ab", "k\\", "k[]", "k[z-a]", "", "a\x00"])
def test_malformed_patterns_are_invalid_arguments_naming_the_field(pattern: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        compile_glob("pattern", pattern, LIMITS)
    assert caught.value.field == "pattern"


def test_oversized_selectors_are_over_the_limit() -> None:
    with pytest.raises(LimitExceededError):
        compile_glob("pattern", "a" * 1025, LIMITS)
    with pytest.raises(LimitExceededError):
        selector("a" * 1025, None, LIMITS)


def test_a_hostile_pattern_is_matched_without_backtracking() -> None:
    """`**a**a...**b` against a long run of `a` is exponential for a
    backtracking regex; the NFA answers in one pass."""
    pattern = "**a" * 20 + "**b"
    matcher = compile_glob("pattern", pattern, LIMITS)
    assert not matcher.matches("a" * 1000)
    assert matcher.matches("a" * 1000 + "b")


@pytest.mark.parametrize(
    ("prefix", "end"),
    [
        ("abc", "abd"),
        ("a\U0010ffff", "b"),
        ("\U0010ffff", None),
        ("", None),
        ("a\ud7ff", "a\ue000"),  # skips the surrogates, which UTF-8 cannot hold
    ],
)
def test_prefix_end_is_the_first_string_after_the_prefix(prefix: str, end: str | None) -> None:
    assert prefix_end(prefix) == end


def test_prefix_selector_matches_by_prefix() -> None:
    matcher = selector("plan/", None, LIMITS)
    assert matcher.matches("plan/a") and not matcher.matches("plans")
    assert selector(None, None, LIMITS).matches("anything")
    with pytest.raises(InvalidArgumentError):
        selector("a\x00", None, LIMITS)
