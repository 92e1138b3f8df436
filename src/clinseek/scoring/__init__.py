"""One deterministic scorer: per-sample metrics, aggregation and paired statistics.

Reads the runner's ``results.jsonl`` rows and the reference's result files (the format told per
file; rows of the reference go through ``clinseek.refformat``), scores each
row with one documented rule per answer shape (binary, multi-label set, multimodal single
answers through a closed vocabulary), aggregates per task, category, task type and overall,
and compares runs over common question ids (paired bootstrap CI, the paper's t-interval,
McNemar). Categories are the dataset card's, in its order (``category_for``); card-shaped tables
(``card_tables``) lay runs side by side as the card does. No network; an LLM judge is optional and
reported in its own column, and the reference's rules (``--scorer reference``) in theirs.
"""

from ..records import Mode, Status
from ._aggregate import group_stats, score_questions, strict_view, summarize_run, usage_stats
from ._card import (
    CardCell,
    CardRow,
    CardTable,
    card_cells,
    card_header,
    card_markdown,
    card_tables,
    delta_text,
)
from ._categories import (
    CARD_ORDER,
    card_sorted,
    card_split,
    category_for,
    category_title,
    ehrxqa_category,
    task_type_for,
)
from ._discover import FORMAT_NAMES, Discovery, Layout, ResultSource, SourceFormat, discover
from ._judge import JudgeModel, apply_verdicts, chat_model_judge, judge_messages, judge_rows, parse_verdict
from ._metrics import BINARY_LABELS, SetMetrics, binary_metrics, set_metrics
from ._model import AnswerType, Route, RunUsage, SampleScore, ScoreInput, TaskType
from ._multimodal import single_route
from ._normalize import gold_items, label_strings, normalize_set, normalize_text
from ._numbers import parse_decimal, parse_number
from ._paired import (
    T_MIN_N,
    OnChanged,
    compare_questions,
    mcnemar_p,
    paired_bootstrap_ci,
    shown_t_interval,
    t_interval,
)
from ._pipeline import (
    ScoredResults,
    Scorer,
    card_tables_of,
    compare_paths,
    find_results,
    judge_scored,
    load_score_inputs,
    read_sources,
    results_fingerprints,
    score_path,
    write_scores,
)
from ._read import RESULT_FIELDS, read_expected, read_score_inputs, score_input, score_input_from_row
from ._reference import read_reference_results, reference_run_key
from ._refscore import Embed, ReferenceRules, ReferenceScorer, reference_set_f1
from ._render import (
    COLUMN_LEGEND,
    DELTA_HEADER,
    SCORERS_HEADER,
    column_legend,
    delta_cells,
    parse_modes_line,
    pct,
    scorer_cells,
    scorer_rows,
    summary_markdown,
    table_groups,
)
from ._score import sample_route, score_sample
from ._summary_model import (
    GroupDelta,
    GroupStats,
    PairedComparison,
    QuestionScore,
    RunScores,
    ScoreReport,
    SourceRead,
    UsageStats,
)
from ._table3 import AGENTEHR_BENCHMARKS, TABLE3_HEADER, Table3Row, table3_cells, table3_markdown, table3_rows
from ._vocab import Vocabulary, load_vocabulary

__all__ = [
    "AGENTEHR_BENCHMARKS",
    "BINARY_LABELS",
    "CARD_ORDER",
    "COLUMN_LEGEND",
    "DELTA_HEADER",
    "FORMAT_NAMES",
    "RESULT_FIELDS",
    "SCORERS_HEADER",
    "TABLE3_HEADER",
    "T_MIN_N",
    "AnswerType",
    "CardCell",
    "CardRow",
    "CardTable",
    "Discovery",
    "Embed",
    "GroupDelta",
    "GroupStats",
    "JudgeModel",
    "Layout",
    "Mode",
    "OnChanged",
    "PairedComparison",
    "QuestionScore",
    "ReferenceRules",
    "ReferenceScorer",
    "ResultSource",
    "Route",
    "RunScores",
    "RunUsage",
    "SampleScore",
    "ScoreInput",
    "ScoreReport",
    "ScoredResults",
    "Scorer",
    "SetMetrics",
    "SourceFormat",
    "SourceRead",
    "Status",
    "Table3Row",
    "TaskType",
    "UsageStats",
    "Vocabulary",
    "apply_verdicts",
    "binary_metrics",
    "card_cells",
    "card_header",
    "card_markdown",
    "card_sorted",
    "card_split",
    "card_tables",
    "card_tables_of",
    "category_for",
    "category_title",
    "chat_model_judge",
    "column_legend",
    "compare_paths",
    "compare_questions",
    "delta_cells",
    "delta_text",
    "discover",
    "ehrxqa_category",
    "find_results",
    "gold_items",
    "group_stats",
    "judge_messages",
    "judge_rows",
    "judge_scored",
    "label_strings",
    "load_score_inputs",
    "load_vocabulary",
    "mcnemar_p",
    "normalize_set",
    "normalize_text",
    "paired_bootstrap_ci",
    "parse_decimal",
    "parse_modes_line",
    "parse_number",
    "parse_verdict",
    "pct",
    "read_expected",
    "read_reference_results",
    "read_score_inputs",
    "read_sources",
    "reference_run_key",
    "reference_set_f1",
    "results_fingerprints",
    "sample_route",
    "score_input",
    "score_input_from_row",
    "score_path",
    "score_questions",
    "score_sample",
    "scorer_cells",
    "scorer_rows",
    "set_metrics",
    "shown_t_interval",
    "single_route",
    "strict_view",
    "summarize_run",
    "summary_markdown",
    "t_interval",
    "table3_cells",
    "table3_markdown",
    "table3_rows",
    "table_groups",
    "task_type_for",
    "usage_stats",
    "write_scores",
]
