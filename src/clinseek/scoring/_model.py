"""Typed records of the scorer: its input view of a result row and its per-sample output."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..bench import TaskType as TaskType
from ..records import Mode, Status

AnswerType = Literal["yes_no", "count", "datetime", "id", "name", "list", "set", "binary"]
Route = Literal["binary", "set", "yes_no", "count", "datetime", "id", "name"]
ScoredStatus = Literal["answered", "no_answer", "infra_error", "missing", "invalid_input"]


class RunUsage(BaseModel):
    """What one run of one question used, as the scorer reports it: turns, tool calls, tokens (from the row's
    ``clinseek.records.Usage``), cost and time (``None`` = not reported)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)  # a NaN cost or time is a bad row

    turns: int | None = None
    """Assistant turns (model calls) in the run."""
    tool_calls: dict[str, int] = Field(default_factory=dict)
    """Tool calls by canonical tool name (``ehr.run_sql_query`` → 3)."""
    input_tokens: int | None = None
    """Prompt tokens summed over the run's model calls (cached ones included)."""
    output_tokens: int | None = None
    """Completion tokens (reasoning included) summed over the run's model calls."""
    cached_tokens: int | None = None
    """Prompt tokens served from the provider's cache (the row's ``usage.cached_input_tokens``; this name is
    kept so that ``per_question.jsonl`` files written before stay readable)."""
    cost_usd: float | None = None
    """Cost in US dollars, or ``None`` when the provider did not report it."""
    latency_s: float | None = None
    """Wall-clock seconds of the whole run."""

    @property
    def n_tool_calls(self) -> int:
        """Total tool calls of the run."""
        return sum(self.tool_calls.values())


class ScoreInput(BaseModel):
    """The scorer's view of one result row: one run of one question by one model in one mode.

    Built by :func:`~clinseek.scoring.read_score_inputs` (clinseek's layout) or
    :func:`~clinseek.scoring.read_reference_results` (the reference's result layouts).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    qid: str
    """Question id (unique within a benchmark)."""
    run_index: int = 0
    """0-based repetition index; a question scores the mean over its scored runs."""
    benchmark: str
    """Benchmark name (``clinseek_text``, ``ehr_bench``, ``synthetic``, ...)."""
    task: str
    """Subtask name (one of the 45 EHR-Bench subtasks, ``medmod_phenotyping``, ...)."""
    task_type: TaskType
    """``risk_prediction`` (binary), ``decision_making`` (multi-label) or ``multimodal``."""
    category: str
    """Semantic group the task reports under (EHR-Bench L3 group, multimodal L4 category)."""
    mode: Mode
    """``agent`` (ClinSeekAgent) or ``curated`` (Curated Input, one-shot)."""
    model: str
    """Model slug as the runner wrote it (``baseline:evidence``, ``claude_opus_4_6``)."""
    status: Status
    """``answered`` (a finish call), ``no_answer`` (the run ended without one), ``infra_error``, or
    ``invalid_input`` (the manifest row could not be run; scored like a missing question)."""
    answer: list[str] | None
    """The finish call's ``response`` items as strings; ``None`` when there was no answer."""
    gold: list[str]
    """Gold labels as strings (dict labels already flattened, see ``gold_items``)."""
    gold_aliases: list[list[str]] = Field(default_factory=list)
    """Per gold item, other names that count as that item (``[]`` = none), e.g. its ATC name."""
    answer_type: AnswerType | None = None
    """Declared answer type. Only the multimodal single-answer subtypes (``yes_no``, ``count``,
    ``datetime``, ``id``, ``name``) change the route; ``list``/``set``/``binary`` and ``None``
    leave it to ``task_type`` and the gold's length (see ``sample_route``)."""
    candidates: list[str] | None = None
    """The question's allowed answers, when the manifest gives them."""
    usage: RunUsage = Field(default_factory=RunUsage)
    """Turns, tool calls, tokens, cost and latency of the run."""
    question_hash: str | None = None
    """What question the row answers (the runner's ``question_hash``: qids are positions that every
    benchmark build reuses); ``None`` when the row does not say (older rows, the reference's)."""
    parse_mode: str | None = None
    """How the answer was read (``finish_call``, ``answer_tag``, or a fallback: ``response_json``,
    ``final_answer``, ``candidate_match``; docs/agent.md); ``None`` when the row does not say."""

    @property
    def run_key(self) -> tuple[str, str, str]:
        """``(benchmark, mode, model)``: the run a row belongs to."""
        return (self.benchmark, self.mode, self.model)


class SampleScore(BaseModel):
    """Deterministic per-sample metrics of one result row (all in [0, 1])."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    qid: str
    run_index: int
    status: ScoredStatus
    """``no_answer`` also covers an answered run with no valid (non-empty) answer."""
    route: Route
    """Which rule scored it: ``binary``, ``set`` or a multimodal single-answer subtype."""
    scored: bool
    """False for infrastructure errors that were not asked to be scored (excluded from means)."""
    precision: float
    recall: float
    f1: float
    exact_match: float
    f1_raw: float | None = None
    """Set F1 without closed-vocabulary mapping (multimodal multi-answer rows only)."""
    pred: list[str] = Field(default_factory=list)
    """The normalised predicted items the rule compared (canonical values for MM rules)."""
    gold: list[str] = Field(default_factory=list)
    """The normalised gold items the rule compared."""
    judge_match: bool | None = None
    """Optional LLM-judge verdict, reported beside the deterministic score, never mixed in."""
    f1_reference: float | None = None
    """F1 by the reference's rules (``--scorer reference``), beside ``f1``, never mixed in; ``None``
    when they were not asked for."""
    usage: RunUsage = Field(default_factory=RunUsage)
    """The run's usage, copied from its :class:`ScoreInput`."""
    parse_mode: str | None = None
    """How the run's answer was read, copied from its :class:`ScoreInput`."""
