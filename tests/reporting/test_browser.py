"""End to end in headless Chromium (Debian's ``chromium`` driven by Playwright): the report of a small
``clinseek demo`` run opens offline, shows summary.json's numbers, filters, and opens trajectories.

Skipped when ``/usr/bin/chromium`` or the ``playwright`` package is absent (``.ci/run`` installs both;
Playwright never downloads a browser here: it drives the system one through ``executable_path``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _report_helpers import open_offline

from clinseek.reporting import ReportStats
from clinseek.scoring import ScoreReport, pct


@pytest.fixture
def page(browser: Any, demo_report: ReportStats) -> Iterator[Any]:
    """The demo report, opened from disk with every non-file request refused and recorded."""
    yield from open_offline(browser, demo_report.path)


def test_headline_numbers_equal_summary_json(page: Any, demo_dir: Path, tmp_path: Path) -> None:
    summary = ScoreReport.model_validate_json((demo_dir / "scores" / "summary.json").read_text())
    checked = 0
    for run in summary.runs:
        key = f"{run.benchmark}/{run.mode}/{run.model}"
        columns = ({f"task_type:{k}": g for k, g in run.per_task_type.items()} if len(run.per_task_type) > 1
                   else {f"category:{k}": g for k, g in run.per_category.items()})  # the paper's Table 1 / Table 2
        groups = {"overall": run.overall, **columns}
        for group, stats in groups.items():
            cell = page.locator(f'table.headline td[data-run="{key}"][data-group="{group}"]')
            assert cell.count() == 1, (key, group)
            assert cell.inner_text().strip() == pct(stats.f1)
            checked += 1
        macro = page.locator(f'table.headline td[data-run="{key}"][data-group="macro"]')
        assert macro.inner_text().strip() == pct(run.macro_f1_over_categories)
    pairs = [c for c in summary.paired if c.a.split("/")[1] == "agent" and c.b.split("/")[1] == "curated"]
    assert pairs
    for comparison in pairs:
        overall = next(g for g in comparison.groups if g.group == "overall")
        cell = page.locator(f'table.headline td[data-pair="{comparison.a}"][data-group="overall"]')
        assert cell.inner_text().startswith(f"{100 * overall.delta:+.1f}")
        assert f"[{pct(overall.ci_low)}, {pct(overall.ci_high)}]" in cell.inner_text()
    assert checked >= 8
    page.locator("#headline").screenshot(path=str(tmp_path / "headline.png"))


def test_filter_to_a_task_and_open_a_trajectory(page: Any, tmp_path: Path) -> None:
    total = int(page.locator("#qb-count").get_attribute("data-total"))
    page.select_option("#qb-task", label="labevents")
    rows = page.locator("#qb-body tr.qrow")
    shown = int(page.locator("#qb-count").get_attribute("data-total"))
    assert 0 < shown < total
    assert set(page.locator("#qb-body tr.qrow td:nth-child(4)").all_inner_texts()) == {"labevents"}
    page.select_option("#qb-model", label="baseline:evidence")
    rows.first.click()
    trajectory = page.locator(".mode-col.agent .traj").first
    trajectory.wait_for(timeout=10_000)
    names = trajectory.locator(".tool-call .tool-name").all_inner_texts()
    assert names[0] == "ehr.load_ehr" and names[-1] == "ehr.finish"
    assert "ehr.run_sql_query" in names
    assert trajectory.locator(".step.tool").count() == len(names)
    assert page.locator(".mode-col.curated .traj").count() == 1
    assert "precision" in page.locator(".mode-col.agent > .facts").first.inner_text()
    page.locator("#questions").screenshot(path=str(tmp_path / "trajectory.png"))
    assert (tmp_path / "trajectory.png").stat().st_size > 10_000


def test_search_outcome_filter_and_images(page: Any, tmp_path: Path) -> None:
    page.fill("#qb-search", "mm_cxr")
    qids = page.locator("#qb-body tr.qrow td.qid").all_inner_texts()
    assert qids and all("mm_cxr" in q for q in qids)
    page.locator("#qb-body tr.qrow").first.click()
    page.locator(".traj").first.wait_for(timeout=10_000)
    image = page.locator(".traj img").first
    image.wait_for(timeout=10_000)
    assert image.evaluate("img => img.complete && img.naturalWidth > 0")
    page.screenshot(path=str(tmp_path / "images.png"), full_page=False)
    page.click("#qb-reset")
    page.select_option("#qb-outcome", label="invalid")
    page.select_option("#qb-of", value="either")
    outcomes = page.locator("#qb-body tr.qrow td.num .oc").all_inner_texts()
    assert "invalid" in outcomes


def test_figures_render(page: Any, tmp_path: Path) -> None:
    charts = page.locator("#figures svg.chart")
    assert charts.count() >= 8
    box = charts.first.bounding_box()
    assert box is not None and box["width"] > 200
    page.locator("#figures").screenshot(path=str(tmp_path / "figures.png"))


def test_a_link_with_a_qid_opens_the_page_searching_for_it(page: Any, demo_report: ReportStats) -> None:
    page.goto("about:blank")
    page.goto(demo_report.path.as_uri() + "#q=mm_cxr")
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    assert page.input_value("#qb-search") == "mm_cxr"
    qids = page.locator("#qb-body tr.qrow td.qid").all_inner_texts()
    assert qids and all("mm_cxr" in q for q in qids)
