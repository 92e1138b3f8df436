"""Answer handling: validation against candidates and the strict Curated Input ``<answer>`` parser."""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import ClinseekError

_OPEN = "<answer>"
_CLOSE = "</answer>"
_SPACES = re.compile(r"\s+")


class AnswerFormatError(ClinseekError):
    """A curated reply without exactly one well-formed ``<answer>`` block (counted, never guessed)."""


def normalise_item(text: str) -> str:
    """The comparison form of an answer item: Unicode NFKC, trimmed, whitespace collapsed, case-folded.

    The same rule as ``clinseek.scoring`` (``docs/scoring.md``).
    """
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def validate_answer(items: Iterable[str], candidates: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split answer items into (valid, invalid) against the candidate list.

    Valid items are returned in the candidates' own spelling, in the model's order, duplicates
    (after normalisation) dropped. With no candidates every non-empty item is valid. An item that is
    a candidate only once its HTML entities are unescaped (``Alzheimer&#x27;s``: servers that
    escape the prompt, and the model copies what it saw) is that candidate.
    """
    index = {normalise_item(c): c for c in candidates}
    valid: list[str] = []
    invalid: list[str] = []
    seen: set[str] = set()
    for item in items:
        key = normalise_item(item)
        if candidates and key not in index and "&" in item and normalise_item(html.unescape(item)) in index:
            key = normalise_item(html.unescape(item))
        if not key or key in seen:
            continue
        seen.add(key)
        if not candidates:
            valid.append(item.strip())
        elif key in index:
            valid.append(index[key])
        else:
            invalid.append(item)
    return valid, invalid


def finish_items(value: Any) -> list[str] | None:
    """The answer items of an ``ehr.finish`` argument value: a list of strings (a bare string is one item).

    Returns ``None`` when the value is neither (the call is then answered with an error).
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    return None


def parse_answer_block(text: str) -> list[str]:
    """Items of the one ``<answer>`` block in ``text``: one per non-empty line, trimmed.

    Strict: no salvage of bullets, JSON or "final answer:" lines (the reference's six-step salvage
    guessed); an empty block is a valid empty answer.

    Raises:
        AnswerFormatError: no block, an unterminated block, or more than one block.
    """
    opens, closes = text.count(_OPEN), text.count(_CLOSE)
    if opens == 0:
        raise AnswerFormatError("the reply has no <answer> block")
    if opens != 1 or closes != 1:
        raise AnswerFormatError(f"the reply must have exactly one <answer> block, found {opens} open / {closes} close tags")
    start = text.index(_OPEN) + len(_OPEN)
    end = text.index(_CLOSE)
    if end < start:
        raise AnswerFormatError("</answer> comes before <answer>")
    return [line.strip() for line in text[start:end].splitlines() if line.strip()]
