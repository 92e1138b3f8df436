"""The one tokenizer of the offline index (documents and queries alike).

Lower-cased alphanumeric runs; a run joined by ``.``, ``-`` or ``/`` is also kept whole without
its separators when it holds a digit, so ``I50.23`` yields ``i5023`` (the MIMIC ``icd_code``) as
well as ``i50`` and ``23``; longer runs also give each adjacent pair (``ICD-10-CM``: ``icd10cm``,
``icd10``, ``10cm``, ``icd``, ``10``, ``cm``). English stop words are dropped and words are Snowball-stemmed
(PyStemmer when installed; otherwise words are kept as they are).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from functools import cache, lru_cache

from bm25s.stopwords import STOPWORDS_EN

_RUN = re.compile(r"[a-z0-9]+(?:[.\-/][a-z0-9]+)*")
_SEP = re.compile(r"[.\-/]")
_COMPOUND = _SEP
_DIGIT = re.compile(r"\d")
_STOP = frozenset(STOPWORDS_EN)
_LINK = re.compile(r"\]\([^)\s]*\)")


_TERMS: dict[str, tuple[str, ...]] = {}


def _term(part: str) -> tuple[str, ...]:
    """Index term(s) of one alphanumeric part: () for a stop word or a lone letter, else its stem."""
    found = _TERMS.get(part)
    if found is None:
        if part in _STOP or (len(part) < 2 and not part.isdigit()):
            found = ()
        else:
            stem = _stemmer() if part.isalpha() else None
            found = (stem(part) if stem else part,)
        _TERMS[part] = found
    return found


@cache
def _stemmer() -> Callable[[str], str] | None:
    try:
        import Stemmer
    except ImportError:
        return None
    stem: Callable[[str], str] = Stemmer.Stemmer("english").stemWord
    return stem


def tokenize(text: str) -> list[str]:
    """Index terms of ``text``, in order (duplicates kept: BM25 counts them).

    The targets of Markdown links (``[text](url)``) are not indexed, only their text.
    """
    out: list[str] = []
    for line in text.splitlines():
        out.extend(_line_terms(line))
    return out


@lru_cache(maxsize=65_536)
def _line_terms(line: str) -> tuple[str, ...]:
    out: list[str] = []
    for run in _RUN.findall(_LINK.sub("]", line).lower()):
        if _COMPOUND.search(run) is None:
            out.extend(_term(run))
            continue
        parts = _SEP.split(run)
        if _DIGIT.search(run):
            out.append("".join(parts))
            if len(parts) > 2:
                out.extend(a + b for a, b in itertools.pairwise(parts))
        for part in parts:
            out.extend(_term(part))
    return tuple(out)
