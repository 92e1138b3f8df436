"""Dates and times written in free text, and which of them lie after a cutoff.

Read: year-first dates (``2150-03-09``, ``2150/3/9``), year-last numeric dates (``03/09/2150``,
``9.3.2150``: both the month-first and the day-first reading), dates with a month's name (``March 9, 2150``,
``9 Mar 2150``, ``09-Mar-2150``, ``9th of March, 2150``) and a month alone (``March 2150``), each optionally
followed (after ``T``, a space, a comma or ``at``) by a time ``H:MM[:SS[.ffffff]]``, ``AM``/``PM`` and a zone
(``Z``, ``UTC``, ``GMT``, ``+09:00``, ``-0500``). Not read: two-digit years, compact ``20150309`` (ids look the
same), times without a date, relative phrases ("two days later").

When a mention can be read more than one way it counts as after the cutoff if any reading is: a year-last date
is read month-first and day-first; a time with a zone is read as written and converted by its offset (the cutoff
has no zone). A mention is as precise as it is written: a date alone is after the cutoff when its day is after
the cutoff's day (the cutoff's own day may be its past), a month alone when its month is.
"""

from __future__ import annotations

import datetime as dt
import re

_MONTH_NAMES = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11,
    "dec": 12,
}
_MONTH = (r"(?<![a-z])(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![a-z])\.?")
_ORDINAL = r"(?:st|nd|rd|th)?"
_SEP = r"[ \t,-]{1,3}"
_MENTION = re.compile(
    r"(?=[\dadfjmnos])(?:(?<![\d./-])(?P<iy>\d{4})(?P<isep>[-/])(?P<im>\d{1,2})(?P=isep)(?P<id>\d{1,2})(?!\d)"
    r"|(?<![\d./-])(?P<na>\d{1,2})(?P<nsep>[-/.])(?P<nb>\d{1,2})(?P=nsep)(?P<ny>\d{4})(?!\d)"
    rf"|(?P<m1>{_MONTH})(?:[ \t-]{{1,3}}(?P<d1>\d{{1,2}}){_ORDINAL}(?![\d:]))?{_SEP}(?P<y1>\d{{4}})(?!\d)"
    rf"|(?<!\d)(?P<d2>\d{{1,2}}){_ORDINAL}(?:[ \t]of)?[ \t-]{{1,3}}(?P<m2>{_MONTH}){_SEP}(?P<y2>\d{{4}})(?!\d))"
    r"(?:(?:[ T]|,[ \t]?|[ \t]at[ \t])(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.(?P<f>\d+))?)?(?!\d)"
    r"(?:[ \t]?(?P<ampm>[ap])\.?m\.?(?![a-z]))?"
    r"(?:[ \t]?(?P<tz>z(?![a-z])|utc|gmt|[+-]\d{2}(?::?\d{2})?(?!\d)))?)?",
    re.IGNORECASE,
)
"""One date (and its time) in free text; the group names say which way it was written (``i``: year first,
``n``: year last, numeric, ``1``: month's name first, ``2``: day first). Its date part lies within
:data:`_AROUND_YEAR` characters before its year and 6 after (the separators are bounded for that)."""

_YEAR = re.compile(r"\d{4}")
_AROUND_YEAR = 32


def times_after(text: str, cutoff: dt.datetime) -> list[str]:
    """The mentions of dates and times in ``text`` after ``cutoff``, as written, in text order.

    ``cutoff`` is naive (a MIMIC time). Strings that are no calendar date or time (``2150-13-40``, ``25:00``) are
    skipped. Cost: one scan for four-digit runs (the years) and the full pattern only around them (the same matches as
    ``_MENTION.finditer``, ~4x faster on long texts); a mention is checked against the calendar only when one of its
    readings lies after the cutoff.
    """
    out = []
    limit = (cutoff.year, cutoff.month, cutoff.day, cutoff.hour, cutoff.minute, cutoff.second, cutoff.microsecond)
    done = 0  # the text before this index is read
    for year in _YEAR.finditer(text):
        start, end = year.span()
        if start < done or text[end:end + 1].isdecimal() or text[start - 1:start].isdecimal():
            continue  # read already, or part of a longer number (a year is a run of exactly four digits)
        if _may_end_at(text, start):
            # a date part ending with this year starts at most _AROUND_YEAR characters before it; one containing it
            # ends at most 6 after it (its time is read by the anchored match below, without the bound)
            near = _MENTION.search(text, max(done, start - _AROUND_YEAR), end + 8)
            if near is None:
                continue
            start = near.start()
        mention = _MENTION.match(text, start)  # else only a year-first date can hold this year
        if mention is None:
            continue
        done = mention.end()
        if _after(mention, cutoff, limit):
            out.append(mention.group(0))
    return out


def _may_end_at(text: str, start: int) -> bool:
    """Whether a date written with the year last (numeric, or with a month's name) may end with the year at ``start``:
    it follows a date separator, or up to four separators after a letter, a digit or a dot."""
    before = text[start - 1:start]
    if not before or before in "/.":
        return bool(before)
    i = start - 1
    while i >= 0 and start - i <= 4 and text[i] in " \t,-":
        i -= 1
    return i < start - 1 and i >= 0 and (text[i].isalpha() or text[i].isdecimal() or text[i] == ".")


def _after(m: re.Match[str], cutoff: dt.datetime, limit: tuple[int, ...]) -> bool:
    """Whether a reading of the mention ``m`` lies after ``cutoff`` (``limit``: its fields, year to microsecond)."""
    iy, _, im, iday, na, _, nb, ny, m1, d1, y1, d2, m2, y2, hour, minute, second, fraction, ampm, zone = m.groups()
    year = int(iy or ny or y1 or y2)
    if year < limit[0] - (1 if zone else 0):
        return False  # a zone moves a time by less than a day
    if iy:
        days = [(year, int(im), int(iday))]
    elif ny:
        a, b = int(na), int(nb)
        days = [(year, a, b), (year, b, a)] if a != b else [(year, a, b)]
    else:
        month = _MONTH_NAMES[(m1 or m2)[:3].lower()]
        day = d1 if m1 else d2
        if day is None:  # a month alone
            return (year, month) > limit[:2]
        days = [(year, month, int(day))]
    if hour is None:
        return any(d > limit[:3] and _valid(*d) for d in days)
    h = int(hour)
    if ampm:
        if not 1 <= h <= 12:
            return False
        h = h % 12 + (12 if ampm in "pP" else 0)
    clock = (h, int(minute), int(second or 0), int((fraction or "0")[:6].ljust(6, "0")))
    for d in days:
        if not zone and (*d, *clock) <= limit:
            continue
        try:
            when = dt.datetime(*d, *clock)
        except ValueError:
            continue
        if when > cutoff or (zone and when - _offset(zone) > cutoff):
            return True
    return False


def _valid(year: int, month: int, day: int) -> bool:
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    return True


def _offset(zone: str) -> dt.timedelta:
    """``+09:00`` -> 9 h; ``Z``, ``UTC``, ``GMT`` -> 0."""
    if zone[0] not in "+-":
        return dt.timedelta(0)
    digits = zone[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:] or 0)
    return dt.timedelta(minutes=-minutes if zone[0] == "-" else minutes)
