"""Calendar periods named in a recall query ("on 13 October, 2023", "in May
2022", "in July", "2023-10-13", "2023年10月13日", "10月13日").

A question that names when something happened ("What did Maria donate in
December 2022?") is asked about the episodes that occurred then; hybrid and
lexical recall boost the candidates whose occur_time falls in the period
(core/memory/recall.py). Only explicit calendar dates and months are read:
relative times ("last week") depend on when the question is asked, and a
bare year rarely narrows a conversation enough to matter. Dates are read in
UTC, the calendar of occur_time.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

# An episode often tells of an event in the days after it ("last Friday I
# ..."), so a period reaches this far past its end.
TOLD_AFTER = timedelta(days=7)

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
# Most specific first; each pattern yields (year, month, day) groups in a
# fixed order through _order.
_PATTERNS: list[tuple[re.Pattern[str], tuple[int | None, int, int | None]]] = [
    (re.compile(rf"\b{_YEAR}-(\d{{1,2}})-(\d{{1,2}})\b"), (1, 2, 3)),
    (re.compile(rf"{_YEAR}\s*年\s*(\d{{1,2}})\s*月\s*(?:(\d{{1,2}})\s*[日号])?"), (1, 2, 3)),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE), (3, 2, 1)),
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s*{_YEAR}\b", re.IGNORECASE), (3, 1, 2)),
    (re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE), (2, 1, None)),
    (re.compile(rf"\b{_YEAR}-(\d{{1,2}})\b"), (1, 2, None)),
    (re.compile(r"(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), (None, 1, 2)),
    # A month alone only after a preposition: "May" is also a verb.
    (
        re.compile(
            rf"\b(?:in|of|during|since|until|by|before|after|early|late|mid)\s+{_MONTH}\b"
            r"(?!\s*\d)",
            re.IGNORECASE,
        ),
        (None, 1, None),
    ),
]


@dataclass(frozen=True)
class Period:
    """A named day or month; `year` None matches that day or month of any
    year ("in July")."""

    month: int
    year: int | None = None
    day: int | None = None

    def contains(self, occur_time: float) -> bool:
        """True if `occur_time` falls in the period or within TOLD_AFTER
        after it."""
        when = datetime.fromtimestamp(occur_time, UTC)
        years = [self.year] if self.year is not None else [when.year, when.year - 1]
        for year in years:
            start, end = self._bounds(year)
            if start <= when < end + TOLD_AFTER:
                return True
        return False

    def _bounds(self, year: int) -> tuple[datetime, datetime]:
        if self.day is None:
            start = datetime(year, self.month, 1, tzinfo=UTC)
            days = calendar.monthrange(year, self.month)[1]
        else:
            day = min(self.day, calendar.monthrange(year, self.month)[1])
            start = datetime(year, self.month, day, tzinfo=UTC)
            days = 1
        return start, start + timedelta(days=days)


def named_period(text: str) -> Period | None:
    """The first calendar day or month `text` names, if any."""
    for pattern, order in _PATTERNS:
        for match in pattern.finditer(text):
            period = _period(match, order)
            if period is not None:
                return period
    return None


def _period(match: re.Match[str], order: tuple[int | None, int, int | None]) -> Period | None:
    year_at, month_at, day_at = order
    month_text = match.group(month_at)
    month = _MONTHS.get(month_text.lower()) if not month_text.isdigit() else int(month_text)
    year = int(match.group(year_at)) if year_at is not None else None
    day_text = match.group(day_at) if day_at is not None else None
    day = int(day_text) if day_text else None
    if month is None or not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
        return None
    return Period(month, year, day)
