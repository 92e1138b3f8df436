"""The reference's results format (ClinSeek-Evaluation-Results): folder layout, model names, rows both ways.

The one adapter between clinseek's result rows and the reference's files. The scorer reads the
reference's rows through :func:`clinseek_fields`; the runner writes clinseek rows in the
reference's layout with :func:`to_reference_row` (``clinseek run --layout reference``,
``clinseek export``) and reads them back with :func:`from_reference_row`. It depends on nothing
else in clinseek, so every stage may use it.
"""

from ._layout import (
    BENCH_DIRS,
    MODE_DIRS,
    REFERENCE_BENCHES,
    WRAPPER,
    bench_dir,
    default_split,
    path_run_key,
    path_split,
    reference_model_name,
    reference_results_dir,
    visible_parts,
)
from ._rows import (
    CLINSEEK_STATUSES,
    FINISH_NAMES,
    ONE_SHOT_PREFIX,
    REFERENCE_STATUSES,
    RowFormat,
    clinseek_fields,
    finish_answer,
    from_reference_row,
    implied_parse_mode,
    reference_label,
    reference_status,
    row_format,
    to_reference_row,
    tool_call_counts,
)

__all__ = [
    "BENCH_DIRS",
    "CLINSEEK_STATUSES",
    "FINISH_NAMES",
    "MODE_DIRS",
    "ONE_SHOT_PREFIX",
    "REFERENCE_BENCHES",
    "REFERENCE_STATUSES",
    "WRAPPER",
    "RowFormat",
    "bench_dir",
    "clinseek_fields",
    "default_split",
    "finish_answer",
    "from_reference_row",
    "implied_parse_mode",
    "path_run_key",
    "path_split",
    "reference_label",
    "reference_model_name",
    "reference_results_dir",
    "reference_status",
    "row_format",
    "to_reference_row",
    "tool_call_counts",
    "visible_parts",
]
