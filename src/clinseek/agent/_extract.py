"""The one answer extractor of both modes: which items a reply answers, and how they were read.

Every answered run records its ``parse_mode`` (docs/agent.md, "Answers and parse modes"):

| parse mode | what was read |
|---|---|
| ``finish_call`` | the ``response`` of an ``ehr.finish`` call (agent mode; read by the loop) |
| ``answer_tag`` | the last ``<answer>…</answer>`` block, one item per line |
| ``response_json`` | the last JSON object in the text with a ``response`` key (also inside ``arguments``) |
| ``final_answer`` | the items after the last "Final Answer:" / "Answer:" cue (also mid-line: "…, the final answer is:"), inline or as a list |
| ``candidate_match`` | (also when the cue's items held no candidate) the last line of the text, when it is a candidate, a list of candidates, or a JSON list of them; when it is a bulleted / numbered item, the whole list it ends |

A line holds several items when it is a JSON (or Python) list of strings, or when it splits at
``,`` / ``;`` / ``and`` into candidates only (candidates with commas in their own names, such as
ICD titles, are kept whole); an ``&lt;answer&gt;`` block (a prompt shown HTML-escaped, llama-cpp-python's chatml-function-calling)
is read as an ``<answer>`` block; an item written with HTML entities (``&#x27;``, ``&amp;``: servers
that escape the prompt) is read as the candidate it escapes.

:func:`extract_answer` reads the text forms in that order (the reference's curated salvage, minus
its guesses: no substring search and no fuzzy match), after moving ``<think>`` /
``<reasoning>`` blocks out of the text (reasoning is never read as an answer). ``finish_call``
in agent mode and ``answer_tag`` in Curated Input mode are the formats each mode asks for
(:data:`STRICT_PARSE_MODES`); the other modes are fallbacks, counted per run by the scorer, which
can also score only the strict ones (``clinseek score --strict``).
"""

from __future__ import annotations

import ast
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..models import split_reasoning
from ._answer import normalise_item

ParseMode = Literal["finish_call", "answer_tag", "response_json", "final_answer", "candidate_match"]
PARSE_MODES: tuple[ParseMode, ...] = ("finish_call", "answer_tag", "response_json", "final_answer", "candidate_match")
"""Every parse mode, the formats each mode asks for first."""
STRICT_PARSE_MODES: dict[str, ParseMode] = {"agent": "finish_call", "curated": "answer_tag"}
"""The format each mode asks for; an answer read any other way is a fallback."""

