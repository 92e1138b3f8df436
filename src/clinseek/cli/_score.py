"""``clinseek score DIR`` and ``clinseek compare DIR_A DIR_B``: deterministic scoring, paired tables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from .. import scoring
from ._app import app
from ._console import table_console
from ._out import check_out

_Layout = Annotated[
    str,
    typer.Option(
        "--layout",
        help="auto (default): tell each file's format from its rows (clinseek's runs, the reference's "
        "results, merged_unique.jsonl, scored and hierarchical rows); clinseek or reference: read every file as that.",
    ),
]
_Seed = Annotated[int, typer.Option("--seed", help="Seed of the paired bootstrap.")]
_Resamples = Annotated[int, typer.Option("--resamples", min=1, help="Paired bootstrap resamples (at least 1).")]


def _layout(value: str) -> scoring.Layout:
    if value not in ("auto", "clinseek", "reference"):
        raise typer.BadParameter(f"expected 'auto', 'clinseek' or 'reference', got {value!r}", param_hint="--layout")
    return value  # type: ignore[return-value]


def _scorer(value: str) -> scoring.Scorer:
    if value not in ("clinseek", "reference"):
        raise typer.BadParameter(f"expected 'clinseek' or 'reference', got {value!r}", param_hint="--scorer")
    return value  # type: ignore[return-value]


def card_table(table: scoring.CardTable) -> Table:
    """A card-shaped table for the console (a significant Δ in bold)."""
    out = Table(title=f"By category: {table.benchmark} (F1 %; bold Δ: paired bootstrap 95% CI excludes 0)")
    for i, name in enumerate(scoring.card_header(table)):
        out.add_column(name, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in table.rows:
        out.add_row(*scoring.card_cells(table, row, bold=("[bold]", "[/bold]")),
                    end_section=row is table.rows[-2] if len(table.rows) > 1 else False)
    return out


def _scorers_table(run: scoring.RunSummary) -> Table:
    table = Table(title=f"clinseek vs the reference's rules: {run.benchmark}/{run.mode}/{run.model} (F1 %)")
    for i, name in enumerate(scoring.SCORERS_HEADER):
        table.add_column(name, justify="left" if i == 0 else "right")
    for cells in scoring.scorer_rows(run):
        table.add_row(*cells)
    return table


def _print_sources(console: Console, report: scoring.ScoreReport) -> None:
    """What was read (path, format, rows, runs) and how much was left out."""
    for source in report.sources:
        runs = ", ".join(source.runs)
        console.print(f"read {source.path}: {scoring.FORMAT_NAMES[source.format]}, {source.rows} rows ({runs})",
                      markup=False, highlight=False, soft_wrap=True)
    for message in report.skipped_sources[:_SHOWN_BAD_ROWS]:
        console.print(f"left out {message}", markup=False, highlight=False, soft_wrap=True)
    if len(report.skipped_sources) > _SHOWN_BAD_ROWS:
        console.print(f"  ... and {len(report.skipped_sources) - _SHOWN_BAD_ROWS} more (summary.md lists them)",
                      markup=False, highlight=False)


def _paired_table(comparison: scoring.PairedComparison) -> Table:
    table = Table(title=f"Δ = A − B (F1, pp)   A = {comparison.a}   B = {comparison.b}",
                  caption=scoring.column_legend(scoring.DELTA_HEADER))
    for name in scoring.DELTA_HEADER:
        table.add_column(name, justify="left" if name == "group" else "right", no_wrap=name == "group")
    for group in scoring.table_groups(comparison):
        table.add_row(*scoring.delta_cells(group))
    return table


def _runs_table(report: scoring.ScoreReport) -> Table:
    columns = ("benchmark", "mode", "model", "n", "F1", "macro F1", "EM", "no answer", "missing", "infra err")
    table = Table(title=f"Scores of {report.source}", caption=scoring.column_legend(columns))
    strict = any(run.strict is not None for run in report.runs)
    for name in (*columns, *(["strict F1"] if strict else []), "answers by parse mode"):
        table.add_column(name, justify="left" if name in ("benchmark", "mode", "model", "answers by parse mode")
                         else "right")
    for run in report.runs:
        o = run.overall
        extra = [scoring.pct(run.strict.f1 if run.strict else None)] if strict else []
        table.add_row(
            run.benchmark,
            run.mode,
            run.model,
            str(o.n_questions),
            scoring.pct(o.f1),
            scoring.pct(run.macro_f1_over_categories),
            scoring.pct(o.exact_match),
            str(o.n_no_answer),
            str(o.n_missing),  # in the manifest, never run (summary.md's column of the same name)
            str(o.n_infra_error),
            *extra,
            ", ".join(f"{mode} {n}" for mode, n in run.parse_modes.items()) or "–",
        )
    return table


def _table3(report: scoring.ScoreReport) -> Table | None:
    """The paper's Table 3 view of the AgentEHR-Bench runs (``None`` when there are none)."""
    rows = scoring.table3_rows(report.runs)
    if not rows:
        return None
    table = Table(title="AgentEHR-Bench (Table 3): F1 %; average over the five Table 3 tasks")
    for name in scoring.TABLE3_HEADER:
        table.add_column(name, justify="left" if name in ("model", "mode") else "right")
    for row in rows:
        table.add_row(*scoring.table3_cells(row))
    return table


