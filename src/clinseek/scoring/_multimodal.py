"""Deterministic rules for multimodal single-answer rows: yes/no, counts, dates/times, ids, names.

Each rule turns every answer item and the gold into a canonical value; a row is correct iff the
answer's distinct canonical values are exactly ``{gold}`` (an item that cannot be read counts as
a value of its own, so ``["yes", "no"]`` and ``["2", "maybe 3"]`` are wrong). Source of the
subtypes: the reference's multimodal judge instructions (ref_data_scoring.md §3.2), made
deterministic here.
"""

from __future__ import annotations

import re
from datetime import datetime

from ._metrics import SetMetrics
from ._model import AnswerType, Route
from ._normalize import normalize_text
from ._numbers import decimal_text, parse_decimal, parse_number
from ._vocab import load_vocabulary

_YES = frozenset({"yes", "y", "true", "1", "present", "positive"})
_NO = frozenset({"no", "n", "false", "0", "absent", "negative"})
_ISO = re.compile(r"(\d{4})[-/](\d{1,2})(?:[-/](\d{1,2})(?:[ t](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?)?")
_TEXT_DATES = ("%B %d, %Y", "%B %d %Y", "%b %d, %Y", "%b %d %Y", "%d %B %Y", "%d %b %Y")
_ID = re.compile(r"\d{6,}")


def single_route(gold: str, answer_type: AnswerType | None) -> Route:
    """The rule for a one-item gold: the declared ``answer_type``, else read from the gold.

    Read from the gold, in order: a yes/no word → ``yes_no``; an ISO-like date or date-time →
    ``datetime``; six or more digits → ``id``; a number → ``count``; anything else → ``name``.
    """
    if answer_type in ("yes_no", "count", "datetime", "id", "name"):
        return answer_type
    text = normalize_text(gold)
    if text in _YES | _NO:
        return "yes_no"
    if _ISO.fullmatch(text):
        return "datetime"
    if _ID.fullmatch(text):
        return "id"
    if parse_number(text) is not None and re.fullmatch(r"[-+]?[\d,.]+", text):
        return "count"
    return "name"


_WORD = re.compile(r"[a-z0-9]+")


def _polarity(word: str) -> str | None:
    return "yes" if word in _YES else "no" if word in _NO else None


def _yes_no(text: str) -> str | None:
    """A bare yes/no word, or one that opens the answer (``"yes, effusion is present"``) when no
    word of the opposite polarity follows (``"yes and no"`` cannot be read)."""
    whole = _polarity(text.strip(" .!"))
    if whole is not None:
        return whole
    words = _WORD.findall(text)
    first = _polarity(words[0]) if words else None
    if first is None or words[0] in ("y", "n", "1", "0"):
        return None
    rest = {_polarity(w) for w in words[1:] if w not in ("y", "n", "1", "0")} - {None}
    return first if rest <= {first} else None


def _count(text: str) -> str | None:
    """The number stated, as exact decimal text: counts are compared exactly (``1.5`` ≠ ``1.500001``,
    ``1,000,000`` ≠ ``1000004``), whatever the format (``1,200`` = ``1200`` = ``1200.0``)."""
    value = parse_decimal(text)
    return None if value is None else decimal_text(value)


def _datetime_parts(text: str) -> tuple[int, ...] | None:
    """(year, month[, day[, hour, minute[, second]]]) of a date or date-time, else None."""
    match = _ISO.fullmatch(text.strip(" ."))
    if match:
        return tuple(int(g) for g in match.groups() if g is not None)
    for fmt in _TEXT_DATES:
        try:
            parsed = datetime.strptime(text.strip(" ."), fmt)
        except ValueError:
            continue
        return (parsed.year, parsed.month, parsed.day)
    return None


def _gold_precision(parts: tuple[int, ...]) -> int:
    """How many leading parts count: a gold time with zero seconds is compared to the minute."""
    if len(parts) == 6 and parts[5] == 0:
        return 5
    return len(parts)


def _render_parts(parts: tuple[int, ...]) -> str:
    """``(2105, 8, 3, 21, 0)`` → ``"2105-08-03 21:00"``."""
    text = f"{parts[0]:04d}" + "".join(f"-{p:02d}" for p in parts[1:3])
    if len(parts) > 3:
        text += " " + ":".join(f"{p:02d}" for p in parts[3:])
    return text


def _id(text: str) -> str:
    text = text.strip(" .#")
    return text.lstrip("0") or "0" if text.isdigit() else text


def canonical_value(route: Route, text: str, *, task: str, precision: int = 0) -> str | None:
    """The canonical value of one normalised item under ``route`` (``None`` if unreadable)."""
    if route == "yes_no":
        return _yes_no(text)
    if route == "count":
        return _count(text)
    if route == "id":
        return _id(text)
    if route == "datetime":
        parts = _datetime_parts(text)
        if parts is None or len(parts) < precision:
            return None
        return _render_parts(parts[:precision])
    canonical = load_vocabulary().canonical(text, task)
    return normalize_text(canonical) if canonical is not None else text


def _values(route: Route, answer: list[str], *, task: str, precision: int) -> set[str]:
    values: set[str] = set()
    for item in answer:
        text = normalize_text(item)
        if text:
            value = canonical_value(route, text, task=task, precision=precision)
            values.add(value if value is not None else f"unreadable:{text}")
    return values


def single_metrics(
    route: Route, answer: list[str], gold: str, *, task: str
) -> tuple[SetMetrics, list[str], list[str]]:
    """Score one single-answer row; returns metrics, canonical answer values, canonical gold.

    A gold the rule cannot read (a malformed date) falls back to exact normalised comparison.
    A gold of ``0`` or ``1`` read as yes/no is also accepted as a count (``one`` = ``1``),
    since without a declared ``answer_type`` the gold alone cannot tell the two apart.
    """
    gold_text = normalize_text(gold)
    precision = 0
    if route == "datetime":
        parts = _datetime_parts(gold_text)
        if parts is None:
            route = "id"  # an unreadable gold date: exact normalised comparison
        else:
            precision = _gold_precision(parts)
    gold_value = canonical_value(route, gold_text, task=task, precision=precision) or gold_text
    values = _values(route, answer, task=task, precision=precision)
    ok = values == {gold_value}
    if not ok and route == "yes_no" and gold_text in ("0", "1"):
        ok = _values("count", answer, task=task, precision=0) == {gold_text}
    return (SetMetrics.one() if ok else SetMetrics.zero()), sorted(values), [gold_value]


def canonical_names(items: list[str], *, task: str) -> frozenset[str]:
    """Multi-answer MM items mapped through the closed vocabulary (unknown names kept as-is)."""
    return frozenset(v for v in (canonical_value("name", normalize_text(i), task=task) for i in items) if v)
