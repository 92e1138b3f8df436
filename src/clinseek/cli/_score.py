"""``clinseek score DIR`` and ``clinseek compare DIR_A DIR_B``: deterministic scoring, paired tables."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import app
from ._console import table_console
from ._out import check_out

if TYPE_CHECKING:
    from .. import scoring

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
    from .. import scoring
    from ._score_render import print_scores

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
    print_scores(scored, list(scored.files))


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
    from .. import scoring
    from ._score_render import card_table, paired_table, print_bad_rows

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
        console.print(paired_table(comparison))
    print_bad_rows(console, bad_rows)
