"""``summary.md`` and the paired tables as text (markdown); the CLI renders the same rows with rich."""

from __future__ import annotations

from collections.abc import Iterable

from ._card import card_markdown, card_tables
from ._categories import category_title
from ._discover import FORMAT_NAMES
from ._paired import T_MIN_N
from ._summary_model import GroupDelta, GroupStats, PairedComparison, RunScores, ScoreReport


def pct(value: float | None) -> str:
    """A fraction as a percentage with one decimal (``0.6325`` → ``"63.2"``), ``"–"`` for None."""
    return "–" if value is None else f"{100 * value:.1f}"


def p_value(value: float | None) -> str:
    """A p-value with three significant digits, ``"–"`` for None."""
    return "–" if value is None else f"{value:.3g}"


def delta_cells(row: GroupDelta) -> list[str]:
    """Group, n, A, B, Δ, bootstrap CI, t-interval, p (t), McNemar p: all in percentage points."""
    return [
        row.group,
        str(row.n),
        pct(row.mean_a),
        pct(row.mean_b),
        f"{100 * row.delta:+.1f}",
        f"[{pct(row.ci_low)}, {pct(row.ci_high)}]",
        "–" if row.t_low is None else f"[{pct(row.t_low)}, {pct(row.t_high)}]",
        p_value(row.p_t),
        p_value(row.mcnemar_p),
    ]


DELTA_HEADER = ["group", "n", "A F1", "B F1", "Δ", "95% CI (bootstrap)", "95% CI (t)", "p (t)", "p (McNemar)"]
"""Column names of :func:`delta_cells`."""

COLUMN_LEGEND: dict[str, str] = {
    "95% CI (bootstrap)": "paired bootstrap percentile interval of Δ over questions",
    "95% CI (t)": (f"mean ± t(0.975, n−1)·sd/√n, clipped to the range F1 or Δ can take; '–' below n = {T_MIN_N}"),
    "p (t)": f"paired t-test of Δ = 0; '–' below n = {T_MIN_N}",
    "p (McNemar)": ("McNemar's test on right/wrong per question (exact below 25 discordant pairs); "
                    "yes/no questions only, '–' for groups with set answers"),
    "no answer": "runs with no valid answer (scored 0)",
    "missing": "questions of the manifest with no result row (scored 0)",
    "infra err": "runs that ended in an infrastructure error (left out of the scores; a rerun redoes them)",
}
"""What the less obvious columns of the score and paired tables mean (one source for every table)."""


def column_legend(columns: Iterable[str]) -> str:
    """One line explaining those of ``columns`` that :data:`COLUMN_LEGEND` knows ("" when none)."""
    return "; ".join(f"{c}: {COLUMN_LEGEND[c]}" for c in dict.fromkeys(columns) if c in COLUMN_LEGEND)


def table_groups(comparison: PairedComparison) -> list[GroupDelta]:
    """The rows the paired table shows: overall, task types, categories (not single tasks)."""
    return [g for g in comparison.groups if not g.group.startswith("task:")]


def _ci(ci: tuple[float, float] | None) -> str:
    return "–" if ci is None else f"[{pct(ci[0])}, {pct(ci[1])}]"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def _stats_row(name: str, g: GroupStats) -> list[str]:
    return [
        name,
        str(g.n_questions),
        pct(g.f1),
        _ci(g.f1_ci_t),
        pct(g.precision),
        pct(g.recall),
        pct(g.exact_match),
        str(g.n_no_answer),
        str(g.n_missing),
        str(g.n_infra_error),
        pct(g.judge_accuracy),
    ]


_STATS_HEADER = [
    "group",
    "n",
    "F1",
    "95% CI (t)",
    "P",
    "R",
    "EM",
    "no answer",
    "missing",
    "infra err",
    "judge acc",
]


def _run_md(run: RunScores) -> list[str]:
    rows = [_stats_row("overall (micro)", run.overall)]
    rows += [_stats_row(f"type: {k}", g) for k, g in run.per_task_type.items()]
    rows += [_stats_row(f"category: {category_title(k)}", g) for k, g in run.per_category.items()]
    rows += [_stats_row(f"task: {k}", g) for k, g in run.per_task.items()]
    u = run.usage
    usage = (
        f"Runs {u.n_runs}; tool calls/run {_num(u.tool_calls_mean)}; turns/run {_num(u.turns_mean)}; "
        f"input tokens {u.input_tokens_total or '–'}; output tokens {u.output_tokens_total or '–'}; "
        f"cost {'–' if u.cost_usd_total is None else f'${u.cost_usd_total:.4f}'} "
        f"({u.n_cost_reported} runs reported); latency mean {_num(u.latency_s_mean)} s, "
        f"p95 {_num(u.latency_s_p95)} s."
    )
    head = f"## {run.benchmark} / {run.mode} / {run.model}"
    macro = f"Macro F1 over categories: {pct(run.macro_f1_over_categories)}."
    return [head, "", *_md_table(_STATS_HEADER, rows), "", macro, "", parse_modes_line(run), "", usage, "",
            column_legend(_STATS_HEADER) + ".", ""]


