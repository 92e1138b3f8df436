"""What ``clinseek score`` and ``clinseek compare`` print: runs, card, paired, Table 3 and scorer tables."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from .. import scoring
from ._console import table_console


def card_table(table: scoring.CardTable) -> Table:
    """A card-shaped table for the console (a significant Δ in bold)."""
    out = Table(title=f"By category: {table.benchmark} (F1 %; bold Δ: paired bootstrap 95% CI excludes 0)")
    for i, name in enumerate(scoring.card_header(table)):
        out.add_column(name, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in table.rows:
        out.add_row(*scoring.card_cells(table, row, bold=("[bold]", "[/bold]")),
                    end_section=row is table.rows[-2] if len(table.rows) > 1 else False)
    return out


def _scorers_table(run: scoring.RunScores) -> Table:
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


def paired_table(comparison: scoring.PairedComparison) -> Table:
    """The paired table Δ = A − B of one comparison, with its column legend."""
    unpaired = scoring.unpaired_note(comparison)
    table = Table(title=f"Δ = A − B (F1, pp)   A = {comparison.a}   B = {comparison.b}",
                  caption=scoring.column_legend(scoring.DELTA_HEADER) + (f"\n{unpaired}" if unpaired else ""))
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


def print_scores(scored: scoring.ScoredResults, written: list[Path]) -> None:
    """What was read, the runs table, Table 3, the card and paired tables, bad rows and the files written."""
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
        console.print(paired_table(comparison))
    if "reference" in report.scorers:
        console.print(f"Beside clinseek's F1, never mixed into it: {report.reference_rules}", markup=False,
                      highlight=False, soft_wrap=True)
        for run in report.runs:
            console.print(_scorers_table(run))
    print_bad_rows(console, report.bad_rows)
    console.print("wrote " + ", ".join(str(p) for p in written))


_SHOWN_BAD_ROWS = 20


def print_bad_rows(console: Console, bad_rows: list[str]) -> None:
    """Each unreadable row (``file:line: problem``), the first 20, then how many more."""
    if not bad_rows:
        return
    console.print(f"{len(bad_rows)} unreadable rows skipped:", markup=False, highlight=False)
    for problem in bad_rows[:_SHOWN_BAD_ROWS]:
        console.print(f"  {problem}", markup=False, highlight=False, soft_wrap=True)
    if len(bad_rows) > _SHOWN_BAD_ROWS:
        console.print(f"  ... and {len(bad_rows) - _SHOWN_BAD_ROWS} more", markup=False, highlight=False)
