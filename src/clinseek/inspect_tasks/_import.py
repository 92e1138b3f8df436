"""``clinseek import-inspect LOG``: an inspect_ai ``.eval`` log of the clinseek tasks as clinseek results.

Writes ``OUT/<benchmark>/<mode>/<model-slug>/results.jsonl`` (one ``ResultRow`` per sample and epoch,
``run_index = epoch - 1``) and ``run_manifest.json`` beside it, as ``clinseek run`` does, so ``clinseek
score``, ``compare``, ``report`` and ``distill export`` read inspect runs. The model is recorded as
``inspect:<inspect model>`` (``inspect:openai/gpt-4o``), a run of its own beside clinseek's runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from pydantic import ValidationError

from ..errors import ClinseekError
from ..records import CallRecord, Usage
from ..runner import (
    ResultRow,
    ResultsFile,
    RunManifest,
    config_hash,
    model_slug,
    package_versions,
    write_manifest,
)
from ._messages import ImageFiles
from ._outcome import STORE_KEY
from ._rows import RunIdentity, SampleView, result_row
from ._tasks import METADATA_KEY


@dataclass(frozen=True, slots=True)
class ImportedRun:
    """One results folder an import wrote.

    Attributes:
        results: its ``results.jsonl``. benchmark, mode, model: the run's key.
        rows: rows written. infra_errors: rows of samples that ended in an error (not scored).
        unreadable: samples not written, each as ``"<qid> epoch <n>: <what was wrong>"`` (a sample
            whose recorded clinseek outcome or metadata does not read; the other samples are written).
    """

    results: Path
    benchmark: str
    mode: str
    model: str
    rows: int
    infra_errors: int
    unreadable: tuple[str, ...] = ()


def import_inspect_log(log: Path | str, out: Path | str, *, overwrite: bool = False) -> list[ImportedRun]:
    """Convert the ``.eval`` (or ``.json``) log of a ``clinseek/clinseek_text`` or ``clinseek/clinseek_mm``
    eval into clinseek results under ``out``, one folder per benchmark.

    Raises:
        ClinseekError: ``log`` is not a readable inspect log, is not a clinseek task's log, holds no
            sample (or none of a benchmark reads), or a target ``results.jsonl`` exists (``overwrite``
            replaces it). A sample that does not read is left out and named in ``ImportedRun.unreadable``.
    """
    log = Path(log)
    eval_log = _read(log)
    info = (eval_log.eval.metadata or {}).get(METADATA_KEY)
    if not isinstance(info, dict):
        raise ClinseekError(f"{log}: not a log of a clinseek task (no '{METADATA_KEY}' in the task metadata; "
                            f"the task was {eval_log.eval.task!r})")
    if not eval_log.samples:
        raise ClinseekError(f"{log}: the log holds no sample (status {eval_log.status})")
    run = RunIdentity(model=f"inspect:{eval_log.eval.model}", mode=info["mode"], config_hash=_config_hash(eval_log),
                      runs_per_question=eval_log.eval.config.epochs or 1, store_id=info.get("store_id"))
    by_benchmark: dict[str, list[EvalSample]] = {}
    for sample in eval_log.samples:
        by_benchmark.setdefault(str(sample.metadata.get("benchmark", "unknown")), []).append(sample)
    return [_write(out, benchmark, samples, run, eval_log, info, overwrite)
            for benchmark, samples in sorted(by_benchmark.items())]


def _read(log: Path) -> EvalLog:
    if not log.is_file():
        raise ClinseekError(f"{log}: no such inspect log file")
    try:
        return read_eval_log(str(log), resolve_attachments=True)
    except Exception as err:  # the reader raises many kinds (zip, JSON, validation)
        raise ClinseekError(f"{log}: not a readable inspect log ({type(err).__name__}: {err})") from err


def _config_hash(eval_log: EvalLog) -> str:
    spec = eval_log.eval
    return config_hash({"source": "inspect_ai", "task": spec.task_registry_name or spec.task,
                        "task_args": spec.task_args, "model": spec.model, "model_args": spec.model_args,
                        "generate": spec.model_generate_config.model_dump(mode="json", exclude_none=True),
                        "solver": spec.solver, "solver_args": spec.solver_args})


def _write(out: Path | str, benchmark: str, samples: list[EvalSample], run: RunIdentity, eval_log: EvalLog,
           info: dict[str, Any], overwrite: bool) -> ImportedRun:
    folder = Path(out) / benchmark / run.mode / model_slug(run.model)
    results = folder / "results.jsonl"
    if results.exists() and not overwrite:
        raise ClinseekError(f"{results}: already exists; import into another --out, or pass --overwrite")
    images = ImageFiles(folder / "images")
    rows: list[ResultRow] = []
    unreadable: list[str] = []
    for sample in sorted(samples, key=lambda s: (str(s.id), s.epoch)):
        try:
            rows.append(result_row(sample_view(sample), run, images))
        except (ValidationError, ClinseekError, KeyError, TypeError, ValueError) as err:
            unreadable.append(f"{sample.id} epoch {sample.epoch}: {_reason(err)}")
    if not rows:
        raise ClinseekError(f"{eval_log.location}: no sample of {benchmark} could be read: {'; '.join(unreadable)}")
    results.unlink(missing_ok=True)
    file = ResultsFile(results)
    file.open()
    try:
        for row in rows:
            file.append(row)
    finally:
        file.close()
    write_manifest(folder / "run_manifest.json", _manifest(benchmark, rows, run, eval_log, info))
    return ImportedRun(results=results, benchmark=benchmark, mode=run.mode, model=run.model, rows=len(rows),
                       infra_errors=sum(r.status == "infra_error" for r in rows), unreadable=tuple(unreadable))


def _reason(err: Exception) -> str:
    """What was wrong, naming the field (the store's ``clinseek`` outcome, a metadata field)."""
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{err.title} field {where or '(whole record)'}: {first['msg']} ({err.error_count()} errors)"
    if isinstance(err, KeyError):
        return f"missing field {err}"
    return f"{type(err).__name__}: {err}"


def sample_view(sample: EvalSample) -> SampleView:
    """What a result row needs of a logged sample: its transcript, outcome, usage, model calls and timing."""
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    calls = [_call_record(turn, e) for turn, e in enumerate(events, start=1)]
    usage = sum((call.usage for call in calls), Usage())
    costs = [e.output.usage.total_cost if e.output.usage else None for e in events]
    error = sample.error.message if sample.error is not None else None
    return SampleView(
        qid=str(sample.id), epoch=sample.epoch, metadata=sample.metadata, target=_target(sample.target),
        store=sample.store, messages=sample.messages, error=error, error_type=_error_type(error), usage=usage,
        calls=calls, cost_usd=sum(c for c in costs if c is not None) if costs and None not in costs else None,
        latency_s=sample.total_time or 0.0, started_at=sample.started_at, finished_at=sample.completed_at)


def _target(target: str | list[str]) -> list[str]:
    return [target] if isinstance(target, str) else list(target)


def _error_type(error: str | None) -> str | None:
    if error is None:
        return None
    found = re.match(r"^([A-Za-z_][\w.]*)(?::|\()", error)
    return found.group(1).rsplit(".", 1)[-1] if found else "InspectSampleError"


def _call_record(turn: int, event: ModelEvent) -> CallRecord:
    usage = event.output.usage
    return CallRecord(
        turn=turn, latency_s=event.working_time or 0.0, total_s=event.working_time,
        status="failed" if event.error else "ok", error=event.error,
        usage=Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                    cached_input_tokens=usage.input_tokens_cache_read or 0,
                    cache_write_tokens=usage.input_tokens_cache_write or 0) if usage else Usage(),
        usage_reported=usage is not None,
        cost_usd=usage.total_cost if usage else None, stop_reason=event.output.stop_reason)


