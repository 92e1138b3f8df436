"""The question browser's data: trajectory blobs streamed from ``results.jsonl`` files, and the
compact index (one entry per benchmark, model and question) the page filters and pages through."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from ..runner import ResultRow
from ..scoring import QuestionScore
from ._assets_store import ImageTable, SharedTexts
from ._blobs import blob_element
from ._plots import mode_name
from ._trajectory import row_payload

OUTCOMES = ("right", "wrong", "invalid", "error")
"""Outcome of one mode on one question: ``right`` (mean F1 = 1), ``wrong`` (answered, F1 < 1, partial
credit included), ``invalid`` (no valid answer: ``no_answer`` or ``missing``), ``error`` (infrastructure
error)."""

QuestionKey = tuple[str, str, str, str]
"""``(benchmark, mode, model, qid)``."""


@dataclass(slots=True)
class TrajectoryIndex:
    """What streaming the result files learned: the blob ids of each question's runs, raw labels."""

    blobs: dict[QuestionKey, list[tuple[int, str]]] = field(default_factory=dict)
    """(benchmark, mode, model, qid) → [(run_index, blob id)], sorted by run index."""
    gold: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(benchmark, qid) → gold labels as the result row recorded them (not normalised)."""
    answers: dict[QuestionKey, list[str] | None] = field(default_factory=dict)
    """The answer of each question's first run, as recorded."""
    bad_rows: list[str] = field(default_factory=list)
    """``file:line: problem`` of rows that could not be read (their trajectories are not shown)."""


def outcome(question: QuestionScore) -> str:
    """One of :data:`OUTCOMES` for a scored question (mean over its runs)."""
    if question.status == "infra_error":
        return "error"
    if question.status in ("no_answer", "missing"):
        return "invalid"
    return "right" if question.f1 >= 1 - 1e-9 else "wrong"


def _read_rows(path: Path, bad: list[str]) -> Iterable[ResultRow]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield ResultRow.model_validate_json(line)
            except ValidationError as err:
                first = err.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "row"
                bad.append(f"{path}:{number}: field {where!r}: {first['msg']}")


def write_trajectories(out: TextIO, files: Sequence[tuple[Path, Path]], run_keys: set[tuple[str, str, str]],
                       texts: SharedTexts, images: ImageTable) -> TrajectoryIndex:
    """Write one blob per result row of ``files`` (``(results.jsonl, results root)`` pairs) to ``out``.

    Rows of runs not in ``run_keys`` are skipped (they belong to no scored run of the report); rows
    that do not validate as :class:`~clinseek.runner.ResultRow` are listed in ``bad_rows``.
    """
    index = TrajectoryIndex()
    count = 0
    for path, root in files:
        roots = [path.parent, root, Path.cwd()]
        for row in _read_rows(path, index.bad_rows):
            if (row.benchmark, row.mode, row.model) not in run_keys:
                continue
            blob_id = f"t{count}"
            count += 1
            out.write(blob_element(blob_id, row_payload(row, texts, images, roots)))
            key = (row.benchmark, row.mode, row.model, row.qid)
            index.blobs.setdefault(key, []).append((row.run_index, blob_id))
            index.gold.setdefault((row.benchmark, row.qid), row.gold)
            if row.run_index == min(i for i, _ in index.blobs[key]):
                index.answers[key] = row.answer
    for runs in index.blobs.values():
        runs.sort()
    return index


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that orders ``q2`` before ``q10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


class _Lookup:
    def __init__(self) -> None:
        self.names: list[str] = []
        self._ids: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        if name not in self._ids:
            self._ids[name] = len(self.names)
            self.names.append(name)
        return self._ids[name]


def _mode_entry(q: QuestionScore | None, index: TrajectoryIndex) -> list[Any] | None:
    if q is None:
        return None
    key = (q.benchmark, q.mode, q.model, q.qid)
    answer = index.answers.get(key) if key in index.answers else (q.runs[0].pred if q.runs else None)
    blobs = [blob for _, blob in index.blobs.get(key, [])]
    route = q.runs[0].route if q.runs else None
    return [OUTCOMES.index(outcome(q)), round(q.f1, 4), "; ".join(answer or []), blobs, q.status,
            round(q.precision, 4), round(q.recall, 4), round(q.exact_match, 4), route]


def build_index(questions: Sequence[QuestionScore], index: TrajectoryIndex) -> dict[str, Any]:
    """The browser's index: lookup tables and one row per (benchmark, model, qid).

    A row is ``[bench, model, qid, task, category, task_type, gold, curated, agent]`` where bench,
    model, task, category and task_type index the lookup lists, and each mode entry is ``null`` or
    ``[outcome (index into outcomes), F1, answer text, [blob ids], status, precision, recall, exact
    match, scoring route]`` (scores are the question's means over its scored runs).
    """
    by_key: dict[tuple[str, str, str], dict[str, QuestionScore]] = {}
    for q in questions:
        by_key.setdefault((q.benchmark, q.model, q.qid), {})[q.mode] = q
    lookups = {name: _Lookup() for name in ("benches", "models", "tasks", "categories", "types")}
    rows = []
    for (bench, model, qid), modes in sorted(by_key.items(), key=lambda kv: (kv[0][0], natural_key(kv[0][2]), kv[0][1])):
        any_q = modes.get("agent") or modes["curated"]
        gold = index.gold.get((bench, qid)) or (any_q.runs[0].gold if any_q.runs else [])
        rows.append([lookups["benches"](bench), lookups["models"](model), qid, lookups["tasks"](any_q.task),
                     lookups["categories"](any_q.category), lookups["types"](any_q.task_type), "; ".join(gold),
                     _mode_entry(modes.get("curated"), index), _mode_entry(modes.get("agent"), index)])
    names = {k: v.names for k, v in lookups.items()}
    agent_titles = [mode_name("agent", m) for m in names["models"]]  # a scripted baseline is not ClinSeekAgent
    return {"outcomes": list(OUTCOMES), **names, "agent_titles": agent_titles, "rows": rows}
