"""Time expressions resolved against the date a turn was said.

"last Saturday" in a session of Thursday 25 May 2023 is 2023-05-20; "two weeks ago" is
2023-05-11; "in 2019" is 2019; "8 May" is 2023-05-08. Results are ISO strings at the precision the
text gives (day ``YYYY-MM-DD``, month ``YYYY-MM``, year ``YYYY``), so a fact never claims more
than it knows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]


_MONTH_OF = {m: n + 1 for n, m in enumerate(MONTHS)} | {m[:3]: n + 1 for n, m in enumerate(MONTHS)} | {"sept": 9}
_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3, "few": 3, "a couple of": 2, "couple of": 2,
           "several": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_MONTH_RE = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_NUM_RE = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|few|a couple of|couple of|several)"

PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("ago", re.compile(rf"\b{_NUM_RE}\s+(day|week|month|year)s?\s+ago\b", re.I)),
    ("weekday", re.compile(r"\b(last|this|next|on)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)),
    ("relative_unit", re.compile(r"\b(last|this|next)\s+(week|weekend|month|year|summer|winter|spring|fall|autumn)\b", re.I)),
    ("day_month_year", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE}\.?,?\s*(\d{{4}})?\b", re.I)),
    ("month_day_year", re.compile(rf"\b{_MONTH_RE}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s*(\d{{4}}))?\b", re.I)),
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("month_year", re.compile(rf"\b(?:in\s+)?{_MONTH_RE}\s+(\d{{4}})\b", re.I)),
    ("year", re.compile(r"\b(?:in|since|of|from|by|until|around)\s+((?:1[5-9]|20)\d{2})\b", re.I)),
    ("deictic", re.compile(r"\b(yesterday|today|tonight|tomorrow|this morning|last night|the other day|recently)\b", re.I)),
]


# Every pattern needs one of these; most sentences have none, and skip the nine patterns.
_ANY_TIME = re.compile(r"\d|\b(?:ago|yesterday|today|tonight|tomorrow|last|next|this|recently|other day|"
                       r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|on (?:mon|tues|wednes|thurs|fri|satur|sun)day)",
                       re.I)


@dataclass
class TimeMention:
    text: str  # the words as written
    value: str  # ISO date, month or year
    start: int
    end: int


def reference_date(timestamp: str | None) -> date | None:
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp).date()
    except ValueError:
        return None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER.get(word.lower(), 1)


def _weekday(kind: str, name: str, ref: date) -> date:
    target = WEEKDAYS.index(name.lower())
    delta = (ref.weekday() - target) % 7
    if kind.lower() == "last":
        return ref - timedelta(days=delta or 7)
    if kind.lower() == "next":
        return ref + timedelta(days=((target - ref.weekday()) % 7) or 7)
    return ref - timedelta(days=delta) if kind.lower() == "on" else ref + timedelta(days=(target - ref.weekday()) % 7)


def _relative_unit(kind: str, unit: str, ref: date) -> str:
    step = {"last": -1, "this": 0, "next": 1}[kind.lower()]
    unit = unit.lower()
    if unit in ("week", "weekend"):
        anchor = ref + timedelta(days=7 * step)
        if unit == "weekend":  # the Saturday of that week
            anchor += timedelta(days=5 - anchor.weekday())
        return anchor.isoformat()
    if unit == "month":
        month = ref.month + step
        year = ref.year + (month - 1) // 12
        return f"{year:04d}-{(month - 1) % 12 + 1:02d}"
    return f"{ref.year + step:04d}"


def _resolve(kind: str, m: re.Match[str], ref: date | None) -> str | None:
    g = m.groups()
    if kind == "iso":
        return m.group(0)
    if kind == "day_month_year":
        year = int(g[2]) if g[2] else (ref.year if ref else None)
        return _ymd(year, _MONTH_OF[g[1].lower()[:4] if g[1].lower().startswith("sept") else g[1].lower()[:3]], int(g[0]))
    if kind == "month_day_year":
        year = int(g[2]) if g[2] else (ref.year if ref else None)
        return _ymd(year, _MONTH_OF[g[0].lower()[:3]], int(g[1]))
    if kind == "month_year":
        return f"{int(g[1]):04d}-{_MONTH_OF[g[0].lower()[:3]]:02d}"
    if kind == "year":
        return g[0]
    if ref is None:
        return None
    if kind == "ago":
        return (ref - timedelta(days=_count(g[0]) * _UNIT_DAYS[g[1].lower()])).isoformat()
    if kind == "weekday":
        return _weekday(g[0], g[1], ref).isoformat()
    if kind == "relative_unit":
        if g[1].lower() in ("summer", "winter", "spring", "fall", "autumn"):
            return f"{ref.year + {'last': -1, 'this': 0, 'next': 1}[g[0].lower()]:04d}"
        return _relative_unit(g[0], g[1], ref)
    word = g[0].lower()
    offset = {"yesterday": -1, "last night": -1, "tomorrow": 1}.get(word, 0)
    return (ref + timedelta(days=offset)).isoformat()


def _ymd(year: int | None, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat() if year else None
    except ValueError:
        return None


def find_times(text: str, timestamp: str | None) -> list[TimeMention]:
    """Every time expression in ``text``, resolved against ``timestamp`` (non-overlapping, in order)."""
    if not _ANY_TIME.search(text):
        return []
    ref = reference_date(timestamp)
    found: list[TimeMention] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            value = _resolve(kind, m, ref)
            if value:
                found.append(TimeMention(m.group(0), value, m.start(), m.end()))
                taken.append((m.start(), m.end()))
    return sorted(found, key=lambda t: t.start)


_IN_MONTH = re.compile(rf"\bin\s+(?:early\s+|late\s+|mid-?)?{_MONTH_RE}\b(?!\s*\d)", re.I)


def past_month(text: str, timestamp: str | None) -> TimeMention | None:
    """"in July" without a year in a clause telling what happened: the last July up to the day
    it was said ("Leah moved to Boulder in July", said on 20 August 2023, is 2023-07). Only for a
    past tense: "I start in July" said in May means the next one, which ``find_times`` leaves alone."""
    m = _IN_MONTH.search(text)
    ref = reference_date(timestamp)
    if not m or ref is None or m.group(1).lower() == "may" and m.group(1) != "May":
        return None
    month = _MONTH_OF[m.group(1).lower()[:3]]
    year = ref.year if month <= ref.month else ref.year - 1
    return TimeMention(m.group(0), f"{year:04d}-{month:02d}", m.start(), m.end())


def resolve(text: str, timestamp: str | None) -> str | None:
    """The first time expression of ``text`` as an ISO value, else None."""
    times = find_times(text, timestamp)
    return times[0].value if times else None
