"""The normalised ``Question`` every later stage (agent, runner, scoring) reads, and the row -> question mapping."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from ..policy import TEXT_POLICY
from ._rows import (
    MM_LEAKAGE_POLICY,
    AgentEHRRow,
    LabelItem,
    MultimodalRow,
    RawLabel,
    TextRow,
    strip_asset_prefix,
)
from ._spec import Benchmark, TaskType
from ._tasks import REPORT_HIDING_CATEGORIES, REPORT_HIDING_TASKS, category_for_mm_task, normalise_category

TEXT_POLICY_VERSION = TEXT_POLICY
"""Episode policy of text questions: an event is visible iff its time is strictly before the cutoff."""


class Question(BaseModel):
    """One benchmark question, normalised from any supported manifest.

    Frozen and strict (``extra="forbid"``): this is the record that crosses from ``bench`` to the
    agent, the runner and the scorer. Times are naive datetimes on MIMIC's shifted clock.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    qid: str
    """Question id, unique within a benchmark (e.g. ``ehr_bench_risk_prediction_329``)."""
    benchmark: Benchmark
    """Which manifest family the row came from."""
    source: str
    """Upstream benchmark of the row: ``ehr_bench``, ``ehrxqa``, ``medmod``, ``agentehr`` or ``clinseek-build``."""
    task: str
    """Task name as in the manifest (``ED_Hospitalization``, ``labevents``, ``ehrxqa_image``, ...)."""
    task_type: TaskType
    category: str | None
    """Card category slug (``mortality``, ``diagnosis``, ``cxr_finding_presence``, ...), ``None`` if unknown."""
    subject_id: int
    hadm_id: int | None = None
    stay_id: int | None = None
    prediction_time: dt.datetime
    """The episode cutoff (naive, MIMIC clock)."""
    policy: str
    """Episode policy version: ``clinseek-text-v1`` or ``multimodal-strict-temporal-scope-v1``."""
    target_hadm_id: int | None = None
    """Admission whose diagnosis/procedure codes are hidden whatever the cutoff."""
    target_stay_id: int | None = None
    """ED stay whose diagnoses are hidden whatever the cutoff."""
    study_ids: tuple[int, ...] = ()
    """Linked MIMIC-CXR studies (multimodal rows); only these exist in the episode."""
    dicom_ids: tuple[str, ...] = ()
    hide_cxr_reports: bool = False
    """The linked studies' report text is hidden (episode ``cxr.reports``, inlined reports, curated package);
    by default for the CXR finding tasks, whose answer the report states (row field ``hide_linked_reports``)."""
    candidates: tuple[str, ...] = ()
    """Allowed answers (``("yes", "no")`` for risk tasks); empty when the agent must find them."""
    label: tuple[str, ...]
    """Gold answer normalised to a list of strings (item names)."""
    label_aliases: tuple[tuple[str, ...], ...] = ()
    """Per gold item, other accepted names (e.g. the ATC class of an AgentEHR prescription); may be empty."""
    label_raw: JsonValue = None
    """The gold answer exactly as released (string, list or list of objects)."""
    answer_type: str | None = None
    instruction: str | None = None
    """The task instruction paragraph (EHR-Bench style)."""
    question_text: str | None = None
    """A pre-rendered question (multimodal rows, EHR-Bench ``question``)."""
    curated_text: str | None = None
    """Curated evidence carried by the row (EHR-Bench ``input``, MM ``input_text``), used verbatim."""
    image_paths: tuple[str, ...] = ()
    """CXR image paths relative to a MIMIC-CXR root (release prefixes stripped)."""
    report_paths: tuple[str, ...] = ()
    modalities: tuple[str, ...] = ()
    source_file: str | None = None
    source_idx: int | None = None


