"""Benchmarks: manifests (ClinSeek-Bench-Text/MM, AgentEHR-Bench), validation, the task registry, the builder, curated input.

The rest of clinseek reads questions only as :class:`Question` values from :func:`load_questions`.
"""

from ._build import MAX_INLINE_CANDIDATES, BuildManifest, BuildResult, build_benchmark, requested_tasks
from ._curated import (
    MM_ROWS_PER_TABLE,
    TEXT_BUDGET_CHARS,
    CuratedInput,
    episode_key,
    render_curated,
    render_mm_context,
    render_text_timeline,
)
from ._docs import tasks_markdown
from ._join import JoinResult, join_ehr_bench
from ._load import (
    MM_FILE,
    TEXT_FILE,
    ManifestRead,
    detect_kind,
    load_questions,
    manifest_files,
    read_manifest,
    to_question,
)
from ._question import TEXT_POLICY_VERSION, Question, normalise_label
from ._rows import (
    MM_LEAKAGE_POLICY,
    AgentEHRRow,
    LabelItem,
    MultimodalRow,
    SnapshotSpec,
    TaskInfo,
    TextRow,
    strip_asset_prefix,
)
from ._select import select_questions, stratified_order
from ._tasks import (
    CATEGORIES,
    DECISION_TASKS,
    MM_CATEGORIES,
    RISK_TASKS,
    TEXT_TASKS,
    Category,
    MMCategorySpec,
    TaskSpec,
    category_for_mm_task,
    get_category,
    get_task,
    normalise_category,
)
from ._validate import ValidationReport, validate_benchmark

__all__ = [
    "CATEGORIES",
    "DECISION_TASKS",
    "MAX_INLINE_CANDIDATES",
    "MM_CATEGORIES",
    "MM_FILE",
    "MM_LEAKAGE_POLICY",
    "MM_ROWS_PER_TABLE",
    "RISK_TASKS",
    "TEXT_BUDGET_CHARS",
    "TEXT_FILE",
    "TEXT_POLICY_VERSION",
    "TEXT_TASKS",
    "AgentEHRRow",
    "BuildManifest",
    "BuildResult",
    "Category",
    "CuratedInput",
    "JoinResult",
    "LabelItem",
    "MMCategorySpec",
    "ManifestRead",
    "MultimodalRow",
    "Question",
    "SnapshotSpec",
    "TaskInfo",
    "TaskSpec",
    "TextRow",
    "ValidationReport",
    "build_benchmark",
    "category_for_mm_task",
    "detect_kind",
    "episode_key",
    "get_category",
    "get_task",
    "join_ehr_bench",
    "load_questions",
    "manifest_files",
    "normalise_category",
    "normalise_label",
    "read_manifest",
    "render_curated",
    "render_mm_context",
    "render_text_timeline",
    "requested_tasks",
    "select_questions",
    "stratified_order",
    "strip_asset_prefix",
    "tasks_markdown",
    "to_question",
    "validate_benchmark",
]