def _print_scores(scored: scoring.ScoredResults, written: list[Path]) -> None:
    console = table_console()
    report = scored.report
    _print_sources(console, report)
    for label, n in sorted(report.outside_manifest.items()):
        console.print(f"{label}: {n} result rows left out (their question is not in the manifest)")
    for label, qids in report.missing.items():
        shown = ", ".join(qids[:5]) + (", ..." if len(qids) > 5 else "")
        console.print(f"{label}: {len(qids)} questions of the manifest have no result row (scored 0): {shown}",
                      markup=False, highlight=False, soft_wrap=True)
    console.print(_runs_table(report))
    table3 = _table3(report)
    if table3 is not None:
        console.print(table3)
    for table in scoring.card_tables(report.runs, report.paired):
        console.print(card_table(table))
    for comparison in report.paired:
        console.print(_paired_table(comparison))
    if "reference" in report.scorers:
        console.print(f"Beside clinseek's F1, never mixed into it: {report.reference_rules}", markup=False,
                      highlight=False, soft_wrap=True)
        for run in report.runs:
            console.print(_scorers_table(run))
    _print_bad_rows(console, report.bad_rows)
    console.print("wrote " + ", ".join(str(p) for p in written))


_SHOWN_BAD_ROWS = 20


def _print_bad_rows(console: Console, bad_rows: list[str]) -> None:
    """Each unreadable row (``file:line: problem``), the first 20, then how many more."""
    if not bad_rows:
        return
    console.print(f"{len(bad_rows)} unreadable rows skipped:", markup=False, highlight=False)
    for problem in bad_rows[:_SHOWN_BAD_ROWS]:
        console.print(f"  {problem}", markup=False, highlight=False, soft_wrap=True)
    if len(bad_rows) > _SHOWN_BAD_ROWS:
        console.print(f"  ... and {len(bad_rows) - _SHOWN_BAD_ROWS} more", markup=False, highlight=False)


