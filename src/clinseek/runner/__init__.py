"""Running a benchmark: concurrency, per-provider rate limits, retries, resume, response cache, results files.

``run_benchmark`` is the one entry point (the CLI's ``clinseek run`` and the demo call it). It
writes ``DIR/<benchmark>/<mode>/<model-slug>/results.jsonl`` (append-only, one row per
(qid, run_index), flushed per row, kill -9 safe) and ``run_manifest.json``, or the same in the
reference's layout (``RunSettings.run.layout``); ``export_reference`` writes finished runs in it.
"""

from ..agent import Sources
from ..records import ReadReport, ResultRow, RunManifest, read_results
from ._cache import CachedModel, ResponseCache, cache_key
from ._counts import RowCounts
from ._engine import Job, run_jobs
from ._execute import Executor, message_record, question_row_fields, row_status
from ._identity import question_hash, store_identity
from ._knowledge import close_knowledge, open_knowledge_source, open_run_knowledge
from ._manifest import config_hash, package_versions, safe_base_url, write_manifest
from ._outage import EndpointGone
from ._progress import Progress
from ._reflayout import CLINSEEK_CODEC, REFERENCE_CODEC, ExportedRun, RowCodec, codec_for, export_reference
from ._results import ResultsFile, RunLock
from ._retry import ProviderLimiter, ResilientModel, RetryPolicy
from ._run import ModeSummary, RunMode, RunSummary, model_slug, run_benchmark
from ._secrets import redact_line
from ._settings import ModelSettings, RunOptions, RunSettings

__all__ = [
    "CLINSEEK_CODEC",
    "REFERENCE_CODEC",
    "CachedModel",
    "EndpointGone",
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
    "message_record",
    "model_slug",
    "open_knowledge_source",
    "open_run_knowledge",
    "package_versions",
    "question_hash",
    "question_row_fields",
    "read_results",
    "redact_line",
    "row_status",
    "run_benchmark",
    "run_jobs",
    "safe_base_url",
    "store_identity",
    "write_manifest",
]
