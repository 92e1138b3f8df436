"""One deterministic scorer: per-sample metrics, aggregation and paired statistics.

Reads the runner's ``results.jsonl`` rows (or the reference's result layouts), scores each
row with one documented rule per answer shape (binary, multi-label set, multimodal single
answers through a closed vocabulary), aggregates per task, category, task type and overall,
and compares runs over common question ids (paired bootstrap CI, the paper's t-interval,
McNemar). No network; an LLM judge is optional and reported in its own column.
"""

from ._aggregate import group_stats, score_questions, summarize_run, usage_stats
from ._judge import JudgeModel, apply_verdicts, chat_model_judge, judge_messages, judge_rows, parse_verdict
from ._metrics import BINARY_LABELS, SetMetrics, binary_metrics, set_metrics
from ._model import AnswerType, Mode, Route, SampleScore, ScoreInput, Status, TaskType, Usage
from ._multimodal import single_route
from ._normalize import gold_items, label_strings, normalize_set, normalize_text
from ._numbers import parse_number
from ._paired import OnChanged, compare_questions, mcnemar_p, paired_bootstrap_ci, t_interval
from ._pipeline import (
    Layout,
    ScoredResults,
    compare_paths,
    find_results,
    judge_scored,
    load_inputs,
    score_path,
    write_scores,
)
from ._read import RESULT_FIELDS, read_expected, read_results, score_input_from_row
from ._reference import FINISH_NAMES, finish_answer, read_reference_results, reference_run_key
from ._render import DELTA_HEADER, delta_cells, pct, summary_markdown, table_groups
from ._score import sample_route, score_sample
from ._summary_model import (
    GroupDelta,
    GroupStats,
    PairedComparison,
    QuestionScore,
    RunSummary,
    ScoreReport,
    UsageStats,
)
from ._table3 import AGENTEHR_BENCHMARKS, TABLE3_HEADER, Table3Row, table3_cells, table3_markdown, table3_rows
from ._tasks import reference_category, reference_task_type
from ._vocab import Vocabulary, load_vocabulary

__all__ = [
    "AGENTEHR_BENCHMARKS",
    "BINARY_LABELS",
    "DELTA_HEADER",
    "FINISH_NAMES",
    "RESULT_FIELDS",
    "TABLE3_HEADER",
    "AnswerType",
    "GroupDelta",
    "GroupStats",
    "JudgeModel",
    "Layout",
    "Mode",
    "OnChanged",
    "PairedComparison",
    "QuestionScore",
    "Route",
    "RunSummary",
    "SampleScore",
    "ScoreInput",
    "ScoreReport",
    "ScoredResults",
    "SetMetrics",
    "Status",
    "Table3Row",
    "TaskType",
    "Usage",
    "UsageStats",
    "Vocabulary",
    "apply_verdicts",
    "binary_metrics",
    "chat_model_judge",
    "compare_paths",
    "compare_questions",
    "delta_cells",
    "find_results",
    "finish_answer",
    "gold_items",
    "group_stats",
    "judge_messages",
    "judge_rows",
    "judge_scored",
    "label_strings",
    "load_inputs",
    "load_vocabulary",
    "mcnemar_p",
    "normalize_set",
    "normalize_text",
    "paired_bootstrap_ci",
    "parse_number",
    "parse_verdict",
    "pct",
    "read_expected",
    "read_reference_results",
    "read_results",
    "reference_category",
    "reference_run_key",
    "reference_task_type",
    "sample_route",
    "score_input_from_row",
    "score_path",
    "score_questions",
    "score_sample",
    "set_metrics",
    "single_route",
    "summarize_run",
    "summary_markdown",
    "t_interval",
    "table3_cells",
    "table3_markdown",
    "table3_rows",
    "table_groups",
    "usage_stats",
    "write_scores",
]
