"""Score a results directory, write its outputs, and compare two directories."""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from .._atomic import write_text_atomic
from ..errors import ScoringError
from ._aggregate import group_stats, score_questions, strict_view, summarize_run
from ._card import CardTable, card_tables
from ._discover import Layout, ResultSource, SourceFormat, discover
from ._judge import JudgeModel, apply_verdicts, judge_rows
from ._model import ScoreInput
from ._paired import OnChanged, compare_questions
from ._read import read_score_inputs
from ._reference import read_reference_results
from ._refscore import ReferenceRules, ReferenceScorer
from ._render import summary_markdown
from ._summary_model import PairedComparison, QuestionScore, RunScores, ScoreReport, SourceRead

Scorer = Literal["clinseek", "reference"]
logger = logging.getLogger("clinseek.scoring")


@dataclass(frozen=True, slots=True)
class ScoredResults:
    """Per-question scores and the summary of one scored directory or file."""

    questions: list[QuestionScore]
    report: ScoreReport
    inputs: list[ScoreInput]
    """The rows that were scored (what an optional judge looks at)."""
    reference: ReferenceScorer | None = None
    """The reference's rules, when they ran (``scorer="reference"``)."""
    files: tuple[Path, ...] = ()
    """The files :func:`write_scores` wrote for it (set by ``clinseek.score`` with ``out``)."""


def find_results(root: Path, layout: Layout = "auto", *, formats: Collection[SourceFormat] | None = None) -> list[Path]:
    """Result files under ``root`` (or ``root`` itself when it is a file), sorted (see :func:`discover`);
    with ``formats``, only the files of those formats (``("clinseek", "exported")``: rows that carry
    clinseek's fields, trajectories included).

    Raises:
        ScoringError: when ``root`` does not exist or holds no result file (of ``formats``).
    """
    found = discover(root, layout)
    files = [f for s in found.sources if formats is None or s.format in formats for f in s.files]
    if not files:
        raise ScoringError(f"{root}: no result files found" + (f" of format {', '.join(formats)}" if formats else ""))
    return files


def results_fingerprints(root: Path, layout: Layout = "auto") -> dict[str, str]:
    """SHA-256 (hex) of every result file under ``root`` (:func:`find_results`), by path relative to
    ``root`` (POSIX; the file's name when ``root`` is a file) — what ``ScoreReport.results_sha256`` holds.

    Raises:
        ScoringError: ``root`` does not exist or holds no result file.
    """
    out = {}
    for path in find_results(root, layout):
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        out[path.name if root.is_file() else path.relative_to(root).as_posix()] = digest.hexdigest()
    return out


def read_sources(
    root: Path, layout: Layout = "auto", bad_rows: list[ScoringError] | None = None
) -> tuple[list[ScoreInput], list[SourceRead], list[str]]:
    """Every score input under ``root``, what was read (one :class:`SourceRead` per source) and what was
    left out (see :func:`discover`); bad rows go to ``bad_rows``."""
    found = discover(root, layout)
    rows: list[ScoreInput] = []
    read: list[SourceRead] = []
    for source in found.sources:
        got = [r for path in source.files for r in _read_source(source, path, bad_rows)]
        runs = sorted({"/".join(r.run_key) for r in got}) or (["/".join(source.run_key)] if source.run_key else [])
        read.append(SourceRead(path=str(source.path), format=source.format, runs=runs, rows=len(got)))
        rows += got
    return rows, read, found.skipped


def _read_source(source: ResultSource, path: Path, bad_rows: list[ScoringError] | None) -> list[ScoreInput]:
    if source.is_reference:
        return read_reference_results(path, bad_rows=bad_rows, run_key=source.run_key)
    return read_score_inputs(path, bad_rows=bad_rows)


def load_score_inputs(root: Path, layout: Layout = "auto", bad_rows: list[ScoringError] | None = None) -> list[ScoreInput]:
    """Every score input under ``root`` (see :func:`read_sources`); bad rows go to ``bad_rows``."""
    return read_sources(root, layout, bad_rows)[0]


def _check_unique(rows: Sequence[ScoreInput]) -> None:
    seen: set[tuple[str, str, str, str, int]] = set()
    for row in rows:
        key = (*row.run_key, row.qid, row.run_index)
        if key in seen:
            raise ScoringError(
                f"duplicate result row for {'/'.join(key[:3])} qid {row.qid} run {row.run_index}"
            )
        seen.add(key)


