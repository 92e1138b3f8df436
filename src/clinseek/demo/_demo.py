"""``run_demo``: store → benchmark → both baselines in both modes → scores → paired tables, resumable."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from ..api import run_async
from ..bench import BuildManifest, Question, build_benchmark, load_questions, requested_tasks
from ..errors import ClinseekError
from ..runner import ModeSummary, RunOptions, RunSettings, Sources
from ..scoring import ScoredResults, ScoreReport, score_path, write_scores
from ..store import open_store, store_file_problem, synthesize
from ._config import DEMO_MODELS, DemoConfig, DemoSettings, check_config, write_config
from ._paired import model_comparisons

StageCallback = Callable[[str], None]
"""Receives one line per stage as it starts or is reused (the CLI prints them)."""


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of a demo run and how long it took (``reused`` = found done in OUT, not redone)."""

    name: str
    seconds: float
    reused: bool


@dataclass(frozen=True, slots=True)
class DemoResult:
    """Everything a demo run produced; paths are inside ``out`` unless a store was given."""

    out: Path
    store: Path
    bench: Path
    """The benchmark directory (``ClinSeek-Bench_text.json``, ``ClinSeek-Bench_multimodal.jsonl``...)."""
    runs: Path
    """Results root: ``runs/<benchmark>/<mode>/<model-slug>/results.jsonl``."""
    scores: Path
    """``per_question.jsonl``, ``summary.json``, ``summary.md``."""
    build: BuildManifest
    questions: int
    run_summaries: list[ModeSummary]
    report: ScoreReport
    """Scores of every run; ``paired`` holds evidence − null per (benchmark, mode), then agent − curated."""
    stages: list[Stage]

    @property
    def infra_errors(self) -> int:
        """Infra-error rows over every run."""
        return sum(r.infra_errors for r in self.run_summaries)


async def run_demo(
    out: Path | str,
    *,
    settings: DemoSettings | None = None,
    store: Path | str | None = None,
    tasks: Sequence[str] | None = None,
    on_stage: StageCallback | None = None,
) -> DemoResult:
    """Run the whole clinseek pipeline offline, with no credentials, into ``out``.

    Stages: synthesize a MIMIC-IV-shaped store (``out/store.duckdb``, unless ``store`` is given:
    any clinseek store, e.g. an ingest of the MIMIC-IV demo); build a benchmark from it
    (``out/bench``: every text subtask and multimodal category the store supports,
    ``settings.per_task`` questions each); run ``baseline:evidence`` and ``baseline:null`` in
    agent and curated mode (``out/runs``); score every run and compare pairwise (``out/scores``:
    evidence − null per benchmark and mode, agent − curated per model; paired bootstrap 95 % CI,
    t-interval, McNemar).

    A rerun into the same ``out`` with the same options resumes: a finished store or benchmark
    is reused, finished result rows are kept (the runner's resume), scores are recomputed.

    ``OUT/demo.json`` records the options once the first stage (the store, or the benchmark
    for a given store) has succeeded; options and the given store are checked before anything
    is written, and a folder holding only the ``demo.json`` of a failed run is re-used.

    Raises:
        ClinseekError: ``out`` holds another demo configuration or is not a demo directory; no
            question could be built; a stage failed (StoreError, RegistryError... are subclasses).
        StoreError: ``store`` is not a clinseek store.
        RegistryError: an unknown task name.
    """
    settings = settings or DemoSettings()
    out = Path(out)
    say = on_stage or (lambda _line: None)
    store_path = Path(store) if store is not None else out / "store.duckdb"
    if store is not None:
        problem = store_file_problem(store_path)
        if problem:
            raise ClinseekError(problem)
        open_store(store_path)  # StoreError when it is not a clinseek store
    requested_tasks(tasks)  # RegistryError for an unknown name, before anything is written
    config = _config(store_path, store is None, settings, tasks)
    check_config(out, config)
    stages: list[Stage] = []
    if store is None:
        stages.append(await _synthesize(store_path, settings, say))
        write_config(out, config)  # only now: a failed first stage leaves the folder free for other options
    build, stage = await _build(store_path, out / "bench", settings, tasks, say)
    stages.append(stage)
    write_config(out, config)
    questions = load_questions(out / "bench")
    if not questions:
        raise ClinseekError(f"{out / 'bench'}: the store supports none of the requested tasks")
    summaries, stage = await _run(questions, store_path, out / "runs", settings, say)
    stages.append(stage)
    report, stage = await _score(out / "runs", out / "scores", settings, say)
    stages.append(stage)
    return DemoResult(out=out, store=store_path, bench=out / "bench", runs=out / "runs", scores=out / "scores",
                      build=build, questions=len(questions), run_summaries=summaries, report=report, stages=stages)


