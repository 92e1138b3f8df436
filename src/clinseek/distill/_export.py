"""``export_dataset``: scored agent runs → a filtered, documented SFT dataset folder."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import ClinseekError
from ._card import card_markdown, prompt_records, refusal_counts, token_stats
from ._convert import wire_tools
from ._exclude import load_exclusions
from ._model import DatasetCard, ExportFilters, Refusal, Sample, SourceRun
from ._select import Selector, sample_id, select_row
from ._sources import RunFile, find_result_files, read_run
from ._tokenizer import TokenCounter
from ._write import StagingDir, check_out, write_samples


@dataclass(frozen=True, slots=True)
class ExportResult:
    """What :func:`export_dataset` wrote."""

    out: Path
    card: DatasetCard
    samples: list[Sample]
    refusals: list[Refusal]

    @property
    def leakage_refusals(self) -> list[Refusal]:
        """Runs refused because their question is in an excluded benchmark."""
        return [r for r in self.refusals if "in_excluded_benchmark" in r.reasons]


def _run_tools(run: RunFile, provider: str) -> list[dict[str, Any]]:
    try:
        return wire_tools(run.manifest.tools, provider)
    except ClinseekError as err:
        raise ClinseekError(f"{run.results}: the run's tools cannot be described ({err})") from err


def _select_all(runs: Sequence[RunFile], selector: Selector) -> tuple[list[Sample], list[Refusal], list[int]]:
    samples: list[Sample] = []
    refusals: list[Refusal] = []
    exported: list[int] = []
    seen: dict[str, str] = {}
    for run in runs:
        tools = _run_tools(run, selector.filters.wire_provider) if run.manifest.mode == "agent" else []
        before = len(samples)
        for row in run.rows:
            key = sample_id(row)
            if key in seen:
                raise ClinseekError(f"{run.results}: run {key} is also in {seen[key]}; give each run once")
            seen[key] = str(run.results)
            verdict = select_row(row, run, tools, selector)
            if isinstance(verdict, Sample):
                samples.append(verdict)
            else:
                refusals.append(verdict)
        exported.append(len(samples) - before)
    return samples, refusals, exported


def _source(run: RunFile, exported: int) -> SourceRun:
    m = run.manifest
    return SourceRun(results=str(run.results), manifest_sha256=run.manifest_sha256, benchmark=m.benchmark,
                     mode=m.mode, model=m.model, config_hash=m.config_hash, prompt_version=m.prompt_version,
                     git_commit=m.git_commit, rows=len(run.rows), exported=exported, torn_lines=run.torn_lines)


def _card(filters: ExportFilters, counter: TokenCounter, samples: list[Sample], refusals: list[Refusal],
          sources: list[SourceRun], excluded: int) -> DatasetCard:
    leaks = [r for r in refusals if "in_excluded_benchmark" in r.reasons]
    return DatasetCard(
        clinseek_version=__version__, filters=filters, length_method=counter.method,
        tokenizer_sha256=counter.sha256, samples=len(samples),
        refused=len(refusals), per_task=dict(sorted(Counter(s.task for s in samples).items())),
        per_split=dict(sorted(Counter(s.split for s in samples).items())),
        refused_by_reason=refusal_counts(refusals), teacher_models=sorted({s.model for s in sources}),
        sources=sources, prompts=prompt_records(samples), excluded_questions=excluded,
        leakage_refusals=[f"{r.benchmark}/{r.teacher_model}/{r.qid}/run{r.run_index}" for r in leaks],
        tokens=token_stats(samples),
    )


def export_dataset(runs: Sequence[Path | str], out: Path | str, filters: ExportFilters | None = None) -> ExportResult:
    """Export the agent trajectories of scored runs as an SFT dataset folder.

    Reads every ``results.jsonl`` at or under ``runs`` (with the ``run_manifest.json`` beside it),
    scores each row with ``clinseek.scoring``, applies :class:`ExportFilters` and writes into ``out``:
    ``train.jsonl`` and ``train.parquet`` (:class:`Sample`, sorted by ``sample_id``; ``val.*`` too when
    ``filters.val_fraction`` > 0, split by patient), ``refused.jsonl``
    (:class:`Refusal`: every run not exported, with all its reasons), ``card.json`` and ``README.md``.
    A run whose question (same qid, or same subject_id and prediction_time) is in an excluded
    benchmark is refused and listed in the card. The folder is staged and moved into place only
    when complete; the same inputs give byte-identical files.

    Raises:
        ClinseekError: ``out`` exists and is not empty; a path with no results; a results file
            without a run manifest; the same run given twice; a bad tokenizer directory.
        ManifestError: an excluded benchmark does not validate.
        MissingExtraError: a tokenizer was given and ``transformers`` is not installed.
    """
    filters = filters or ExportFilters()
    out = Path(out)
    check_out(out)
    files = find_result_files(runs)
    exclusions = load_exclusions(filters.exclude_benchmarks)
    counter = TokenCounter(filters.tokenizer)
    loaded = [read_run(f) for f in files]
    samples, refusals, exported = _select_all(loaded, Selector(filters, exclusions, counter))
    samples.sort(key=lambda s: s.sample_id)
    refusals.sort(key=lambda r: (r.benchmark, r.teacher_model, r.qid, r.run_index, r.source_run))
    sources = [_source(run, n) for run, n in zip(loaded, exported, strict=True)]
    card = _card(filters, counter, samples, refusals, sources, exclusions.questions)
    staging = StagingDir(out)
    try:
        hashes = write_samples(staging.path, samples, refusals, with_val=filters.val_fraction > 0)
        card = card.model_copy(update={"files": hashes})
        (staging.path / "card.json").write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
        (staging.path / "README.md").write_text(card_markdown(card), encoding="utf-8")
        staging.commit()
    except BaseException:
        staging.discard()
        raise
    return ExportResult(out=out, card=card, samples=samples, refusals=refusals)