def parse_modes_line(run: RunScores) -> str:
    """How the run's answers were read, and (``--strict``) the strict scores beside the main ones."""
    modes = ", ".join(f"{mode} {n}" for mode, n in run.parse_modes.items()) or "none"
    line = f"Answered runs by parse mode: {modes}."
    if run.strict is not None:
        s = run.strict
        line += (f" Strict (only the mode's own answer format counts): F1 {pct(s.f1)} {_ci(s.f1_ci_t)}, "
                 f"EM {pct(s.exact_match)}, {s.n_answered} of {s.n_questions} questions answered.")
    return line


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def paired_markdown(comparison: PairedComparison) -> list[str]:
    """One paired comparison as a markdown section (Δ in percentage points)."""
    rows = [delta_cells(g) for g in table_groups(comparison)]
    title = f"## Δ = A − B: A = {comparison.a}, B = {comparison.b}"
    note = f"Paired bootstrap: {comparison.n_resamples} resamples, seed {comparison.seed}."
    if comparison.excluded_qids:
        shown = ", ".join(comparison.excluded_qids[:10]) + (", ..." if len(comparison.excluded_qids) > 10 else "")
        note += (f" {len(comparison.excluded_qids)} question ids left out: A and B answered different questions "
                 f"under them (another benchmark build): {shown}.")
    unpaired = unpaired_note(comparison)
    if unpaired:
        note += f" {unpaired}"
    return [title, "", *_md_table(DELTA_HEADER, rows), "", note, "", column_legend(DELTA_HEADER) + ".", ""]


def unpaired_note(comparison: PairedComparison) -> str:
    """The questions one side scored and the other did not (no partner: left out of Δ), or ``""``."""
    parts = [f"{n} of {side}'s questions" for n, side in ((comparison.n_only_a, "A"), (comparison.n_only_b, "B")) if n]
    return f"Not paired (the other side did not score them): {' and '.join(parts)}." if parts else ""


SCORERS_HEADER = ["category", "n", "clinseek F1", "n (reference)", "reference F1", "Δ (reference − clinseek)"]
"""Column names of :func:`scorer_cells`."""


def scorer_cells(name: str, g: GroupStats) -> list[str]:
    """One group under both scorers: n, clinseek's F1, the reference's n and F1, their difference (pp)."""
    diff = "–" if g.f1 is None or g.f1_reference is None else f"{100 * (g.f1_reference - g.f1):+.1f}"
    return [name, str(g.n_questions), pct(g.f1), str(g.n_reference), pct(g.f1_reference), diff]


def scorer_rows(run: RunScores) -> list[list[str]]:
    """Per category (card order and names), then overall: :func:`scorer_cells`."""
    rows = [scorer_cells(category_title(k), g) for k, g in run.per_category.items()]
    return [*rows, scorer_cells("Overall", run.overall)]


def _scorers_md(report: ScoreReport) -> list[str]:
    if "reference" not in report.scorers:
        return []
    lines = ["# clinseek's scorer and the reference's rules", "",
             f"Beside clinseek's F1, never mixed into it: {report.reference_rules}. The reference drops questions "
             "without results (n differs when some are missing) and scores infrastructure errors 0.", ""]
    for run in report.runs:
        lines += [f"## {run.benchmark} / {run.mode} / {run.model}", "", *_md_table(SCORERS_HEADER, scorer_rows(run)), ""]
    return lines


def _sources_md(report: ScoreReport) -> list[str]:
    if not report.sources:
        return []
    lines = ["Read:", ""]
    lines += [f"- `{s.path}`: {FORMAT_NAMES[s.format]}, {s.rows} rows ({', '.join(s.runs) or 'no run'})"
              for s in report.sources]
    if report.skipped_sources:
        lines += ["", "Left out:", ""] + [f"- {msg}" for msg in report.skipped_sources]
    return [*lines, ""]


def _missing_md(report: ScoreReport) -> list[str]:
    if not report.missing:
        return []
    lines = ["Questions of the manifest without a result row (each scored 0):", ""]
    for run, qids in report.missing.items():
        shown = ", ".join(qids[:20]) + (f", ... and {len(qids) - 20} more" if len(qids) > 20 else "")
        lines.append(f"- {run}: {len(qids)}: {shown}")
    return [*lines, ""]


def summary_markdown(report: ScoreReport) -> str:
    """The text of ``summary.md``: what was read, the card-shaped tables, one table per run, the
    agent − curated comparisons, and (``--scorer reference``) both scorers side by side."""
    lines = [f"# Scores of {report.source}", "", *_sources_md(report), *_missing_md(report)]
    for table in card_tables(report.runs, report.paired):
        lines += card_markdown(table)
    if report.bad_rows:
        lines += [f"{len(report.bad_rows)} result rows could not be read and were skipped:", ""]
        lines += [f"- {msg}" for msg in report.bad_rows[:20]] + [""]
    if report.outside_manifest:
        lines += ["Result rows left out (their question is not in the manifest):", ""]
        lines += [f"- {run}: {n}" for run, n in sorted(report.outside_manifest.items())] + [""]
    for run in report.runs:
        lines += _run_md(run)
    from ._table3 import table3_markdown  # imports pct from this module

    lines += table3_markdown(report.runs)
    for comparison in report.paired:
        lines += paired_markdown(comparison)
    if report.pairing_problems:
        lines += ["Comparisons left out:", ""] + [f"- {msg}" for msg in report.pairing_problems] + [""]
    lines += _scorers_md(report)
    return "\n".join(lines)
