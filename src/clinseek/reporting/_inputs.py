"""Find and read what a report is made of: scores (``summary.json``, ``per_question.jsonl``),
result files (``results.jsonl``) and run manifests (``run_manifest.json``) under each input folder."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ..errors import ReportError, ScoringError
from ..records import RunManifest, read_run_manifest
from ..scoring import (
    PairedComparison,
    QuestionScore,
    RunScores,
    ScoreReport,
    SourceFormat,
    find_results,
    missing_agent_curated_pairs,
    results_fingerprints,
    score_path,
)

RunKey = tuple[str, str, str]
"""``(benchmark, mode, model)``: one run, as the scorer keys it."""


@dataclass(frozen=True, slots=True)
class ReportSource:
    """One input folder of a report, resolved.

    ``scores`` is where ``summary.json`` was read (``None`` when the folder was scored on the fly);
    ``results`` is the root under which ``results.jsonl`` files were found (``None`` = none found:
    the report then has scores but no trajectories).
    """

    folder: Path
    scores: Path | None
    results: Path | None
    result_files: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class ReportInputs:
    """Everything a report shows, merged over its input folders (run keys are unique across them)."""

    sources: list[ReportSource]
    runs: list[RunScores]
    """One ``RunScores`` per (benchmark, mode, model), as ``summary.json`` holds it."""
    paired: list[PairedComparison]
    """Every paired comparison of the inputs' ``summary.json``, plus any agent − curated pair the
    report computed because its two modes came from different folders (see ``computed_pairs``)."""
    questions: list[QuestionScore]
    """Per-question scores (``per_question.jsonl``) of every run."""
    manifests: dict[RunKey, RunManifest] = field(default_factory=dict)
    """``run_manifest.json`` of each run whose result folder holds one."""
    computed_pairs: list[str] = field(default_factory=list)
    """Labels (``benchmark/agent/model``) of agent − curated comparisons computed by the report."""
    notes: list[str] = field(default_factory=list)
    """Things the reader should know (bad rows skipped, folders scored on the fly...)."""


def _summary_dir(folder: Path) -> Path | None:
    """Where ``summary.json`` is: the folder itself, or its ``scores/`` (a ``clinseek demo`` folder)."""
    for candidate in (folder, folder / "scores"):
        if (candidate / "summary.json").is_file():
            return candidate
    return None


def _results_root(folder: Path, scores: Path, report: ScoreReport) -> Path | None:
    """The results root of scores read from ``scores``: the demo's ``runs/``, the folder itself, or
    the scored ``source`` (absolute, relative to the working directory or to the scores folder)."""
    source = Path(report.source)
    candidates = [folder / "runs", folder, source, scores / source, scores.parent / source]
    for candidate in candidates:
        if candidate.is_dir() and any(candidate.rglob("results.jsonl")):
            return candidate
    if source.is_file():
        return source.parent
    return None


def read_question_scores(path: Path) -> list[QuestionScore]:
    """Read ``per_question.jsonl`` (one :class:`~clinseek.scoring.QuestionScore` per line).

    Raises:
        ReportError: the file is missing, or a line is not a valid question score (names the line).
    """
    if not path.is_file():
        raise ReportError(f"{path}: not found; it is written beside summary.json by `clinseek score`")
    out: list[QuestionScore] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                out.append(QuestionScore.model_validate_json(line))
            except ValidationError as err:
                raise ReportError(f"{path}:{number}: not a question score: {err.errors()[0]['msg']}") from None
    return out


def _read_summary(path: Path) -> ScoreReport:
    try:
        return ScoreReport.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as err:
        raise ReportError(f"{path}: not a clinseek summary.json: {str(err).splitlines()[0]}") from None


_CLINSEEK_ROWS: tuple[SourceFormat, ...] = ("clinseek",)


def _scored_files(results: Path | None) -> tuple[Path, ...]:
    if results is None:
        return ()
    try:  # trajectories come from clinseek's own rows (the reference's files have no ResultRow)
        return tuple(find_results(results, formats=_CLINSEEK_ROWS))
    except ScoringError:
        return ()


def load_source(folder: Path | str) -> tuple[ReportSource, ScoreReport, list[QuestionScore]]:
    """Resolve one input folder and read its scores.

    A folder is one of: a scores folder (``summary.json`` + ``per_question.jsonl``, as written by
    ``clinseek score``); a ``clinseek demo`` folder (``scores/`` and ``runs/``); a results folder
    without scores, which is then scored here (paired bootstrap: 10,000 resamples, seed 0).

    Raises:
        ReportError: the folder does not exist or holds neither scores nor ``results.jsonl`` files,
            or its ``summary.json`` / ``per_question.jsonl`` cannot be read.
    """
    root = Path(folder)
    if root.is_file() and root.name == "summary.json":
        root = root.parent
    if not root.is_dir():
        raise ReportError(f"{root}: no such folder")
    scores = _summary_dir(root)
    if scores is not None:
        report = _read_summary(scores / "summary.json")
        questions = read_question_scores(scores / "per_question.jsonl")
        results = _results_root(root, scores, report) if report.layout != "reference" else None
        if results is not None:
            _check_fresh(scores, results, report)
        return ReportSource(root, scores, results, _scored_files(results)), report, questions
    try:
        scored = score_path(root)
    except ScoringError as err:
        raise ReportError(f"{root}: holds neither summary.json (clinseek score) nor results.jsonl files (clinseek "
                          f"run, or the reference's layout) that can be scored ({err})") from None
    files = _scored_files(root)
    return ReportSource(root, None, root if files else None, files), scored.report, scored.questions


def _check_fresh(scores: Path, results: Path, report: ScoreReport) -> None:
    """Refuse scores whose result files changed after ``clinseek score`` wrote them (rows added by a
    resumed run, a rerun, a file removed): the report would show numbers its trajectories contradict.

    Raises:
        ReportError: names the changed, new and missing result files and the command that rescores.
    """
    if not report.results_sha256:  # scored before clinseek recorded them: nothing to check against
        return
    source = Path(report.source)  # what was scored; where it is now, else the results found for the report
    scored = next((c for c in (source, scores / source, scores.parent / source) if c.exists()), results)
    try:
        now = results_fingerprints(scored)
    except ScoringError:  # every result file is gone
        now = {}
    then = report.results_sha256
    changed = sorted(k for k in then.keys() & now.keys() if then[k] != now[k])
    new, gone = sorted(now.keys() - then.keys()), sorted(then.keys() - now.keys())
    if changed or new or gone:
        parts = [f"{label}: {', '.join(names[:3])}{' …' if len(names) > 3 else ''}"
                 for label, names in (("changed", changed), ("new", new), ("missing", gone)) if names]
        raise ReportError(f"{scores}: the scores are older than the results in {scored} ({'; '.join(parts)}); "
                          f"rescore first: clinseek score {shlex.quote(str(scored))} --out {shlex.quote(str(scores))}")


def _run_key(summary: RunScores) -> RunKey:
    return (summary.benchmark, summary.mode, summary.model)


def _manifests(sources: Sequence[ReportSource]) -> dict[RunKey, RunManifest]:
    found: dict[RunKey, RunManifest] = {}
    for source in sources:
        for path in source.result_files:
            manifest = read_run_manifest(path.parent)
            if manifest is not None:
                found[(manifest.benchmark, manifest.mode, manifest.model)] = manifest
    return found


def load_inputs(folders: Sequence[Path | str]) -> ReportInputs:
    """Read and merge the scores, result files and run manifests of every input folder.

    Raises:
        ReportError: no folder given, a folder cannot be read (see :func:`load_source`), or two
            folders hold the same run (benchmark, mode, model).
    """
    if not folders:
        raise ReportError("no input folder given")
    sources: list[ReportSource] = []
    runs: list[RunScores] = []
    paired: list[PairedComparison] = []
    questions: list[QuestionScore] = []
    notes: list[str] = []
    seen: dict[RunKey, Path] = {}
    for folder in folders:
        source, report, qs = load_source(folder)
        for run in report.runs:
            if _run_key(run) in seen:
                raise ReportError(
                    f"run {'/'.join(_run_key(run))} is in both {seen[_run_key(run)]} and {source.folder}; give it once"
                )
            seen[_run_key(run)] = source.folder
        sources.append(source)
        runs += report.runs
        paired += report.paired
        questions += qs
        notes += _source_notes(source, report)
    extra = missing_agent_curated_pairs(runs, paired, questions)
    return ReportInputs(sources, runs, paired + extra, questions, _manifests(sources),
                        computed_pairs=[c.a for c in extra], notes=notes)


def _source_notes(source: ReportSource, report: ScoreReport) -> list[str]:
    notes = []
    if source.scores is None:
        notes.append(f"{source.folder}: no summary.json; scored here (bootstrap 10,000 resamples, seed 0)")
    if report.layout == "reference":
        notes.append(f"{source.folder}: scores of the reference layout; trajectories are shown for clinseek runs only")
    elif source.results is None:
        notes.append(f"{source.folder}: no results.jsonl found; trajectories are not shown for its runs")
    if report.bad_rows:
        notes.append(f"{source.scores or source.folder}: {len(report.bad_rows)} unreadable result rows were skipped "
                     "by the scorer (listed in summary.json)")
    return notes
