"""The reference's scoring rules that run offline, to show how far clinseek's scorer moves each number.

``clinseek score --scorer reference`` scores every run a second time with these rules and reports
the result beside clinseek's F1 (``f1_reference``), never mixed into it. The rules
(ref_data_scoring.md §3; the paper's tables come from ``reorganize_results.py``):

- text and AgentEHR-Bench rows: set F1 of the finish call's items against the gold, both
  ``strip().lower()``, empty items dropped, 0 when either side is empty. No single-label rule:
  ``["yes", "no"]`` on a binary task scores 0.667. AgentEHR-Bench gold sets also hold every item's
  ``atc_name`` (the reference's ``evaluate_results.py``);
- multimodal rows with two or more gold items: the same set F1; with ``ReferenceRules.embed`` set
  (the reference maps with ``all-MiniLM-L6-v2`` by default), each predicted item is first replaced by
  the nearest name of that task's vocabulary (the union of the gold names of the task in the scored
  rows, as the reference builds it) when the cosine similarity is at least 0.55, and both sides are
  then compared with inner whitespace collapsed;
- multimodal rows with one gold item: the LLM judge's verdict (1 or 0) when ``clinseek score
  --judge`` ran; without a judge, exact match of the items against the gold (``strip().lower()``;
  one item, equal to the gold), a stand-in the report names;
- a run without an answer, and an infrastructure error, scores 0 (the reference does not tell them
  apart); a question with no result row is dropped from the means (not counted as 0).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._model import ScoreInput

Embed = Callable[[list[str]], Any]
"""Sentence embeddings of a list of strings: an array-like with one row per string."""
_AGENTEHR = frozenset({"agent_ehr_bench", "agentehr-bench"})


@dataclass(frozen=True, slots=True)
class ReferenceRules:
    """Settings of the reference's multimodal rules.

    Attributes:
        embed: the embedding model of the vocabulary mapping (``None``: no mapping, the reference's
            ``--no-vocab``).
        embed_name: what ``embed`` is, for the report.
        threshold: the least cosine similarity for a replacement (the reference's 0.55).
        skip_tasks: tasks never mapped (the reference's ``ehrxqa_table``).
        judge: the LLM judge's name when its verdicts grade single answers (set by ``judge_scored``).
    """

    embed: Embed | None = None
    embed_name: str | None = None
    threshold: float = 0.55
    skip_tasks: frozenset[str] = field(default_factory=lambda: frozenset({"ehrxqa_table"}))
    judge: str | None = None

    def describe(self) -> str:
        """One line for ``summary.md``: which rules ran."""
        vocab = (f"vocabulary mapping with {self.embed_name or 'the given embedding'} (cosine >= {self.threshold})"
                 if self.embed is not None else "no vocabulary mapping")
        single = f"LLM judge {self.judge}" if self.judge else "exact match (no judge configured)"
        return (f"reference rules: set F1 over strip().lower() items (['yes','no'] on a binary task = 0.667), "
                f"questions without results dropped; multimodal single answers: {single}; multimodal lists: {vocab}")


def _norm(items: Sequence[str]) -> set[str]:
    return {s.strip().lower() for s in items if s.strip()}


def _collapse(items: Sequence[str]) -> set[str]:
    return {" ".join(s.split()).lower() for s in items if s.strip()}


def reference_set_f1(pred: set[str], gold: set[str]) -> float:
    """The reference's set F1: 2PR/(P+R) over exact items; 0 when either set is empty or nothing matches."""
    if not pred or not gold:
        return 0.0
    hits = len(pred & gold)
    if not hits:
        return 0.0
    precision, recall = hits / len(pred), hits / len(gold)
    return 2 * precision * recall / (precision + recall)


class ReferenceScorer:
    """Scores rows with :class:`ReferenceRules`; built over all the rows to score (the vocabularies)."""

    def __init__(self, rows: Sequence[ScoreInput], rules: ReferenceRules | None = None) -> None:
        self.rules = rules or ReferenceRules()
        vocab: dict[str, set[str]] = defaultdict(set)
        for row in rows:
            if row.task_type == "multimodal" and len(row.gold) >= 2:
                vocab[row.task].update(g.strip() for g in row.gold if g.strip())
        self._vocab = {task: sorted(names) for task, names in vocab.items()}
        self._vectors: dict[str, NDArray[np.float64]] = {}

    def _unit(self, texts: Sequence[str]) -> NDArray[np.float64]:
        assert self.rules.embed is not None
        vectors = np.asarray(self.rules.embed(list(texts)), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)

    def _mapped(self, task: str, items: Sequence[str]) -> list[str]:
        names = self._vocab.get(task)
        if self.rules.embed is None or not names or not items or task in self.rules.skip_tasks:
            return list(items)
        if task not in self._vectors:
            self._vectors[task] = self._unit(names)
        similarity = self._unit(items) @ self._vectors[task].T
        best = similarity.argmax(axis=1)
        return [names[j] if similarity[i, j] >= self.rules.threshold else items[i] for i, j in enumerate(best)]

    def score(self, row: ScoreInput, judge_match: bool | None = None) -> float:
        """The reference's F1 of one result row (see the module docstring)."""
        answer = [a for a in row.answer or [] if a.strip()]
        if not answer:
            return 0.0
        if row.task_type != "multimodal":
            gold = _norm(row.gold)
            if row.benchmark in _AGENTEHR:
                gold |= _norm([a for aliases in row.gold_aliases for a in aliases])
            return reference_set_f1(_norm(answer), gold)
        if len(row.gold) == 1:
            if judge_match is not None:
                return float(judge_match)
            return float(_norm(answer) == _norm(row.gold))
        if self.rules.embed is None or row.task in self.rules.skip_tasks:
            return reference_set_f1(_norm(answer), _norm(row.gold))
        return reference_set_f1(_collapse(self._mapped(row.task, answer)), _collapse(row.gold))
