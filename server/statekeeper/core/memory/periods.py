"""Calendar periods named in a recall query ("on 13 October, 2023", "in May
2022", "in July", "on March 3rd", "the 4th of July", "between March and May
2023", "2023-10-13", "2023年10月13日", "2023年十月三日", "10月13日", "十月").

A question that names when something happened ("What did Maria donate in
December 2022?") is asked about the episodes that occurred then; hybrid and
lexical recall boost the candidates whose occur_time falls in the period
(core/memory/recall.py). Only explicit calendar dates, months and ranges of
them are read: relative times ("last week") depend on when the question is
asked, and a bare year rarely narrows a conversation enough to matter. A
day or month named without a year matches it in any year (the episodes'
dates decide). Impossible dates ("31 April", "2023-02-30") name nothing.

A month name alone ("in May") is read only after a preposition of time
("in", "during", "since", "until", "before", "after", "early", "late",
"mid", "around", "through", or "week/end/start/beginning/middle/... of"),
and not when it reads as a person's name: followed by "'s" ("after May's
party"), by a past-tense word ("after May visited") or by a few common
verbs ("was", "said", "went"...). "the sister of Jan" names nobody's month
("of" is a preposition of time only after a word like "week" or "end").

occur_time is UTC but the question names a day of the user's calendar: a
period reaches ZONE_SLACK (14 h, the widest UTC offset) past both ends, so
an event at 00:30 on 13 October in UTC+9 (15:30 on the 12th in UTC) is "on
13 October".
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

# An episode often tells of an event in the days after it ("last Friday I
# ..."), so a period reaches this far past its end.
TOLD_AFTER = timedelta(days=7)

# The widest offset of a local calendar day from UTC's (UTC-12 to UTC+14).
ZONE_SLACK = timedelta(hours=14)

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH = rf"(?P<m>(?:{_NAMES})(?![a-z]))\.?"
_DAY = r"(?<!\d)(?P<d>\d{1,2})(?:st|nd|rd|th)?(?![\d:])"
_ORDINAL_DAY = r"(?<!\d)(?P<d>\d{1,2})(?:st|nd|rd|th)(?!\w)"
_YEAR = r"(?<!\d)(?P<y>(?:19|20)\d\d)(?!\d)"
# Before a bare month: prepositions of time, and "of" only after a word
# that names a part of a period ("the second week of November").
_TIME_PREPOSITION = (
    r"\b(?:in|during|since|until|till|before|after|early|late|mid|around|through|throughout"
    r"|(?:week|weekend|end|start|beginning|middle|month|half|part|days?|rest)\s+of)"
)
# After a bare month: what makes it read as a person's name.
_NAME_FOLLOWS = (
    r"(?!\s*\d)(?!\s*['’]s\b)(?!\s+[a-z]+ed\b)"  # noqa: RUF001 (the typographic apostrophe)
    r"(?!\s+(?:is|was|has|had|says|said|tells|told|goes|went|comes|came|gets|got|does|did"
    r"|will|would|can|could)\b)"
)


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Most specific first; each names its parts with the groups y, m and d.
_PATTERNS = [
    _compile(rf"{_YEAR}-(?P<m>\d{{1,2}})-(?P<d>\d{{1,2}})(?!\d)"),
    _compile(rf"{_YEAR}\s*年\s*(?P<m>\d{{1,2}})\s*月\s*(?:(?P<d>\d{{1,2}})\s*[日号])?"),
    _compile(rf"{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}"),
    _compile(rf"\b{_MONTH}\s+{_DAY}(?:,\s*|\s+){_YEAR}"),
    _compile(rf"\b{_MONTH},?\s+{_YEAR}"),
    _compile(rf"{_YEAR}-(?P<m>\d{{1,2}})(?![\d-])"),
    _compile(r"(?<!\d)(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]"),
    # Without a year: "13 October", "the 4th of July", "March 3rd", "on
    # March 3" (a day after the month only with an ordinal or after a
    # preposition: "May 5 people come?").
    _compile(rf"{_DAY}\s+(?:of\s+)?{_MONTH}(?!\s*\d)"),
    _compile(rf"\b{_MONTH}\s+{_ORDINAL_DAY}"),
    _compile(rf"\b(?:on|by|since|until|till|before|after|from|around)\s+{_MONTH}\s+{_DAY}"),
    _compile(r"(?<![\d个])(?P<m>\d{1,2})\s*月"),
    _compile(rf"{_TIME_PREPOSITION}[\s-]+{_MONTH}{_NAME_FOLLOWS}"),
]
# A side of a range: any of the above, or a bare month ("between March and").
_SIDES = [*_PATTERNS[:-1], _compile(rf"{_MONTH}{_NAME_FOLLOWS}")]
_RANGE = _compile(
    r"\b(?:between|from)\s+(?P<first>[^;?!]{3,40}?)\s+(?:and|to|until|till|through)\s+"
    r"(?P<last>[^;?!]{3,40})"
)

_CHINESE_DIGITS = dict(
    zip("〇零一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True)
)
_CHINESE_NUMBER = re.compile(r"[〇零一二两三四五六七八九十]+(?=\s*[年月日号])")


@dataclass(frozen=True)
class Period:
    """A named day or month; `year` None matches that day or month of any
    year ("in July"). `through`, if set, is the last day or month of a range
    that starts here ("between March and May 2023"); a range has a year at
    both ends or at neither."""

    month: int
    year: int | None = None
    day: int | None = None
    through: Period | None = None

    def contains(self, occur_time: float) -> bool:
        """True if `occur_time` falls in the period (ZONE_SLACK wider at
        both ends) or within TOLD_AFTER after it."""
        when = datetime.fromtimestamp(occur_time, UTC)
        last = self.through or self
        years = [last.year] if last.year is not None else [when.year + 1, when.year, when.year - 1]
        for end_year in years:
            start_year = end_year if self.year is None else self.year
            if self.through is not None and self.year is None and _later(self, last):
                start_year -= 1  # "between December and February"
            first_bounds, last_bounds = self._bounds(start_year), last._bounds(end_year)
            if first_bounds is None or last_bounds is None:
                continue
            start, end = first_bounds[0] - ZONE_SLACK, last_bounds[1] + ZONE_SLACK
            if start <= when < end + TOLD_AFTER:
                return True
        return False

    def _bounds(self, year: int) -> tuple[datetime, datetime] | None:
        """The UTC day or month in `year`; None if it has no such day (29
        February of a common year)."""
        days_in_month = calendar.monthrange(year, self.month)[1]
        if self.day is None:
            start = datetime(year, self.month, 1, tzinfo=UTC)
            return start, start + timedelta(days=days_in_month)
        if self.day > days_in_month:
            return None
        start = datetime(year, self.month, self.day, tzinfo=UTC)
        return start, start + timedelta(days=1)


def named_period(text: str) -> Period | None:
    """The calendar range, day or month `text` names first, if any."""
    text = _CHINESE_NUMBER.sub(_arabic, text)
    for found in _RANGE.finditer(text):
        span = _range(found.group("first").strip(), found.group("last"))
        if span is not None:
            return span
    impossible: list[tuple[int, int]] = []  # text an impossible date used up
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in impossible):
                continue
            period = _period(match)
            if period is not None:
                return period
            impossible.append(match.span())
    return None


def _range(first_text: str, last_text: str) -> Period | None:
    """ "between X and Y": both sides dates, the first taking the last's year
    (the year before if it comes later in the year) and vice versa."""
    first = _side(first_text, whole=True)
    last = _side(last_text, whole=False)
    if first is None or last is None:
        return None
    if first.year is None and last.year is not None:
        first = _in_year(first, last.year - 1 if _later(first, last) else last.year)
    elif last.year is None and first.year is not None:
        last = _in_year(last, first.year + 1 if _later(first, last) else first.year)
    if first is None or last is None or (first.year is not None and _later(first, last)):
        return None
    return Period(first.month, first.year, first.day, through=last)


def _side(text: str, whole: bool) -> Period | None:
    for pattern in _SIDES:
        match = pattern.fullmatch(text) if whole else pattern.match(text)
        if match is not None:
            return _period(match)
    return None


def _later(first: Period, last: Period) -> bool:
    """True if `first` starts after `last` within a year, or in a later year."""
    if first.year is not None and last.year is not None and first.year != last.year:
        return first.year > last.year
    return (first.month, first.day or 1) > (last.month, last.day or 1)


def _in_year(period: Period, year: int) -> Period | None:
    return _valid(period.month, year, period.day)


def _period(match: re.Match[str]) -> Period | None:
    parts = match.groupdict()
    month_text = parts["m"]
    month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text.lower())
    year = int(parts["y"]) if parts.get("y") else None
    day = int(parts["d"]) if parts.get("d") else None
    return None if month is None else _valid(month, year, day)


def _valid(month: int, year: int | None, day: int | None) -> Period | None:
    """The period, if the date exists (in some leap year when `year` is
    None: "29 February")."""
    if not 1 <= month <= 12:
        return None
    if day is not None and not 1 <= day <= calendar.monthrange(year or 2000, month)[1]:
        return None
    return Period(month, year, day)


def _arabic(match: re.Match[str]) -> str:
    """A Chinese number before 年, 月, 日 or 号 in digits: 十月 10月,
    二十三日 23日, 二〇二三年 2023年; left as it is if it is not one."""
    numeral = match.group()
    if "十" not in numeral:
        return "".join(str(_CHINESE_DIGITS[c]) for c in numeral)
    tens, _, units = numeral.partition("十")
    if len(tens) > 1 or len(units) > 1 or "十" in units:
        return numeral
    return str(
        10 * (_CHINESE_DIGITS[tens] if tens else 1) + (_CHINESE_DIGITS[units] if units else 0)
    )