@app.command("score")
def score_cmd(
    results: Annotated[Path, typer.Argument(help="A results directory or one results file.")],
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default: DIR itself).")] = None,
    layout: _Layout = "auto",
    manifest: Annotated[
        Path | None,
        typer.Option("--manifest", help="Benchmark manifest (text, multimodal or AgentEHR; clinseek-built or "
                     "released) or benchmark folder: only its questions are scored, under its categories; "
                     "its questions without a result score 0 and are listed."),
    ] = None,
    scorer: Annotated[
        str,
        typer.Option("--scorer", help="clinseek (default), or reference: also score by the reference's offline "
                     "rules (binary ['yes','no'] = 0.667, questions without results dropped), reported beside "
                     "clinseek's F1, never mixed."),
    ] = "clinseek",
    reference_vocab_model: Annotated[
        Path | None,
        typer.Option("--reference-vocab-model", help="With --scorer reference: a local sentence-transformers "
                     "model folder (the reference uses all-MiniLM-L6-v2) for its multimodal vocabulary mapping; "
                     "default: no mapping."),
    ] = None,
    score_infra_errors: Annotated[
        bool,
        typer.Option(
            "--score-infra-errors", help="Score infrastructure errors as 0 instead of excluding them."
        ),
    ] = False,
    seed: _Seed = 0,
    resamples: _Resamples = 10_000,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge", help="Optional LLM judge 'provider:model' for MM single answers (separate column)."
        ),
    ] = None,
    judge_base_url: Annotated[
        str | None, typer.Option("--judge-base-url", help="Endpoint of the judge.")
    ] = None,
    judge_concurrency: Annotated[int, typer.Option("--judge-concurrency", help="Parallel judge calls.")] = 4,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Also score only answers in each mode's own format (agent: ehr.finish calls; curated: "
            "one <answer> block), reported beside the main scores ('strict F1'), never mixed into them."
        ),
    ] = False,
) -> None:
    """Score results deterministically (no network): per_question.jsonl, summary.json, summary.md.

    Reads clinseek's runs and the reference's files (ClinSeek-Evaluation-Results) alike, telling the
    format per file and saying what it read; prints the card-shaped table per benchmark.
    """
    target = check_out(out or (results if results.is_dir() else results.parent), "dir")
    chosen = _scorer(scorer)
    if reference_vocab_model is not None and chosen != "reference":
        raise typer.BadParameter("needs --scorer reference", param_hint="--reference-vocab-model")
    rules = None
    if reference_vocab_model is not None:
        from ..tools import load_encoder

        rules = scoring.ReferenceRules(embed=load_encoder(str(reference_vocab_model)),
                                       embed_name=reference_vocab_model.name)
    from ..api import score

    scored = score(results, out=target, manifest=manifest, layout=_layout(layout), scorer=chosen,
                   reference_rules=rules, score_infra_errors=score_infra_errors, strict=strict, n_resamples=resamples,
                   seed=seed, judge=judge or None, judge_base_url=judge_base_url, judge_concurrency=judge_concurrency)
    _print_scores(scored, list(scored.files))


@app.command("compare")
def compare_cmd(
    dir_a: Annotated[Path, typer.Argument(help="Results of run A (directory or file).")],
    dir_b: Annotated[Path, typer.Argument(help="Results of run B (directory or file).")],
    layout: _Layout = "auto",
    layout_b: Annotated[
        str | None, typer.Option("--layout-b", help="Layout of DIR_B when it differs from --layout.")
    ] = None,
    seed: _Seed = 0,
    resamples: _Resamples = 10_000,
    card: Annotated[
        bool,
        typer.Option("--card", help="Print the card-shaped table instead: the models of A and B side by side "
                     "(Curated, Agent, Δ per category; bold Δ: its bootstrap CI excludes 0)."),
    ] = False,
) -> None:
    """Print the paired table Δ = A − B over common question ids (bootstrap CI, t-interval, McNemar),
    or with --card the card-shaped table of both sides' runs."""
    if card:
        tables = scoring.card_tables_of(
            [dir_a, dir_b], layouts=[_layout(layout), _layout(layout_b or layout)], n_resamples=resamples, seed=seed
        )
        console = table_console()
        for table in tables:
            console.print(card_table(table))
        return
    bad_rows: list[str] = []
    comparisons = scoring.compare_paths(
        dir_a,
        dir_b,
        layout_a=_layout(layout),
        layout_b=_layout(layout_b or layout),
        n_resamples=resamples,
        seed=seed,
        bad_rows=bad_rows,
    )
    console = table_console()
    for comparison in comparisons:
        console.print(_paired_table(comparison))
    _print_bad_rows(console, bad_rows)