def normalise_label(
    raw: RawLabel | list[dict[str, Any]] | None, *, multi: bool
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Turn a released gold answer into ``(names, aliases)``.

    Args:
        raw: ``"yes"``, ``["a", "b"]``, ``[{"name": .., "atc_name": ..}]`` or an EHR-Bench
            ``output`` string (one item per line for decision tasks).
        multi: split a plain string on new lines (decision-making ``output``).

    Returns:
        The item names (stripped, empty items dropped, order kept, duplicates removed) and, per
        item, its alternative names.
    """
    if raw is None:
        return (), ()
    items: list[tuple[str, tuple[str, ...]]] = []
    if isinstance(raw, str):
        parts = raw.splitlines() if multi else [raw]
        items = [(p, ()) for p in parts]
    else:
        for item in raw:
            if isinstance(item, dict):
                item = LabelItem.model_validate(item)
            if isinstance(item, LabelItem):
                alt: tuple[str, ...] = (
                    (item.atc_name,) if item.atc_name and item.atc_name != item.name else ()
                )
                items.append((item.name, alt))
            else:
                items.append((str(item), ()))
    names: list[str] = []
    aliases: list[tuple[str, ...]] = []
    for name, alt in items:
        text = name.strip()
        if text and text not in names:
            names.append(text)
            aliases.append(tuple(a.strip() for a in alt))
    return tuple(names), tuple(aliases) if any(aliases) else ()


def _dump_raw(raw: RawLabel | str | list[str] | None) -> JsonValue:
    if raw is None or isinstance(raw, str):
        return raw
    return [i.model_dump(exclude_none=True) if isinstance(i, LabelItem) else i for i in raw]


def question_from_text(row: TextRow) -> Question:
    """Normalise a ClinSeek-Bench-Text row (gold from ``label``, else ``ground_truth``, else ``output``)."""
    raw = row.label if row.label is not None else row.ground_truth
    if raw is None:
        raw = row.output
    label, aliases = normalise_label(raw, multi=row.task_type == "decision_making")
    return Question(
        qid=row.qid,
        benchmark="clinseek-bench-text",
        source="clinseek-build" if row.source_file == "clinseek-build" else "ehr_bench",
        task=row.task,
        task_type=row.task_type,
        category=normalise_category(row.category, task=row.task),
        subject_id=row.subject_id,
        hadm_id=row.hadm_id,
        prediction_time=row.prediction_time,
        policy=TEXT_POLICY_VERSION,
        target_hadm_id=row.target_hadm_id,
        target_stay_id=row.target_stay_id,
        candidates=tuple(row.candidates),
        label=label,
        label_aliases=aliases,
        label_raw=_dump_raw(raw),
        answer_type="binary" if row.task_type == "risk_prediction" else "set",
        instruction=row.instruction,
        question_text=row.question,
        curated_text=row.input,
        source_file=row.source_file,
        source_idx=row.source_idx,
    )


def hides_reports(row: MultimodalRow, category: str | None) -> bool:
    """``row.hide_linked_reports`` when set, else True for the CXR finding categories and tasks (the
    registry's ``TaskSpec.hides_linked_reports``)."""
    if row.hide_linked_reports is not None:
        return row.hide_linked_reports
    return category in REPORT_HIDING_CATEGORIES or row.task in REPORT_HIDING_TASKS


def question_from_mm(row: MultimodalRow) -> Question:
    """Normalise a ClinSeek-Bench-MM row; asset prefixes are stripped, ``ground_truth`` preferred to ``label``."""
    raw = row.ground_truth if row.ground_truth is not None else row.label
    label, aliases = normalise_label(raw, multi=False)
    category = normalise_category(row.category, task=row.task) or category_for_mm_task(row.task)
    return Question(
        qid=row.qid,
        benchmark="clinseek-bench-mm",
        source=row.source_benchmark,
        task=row.task,
        task_type="multimodal",
        category=category,
        subject_id=row.subject_id,
        hadm_id=row.hadm_id,
        stay_id=row.stay_id,
        prediction_time=row.prediction_time,
        policy=row.leakage_policy_version or MM_LEAKAGE_POLICY,
        study_ids=tuple(row.study_ids or ()),
        dicom_ids=tuple(row.dicom_ids or ()),
        hide_cxr_reports=hides_reports(row, category),
        label=label,
        label_aliases=aliases,
        label_raw=_dump_raw(raw),
        answer_type=row.answer_type,
        question_text=row.question,
        curated_text=row.input_text,
        image_paths=tuple(strip_asset_prefix(p) for p in row.image_paths),
        report_paths=tuple(strip_asset_prefix(p) for p in row.report_paths),
        modalities=tuple(row.modalities),
    )


def question_from_agentehr(row: AgentEHRRow) -> Question:
    """Normalise an AgentEHR-Bench row (decision making; gold names with ATC aliases)."""
    raw = row.label if row.label is not None else row.ground_truth
    label, aliases = normalise_label(raw, multi=True)
    return Question(
        qid=row.qid,
        benchmark="agentehr-bench",
        source="clinseek-build" if row.source_file == "clinseek-build" else "agentehr",
        task=row.task,
        task_type="decision_making",
        category=normalise_category(row.category, task=row.task),
        subject_id=row.subject_id,
        hadm_id=row.hadm_id,
        prediction_time=row.prediction_time,
        policy=TEXT_POLICY_VERSION,
        target_hadm_id=row.target_hadm_id,
        candidates=tuple(row.candidates),
        label=label,
        label_aliases=aliases,
        label_raw=_dump_raw(raw),
        answer_type="set",
        source_file=row.source_file,
        source_idx=row.source_idx,
    )
