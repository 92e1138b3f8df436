"""Running a benchmark: concurrency, per-provider rate limits, retries, resume, response cache, results files.

``run_benchmark`` is the one entry point (the CLI's ``clinseek run`` and the demo call it). It
writes ``DIR/<benchmark>/<mode>/<model-slug>/results.jsonl`` (append-only, one row per
(qid, run_index), flushed per row, kill -9 safe) and ``run_manifest.json``, or the same in the
reference's layout (``RunSettings.run.layout``); ``export_reference`` writes finished runs in it.
"""

from ..agent import Sources
from ._cache import CachedModel, ResponseCache, cache_key
from ._counts import RowCounts
from ._engine import Job, run_jobs
from ._execute import Executor
from ._identity import question_hash, store_identity
from ._knowledge import close_knowledge, open_knowledge_source, open_run_knowledge
from ._manifest import RunManifest, config_hash, safe_base_url
from ._progress import Progress
from ._reflayout import CLINSEEK_CODEC, REFERENCE_CODEC, ExportedRun, RowCodec, codec_for, export_reference
from ._results import ReadReport, ResultsFile, RunLock, read_results
from ._retry import ProviderLimiter, ResilientModel, RetryPolicy
from ._rows import ResultRow
from ._run import ModeSummary, RunMode, RunSummary, model_slug, run_benchmark
from ._secrets import redact_line
from ._settings import ModelSettings, RunOptions, RunSettings

__all__ = [
    "CLINSEEK_CODEC",
    "REFERENCE_CODEC",
    "CachedModel",
    "Executor",
    "ExportedRun",
    "Job",
    "ModeSummary",
    "ModelSettings",
    "Progress",
    "ProviderLimiter",
    "ReadReport",
    "ResilientModel",
    "ResponseCache",
    "ResultRow",
    "ResultsFile",
    "RetryPolicy",
    "RowCodec",
    "RowCounts",
    "RunLock",
    "RunManifest",
    "RunMode",
    "RunOptions",
    "RunSettings",
    "RunSummary",
    "Sources",
    "cache_key",
    "close_knowledge",
    "codec_for",
    "config_hash",
    "export_reference",
    "model_slug",
    "open_knowledge_source",
    "open_run_knowledge",
    "question_hash",
    "read_results",
    "redact_line",
    "run_benchmark",
    "run_jobs",
    "safe_base_url",
    "store_identity",
]
