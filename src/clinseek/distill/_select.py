"""The export filters applied to one result row: a :class:`Sample` or a :class:`Refusal` with every reason."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from ..agent import is_scripted_baseline
from ..records import ResultRow
from ..runner import model_slug
from ._convert import Converted, canonical_json, convert_messages, sha256_text
from ._exclude import Exclusions
from ._model import ExportFilters, Refusal, RefusalReason, Sample
from ._sources import RunFile, sample_f1
from ._tokenizer import SampleTokenCounter

_MAX_DETAIL = 5
"""Protocol errors listed per refused run (the count is always given)."""


@dataclass(frozen=True, slots=True)
class Selector:
    """Everything the filters need besides the row: settings, exclusions, token counter."""

    filters: ExportFilters
    exclusions: Exclusions
    counter: SampleTokenCounter


def split_of(row: ResultRow, filters: ExportFilters) -> Literal["train", "val"]:
    """``val`` when the patient's hash (``split_seed``, ``subject_id``; the qid without one) falls under
    ``val_fraction``, else ``train``: every run of one patient lands in the same split."""
    if filters.val_fraction <= 0:
        return "train"
    key = f"{filters.split_seed}:{row.subject_id if row.subject_id is not None else row.qid}"
    draw = int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) / 16**12
    return "val" if draw < filters.val_fraction else "train"


def sample_id(row: ResultRow) -> str:
    """``<benchmark>/<model-slug>/<config-hash[:8]>/<qid>/run<run_index>``."""
    return f"{row.benchmark}/{model_slug(row.model)}/{row.config_hash[:8]}/{row.qid}/run{row.run_index}"


class _Verdict:
    def __init__(self) -> None:
        self.reasons: list[RefusalReason] = []
        self.detail: dict[str, list[str]] = {}

    def refuse(self, reason: RefusalReason, *detail: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)
        self.detail.setdefault(reason, []).extend(detail)


def _refusal(row: ResultRow, run: RunFile, verdict: _Verdict) -> Refusal:
    return Refusal(qid=row.qid, run_index=row.run_index, benchmark=row.benchmark, teacher_model=row.model,
                   source_run=str(run.results), reasons=verdict.reasons, detail=verdict.detail)


def _check_outcome(row: ResultRow, run: RunFile, selector: Selector, verdict: _Verdict) -> float:
    filters = selector.filters
    if is_scripted_baseline(row.model) and not filters.include_baselines:
        verdict.refuse("scripted_baseline", f"{row.model} is a scripted baseline, not a model "
                                            "(--include-baselines to export it anyway)")
    if row.status == "infra_error":
        verdict.refuse("infra_error", f"infrastructure error: {row.error_type or row.error}")
    if filters.require_finish and not (row.completed and row.stop_reason == "finish_tool_call"):
        verdict.refuse("not_finished", f"stop_reason {row.stop_reason}")
    try:
        f1 = sample_f1(row, run.manifest)
    except ValueError as err:
        verdict.refuse("malformed_trajectory", f"cannot be scored: {err}")
        return 0.0
    if f1 < filters.min_f1:
        verdict.refuse("below_min_f1", f"F1 {f1:.3f} < {filters.min_f1}")
    leaks = selector.exclusions.match(row.qid, row.subject_id, row.prediction_time,
                                      same_subject=filters.exclude_subjects)
    if leaks:
        verdict.refuse("in_excluded_benchmark", *leaks)
    return f1


def _check_trajectory(row: ResultRow, conv: Converted, tools: list[dict[str, Any]], selector: Selector,
                      verdict: _Verdict) -> int:
    if conv.protocol_errors:
        errors = conv.protocol_errors
        verdict.refuse("protocol_errors", f"{len(errors)} tool-protocol errors", *errors[:_MAX_DETAIL])
    if conv.has_images:
        verdict.refuse("has_images", "the trajectory carries images (the export is text-only)")
    if row.compactions:
        verdict.refuse("compacted_context", f"{row.compactions} compactions replaced tool outputs the model had seen")
    try:
        n_tokens = selector.counter.count(conv.messages, tools)
    except ValueError as err:
        verdict.refuse("malformed_trajectory", str(err))
        return 0
    limit = selector.filters.max_tokens
    if n_tokens > limit:
        verdict.refuse("too_long", f"{n_tokens} {selector.counter.method} tokens > {limit}")
    return n_tokens


def select_row(row: ResultRow, run: RunFile, tools: list[dict[str, Any]], selector: Selector) -> Sample | Refusal:
    """Apply every filter to ``row`` of ``run``; ``tools`` are the run's wire-named schemas.

    Curated (one-shot) rows are refused as ``not_agent_mode`` without further checks. Otherwise every
    filter is evaluated and every reason that applies is recorded.
    """
    verdict = _Verdict()
    if row.mode != "agent":
        verdict.refuse("not_agent_mode", "curated (one-shot) runs have no tool trajectory")
        return _refusal(row, run, verdict)
    f1 = _check_outcome(row, run, selector, verdict)
    try:
        conv = convert_messages(row.messages, run.manifest.tools, provider=selector.filters.wire_provider,
                                keep_reasoning=selector.filters.keep_reasoning)
    except ValueError as err:
        verdict.refuse("malformed_trajectory", str(err))
        return _refusal(row, run, verdict)
    n_tokens = _check_trajectory(row, conv, tools, selector, verdict)
    if verdict.reasons:
        return _refusal(row, run, verdict)
    return Sample(
        sample_id=sample_id(row), split=split_of(row, selector.filters), qid=row.qid, run_index=row.run_index, benchmark=row.benchmark, task=row.task,
        task_type=row.task_type, category=row.category, subject_id=row.subject_id,
        prediction_time=row.prediction_time, teacher_model=row.model, source_run=str(run.results),
        prompt_version=row.prompt_version, f1=f1, n_tokens=n_tokens, length_method=selector.counter.method,
        n_assistant_turns=conv.assistant_turns, n_tool_calls=conv.tool_calls, n_tool_errors=conv.tool_errors,
        system_sha256=sha256_text(conv.system), tools_sha256=sha256_text(canonical_json(tools)),
        messages=conv.messages, tools=tools,
    )
