"""Typed records of a distillation dataset: samples, refusals, source runs, filters and the card."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

LengthMethod = Literal["tokenizer", "approximate"]
"""How ``n_tokens`` was measured: the target model's tokenizer and chat template, or the
approximate count (characters of the JSON messages and tools / 4, rounded up)."""

RefusalReason = Literal[
    "not_agent_mode",
    "infra_error",
    "not_finished",
    "below_min_f1",
    "protocol_errors",
    "has_images",
    "compacted_context",
    "too_long",
    "in_excluded_benchmark",
    "malformed_trajectory",
    "scripted_baseline",
]
"""Why a run was not exported (a run may have several reasons; all are recorded)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ExportFilters(_Frozen):
    """The filters of one export, recorded verbatim in the dataset card."""

    min_f1: float = 0.5
    """Keep runs whose per-sample F1 (``clinseek.scoring``, deterministic) is at least this."""
    require_finish: bool = True
    """Keep only runs that ended on an accepted ``ehr.finish`` call (``stop_reason`` finish_tool_call)."""
    max_tokens: int = 52_000
    """Keep runs whose rendered length (system, tools, all turns) is at most this many tokens (the
    paper's 52k limit); longer runs are dropped whole, never cut."""
    tokenizer: str | None = None
    """Local Hugging Face tokenizer directory used to measure lengths; ``None`` = approximate count."""
    wire_provider: str = "openai"
    """Provider whose tool-name spelling the samples use (``clinseek.models.WIRE_NAME_RULES``): the
    names a model served behind that provider's API sees (``ehr.finish`` → ``ehr__finish``)."""
    keep_reasoning: bool = False
    """Keep the teacher's reasoning text as ``reasoning_content`` on assistant turns."""
    exclude_benchmarks: list[str] = Field(default_factory=list)
    """Benchmarks (manifest files or directories) whose questions may not be trained on."""
    exclude_subjects: bool = False
    """Also refuse every run on a patient who appears anywhere in an excluded benchmark (stricter
    than the default rule: same qid, or same subject_id and prediction_time)."""
    val_fraction: float = Field(default=0.0, ge=0.0, lt=1.0)
    """Share of patients whose samples go to the validation split (by a hash of subject_id, so no
    patient is in both splits)."""
    split_seed: int = 42
    """Seed of the patient-level split hash."""
    include_baselines: bool = False
    """Also export runs of the scripted baselines (``baseline:*``). Off: their trajectories are fixed
    rules, not a model's reasoning (``baseline:null`` never looks at the EHR), so they are refused
    (reason ``scripted_baseline``) rather than silently becoming training data."""


class Sample(_Frozen):
    """One exported trajectory: OpenAI-style messages, the tool schemas offered, and provenance.

    ``messages`` are ``{"role": "system"|"user", "content"}``, ``{"role": "assistant", "content",
    "tool_calls": [{"id", "type": "function", "function": {"name", "arguments": {...}}}]}`` (arguments
    are objects) and ``{"role": "tool", "tool_call_id", "content"}``; tool names use the wire names of
    ``ExportFilters.wire_provider``. ``tools`` are the OpenAI function schemas of the run's tools with
    the same names. The gold label is never part of a sample.
    """

    schema_version: Literal[1] = 1
    sample_id: str
    """``<benchmark>/<model-slug>/<config-hash[:8]>/<qid>/run<run_index>``: unique in a dataset."""
    split: Literal["train", "val"] = "train"
    """``val`` for the patients drawn by ``ExportFilters.val_fraction``; a patient is never in both."""
    qid: str
    run_index: int
    benchmark: str
    task: str
    task_type: str
    category: str | None = None
    subject_id: int | None = None
    prediction_time: str | None = None
    """ISO 8601, naive, MIMIC's shifted clock (the episode cutoff)."""
    teacher_model: str
    """``provider:model`` that produced the trajectory."""
    source_run: str
    """Results file the trajectory came from (as listed in the card's ``sources``)."""
    prompt_version: str
    f1: float
    """Per-sample F1 of the teacher's answer (``clinseek.scoring.score_sample``)."""
    n_tokens: int
    length_method: LengthMethod
    n_assistant_turns: int
    n_tool_calls: int
    n_tool_errors: int
    """Tool results that were errors the model reacted to (kept: they teach recovery)."""
    system_sha256: str
    """SHA-256 of the system prompt text (the card lists each distinct prompt)."""
    tools_sha256: str
    """SHA-256 of the canonical JSON of ``tools``."""
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]


class Refusal(_Frozen):
    """A run that was not exported, with every reason that applied."""

    qid: str
    run_index: int
    benchmark: str
    teacher_model: str
    source_run: str
    reasons: list[RefusalReason]
    detail: dict[str, list[str]] = Field(default_factory=dict)
    """Per reason, what exactly failed (``{"below_min_f1": ["F1 0.333 < 0.5"]}``, the excluded
    question a leak matched, the first protocol errors, ...)."""


class SourceRun(_Frozen):
    """One results file read by an export."""

    results: str
    """Path of the ``results.jsonl`` as given (resolved)."""
    manifest_sha256: str | None
    """SHA-256 of the ``run_manifest.json`` beside it (``None`` when absent)."""
    benchmark: str
    mode: str
    model: str
    config_hash: str | None
    prompt_version: str | None
    git_commit: str | None
    rows: int
    exported: int
    torn_lines: int
    """Lines of the results file that were not a complete valid row (skipped)."""


class PromptRecord(_Frozen):
    """One distinct (system prompt, tool set) the exported samples were trained on."""

    system_sha256: str
    tools_sha256: str
    prompt_version: str
    samples: int
    system: str
    tools: list[dict[str, Any]]


class TokenStats(_Frozen):
    """Token counts of one split (``length_method`` of the card says how they were measured)."""

    samples: int
    total: int
    mean: float
    max: int


class DatasetCard(_Frozen):
    """``card.json``: what a dataset holds and exactly how it was made (``README.md`` renders it)."""

    schema_version: Literal[1] = 1
    clinseek_version: str
    filters: ExportFilters
    length_method: LengthMethod
    tokenizer_sha256: str | None = None
    """Fingerprint of the tokenizer directory that measured lengths (``None``: approximate)."""
    samples: int
    refused: int
    per_task: dict[str, int]
    """Exported samples per task."""
    per_split: dict[str, int] = Field(default_factory=dict)
    """Exported samples per split (``train``, ``val``)."""
    refused_by_reason: dict[str, int]
    """Refused runs per reason (a run with two reasons counts under both)."""
    teacher_models: list[str]
    sources: list[SourceRun]
    prompts: list[PromptRecord]
    """Every distinct system prompt and tool set in the samples: serve the model with these."""
    excluded_questions: int
    """Questions in the excluded benchmarks (qids and (subject_id, prediction_time) pairs refused)."""
    leakage_refusals: list[str] = Field(default_factory=list)
    """``sample_id`` of every run refused because its question is in an excluded benchmark."""
    files: dict[str, str] = Field(default_factory=dict)
    tokens: dict[str, TokenStats] = Field(default_factory=dict)
    """Per split: samples, total, mean and longest sample in tokens (``length_method``; older cards: empty)."""
    """SHA-256 of each data file written (``train.jsonl``, ``train.parquet``, ``refused.jsonl``, and
    ``val.jsonl``/``val.parquet`` when there is a validation split)."""
