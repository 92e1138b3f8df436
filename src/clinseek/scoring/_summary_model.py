"""Records the scorer writes: per-question scores, group statistics, run summaries, paired deltas."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..records import Mode
from ._model import SampleScore, ScoredStatus, TaskType


class QuestionScore(BaseModel):
    """One question of one run (benchmark, mode, model): the mean over its scored repetitions.

    One line of ``per_question.jsonl``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    benchmark: str
    mode: Mode
    model: str
    qid: str
    task: str
    task_type: TaskType
    category: str
    binary: bool
    """True when every run was scored by the binary or yes/no rule (McNemar applies)."""
    status: ScoredStatus
    """``answered`` if any scored run answered; else ``missing`` (no result row, or only ``invalid_input``
    rows), ``no_answer`` (a run without a valid answer) or ``infra_error`` (only infrastructure errors:
    unscored, or scored 0 with ``score_infra_errors``)."""
    scored: bool
    """False when no run was scored (only unscored infrastructure errors): excluded from means."""
    precision: float
    recall: float
    f1: float
    exact_match: float
    f1_raw: float | None = None
    """Mean F1 over the same runs as ``f1`` with multimodal multi-answer rows compared without the
    vocabulary mapping (any other run counts its ``f1``); ``None`` when no run was scored through it."""
    judge_accuracy: float | None = None
    """Mean LLM-judge verdict over judged runs; separate from ``f1``."""
    f1_reference: float | None = None
    """Mean F1 over every run by the reference's rules (``--scorer reference``); ``None`` when they were
    not asked for, and for a ``missing`` question (the reference drops it)."""
    question_hash: str | None = None
    """What question was answered (the rows' ``question_hash``); ``None`` when the rows do not say.
    Paired comparisons pair a qid only when both sides answer the same question."""
    runs: list[SampleScore] = Field(default_factory=list)


class GroupStats(BaseModel):
    """Deterministic metrics of one group of questions (micro: the mean over its scored questions)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_questions: int
    """Scored questions (the denominator of every mean)."""
    n_runs: int
    """Result rows, scored or not."""
    n_answered: int
    """Scored questions with at least one answered run."""
    n_no_answer: int
    """Runs with no valid answer (``no_answer``, or an answer with no non-empty item; each scored 0).
    An infrastructure error is never one: it counts in ``n_infra_error`` only, scored or not."""
    n_missing: int
    """Expected questions with no result row at all (each scored 0)."""
    n_infra_error: int
    """Runs that ended in an infrastructure error (excluded unless scored on request)."""
    precision: float | None
    recall: float | None
    f1: float | None
    exact_match: float | None
    f1_ci_t: tuple[float, float] | None = None
    """The paper's per-cell 95 % t-interval of the mean F1 (sd with ddof = 1), clipped to [0, 1];
    ``None`` for n < ``T_MIN_N`` (5)."""
    f1_raw: float | None = None
    """Mean F1 over the same questions as ``f1`` with multimodal multi-answer rows compared without the
    vocabulary mapping (any other question counts its ``f1``: a no-answer or missing one 0), so
    ``f1 − f1_raw`` is the mapping's gain; ``None`` when no question was scored through it."""
    judge_accuracy: float | None = None
    n_judged: int = 0
    f1_reference: float | None = None
    """Mean F1 by the reference's rules over the questions it scores (``--scorer reference``); ``None``
    when they were not asked for. Never mixed into ``f1``."""
    n_reference: int = 0
    """Questions the reference's rules score: those with a result row (it drops missing ones)."""


class UsageStats(BaseModel):
    """Tool-call, turn, token, cost and latency statistics over the runs of one run key.

    Means are over runs that report the value; ``None`` when no run does.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_runs: int
    tool_calls_mean: float | None
    tool_calls_by_name: dict[str, int]
    """Total calls per canonical tool name over all runs."""
    turns_mean: float | None
    input_tokens_total: int | None
    output_tokens_total: int | None
    cached_tokens_total: int | None
    input_tokens_mean: float | None
    output_tokens_mean: float | None
    cost_usd_total: float | None
    n_cost_reported: int
    latency_s_mean: float | None
    latency_s_p50: float | None
    latency_s_p95: float | None


class RunScores(BaseModel):
    """Everything measured about one run key (benchmark, mode, model)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    mode: Mode
    model: str
    overall: GroupStats
    """Micro: the mean over all scored questions."""
    macro_f1_over_categories: float | None
    """Macro: the mean over categories of each category's mean F1."""
    per_task_type: dict[str, GroupStats]
    per_category: dict[str, GroupStats]
    per_task: dict[str, GroupStats]
    usage: UsageStats
    parse_modes: dict[str, int] = Field(default_factory=dict)
    """Answered runs by how the answer was read (``finish_call``, ``answer_tag``, fallbacks;
    ``unrecorded`` for rows that do not say): "answered only through a fallback" is visible."""
    strict: GroupStats | None = None
    """With ``--strict``: the overall statistics when only answers in the mode's own format count
    (``finish_call`` in agent mode, ``answer_tag`` in curated mode; any other answer scores 0 as no
    answer). Reported beside ``overall``, never mixed into it; ``None`` when not asked for."""


