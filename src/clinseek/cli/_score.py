"""``clinseek score DIR`` and ``clinseek compare DIR_A DIR_B``: deterministic scoring, paired tables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import anyio
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
        help="clinseek: runner results.jsonl under <benchmark>/<mode>/<model>/; "
        "reference: ClinSeek-Evaluation-Results files under {agentic,oneshot}/.",
    ),
]
_Seed = Annotated[int, typer.Option("--seed", help="Seed of the paired bootstrap.")]
_Resamples = Annotated[int, typer.Option("--resamples", min=1, help="Paired bootstrap resamples (at least 1).")]


def _layout(value: str) -> scoring.Layout:
    if value not in ("clinseek", "reference"):
        raise typer.BadParameter(f"expected 'clinseek' or 'reference', got {value!r}", param_hint="--layout")
    return value  # type: ignore[return-value]


def _paired_table(comparison: scoring.PairedComparison) -> Table:
    table = Table(title=f"Δ = A − B (F1, pp)   A = {comparison.a}   B = {comparison.b}")
    for name in scoring.DELTA_HEADER:
        table.add_column(name, justify="left" if name == "group" else "right", no_wrap=name == "group")
    for group in scoring.table_groups(comparison):
        table.add_row(*scoring.delta_cells(group))
    return table


def _runs_table(report: scoring.ScoreReport) -> Table:
    table = Table(title=f"Scores of {report.source}")
    for name in ("benchmark", "mode", "model", "n", "F1", "macro F1", "EM", "no answer", "missing", "infra err"):
        table.add_column(name, justify="left" if name in ("benchmark", "mode", "model") else "right")
    for run in report.runs:
        o = run.overall
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


async def _judge(
    scored: scoring.ScoredResults, name: str, base_url: str | None, concurrency: int
) -> scoring.ScoredResults:
    from ..models import get_model

    model = get_model(name, base_url=base_url)
    try:
        judge = scoring.chat_model_judge(model)
        return await scoring.judge_scored(scored, judge, judge_name=name, concurrency=concurrency)
    finally:
        await model.aclose()


def _print_scores(scored: scoring.ScoredResults, written: list[Path]) -> None:
    console = table_console()
    for run, n in sorted(scored.report.outside_manifest.items()):
        console.print(f"{run}: {n} result rows left out (their question is not in the manifest)")
    console.print(_runs_table(scored.report))
    table3 = _table3(scored.report)
    if table3 is not None:
        console.print(table3)
    for comparison in scored.report.paired:
        console.print(_paired_table(comparison))
    _print_bad_rows(console, scored.report.bad_rows)
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
    layout: _Layout = "clinseek",
    manifest: Annotated[
        Path | None,
        typer.Option("--manifest", help="Benchmark manifest: its questions without a result score 0."),
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
) -> None:
    """Score results deterministically (no network): per_question.jsonl, summary.json, summary.md."""
    target = check_out(out or (results if results.is_dir() else results.parent), "dir")
    expected = scoring.read_expected(manifest) if manifest else ()
    scored = scoring.score_path(
        results,
        layout=_layout(layout),
        score_infra_errors=score_infra_errors,
        expected=expected,
        n_resamples=resamples,
        seed=seed,
    )
    if judge:
        scored = anyio.run(_judge, scored, judge, judge_base_url, judge_concurrency)
    _print_scores(scored, scoring.write_scores(scored, target))


@app.command("compare")
def compare_cmd(
    dir_a: Annotated[Path, typer.Argument(help="Results of run A (directory or file).")],
    dir_b: Annotated[Path, typer.Argument(help="Results of run B (directory or file).")],
    layout: _Layout = "clinseek",
    layout_b: Annotated[
        str | None, typer.Option("--layout-b", help="Layout of DIR_B when it differs from --layout.")
    ] = None,
    seed: _Seed = 0,
    resamples: _Resamples = 10_000,
) -> None:
    """Print the paired table Δ = A − B over common question ids (bootstrap CI, t-interval, McNemar)."""
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