def by_run(questions: Sequence[QuestionScore]) -> dict[tuple[str, str, str], list[QuestionScore]]:
    """Questions grouped by run key (benchmark, mode, model), keys sorted."""
    groups: dict[tuple[str, str, str], list[QuestionScore]] = defaultdict(list)
    for q in questions:
        groups[(q.benchmark, q.mode, q.model)].append(q)
    return dict(sorted(groups.items()))


def _agent_vs_curated(
    runs: dict[tuple[str, str, str], list[QuestionScore]], n_resamples: int, seed: int
) -> tuple[list[PairedComparison], list[str]]:
    """Agent − curated per (benchmark, model), over the questions both modes answered; qids whose
    questions differ are left out (listed in ``excluded_qids``, and logged), a pair where all differ
    is left out with a message (the second list)."""
    out: list[PairedComparison] = []
    problems: list[str] = []
    for (bench, mode, model), questions in runs.items():
        curated = runs.get((bench, "curated", model))
        if mode != "agent" or not curated:
            continue
        try:
            comparison = compare_questions(
                questions,
                curated,
                label_a=f"{bench}/agent/{model}",
                label_b=f"{bench}/curated/{model}",
                n_resamples=n_resamples,
                seed=seed,
                on_changed="exclude",
            )
        except ScoringError as err:  # every shared qid names another question
            logger.warning("%s", err)
            problems.append(str(err))
            continue
        except ValueError:  # no scored qid in common: nothing to pair
            continue
        if comparison.excluded_qids:
            logger.warning("%s vs %s: %d question ids left out (the modes answered different questions under them)",
                           comparison.a, comparison.b, len(comparison.excluded_qids))
        out.append(comparison)
    return out, problems