def _manifest(benchmark: str, rows: list[ResultRow], run: RunIdentity, eval_log: EvalLog,
              info: dict[str, Any]) -> RunManifest:
    spec = eval_log.eval
    tools = _offered(eval_log, benchmark, info)
    created = datetime.fromisoformat(spec.created) if isinstance(spec.created, str) else spec.created
    return RunManifest(
        benchmark=benchmark, mode=run.mode, model=run.model, base_url=None, config_hash=run.config_hash,
        prompt_version=str(info.get("prompt_version")), policy_versions=list(info.get("policy_versions") or []),
        code_version=str(info.get("code_version")), seed=spec.model_generate_config.seed or 0,
        runs_per_question=run.runs_per_question, questions=len({r.qid for r in rows}), store_id=run.store_id,
        concurrency=spec.config.max_samples or 0, budget=dict(info.get("budget") or {}),
        limits=dict(info.get("limits") or {}), generate=spec.model_generate_config.model_dump(mode="json", exclude_none=True),
        retry={}, tools=tools, response_cache=False, vision=info.get("vision"),
        packages={**package_versions(), **{k: v for k, v in spec.packages.items() if k == "inspect_ai"}},
        started_at=created.isoformat(timespec="seconds"),
    )


def _offered(eval_log: EvalLog, benchmark: str, info: dict[str, Any]) -> list[str]:
    """The tools the run offered: the task's, then any a sample's outcome adds (a multimodal question's
    ``image.*`` tools), in order."""
    tools: list[str] = list(info.get("tools") or [])
    for sample in eval_log.samples or []:
        if str(sample.metadata.get("benchmark")) != benchmark:
            continue
        outcome = sample.store.get(STORE_KEY) or {}
        tools += [t for t in outcome.get("tools_offered", []) if t not in tools]
    return tools