class GroupDelta(BaseModel):
    """Paired comparison of one group over the question ids scored in both runs (Δ = A − B, F1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    group: str
    """``overall``, ``task_type:<name>``, ``category:<name>`` or ``task:<name>``."""
    n: int
    """Common scored question ids."""
    mean_a: float
    mean_b: float
    delta: float
    ci_low: float
    """Paired percentile bootstrap 95 % CI of Δ (resampling question ids)."""
    ci_high: float
    t_low: float | None
    """The paper's paired t-interval of Δ (t quantile, sd with ddof = 1), clipped to [−1, 1];
    ``None`` for n < ``T_MIN_N`` (5)."""
    t_high: float | None
    p_t: float | None
    """Two-sided paired t-test p-value; ``None`` for n < ``T_MIN_N`` (5), as the t-interval (1.0 when every Δ is 0)."""
    mcnemar_b: int | None = None
    """Binary groups only: questions A got right and B wrong."""
    mcnemar_c: int | None = None
    """Binary groups only: questions A got wrong and B right."""
    mcnemar_p: float | None = None
    """McNemar p-value: exact binomial when b + c < 25, else χ² with continuity correction."""

    @property
    def significant(self) -> bool:
        """Whether the tables mark Δ significant (bold, coloured): its bootstrap 95 % CI excludes 0 over at least
        ``T_MIN_N`` (5) paired questions, the t-interval's rule (two questions with the same Δ give the interval
        [Δ, Δ]: newcomer21 saw +31.8 [31.8, 31.8] in bold at n = 2)."""
        from ._paired import T_MIN_N

        return self.n >= T_MIN_N and (self.ci_low > 0 or self.ci_high < 0)


class PairedComparison(BaseModel):
    """A − B over common question ids, per group."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    a: str
    """Label of run A (``benchmark/mode/model``)."""
    b: str
    n_resamples: int
    seed: int
    groups: list[GroupDelta]
    excluded_qids: list[str] = Field(default_factory=list)
    """Qids scored on both sides whose questions differ (another benchmark build under the same
    qids, or a side that does not say which question it answered): left out of every statistic."""
    n_only_a: int = 0
    """Questions scored in A whose qid B did not score: no partner, left out of every statistic."""
    n_only_b: int = 0
    """Questions scored in B whose qid A did not score."""


def _clinseek_only() -> list[Literal["clinseek", "reference"]]:
    return ["clinseek"]


class SourceRead(BaseModel):
    """One result source ``score`` read: where, in which format, which runs, how many rows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    """The file (a hierarchical run: its folder) as the user sees it: symbolic links not resolved."""
    format: Literal["clinseek", "exported", "raw", "scored", "hierarchical"]
    """``clinseek`` (runner rows), ``exported`` (the reference layout written by clinseek), ``raw`` (the
    reference's results), ``scored`` (its multimodal scorer's rows), ``hierarchical`` (its ``rows.jsonl``)."""
    runs: list[str]
    """``benchmark/mode/model`` of the rows read from it."""
    rows: int
    """Rows read (bad rows not counted)."""


class ScoreReport(BaseModel):
    """The content of ``summary.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    source: str
    """The scored directory or file."""
    layout: Literal["clinseek", "reference", "mixed"]
    """What was read: only clinseek's rows, only the reference's formats, or both."""
    score_infra_errors: bool
    runs: list[RunScores]
    paired: list[PairedComparison]
    """Agent − curated for every (benchmark, model) scored in both modes."""
    judge_model: str | None = None
    """The model of the optional LLM judge (its verdicts are the ``judge_*`` columns), if one ran."""
    bad_rows: list[str] = Field(default_factory=list)
    """One message per result row that could not be read (file, line, field); they were skipped."""
    outside_manifest: dict[str, int] = Field(default_factory=dict)
    """Result rows left out because their qid is not in the ``expected`` manifest, by run
    (``benchmark/mode/model``): rows of other questions kept in the same results file."""
    results_sha256: dict[str, str] = Field(default_factory=dict)
    """SHA-256 of each result file as it was scored, by path relative to ``source`` (the file's name
    when ``source`` is a file): a report checks them to refuse scores its results have outgrown."""
    pairing_problems: list[str] = Field(default_factory=list)
    """Agent − curated pairs left out (every shared qid named different questions: the two modes were
    run on different benchmark builds); partial exclusions are in each comparison's ``excluded_qids``."""
    sources: list[SourceRead] = Field(default_factory=list)
    """Every result source read, with its format (``score`` detects it per file)."""
    skipped_sources: list[str] = Field(default_factory=list)
    """Files and folders left out, each with why (the same file through a link, a smaller split of the
    same run, a ``_archive`` folder...)."""
    missing: dict[str, list[str]] = Field(default_factory=dict)
    """With a manifest: per run (``benchmark/mode/model``), the qids with no result row (each scored 0)."""
    scorers: list[Literal["clinseek", "reference"]] = Field(default_factory=_clinseek_only)
    """``clinseek`` always; ``reference`` when its rules also ran (``f1_reference`` columns)."""
    reference_rules: str | None = None
    """Which of the reference's rules ran (judge, vocabulary mapping), when they did."""
