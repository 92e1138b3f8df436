"""``clinseek.run`` / ``run_async``: run a benchmark with a model (the ``clinseek run`` command calls it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._sync import sync_twin

if TYPE_CHECKING:
    from ..bench import Question
    from ..models import ChatModel
    from ..runner import RunMode, RunSettings, RunSummary


async def run_async(
    bench: Path | str | Sequence[Question],
    store: Path | str,
    model: str | ChatModel,
    out: Path | str,
    *,
    mode: RunMode = "agent",
    tasks: Sequence[str] | None = None,
    limit: int | None = None,
    settings: RunSettings | None = None,
) -> RunSummary:
    """Run the questions of ``bench`` with ``model`` in ``mode`` and write results under ``out``.

    Writes ``out/<benchmark>/<mode>/<model-slug>/{results.jsonl, run_manifest.json}`` (or the reference's
    layout with ``settings.run.layout = "reference"``); a rerun with the same configuration resumes
    (docs/runner.md). The settings come in five groups: ``RunSettings(model=ModelSettings(...),
    run=RunOptions(...), budget=AgentBudget(...), limits=Limits(...), sources=Sources(...))``.

    Args:
        bench: a manifest file or benchmark directory (``clinseek bench build --out``), or questions
            already loaded (``clinseek.bench.load_questions``). A manifest's rows that do not validate, or that
            the store cannot answer honestly (``clinseek.bench.prepare_run``; ``settings.run.allow_*``), are
            recorded as ``invalid_input`` rows with their reasons, and every other row runs. Text a question
            carries verbatim that mentions a time after its cutoff is logged and written to its rows'
            ``input_warnings`` (``clinseek.bench.text_notes``).
        store: the DuckDB store the episodes are built from.
        model: ``provider:model`` (``openai:gpt-5.1``, ``baseline:evidence``...) or a ``ChatModel``.
        out: the results root.
        mode: ``agent`` (ClinSeekAgent tool loop), ``curated`` (one-shot Curated Input) or ``both``.
        tasks: run only questions of these tasks.
        limit: run at most this many questions, a stratified subset (round-robin over tasks and task types).
        settings: everything else (default: ``RunSettings()``; its knowledge source is off).

    Returns:
        One ``ModeSummary`` per (benchmark, mode) in ``.runs``: answered, no answer, infra errors, invalid
        input, tokens, cost (``None`` when a price is unknown), wall time, about this call's (question, run)
        pairs only; ``invalid_reasons`` says why each invalid row could not run.

    Raises:
        ManifestError: a path that is no manifest or benchmark folder, or manifests without a row.
        ClinseekError: no questions to run, a store holding none of the questions' patients, a missing store, a results folder of another configuration or
            one another run is writing, candidate tables without the tasks' tables (and see
            ``clinseek.runner.run_benchmark``).
        ModelError: an unknown provider, a missing key, or (with ``settings.model.preflight``) an endpoint
            that cannot serve the run.
        EndpointGone: the model endpoint stopped answering mid-run (``clinseek.runner.EndpointGone``; the rows
            written are kept and the same call resumes the rest).
    """
    import anyio.to_thread

    from ..bench import RunInput, load_agentehr_tables, prepare_run, text_notes
    from ..runner import RunSettings, run_benchmark

    settings = settings or RunSettings()
    if settings.sources.candidate_tables is not None:  # a wrong path or table is one error, not one per question
        await anyio.to_thread.run_sync(load_agentehr_tables, settings.sources.candidate_tables)
    if isinstance(bench, str | Path):
        options = settings.run
        rows = await anyio.to_thread.run_sync(lambda: prepare_run(
            bench, store, outside_record_ok=options.allow_outside_record, missing_cxr_ok=options.allow_missing_cxr))
    else:
        questions = list(bench)
        rows = RunInput(questions=questions, notes=text_notes(questions))
    return await run_benchmark(rows.questions, store, mode, model, out, settings=settings, limit=limit, tasks=tasks,
                               invalid=rows.invalid, notes=rows.notes)


run = sync_twin(run_async)
