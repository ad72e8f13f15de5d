"""core.lexical.match_terms: which query terms the full-text index is asked to match."""

from __future__ import annotations

from statekeeper.core.memory.lexical import match_terms


def test_every_present_term_while_the_budget_holds() -> None:
    frequency = {"a": 5, "b": 3, "c": 0}
    assert match_terms(["a", "b", "c"], frequency, 0) == ["a", "b"]
    assert match_terms(["a", "b", "c"], frequency, 8) == ["a", "b"]


def test_over_budget_the_rarest_that_fit_in_query_order() -> None:
    frequency = {"common": 900, "mid": 60, "rare": 3, "rarer": 1}
    assert match_terms(["common", "mid", "rare", "rarer"], frequency, 100) == [
        "mid",
        "rare",
        "rarer",
    ]
    assert match_terms(["common", "mid"], frequency, 10) == ["mid"]  # the rarest, always