_ANSWER_BLOCK = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
# a cue opens its line ("Final Answer:", "**Answer:**"), or ends a sentence's start ("So, the final
# answer is:", "my answer:"): "final answer" or "the / my / our answer", never a bare mid-line "answer".
# _CUE_TAIL is matched at each "answer" of the text, _CUE_HEAD on what precedes it on its line.
_CUE_TAIL = re.compile(r"answers?[ \t*_]*(?:is|are)?[ \t*_]*[:：][ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_CUE_HEAD = re.compile(r"(?:^[ \t>#*_]*(?:(?:the|my|our)[ \t]+)?(?:final[ \t]+)?|\b(?:(?:the|my|our)[ \t]+)?final[ \t]+"
                       r"|\b(?:the|my|our)[ \t]+)$", re.IGNORECASE | re.MULTILINE)
_SEPARATOR = re.compile(r"(\s*[,;]\s*(?:and\s+)?|\s+and\s+)", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")
_QUOTES = "\"'`“”‘’*_"


@dataclass(frozen=True, slots=True)
class Extracted:
    """What :func:`extract_answer` read.

    Attributes:
        items: the answer items as written (cleaned of bullets, numbering, quotes and markdown);
            validate them against the candidates with ``validate_answer``.
        parse_mode: how they were read (module docstring).
        well_formed: the reply held exactly one ``<answer>`` block (the Curated Input format).
    """

    items: list[str]
    parse_mode: ParseMode
    well_formed: bool = False


def extract_answer(text: str, candidates: Sequence[str] = ()) -> Extracted | None:
    """The answer in a reply's ``text`` (see the module docstring), or ``None`` when it holds none.

    Args:
        text: the reply text (``<think>`` blocks are moved out first).
        candidates: the question's candidate answers (``candidate_match`` needs them, and they
            decide whether a line such as ``Heparin, Insulin`` is one item or two).
    """
    body, _ = split_reasoning(text)
    if "&lt;answer&gt;" in body.lower() and "<answer>" not in body.lower():  # a prompt shown HTML-escaped
        body = html.unescape(body)
    index = {normalise_item(c) for c in candidates}
    blocks = _ANSWER_BLOCK.findall(body)
    if blocks:
        well_formed = len(blocks) == 1 and body.lower().count("<answer>") == 1
        return Extracted(_lines(blocks[-1], index), "answer_tag", well_formed)
    response = _response_json(body)
    if response is not None:
        return Extracted(response, "response_json")
    cued = _final_answer(body, index)
    if cued and (not index or any(normalise_item(i) in index for i in cued)):
        return Extracted(cued, "final_answer")
    matched = _candidate_match(body, index)  # also when a cue held no candidate ("The answer: it depends")
    if matched:
        return Extracted(matched, "candidate_match")
    return Extracted(cued, "final_answer") if cued else None


def finish_call_items(items: Sequence[str], candidates: Sequence[str]) -> list[str]:
    """The items of an ``ehr.finish`` response read as the text forms read theirs: an item that is not a
    candidate is cleaned (quotes, markdown, a trailing period, HTML entities) and split (a JSON list sent
    as one string, several candidates on one line). Without candidates the items are kept as sent."""
    index = {normalise_item(c) for c in candidates}
    if not index:
        return list(items)
    return [part for item in items for part in ([item] if normalise_item(item) in index else _split(item, index))]


def _clean(item: str, index: set[str]) -> str:
    """An item without bullets, numbering, surrounding quotes / markdown, and a trailing period that
    is not part of a candidate."""
    item = _BULLET.sub("", item).strip().strip(_QUOTES).strip()
    if "&" in item and normalise_item(item) not in index and normalise_item(html.unescape(item)) in index:
        item = html.unescape(item)
    if item and normalise_item(item) not in index and item[-1] in ".;,":  # "Yes." and "**Yes**."
        trimmed = item[:-1].strip().strip(_QUOTES).strip()
        if normalise_item(trimmed) in index:
            item = trimmed
    return item


def _split(line: str, index: set[str]) -> list[str]:
    """One line as items: a JSON (or Python) list of strings; the line itself when it is a candidate
    (or there are no candidates); else its ``,`` / ``;`` / ``and`` parts when they make up candidates
    only (a candidate may hold those separators itself); else the line."""
    stripped = line.strip()
    listed = _string_list(stripped, index)
    if listed is not None:
        return listed
    item = _clean(stripped, index)
    if not item or not index or normalise_item(item) in index:
        return [item] if item else []
    pieces = _SEPARATOR.split(item)  # piece, separator, piece, ...
    parts = _segment(pieces, index) if len(pieces) > 1 else None
    return parts if parts else [item]


_MAX_SEPARATORS_IN_A_CANDIDATE = 16


def _segment(pieces: list[str], index: set[str]) -> list[str] | None:
    """``pieces`` (pieces at even positions, separators between) as candidates only, the longest
    candidate first; ``None`` when they are not (dynamic programming from the end: linear in the pieces)."""
    n = len(pieces)
    # step[start]: (item, next start) of a segmentation of pieces[start:] into candidates; n: the end
    step: dict[int, tuple[str, int] | None] = {n + 1: None}
    done = {n, n + 1}
    for start in range(n - 1, -1, -2):
        step[start] = None
        for end in range(min(n, start + 2 * _MAX_SEPARATORS_IN_A_CANDIDATE + 1), start, -2):
            if end + 1 not in done or (end + 1 < n and step.get(end + 1) is None):
                continue
            item = _clean("".join(pieces[start:end]), index)
            if item and normalise_item(item) in index:
                step[start] = (item, end + 1)
                break
        done.add(start)
    items: list[str] = []
    at = 0
    while at < n:
        found = step.get(at)
        if found is None:
            return None
        items.append(found[0])
        at = found[1]
    return items


def _string_list(text: str, index: set[str]) -> list[str] | None:
    """The items of ``text`` when it is one JSON or Python list of strings, else ``None``."""
    if not (text.startswith("[") and text.endswith("]")):
        return None
    value = _json(text)
    if value is None:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in (_clean(str(v), index) for v in value) if v]
    return None


def _lines(block: str, index: set[str]) -> list[str]:
    listed = _string_list(block.strip(), index)  # one list over several lines
    if listed is not None:
        return listed
    return [item for line in block.splitlines() if line.strip() for item in _split(line, index)]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested past the recursion limit
        return None


def _response_json(text: str) -> list[str] | None:
    """The ``response`` of the last JSON object holding one (at top level or under ``arguments``)."""
    decoder = json.JSONDecoder()
    found: list[str] | None = None
    at = text.find("{")
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            at = text.find("{", at + 1)
            continue
        items = _response_items(value)
        if items is not None:
            found = items
        at = text.find("{", end if isinstance(value, dict) else at + 1)
    return found


def _response_items(value: Any) -> list[str] | None:
    if not isinstance(value, dict):
        return None
    if "response" not in value and isinstance(value.get("arguments"), dict):
        value = value["arguments"]
    response = value.get("response")
    if isinstance(response, str) and response.strip():
        return [response.strip()]
    if isinstance(response, list) and all(isinstance(v, str) for v in response):
        return [v.strip() for v in response if v.strip()]
    return None


_ANSWER_WORD = re.compile(r"answer", re.IGNORECASE)


def _cues(text: str) -> list[re.Match[str]]:
    """The answer cues of ``text``, in order (one per line, its first): each "answer" followed by a
    colon (:data:`_CUE_TAIL`) whose line before it is a cue's head (:data:`_CUE_HEAD`)."""
    found: list[re.Match[str]] = []
    done_line = -1
    for word in _ANSWER_WORD.finditer(text):
        line = text.rfind("\n", 0, word.start()) + 1
        if line == done_line:
            continue
        cue = _CUE_TAIL.match(text, word.start())
        if cue is not None and _CUE_HEAD.search(text, line, word.start()) is not None:
            found.append(cue)
            done_line = line
    return found


def _final_answer(text: str, index: set[str]) -> list[str]:
    """Items after the last answer cue: the rest of its line, then the list lines right below it."""
    cues = _cues(text)
    if not cues:
        return []
    cue = cues[-1]
    if not cue.group(1).strip():  # "Final Answer:" and a list over the next lines
        decoded = _json_prefix(text[cue.end():].lstrip())
        listed = _string_list(json.dumps(decoded), index) if isinstance(decoded, list) else None
        if listed:
            return listed
    items = _split(cue.group(1), index) if cue.group(1).strip().strip(_QUOTES) else []
    for line in text[cue.end():].lstrip("\n").splitlines():
        if not line.strip() or not _BULLET.match(line):
            break
        items += _split(line, index)
    return items


def _json_prefix(text: str) -> Any:
    """The JSON value ``text`` starts with, else ``None``."""
    try:
        return json.JSONDecoder().raw_decode(text)[0]
    except (ValueError, RecursionError):
        return None


def _candidate_match(text: str, index: set[str]) -> list[str]:
    """The last non-empty line when all of its items are candidates; when it is a bulleted or numbered
    item, the list of such lines it ends, when all of their items are; ``[]`` otherwise."""
    if not index:
        return []
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    last = [lines[-1]]
    if _BULLET.match(lines[-1]):
        for line in reversed(lines[:-1]):
            if not _BULLET.match(line):
                break
            last.insert(0, line)
    items = [item for line in last for item in _split(line, index)]
    return items if items and all(normalise_item(i) in index for i in items) else []


__all__ = ["PARSE_MODES", "STRICT_PARSE_MODES", "Extracted", "ParseMode", "extract_answer", "finish_call_items"]