def missing_agent_curated_pairs(
    runs: Sequence[RunScores],
    paired: Sequence[PairedComparison],
    questions: Sequence[QuestionScore],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[PairedComparison]:
    """Agent − curated comparisons for the (benchmark, model)s whose two modes are both in ``runs``
    but that no comparison of ``paired`` covers: the two modes were scored from different folders
    (``clinseek report A B``, ``clinseek compare A B --card``). Computed as :func:`score_path` computes
    its own (``compare_questions`` with ``on_changed="exclude"``, over ``questions``); a pair with
    no question in common, or none naming the same question, is left out (its Δ shows as "–")."""
    have = {(c.a, c.b) for c in paired}
    by_key = by_run(questions)
    keys = {(r.benchmark, r.mode, r.model) for r in runs}
    out = []
    for bench, mode, model in sorted(keys):
        a, b = f"{bench}/agent/{model}", f"{bench}/curated/{model}"
        if mode != "agent" or (bench, "curated", model) not in keys or (a, b) in have:
            continue
        try:
            out.append(compare_questions(by_key.get((bench, "agent", model), []),
                                         by_key.get((bench, "curated", model), []), label_a=a, label_b=b,
                                         n_resamples=n_resamples, seed=seed, on_changed="exclude"))
        except (ValueError, ScoringError):  # no scored qid in common, or none names the same question
            continue
    return out


def score_path(
    path: Path | str,
    *,
    layout: Layout = "auto",
    score_infra_errors: bool = False,
    expected: Sequence[ScoreInput] = (),
    n_resamples: int = 10_000,
    seed: int = 0,
    strict: bool = False,
    scorer: Scorer = "clinseek",
    reference_rules: ReferenceRules | None = None,
) -> ScoredResults:
    """Score every result file under ``path`` deterministically (no network).

    Each file's format is told from its rows (``layout="auto"``; see :func:`discover`) unless
    ``layout`` says it; ``report.sources`` lists what was read and ``report.skipped_sources`` what was
    left out. Unreadable rows are skipped and listed in ``report.bad_rows``; every (benchmark, model)
    run in both modes gets an agent − curated paired comparison. With ``expected`` (a manifest),
    only its questions are scored: rows of other qids are counted in ``report.outside_manifest``,
    each question reports under the manifest's category, and questions without a result row score 0
    and are listed per run in ``report.missing``. ``scorer="reference"`` also scores every run by the
    reference's rules (:class:`ReferenceScorer`, with ``reference_rules``), reported beside clinseek's
    F1 in ``f1_reference``, never mixed into it. Every run counts its answers by ``parse_mode``; with
    ``strict``, each run also gets ``strict``: the overall statistics when only answers in the mode's own
    format count (:func:`strict_view`), beside the main numbers, which are unchanged.

    Raises:
        ScoringError: no result files, a duplicate (run key, qid, run_index), or no readable row.
    """
    root = Path(path)
    fingerprints = results_fingerprints(root, layout)
    bad_rows: list[ScoringError] = []
    rows, sources, skipped = read_sources(root, layout, bad_rows)
    if not rows:
        raise ScoringError(
            f"{root}: no readable result rows ({len(bad_rows)} bad rows; first: {bad_rows[:1]})"
        )
    _check_unique(rows)
    outside: dict[str, int] = {}
    if expected:  # score the manifest's questions only; say how many other rows the files hold
        templates = {t.qid: t for t in expected}
        for r in rows:
            if r.qid not in templates:
                run = f"{r.benchmark}/{r.mode}/{r.model}"
                outside[run] = outside.get(run, 0) + 1
        rows = [r.model_copy(update={"category": templates[r.qid].category}) for r in rows if r.qid in templates]
        if not rows:
            raise ScoringError(f"{root}: no result row answers a question of the manifest")
    reference = ReferenceScorer(rows, reference_rules) if scorer == "reference" else None
    questions = score_questions(rows, score_infra_errors=score_infra_errors, expected=expected, reference=reference)
    runs = by_run(questions)
    paired, problems = _agent_vs_curated(runs, n_resamples, seed)
    missing: dict[str, list[str]] = defaultdict(list)
    for q in questions:
        if q.status == "missing":
            missing[f"{q.benchmark}/{q.mode}/{q.model}"].append(q.qid)
    formats = {s.format for s in sources}
    summaries = [summarize_run(qs) for qs in runs.values()]
    if strict:
        strict_runs = by_run(score_questions([strict_view(r) for r in rows], score_infra_errors=score_infra_errors,
                                             expected=expected))
        summaries = [s.model_copy(update={"strict": group_stats(strict_runs[(s.benchmark, s.mode, s.model)])})
                     for s in summaries]
    report = ScoreReport(
        source=str(root),
        layout="clinseek" if formats == {"clinseek"} else "mixed" if "clinseek" in formats else "reference",
        score_infra_errors=score_infra_errors,
        runs=summaries,
        paired=paired,
        bad_rows=[str(e) for e in bad_rows],
        pairing_problems=problems,
        outside_manifest=outside,
        results_sha256=fingerprints,
        sources=sources,
        skipped_sources=skipped,
        missing=dict(sorted(missing.items())),
        scorers=["clinseek", "reference"] if reference else ["clinseek"],
        reference_rules=reference.rules.describe() if reference else None,
    )
    return ScoredResults(questions, report, rows, reference)


def write_scores(scored: ScoredResults, out_dir: Path | str) -> list[Path]:
    """Write ``per_question.jsonl``, ``summary.json`` and ``summary.md`` into ``out_dir``.

    Each file is written to a temporary name and renamed, so no half-written file is left.
    Returns the three paths.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        out / "per_question.jsonl": "".join(q.model_dump_json() + "\n" for q in scored.questions),
        out / "summary.json": scored.report.model_dump_json(indent=2) + "\n",
        out / "summary.md": summary_markdown(scored.report),
    }
    for path, text in files.items():
        write_text_atomic(path, text)
    return list(files)


def compare_paths(
    a: Path | str,
    b: Path | str,
    *,
    layout_a: Layout = "auto",
    layout_b: Layout = "auto",
    n_resamples: int = 10_000,
    seed: int = 0,
    bad_rows: list[str] | None = None,
    on_changed: OnChanged = "error",
) -> list[PairedComparison]:
    """Δ = A − B over the questions both sides answered, for each run present on both sides.

    When each side holds exactly one run, those two are compared (agent vs curated, model vs
    model); otherwise runs with the same (benchmark, mode, model) are paired. A question pairs
    only when its qid AND its question (``question_hash``) match (see :func:`compare_questions`);
    ``on_changed="exclude"`` leaves qids naming different questions out instead of failing.
    Unreadable rows of either side are skipped and, when ``bad_rows`` is given, appended to it
    (``file:line: problem``).

    Raises:
        ScoringError: when no run can be paired, paired runs share no scored question id, or a
            shared qid names different questions on the two sides (``on_changed="error"``).
    """
    scored_a, scored_b = score_path(a, layout=layout_a), score_path(b, layout=layout_b)
    if bad_rows is not None:
        bad_rows.extend([*scored_a.report.bad_rows, *scored_b.report.bad_rows])
    runs_a, runs_b = by_run(scored_a.questions), by_run(scored_b.questions)
    if len(runs_a) == 1 and len(runs_b) == 1:
        pairs = [(next(iter(runs_a)), next(iter(runs_b)))]
    else:
        pairs = [(key, key) for key in runs_a if key in runs_b]
    if not pairs:
        raise ScoringError(f"no run in {a} matches a run in {b}: {sorted(runs_a)} vs {sorted(runs_b)}")
    out = []
    for key_a, key_b in pairs:
        try:
            out.append(
                compare_questions(
                    runs_a[key_a],
                    runs_b[key_b],
                    label_a="/".join(key_a),
                    label_b="/".join(key_b),
                    n_resamples=n_resamples,
                    seed=seed,
                    on_changed=on_changed,
                )
            )
        except ValueError as err:
            raise ScoringError(str(err)) from err
    return out


def card_tables_of(
    paths: Sequence[Path | str], *, layouts: Sequence[Layout] | None = None, n_resamples: int = 10_000, seed: int = 0
) -> list[CardTable]:
    """The card-shaped tables of the runs under several folders together (models side by side).

    Each folder is scored (:func:`score_path`, with its agent − curated comparisons); a model whose
    agent and curated runs are in different folders gets its comparison here
    (:func:`missing_agent_curated_pairs`, as the HTML report does); the runs are then laid out by
    benchmark (:func:`card_tables`).

    Raises:
        ScoringError: a folder cannot be scored, or two folders hold the same run (benchmark, mode, model).
    """
    runs: list[RunScores] = []
    paired: list[PairedComparison] = []
    questions: list[QuestionScore] = []
    seen: dict[tuple[str, str, str], Path | str] = {}
    for i, path in enumerate(paths):
        scored = score_path(path, layout=layouts[i] if layouts else "auto", n_resamples=n_resamples, seed=seed)
        report = scored.report
        questions += scored.questions
        for run in report.runs:
            key = (run.benchmark, run.mode, run.model)
            if key in seen:
                raise ScoringError(f"run {'/'.join(key)} is in both {seen[key]} and {path}; a card table shows each "
                                   "model once")
            seen[key] = path
        runs += report.runs
        paired += report.paired
    paired += missing_agent_curated_pairs(runs, paired, questions, n_resamples=n_resamples, seed=seed)
    return card_tables(runs, paired)


async def judge_scored(
    scored: ScoredResults, judge: JudgeModel, *, judge_name: str, concurrency: int = 4
) -> ScoredResults:
    """``scored`` with LLM-judge verdicts on its multimodal single-answer rows, in the ``judge_*``
    columns only: every deterministic number (``runs[].strict`` included) and the paired comparisons
    stay as they were. Where the reference's rules ran, the verdicts also grade those rows'
    ``f1_reference``, as the reference does."""
    verdicts = await judge_rows(scored.inputs, judge, concurrency=concurrency)
    questions = apply_verdicts(scored.questions, verdicts)
    old = {(r.benchmark, r.mode, r.model): r for r in scored.report.runs}
    runs = [_keep_unsummarized(summarize_run(qs), old.get(key)) for key, qs in by_run(questions).items()]
    update: dict[str, object] = {"runs": runs, "judge_model": judge_name}
    reference = scored.reference
    if reference is not None:
        reference = ReferenceScorer(scored.inputs, replace(reference.rules, judge=judge_name))
        update["reference_rules"] = reference.rules.describe()
    return ScoredResults(questions, scored.report.model_copy(update=update), scored.inputs, reference)


def _keep_unsummarized(new: RunScores, old: RunScores | None) -> RunScores:
    """``new`` (rebuilt by :func:`summarize_run` with the judge's columns) with every field that
    ``summarize_run`` does not compute (``strict``, and any added beside it) kept from ``old``."""
    if old is None:
        return new
    return new.model_copy(update={name: getattr(old, name) for name in type(new).model_fields
                                  if name not in new.model_fields_set})
