"""On-disk row models of the released manifests: ClinSeek-Bench-Text, ClinSeek-Bench-MM, AgentEHR-Bench.

These models accept the rows *as released*, with every known variant (see
``reference/ref_data_scoring.md`` §1): gold answers under ``label``, ``ground_truth`` or
``output``; labels as a string, a list of strings or a list of ``{name, atc_name, value}``
objects; CXR asset paths prefixed with ``EHRXQAOriginalLinked_v1/`` or
``MedModOriginalLinked_v1/``. Unknown extra fields are kept (``extra="allow"``) because the
releases added fields over time; :func:`clinseek.bench.validate_benchmark` reports them.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

MM_LEAKAGE_POLICY = "multimodal-strict-temporal-scope-v1"
"""The ``leakage_policy_version`` every ClinSeek-Bench-MM row carries (dataset card, v2)."""

_ASSET_PREFIX = re.compile(r"^[A-Za-z0-9]+OriginalLinked_v\d+/")


def strip_asset_prefix(path: str) -> str:
    """Remove a release packaging prefix such as ``EHRXQAOriginalLinked_v1/`` from an asset path.

    The remainder is relative to a MIMIC-CXR root (``mimic-cxr/2.0.0/files/pNN/...``).
    """
    return _ASSET_PREFIX.sub("", path, count=1)


class LabelItem(BaseModel):
    """One gold item in the object form of a label.

    Attributes:
        name: the answer string (a finding, a phenotype, ``"yes"``, a count as text, ...).
        atc_name: an alternative ATC class name (AgentEHR prescriptions; older EHR-Bench variants).
        value: a numeric value for count / duration answers (MM ``{"name": "2", "value": 2}``).
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    name: str
    atc_name: str | None = None
    value: float | int | str | None = None


RawLabel = str | list[str] | list[LabelItem]
"""A gold answer as released: ``"yes"``, ``["Glucose", "Sodium"]`` or ``[{"name": ...}, ...]``."""


def _parse_time(value: Any) -> Any:
    """Accept ``YYYY-MM-DD HH:MM:SS`` (and ISO ``T``) strings; anything else is left to pydantic, but a
    number: pydantic would read it as Unix seconds, an aware real-world instant, and the error would be
    about its time zone."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(f"expected a time as 'YYYY-MM-DD HH:MM:SS' (MIMIC's shifted clock), got the number {value!r}")
    if isinstance(value, str) and value.strip():
        text = value.strip().replace("T", " ")
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError as err:
            raise ValueError(f"expected a time as 'YYYY-MM-DD HH:MM:SS', got {value!r}") from err
    return value


class _Row(BaseModel):
    """Fields shared by every released row."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    qid: str = Field(min_length=1)
    subject_id: int
    hadm_id: int | None = None
    prediction_time: dt.datetime
    task: str = Field(min_length=1)
    category: str | None = None

    _times = field_validator("prediction_time", mode="before")(_parse_time)

    @field_validator("prediction_time")
    @classmethod
    def _naive(cls, value: dt.datetime) -> dt.datetime:
        if value.tzinfo is not None:
            raise ValueError("prediction_time must be naive (MIMIC's shifted clock has no time zone)")
        return value

    @property
    def extra_fields(self) -> tuple[str, ...]:
        """Fields present in the row that the model does not know (newer or foreign releases)."""
        return tuple(sorted(self.model_extra or {}))


class TaskInfo(BaseModel):
    """EHR-Bench ``task_info`` provenance block of a text row (all optional; kept for joins)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    target_key: str | None = None
    event: str | None = None
    metric: str | None = None
    task_type: str | None = None
    task: str | None = None
    target: str | None = None
    label: JsonValue = None
    source_idx: int | None = None
    source_file: str | None = None
    latest_event_time: str | None = None
    prediction_time: str | None = None


class TextRow(_Row):
    """A ClinSeek-Bench-Text row (v1 or v2 release), one element of ``ClinSeek-Bench_text.json``.

    Source: the ClinSeek-Bench dataset card and ``reference/ref_data_scoring.md`` §1.1. ``input``
    and ``question`` (the EHR-Bench curated timeline and prompt) are present in v1 rows only.
    At least one of ``label``, ``ground_truth`` and ``output`` must hold the gold answer.
    """

    task_type: Literal["risk_prediction", "decision_making"]
    latest_event_time: dt.datetime | None = None
    instruction: str | None = None
    candidates: list[str] = Field(default_factory=list)
    label: RawLabel | None = None
    ground_truth: RawLabel | None = None
    output: str | list[str] | None = None
    task_info: TaskInfo | None = None
    source_file: str | None = None
    source_idx: int | None = None
    target_hadm_id: int | None = None
    target_stay_id: int | None = None
    input: str | None = None
    question: str | None = None

    _latest = field_validator("latest_event_time", mode="before")(_parse_time)

    @model_validator(mode="after")
    def _has_gold(self) -> TextRow:
        if self.label is None and self.ground_truth is None and self.output is None:
            raise ValueError("no gold answer: one of 'label', 'ground_truth' or 'output' is required")
        return self


class SnapshotSpec(BaseModel):
    """The ``snapshot_spec`` of a multimodal row: how the question's record view is cut.

    Attributes:
        cutoff_time: equals ``prediction_time``.
        time_policy: ``inclusive_leq_cutoff`` (rows with event time <= cutoff are visible).
        cxr_policy: ``none`` or ``linked_studies_only``.
        table_policy: ``rows_visible_if_event_time_leq_cutoff``.
        cohort_materialization: ``None`` for patient-scope rows (``time_bucket`` for cohort rows).
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    cutoff_time: dt.datetime | None = None
    time_policy: str
    cxr_policy: str = "none"
    table_policy: str | None = None
    cohort_materialization: str | None = None

    _cutoff = field_validator("cutoff_time", mode="before")(_parse_time)


