"""Tables in the shape of the dataset card's "By category" table.

One table per benchmark: a row per category in card order with the card's names (categories outside
the card follow), then an Overall row; per model, side by side, Curated Input F1, ClinSeekAgent F1
and Δ = agent − curated over the questions scored in both, marked significant when its paired
bootstrap 95 % CI excludes 0 over five or more paired questions (the card prints such Δ in bold). ``N`` is the category's question
count (the largest over the table's runs). All numbers come from the run summaries and paired
comparisons unchanged; the markdown, the console and the HTML report render the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._categories import card_sorted, category_title
from ._summary_model import GroupDelta, GroupStats, PairedComparison, RunScores

OVERALL = "overall"


@dataclass(frozen=True, slots=True)
class CardCell:
    """One model's three numbers in one row (fractions in [0, 1]; ``None`` = not run / not paired)."""

    curated: float | None
    agent: float | None
    delta: GroupDelta | None

    @property
    def significant(self) -> bool:
        """:attr:`GroupDelta.significant` (the CI excludes 0 over at least five paired questions)."""
        return self.delta is not None and self.delta.significant


@dataclass(frozen=True, slots=True)
class CardRow:
    """A category (``group`` = ``category:<slug>``) or the Overall row (``group`` = ``overall``)."""

    group: str
    title: str
    n: int
    cells: dict[str, CardCell]


@dataclass(frozen=True, slots=True)
class CardTable:
    """The card-shaped table of one benchmark."""

    benchmark: str
    models: list[str]
    rows: list[CardRow]


def _stats(run: RunScores | None, group: str) -> GroupStats | None:
    if run is None:
        return None
    return run.overall if group == OVERALL else run.per_category.get(group.removeprefix("category:"))


def _delta(pair: PairedComparison | None, group: str) -> GroupDelta | None:
    return None if pair is None else next((g for g in pair.groups if g.group == group), None)


def card_tables(runs: Sequence[RunScores], paired: Sequence[PairedComparison]) -> list[CardTable]:
    """One :class:`CardTable` per benchmark of ``runs`` (sorted), models sorted, categories in card order.

    ``paired`` supplies Δ: the agent − curated comparison labelled ``<bench>/agent/<model>`` vs
    ``<bench>/curated/<model>`` (as ``score`` writes them); a model without one shows no Δ.
    """
    by_key = {(r.benchmark, r.mode, r.model): r for r in runs}
    pairs = {(c.a, c.b): c for c in paired}
    tables = []
    for bench in sorted({r.benchmark for r in runs}):
        bench_runs = [r for r in runs if r.benchmark == bench]
        models = sorted({r.model for r in bench_runs})
        groups = [f"category:{c}" for c in card_sorted(c for r in bench_runs for c in r.per_category)] + [OVERALL]
        rows = []
        for group in groups:
            cells = {}
            for model in models:
                curated, agent = by_key.get((bench, "curated", model)), by_key.get((bench, "agent", model))
                c_stats, a_stats = _stats(curated, group), _stats(agent, group)
                pair = pairs.get((f"{bench}/agent/{model}", f"{bench}/curated/{model}"))
                cells[model] = CardCell(c_stats.f1 if c_stats else None, a_stats.f1 if a_stats else None,
                                        _delta(pair, group))
            n = max((s.n_questions for r in bench_runs if (s := _stats(r, group)) is not None), default=0)
            title = "Overall" if group == OVERALL else category_title(group.removeprefix("category:"))
            rows.append(CardRow(group, title, n, cells))
        tables.append(CardTable(bench, models, rows))
    return tables


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def delta_text(cell: CardCell) -> str:
    """Δ in percentage points with its sign (``+2.2``, ``−1.7``, ``0.0``), ``–`` when not paired."""
    if cell.delta is None:
        return "–"
    value = 100 * cell.delta.delta
    if round(value, 1) == 0:
        return "0.0"
    return f"+{value:.1f}" if value > 0 else f"−{-value:.1f}"


def card_header(table: CardTable) -> list[str]:
    """``Category``, ``N``, then ``<model> Curated``, ``<model> Agent``, ``Δ`` per model."""
    return ["Category", "N", *[h for m in table.models for h in (f"{m} Curated", f"{m} Agent", "Δ")]]


def card_cells(table: CardTable, row: CardRow, *, bold: tuple[str, str] = ("**", "**")) -> list[str]:
    """The cells of one row as text (F1 in %, one decimal); a significant Δ is wrapped in ``bold``."""
    cells = [row.title, str(row.n)]
    for model in table.models:
        cell = row.cells[model]
        delta = delta_text(cell)
        cells += [_pct(cell.curated), _pct(cell.agent), f"{bold[0]}{delta}{bold[1]}" if cell.significant else delta]
    return cells


def card_markdown(table: CardTable) -> list[str]:
    """One card table as markdown lines (a significant Δ in bold)."""
    header = card_header(table)
    lines = [f"## By category: {table.benchmark}", "",
             "| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(card_cells(table, row)) + " |" for row in table.rows]
    note = ("F1 (%). Δ = ClinSeekAgent − Curated Input over the questions scored in both, computed before "
            "rounding; bold Δ: its paired bootstrap 95 % CI excludes 0. N: questions of the category.")
    return [*lines, "", note, ""]
