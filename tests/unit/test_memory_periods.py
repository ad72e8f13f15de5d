"""Calendar periods named in a recall query (core/memory/periods.py): which
phrasings name a day or month, and which occur_times fall in one."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from statekeeper.core.memory.periods import TOLD_AFTER, Period, named_period


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("What did Maria donate in December 2022?", Period(12, 2022)),
        ("What painting did she show on October 13, 2023?", Period(10, 2023, 13)),
        ("What did he find on 1 February, 2023?", Period(2, 2023, 1)),
        ("Which book did Tim finish on 8th December, 2023?", Period(12, 2023, 8)),
        ("Where was the picture shared on Jan. 5, 2024 taken?", Period(1, 2024, 5)),
        ("Which spot did Joanna visit in May?", Period(5)),
        ("Which country was he visiting in the second week of November?", Period(11)),
        ("What happened on 2023-10-13?", Period(10, 2023, 13)),
        ("李明2025年3月2日做了什么？", Period(3, 2025, 2)),  # noqa: RUF001
        ("她3月15日去了哪里？", Period(3, None, 15)),  # noqa: RUF001
        ("他们2025年4月去了哪里？", Period(4, 2025)),  # noqa: RUF001
    ],
)
def test_a_named_day_or_month_is_read(text: str, period: Period) -> None:
    assert named_period(text) == period


@pytest.mark.parametrize(
    "text",
    [
        "May I ask what her cat is called?",  # "May" the verb
        "What may John want to do after his career?",
        "When did Caroline go to the support group?",
        "What did he do last week?",  # relative: depends on when it is asked
        "How many times has she been to the beach in 2023?",  # a year alone
        "How many people were on the 13 teams?",
    ],
)
def test_no_period_is_read_where_none_is_named(text: str) -> None:
    assert named_period(text) is None


def _at(year: int, month: int, day: int, hour: int = 12) -> float:
    return datetime(year, month, day, hour, tzinfo=UTC).timestamp()


def test_a_month_holds_its_days_and_the_days_an_event_is_told_after() -> None:
    december = Period(12, 2022)
    assert december.contains(_at(2022, 12, 1, 0))
    assert december.contains(_at(2022, 12, 31, 23))
    assert december.contains(_at(2023, 1, 6))  # within TOLD_AFTER (7 days)
    assert TOLD_AFTER.days == 7
    assert not december.contains(_at(2023, 1, 9))
    assert not december.contains(_at(2022, 11, 30, 23))
    assert not december.contains(_at(2021, 12, 15))


def test_a_day_holds_itself_and_the_week_after() -> None:
    day = Period(10, 2023, 13)
    assert day.contains(_at(2023, 10, 13, 0))
    assert day.contains(_at(2023, 10, 19))
    assert not day.contains(_at(2023, 10, 12, 23))
    assert not day.contains(_at(2023, 10, 21))


def test_a_month_without_a_year_matches_that_month_of_any_year() -> None:
    may = Period(5)
    assert may.contains(_at(2019, 5, 20))
    assert may.contains(_at(2024, 6, 3))  # told in the days after
    assert not may.contains(_at(2024, 7, 1))
    new_year = Period(12, None, 30)
    assert new_year.contains(_at(2024, 1, 2))  # the slack crosses the year


def test_a_day_past_the_end_of_its_month_is_its_last_day() -> None:
    assert Period(2, 2023, 31).contains(_at(2023, 2, 28))