class MultimodalRow(_Row):
    """A ClinSeek-Bench-MM row, one line of ``ClinSeek-Bench_multimodal.jsonl``.

    Source: the dataset card (v2) and ``reference/ref_data_scoring.md`` §1.3. The runner needs
    the temporal-scope fields, so ``scope``, ``snapshot_spec``, ``leakage_policy_version`` and
    the linked CXR ids (``study_ids`` and/or ``dicom_ids``) are required; a row without them is
    rejected.
    """

    source_benchmark: str
    question: str
    scope: Literal["patient_scope", "cohort_scope"]
    snapshot_spec: SnapshotSpec
    leakage_policy_version: str
    study_ids: list[int] | None = None
    dicom_ids: list[str] | None = None
    stay_id: int | None = None
    answer_type: str | None = None
    modalities: list[str] = Field(default_factory=list)
    image_paths: list[str] = Field(default_factory=list)
    report_paths: list[str] = Field(default_factory=list)
    label: RawLabel | None = None
    ground_truth: RawLabel | None = None
    task_family: str | None = None
    source_split: str | None = None
    official_split: str | None = None
    db_path_hint: str | None = None
    input_text: str | None = None
    hide_linked_reports: bool | None = None
    """clinseek extension: ``True`` hides the report text of the linked studies (``cxr.reports``, inlined
    reports, curated package); ``None`` = the default, hidden for the CXR finding tasks (presence,
    enumeration, change: the report states the answer), shown otherwise."""

    @model_validator(mode="after")
    def _complete(self) -> MultimodalRow:
        if self.label is None and self.ground_truth is None:
            raise ValueError("no gold answer: one of 'label' or 'ground_truth' is required")
        if self.study_ids is None and self.dicom_ids is None:
            raise ValueError("linked CXR ids missing: 'study_ids' and/or 'dicom_ids' is required")
        return self


class AgentEHRRow(_Row):
    """An AgentEHR-Bench row (BlueZeros/AgentEHR-Bench, ``MIMICIVAgentBench``).

    The six tasks are diagnoses_ccs, procedures_ccs, labevents, microbiologyevents, prescriptions
    and transfers; gold items are ``{name, atc_name?}`` objects (prescriptions carry both a drug
    name and its ATC class). Upstream rows call the cutoff ``timestamp``; it is accepted as an
    alias of ``prediction_time``. Candidates are not in the prompt: the agent finds them in the
    ``<task>_candidates`` table.
    """

    prediction_time: dt.datetime = Field(validation_alias="timestamp")
    label: RawLabel | None = None
    ground_truth: RawLabel | None = None
    candidates: list[str] = Field(default_factory=list)
    target_hadm_id: int | None = None
    """clinseek extension: the admission whose codes the episode hides (built diagnoses/procedures rows)."""
    source_file: str | None = None
    """``clinseek-build`` for rows drawn by ``clinseek bench build --benchmark agentehr``."""
    source_idx: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _alias_time(cls, data: Any) -> Any:
        if isinstance(data, dict) and "timestamp" not in data and "prediction_time" in data:
            data = {**data, "timestamp": data["prediction_time"]}
            data.pop("prediction_time")
        return data

    @model_validator(mode="after")
    def _has_gold(self) -> AgentEHRRow:
        if self.label is None and self.ground_truth is None:
            raise ValueError("no gold answer: one of 'label' or 'ground_truth' is required")
        return self
