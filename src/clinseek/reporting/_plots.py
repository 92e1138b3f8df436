"""The report's figures, as inline SVG: per-category F1 by mode, forest plot of Δ, tool-call
distributions, usage distributions and F1 against cost."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from ..agent import is_scripted_baseline
from ..scoring import PairedComparison, QuestionScore, RunSummary, Usage
from ._svg import PALETTE, ForestRow, Series, bars, boxes, donut, forest, grouped_bars, scatter

MODE_COLORS = {"curated": "#6c8ebf", "agent": "#e07b39"}
"""Curated Input in blue, ClinSeekAgent (agent mode) in orange, everywhere in the report."""
MODE_NAMES = {"curated": "Curated Input", "agent": "ClinSeekAgent"}


def mode_name(mode: str, model: str) -> str:
    """How the report names a run's mode: "Curated Input", and "ClinSeekAgent" for a model in agent
    mode; a scripted baseline is not ClinSeekAgent ("Agent mode (scripted baseline)")."""
    if mode == "agent" and is_scripted_baseline(model):
        return "Agent mode (scripted baseline)"
    return MODE_NAMES[mode]


def category_f1_bars(curated: RunSummary | None, agent: RunSummary | None, title: str) -> str:
    """Grouped bars of mean F1 per category, Curated Input beside ClinSeekAgent (one model, one benchmark)."""
    runs = [(mode, run) for mode, run in (("curated", curated), ("agent", agent)) if run is not None]
    categories = sorted({c for _, run in runs for c in run.per_category})
    series = [Series(MODE_NAMES[mode], MODE_COLORS[mode],
                     [run.per_category[c].f1 if c in run.per_category else None for c in categories])
              for mode, run in runs]
    return grouped_bars(categories, series, label=f"F1 per category, {title}")


def delta_forest(comparison: PairedComparison, title: str) -> str:
    """Forest plot of Δ F1 (paired bootstrap 95 % CI): overall, task types (when several), categories."""
    types = [g for g in comparison.groups if g.group.startswith("task_type:")]
    shown = [g for g in comparison.groups if g.group == "overall"]
    shown += types if len(types) > 1 else []
    shown += [g for g in comparison.groups if g.group.startswith("category:")]
    rows = [ForestRow(g.group.split(":", 1)[-1].replace("_", " "), g.delta, g.ci_low, g.ci_high, g.n,
                      strong=g.group == "overall" or g.group.startswith("task_type:")) for g in shown]
    return forest(rows, label=f"Δ F1 with 95 % CI, {title}")


def tool_family(name: str) -> str:
    """The family of a canonical tool name: its prefix before the first dot (``ehr``, ``browser``, ``image``)."""
    return name.split(".", 1)[0] if "." in name else "other"


def tool_bars(run: RunSummary) -> str:
    """Calls per tool over all runs of one run key, most used first."""
    items = sorted(run.usage.tool_calls_by_name.items(), key=lambda kv: (-kv[1], kv[0]))
    return bars([(name, float(count)) for name, count in items], label=f"tool calls by tool, {run.model}",
                color=MODE_COLORS["agent"])


def family_donut(run: RunSummary) -> str:
    """Share of tool calls per tool family (the paper's pie charts)."""
    counts: Counter[str] = Counter()
    for name, count in run.usage.tool_calls_by_name.items():
        counts[tool_family(name)] += count
    parts = [(family, float(n), PALETTE[i % len(PALETTE)]) for i, (family, n) in enumerate(counts.most_common())]
    return donut(parts, label=f"tool calls by family, {run.model}")


def _usage_values(questions: Sequence[QuestionScore], get: Callable[[Usage], float | None]) -> list[float]:
    values = [get(run.usage) for q in questions for run in q.runs]
    return [float(v) for v in values if v is not None]


def _tokens(usage: Usage) -> float | None:
    if usage.input_tokens is None and usage.output_tokens is None:
        return None
    return float((usage.input_tokens or 0) + (usage.output_tokens or 0))


USAGE_METRICS: dict[str, tuple[str, Callable[[Usage], float | None]]] = {
    "turns": ("assistant turns per run", lambda u: u.turns),
    "tokens": ("tokens per run (input + output)", _tokens),
    "cost": ("cost per run (USD)", lambda u: u.cost_usd),
    "latency": ("wall time per run (s)", lambda u: u.latency_s),
}
"""Usage distributions drawn as box plots: key → (axis title, value of one run)."""


def usage_boxes(runs: dict[tuple[str, str, str], list[QuestionScore]], metric: str) -> str | None:
    """Box plots of one usage metric (``turns``, ``tokens``, ``cost``, ``latency``), one row per run;
    ``None`` when no run reported a non-zero value (scripted baselines cost $0 and count no tokens): an
    empty chart would read as data."""
    axis, get = USAGE_METRICS[metric]
    rows = [(f"{model} · {mode}", _usage_values(qs, get), MODE_COLORS.get(mode, PALETTE[0]))
            for (_bench, mode, model), qs in runs.items()]
    if not any(v for _, values, _ in rows for v in values):
        return None
    return boxes(rows, label=axis, axis=axis)


def cost_scatter(runs: Sequence[RunSummary]) -> tuple[str | None, list[str]]:
    """F1 (overall, micro) against mean cost per run (USD), one point per (model, mode) of one benchmark.

    Returns the chart (``None`` when no run reported a cost above $0) and the runs left out for lack of
    one (cost unknown, or $0: a scripted baseline or a local model).
    """
    points, missing = [], []
    for run in runs:
        u = run.usage
        if not u.cost_usd_total or not u.n_cost_reported or run.overall.f1 is None:
            missing.append(f"{run.model} · {run.mode}")
            continue
        points.append((f"{run.model} · {run.mode}", u.cost_usd_total / u.n_cost_reported, run.overall.f1,
                       MODE_COLORS.get(run.mode, PALETTE[0])))
    if not points:
        return None, missing
    chart = scatter(points, label="F1 against cost", x_axis="mean cost per run (USD)", y_axis="F1 (overall)")
    return chart, missing
