"""``summary.md`` and the paired tables as text (markdown); the CLI renders the same rows with rich."""

from __future__ import annotations

from ._summary_model import GroupDelta, GroupStats, PairedComparison, RunSummary, ScoreReport


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


def _run_md(run: RunSummary) -> list[str]:
    rows = [_stats_row("overall (micro)", run.overall)]
    rows += [_stats_row(f"type: {k}", g) for k, g in run.per_task_type.items()]
    rows += [_stats_row(f"category: {k}", g) for k, g in run.per_category.items()]
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
    return [head, "", *_md_table(_STATS_HEADER, rows), "", macro, "", usage, ""]


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
    return [title, "", *_md_table(DELTA_HEADER, rows), "", note, ""]


def summary_markdown(report: ScoreReport) -> str:
    """The text of ``summary.md``: one table per run, then the agent − curated comparisons."""
    lines = [f"# Scores of {report.source}", ""]
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
    return "\n".join(lines)
