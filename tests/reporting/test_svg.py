"""The inline-SVG charts: valid XML, every value reachable on hover, degenerate inputs drawn, not crashed."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from clinseek.reporting._svg import (
    ForestRow,
    Series,
    bars,
    boxes,
    donut,
    forest,
    grouped_bars,
    nice_ticks,
    scatter,
)

NS = "{http://www.w3.org/2000/svg}"


def _titles(svg: str) -> list[str]:
    root = ET.fromstring(svg)  # raises on malformed markup
    return [t.text or "" for t in root.iter(f"{NS}title")]


def test_ticks_cover_the_range() -> None:
    assert nice_ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    ticks = nice_ticks(-13.4, 3.1)
    assert ticks[0] <= -13.4 and ticks[-1] >= 3.1
    assert nice_ticks(2, 2) == [2]


def test_grouped_bars_skip_missing_values_and_escape_labels() -> None:
    svg = grouped_bars(["a<b", "c"], [Series("Curated Input", "#000", [0.5, None]), Series("Agent", "#111", [1.0, 0.0])],
                       label="x")
    titles = _titles(svg)
    assert "a<b — Curated Input: 50.0" in titles and "c — Agent: 0.0" in titles
    assert not any(t.startswith("c — Curated") for t in titles)


def test_forest_draws_zero_width_intervals() -> None:
    svg = forest([ForestRow("overall", 0.0, 0.0, 0.0, 4, strong=True), ForestRow("cat", -0.5, -1.0, 0.0, 2)], label="x")
    assert "overall: Δ +0.0 pp [+0.0, +0.0], n = 4" in _titles(svg)


def test_donut_bars_boxes_scatter_with_degenerate_data() -> None:
    assert "only: 3 (100.0 %)" in _titles(donut([("only", 3.0, "#000")], label="x"))
    _titles(donut([("none", 0.0, "#000")], label="x"))
    assert "ehr.finish: 2" in _titles(bars([("ehr.finish", 2.0)], label="x"))
    svg = boxes([("a", [1.0, 2.0, 3.0], "#000"), ("b", [], "#111")], label="x", axis="turns")
    assert any(t.startswith("a: n=3, min 1, q1 1.5, median 2") for t in _titles(svg)) and "no data" in svg
    svg = scatter([("m · agent", 0.0, 0.5, "#000"), ("m · curated", 0.0, 0.5, "#111")], label="x", x_axis="cost",
                  y_axis="F1")
    assert "m · agent, m · curated" in svg
