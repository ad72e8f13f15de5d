"""Calendar periods named in a recall query (core/memory/periods.py): which
phrasings name a day, month or range, which name none (impossible dates,
names that look like months), and which occur_times fall in one (with the
time-zone slack at both ends)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from statekeeper.core.memory.periods import TOLD_AFTER, ZONE_SLACK, Period, named_period


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
        # A day without a year matches it in any year, as 3月15日 does.
        ("What did she paint on March 3rd?", Period(3, None, 3)),
        ("What did she paint on March 3?", Period(3, None, 3)),
        ("Where was he on 13 October?", Period(10, None, 13)),
        ("What did they do on the 4th of July?", Period(7, None, 4)),
        ("What did John get on Aug 15th?", Period(8, None, 15)),
        ("What did she paint in Sept. 2023?", Period(9, 2023)),
        ("Where did she go in mid-May?", Period(5)),
        ("Was she born on 29 February?", Period(2, None, 29)),
        # Ranges: the first side takes the last's year (the one before when
        # it comes later in the year).
        ("What did she read between March and May 2023?", Period(3, 2023, None, Period(5, 2023))),
        ("Where was he from December to February?", Period(12, None, None, Period(2))),
        (
            "What happened between 3 March and 5 April, 2023?",
            Period(3, 2023, 3, Period(4, 2023, 5)),
        ),
        (
            "What did she do from 2023-12-20 to 2024-01-05?",
            Period(12, 2023, 20, Period(1, 2024, 5)),
        ),
        (
            "What happened between March 3, 2023 and May 5, 2023?",
            Period(3, 2023, 3, Period(5, 2023, 5)),
        ),
        # Chinese numerals, and a month alone.
        ("他们十月去了哪里？", Period(10)),  # noqa: RUF001
        ("2023年十月三日发生了什么？", Period(10, 2023, 3)),  # noqa: RUF001
        ("二〇二三年十二月三十一日", Period(12, 2023, 31)),
        ("他们10月去了哪里？", Period(10)),  # noqa: RUF001
        # Names that are also months, read where they are months.
        ("What did May do in June?", Period(6)),
        ("What did Jan buy after the week of April?", Period(4)),
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
        # Impossible dates name nothing (not their month either).
        "What did she do on 31 April, 2023?",
        "What happened on 2023-02-30?",
        "What did she do on 30 February?",
        "What did he buy in June 12023?",  # not 1 June 2023
        # Month names that are people's names.
        "What did the sister of Jan give her?",
        "What happened after May visited her?",
        "What did he bring after June's party?",
        "What did she do after April said no?",
        "May 5 people come?",
        "他们三个月去了几次？",  # noqa: RUF001 (three months, a duration)
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
    assert not december.contains(_at(2022, 11, 30, 9))  # 15 h before: past ZONE_SLACK
    assert not december.contains(_at(2021, 12, 15))


def test_a_day_holds_itself_and_the_week_after() -> None:
    day = Period(10, 2023, 13)
    assert day.contains(_at(2023, 10, 13, 0))
    assert day.contains(_at(2023, 10, 19))
    assert not day.contains(_at(2023, 10, 12, 9))
    assert not day.contains(_at(2023, 10, 22))


def test_a_day_is_padded_by_the_widest_time_zone_offset() -> None:
    """00:30 on 13 October in UTC+9 is 15:30 on the 12th in UTC; 23:00 on
    the 20th in UTC-11 (the last day told after it) is 10:00 on the 21st."""
    assert ZONE_SLACK.total_seconds() == 14 * 3600
    day = Period(10, 2023, 13)
    assert day.contains(datetime(2023, 10, 12, 15, 30, tzinfo=UTC).timestamp())
    assert day.contains(datetime(2023, 10, 21, 10, tzinfo=UTC).timestamp())
    assert not day.contains(datetime(2023, 10, 12, 9, 59, tzinfo=UTC).timestamp())
    assert not day.contains(datetime(2023, 10, 21, 14, 1, tzinfo=UTC).timestamp())


def test_a_range_holds_every_day_from_its_first_to_its_last() -> None:
    spring = Period(3, 2023, None, Period(5, 2023))
    assert spring.contains(_at(2023, 3, 1, 0))
    assert spring.contains(_at(2023, 4, 15))
    assert spring.contains(_at(2023, 5, 31, 23))
    assert not spring.contains(_at(2023, 2, 20))
    assert not spring.contains(_at(2023, 6, 20))
    winter = Period(12, None, None, Period(2))  # across the new year, any year
    assert winter.contains(_at(2019, 12, 24))
    assert winter.contains(_at(2020, 1, 15))
    assert winter.contains(_at(2020, 2, 29))
    assert not winter.contains(_at(2020, 4, 1))
    assert not winter.contains(_at(2020, 11, 1))


def test_a_month_without_a_year_matches_that_month_of_any_year() -> None:
    may = Period(5)
    assert may.contains(_at(2019, 5, 20))
    assert may.contains(_at(2024, 6, 3))  # told in the days after
    assert not may.contains(_at(2024, 7, 1))
    new_year = Period(12, None, 30)
    assert new_year.contains(_at(2024, 1, 2))  # the slack crosses the year


def test_a_day_a_year_lacks_is_not_in_that_year() -> None:
    leap_day = Period(2, None, 29)
    assert leap_day.contains(_at(2024, 2, 29))
    assert not leap_day.contains(_at(2023, 3, 1, 2))  # 29 February 2023 does not exist