def _config(store: Path, synthesized: bool, settings: DemoSettings, tasks: Sequence[str] | None) -> DemoConfig:
    # a synthesized store is named relative to OUT, a given one absolutely: the folder resumes from any
    # working directory, under any spelling of --out, and after being moved or copied
    return DemoConfig(
        store=store.name if synthesized else str(store.resolve()), synthesized=synthesized, patients=settings.patients if synthesized else None,
        per_task=settings.per_task, seed=settings.seed, tasks=list(tasks) if tasks else None, models=list(DEMO_MODELS),
    )


async def _synthesize(path: Path, settings: DemoSettings, say: StageCallback) -> Stage:
    started = time.perf_counter()
    if path.is_file():  # synthesize() renames a complete store into place: present means finished
        say(f"store: reusing {path}")
        return Stage("store", time.perf_counter() - started, True)
    say(f"store: synthesizing {settings.patients} patients (seed {settings.seed}) -> {path}")
    await anyio.to_thread.run_sync(lambda: synthesize(path, patients=settings.patients, seed=settings.seed))
    return Stage("store", time.perf_counter() - started, False)


async def _build(store: Path, bench: Path, settings: DemoSettings, tasks: Sequence[str] | None,
                 say: StageCallback) -> tuple[BuildManifest, Stage]:
    started = time.perf_counter()
    manifest = bench / "build_manifest.json"
    if manifest.is_file():  # build_benchmark renames a complete directory into place
        say(f"benchmark: reusing {bench}")
        found = BuildManifest.model_validate_json(manifest.read_text(encoding="utf-8"))
        return found, Stage("benchmark", time.perf_counter() - started, True)
    say(f"benchmark: {settings.per_task} question{'' if settings.per_task == 1 else 's'} per task -> {bench}")
    result = await anyio.to_thread.run_sync(
        lambda: build_benchmark(store, tasks=tasks, per_task=settings.per_task, seed=settings.seed, out=bench))
    return result.manifest, Stage("benchmark", time.perf_counter() - started, False)


async def demo_inputs(out: Path | str, *, settings: DemoSettings | None = None, tasks: Sequence[str] | None = None,
                      on_stage: StageCallback | None = None) -> tuple[Path, Path]:
    """The demo's first two stages alone: a synthetic store and a benchmark built from it.

    Synthesizes ``out/store.duckdb`` (``settings.patients``, ``settings.seed``) and builds ``out/bench``
    (``settings.per_task`` questions per task) as :func:`run_demo` does; each is reused when present
    (both are renamed into place when complete). Nothing runs and no ``demo.json`` is written.

    Returns:
        ``(store, bench)``.

    Raises:
        RegistryError: an unknown task name. ClinseekError: no question could be built.
    """
    settings = settings or DemoSettings()
    out = Path(out)
    say = on_stage or (lambda _line: None)
    requested_tasks(tasks)
    await _synthesize(out / "store.duckdb", settings, say)
    await _build(out / "store.duckdb", out / "bench", settings, tasks, say)
    if not await anyio.to_thread.run_sync(load_questions, out / "bench"):
        raise ClinseekError(f"{out / 'bench'}: the store supports none of the requested tasks")
    return out / "store.duckdb", out / "bench"



async def _run(questions: Sequence[Question], store: Path, runs: Path, settings: DemoSettings,
               say: StageCallback) -> tuple[list[ModeSummary], Stage]:
    from ..imaging import store_cxr_root

    started = time.perf_counter()
    run_settings = RunSettings(run=RunOptions(concurrency=settings.concurrency, seed=settings.seed,
                                              progress=settings.progress),
                               sources=Sources(cxr_root=store_cxr_root(store)))
    summaries: list[ModeSummary] = []
    for model in DEMO_MODELS:
        say(f"run: {model}, agent and curated mode, {len(questions)} questions -> {runs}")
        summary = await run_async(questions, store, model, runs, mode="both", settings=run_settings)
        summaries += summary.runs
    reused = all(s.ran == 0 for s in summaries)
    return summaries, Stage("run", time.perf_counter() - started, reused)


async def _score(runs: Path, scores: Path, settings: DemoSettings, say: StageCallback) -> tuple[ScoreReport, Stage]:
    started = time.perf_counter()
    say(f"score: deterministic scores and paired comparisons -> {scores}")

    def work() -> ScoreReport:
        scored = score_path(runs, n_resamples=settings.n_resamples, seed=settings.seed)
        extra = model_comparisons(scored.questions, *DEMO_MODELS, n_resamples=settings.n_resamples, seed=settings.seed)
        report = scored.report.model_copy(update={"paired": extra + scored.report.paired})
        write_scores(ScoredResults(scored.questions, report, scored.inputs), scores)
        return report

    report = await anyio.to_thread.run_sync(work)
    return report, Stage("score", time.perf_counter() - started, False)
