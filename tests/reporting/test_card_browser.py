"""The card-shaped table ("By category", two models side by side) in the HTML report, checked in headless
Chromium against summary.json: every Curated / Agent / Δ cell, the card's order and names, and bold exactly
where the paired bootstrap CI excludes 0. The runs are the reference-layout tree of the scoring tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _reference_tree import GLM, OPUS, TEXT_ORDER, build_tree
from _report_helpers import open_offline

from clinseek.reporting import build_report, load_inputs
from clinseek.scoring import (
    ScoreReport,
    card_tables,
    category_title,
    delta_text,
    pct,
    score_path,
    write_scores,
)


@pytest.fixture(scope="module")
def card_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ScoreReport]:
    root = tmp_path_factory.mktemp("card_report")
    tree = build_tree(root / "results")
    scores = root / "scores"
    write_scores(score_path(tree / "ehr_bench", n_resamples=500), scores)
    report = ScoreReport.model_validate_json((scores / "summary.json").read_text())
    return build_report(load_inputs([scores]), root / "report.html").path, report


@pytest.fixture
def card_page(browser: Any, card_report: tuple[Path, ScoreReport]) -> Iterator[Any]:
    yield from open_offline(browser, card_report[0])


def test_card_table_in_the_report_equals_summary_json(card_page: Any, card_report: tuple[Path, ScoreReport],
                                                       tmp_path: Path) -> None:
    _, report = card_report
    (table,) = card_tables(report.runs, report.paired)
    html = card_page.locator('table.card[data-bench="ehr_bench"]')
    assert html.count() == 1
    assert html.locator("th.model").all_inner_texts() == [OPUS, GLM]
    titles = html.locator("tbody tr td:first-child").all_inner_texts()
    assert titles == [*(category_title(c) for c in TEXT_ORDER), "Overall"]
    bold = 0
    for row in table.rows:
        n = html.locator(f'tr[data-group="{row.group}"] td:nth-child(2)').inner_text()
        assert int(n) == row.n
        for model in (OPUS, GLM):
            cell = row.cells[model]
            at = f'td[data-group="{row.group}"][data-model="{model}"]'
            assert html.locator(f'{at}[data-col="curated"]').inner_text() == pct(cell.curated)
            assert html.locator(f'{at}[data-col="agent"]').inner_text() == pct(cell.agent)
            delta = html.locator(f'{at}[data-col="delta"]')
            assert delta.inner_text() == delta_text(cell)
            weight = delta.evaluate("td => getComputedStyle(td.querySelector('b') || td).fontWeight")
            assert (int(weight) >= 700) == cell.significant, (row.title, model)
            bold += cell.significant
    assert 0 < bold < 2 * len(table.rows)  # both bold and plain Δ are shown
    html.screenshot(path=str(tmp_path / "card.png"))
    assert (tmp_path / "card.png").stat().st_size > 5_000
