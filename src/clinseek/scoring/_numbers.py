"""Reading one number from a short answer: digits or English number words ("three" = 3)."""

from __future__ import annotations

import re
from decimal import Decimal

_UNITS = {
    "zero": 0,
    "none": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "single": 1,
    "once": 1,
    "twice": 2,
    "thrice": 3,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_DIGITS = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_TOKEN = re.compile(r"[a-z]+|\d[\d,.]*|[^\sa-z\d]")


def _words_value(words: list[str]) -> int:
    total, current = 0, 0
    for word in words:
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        else:
            total += max(current, 1) * _SCALES[word]
            current = 0
    return total + current


def _word_numbers(text: str) -> list[int]:
    found: list[int] = []
    run: list[str] = []
    for token in _TOKEN.findall(text.replace("-", " ")):
        if token in _UNITS or token in _TENS or token in _SCALES or (token == "and" and run):
            run.append(token)
            continue
        if run:
            found.append(_words_value([w for w in run if w != "and"]))
            run = []
    if run:
        found.append(_words_value([w for w in run if w != "and"]))
    return found


def parse_decimal(text: str) -> Decimal | None:
    """The single number a normalised answer states, exactly (``Decimal``), or ``None`` when it
    states none or several.

    Digits (``"3"``, ``"3.0"``, ``"1,200"``) and English number words up to millions
    (``"three"``, ``"twenty-one"``, ``"one hundred and five"``, ``"none"`` = 0) are read; units
    and other words are ignored (``"2 nodules"`` → 2). ``"2 or 3"`` → ``None``. ``"3"`` and
    ``"3.0"`` are the same number; ``"1.5"`` and ``"1.500001"`` are not.
    """
    digits = [Decimal(m.replace(",", "")) for m in _DIGITS.findall(text)]
    words = [Decimal(w) for w in _word_numbers(re.sub(_DIGITS, " ", text))]
    values = set(digits + words)
    return values.pop() if len(values) == 1 else None


def parse_number(text: str) -> float | None:
    """:func:`parse_decimal` as a float (to compare numbers exactly, use ``parse_decimal``)."""
    value = parse_decimal(text)
    return None if value is None else float(value)


def decimal_text(value: Decimal) -> str:
    """The canonical text of a number, exact and without exponent: ``Decimal("1.50")`` → ``"1.5"``,
    ``Decimal("1E+6")`` → ``"1000000"``, zero → ``"0"``."""
    if value == 0:
        return "0"
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
