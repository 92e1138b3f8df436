"""The written page: self-contained, numbers equal summary.json, data embedded safely, index outcomes."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from _report_helpers import write_fabricated

import clinseek.reporting as report_pkg
from clinseek.reporting import (
    BLOB_TYPE,
    OUTCOMES,
    ReportStats,
    build_report,
    decode_blob,
    load_inputs,
    write_report,
)
from clinseek.scoring import ScoreReport, pct, score_path, write_scores


class _Collect(HTMLParser):
    """Every start tag with its attributes, and the text of each blob script by id."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: dict[str, str] = {}
        self._current: str | None = None
        self._cell: dict[str, str | None] | None = None
        self.cells: list[tuple[dict[str, str | None], str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append((tag, found))
        if tag == "script" and found.get("id"):
            self._current = found["id"]
            self.texts[self._current] = ""
        if tag == "td" and ("data-f1" in found or "data-delta" in found):
            self._cell = found
            self.cells.append((found, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._current = None
        if tag == "td":
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._current is not None:
            self.texts[self._current] += data
        if self._cell is not None:
            attrs, text = self.cells[-1]
            self.cells[-1] = (attrs, text + data)


def _parse(html: str) -> _Collect:
    parser = _Collect()
    parser.feed(html)
    return parser


def test_the_page_needs_no_network(fabricated_report: tuple[ReportStats, str]) -> None:
    _, html = fabricated_report
    parsed = _parse(html)
    for tag, attrs in parsed.tags:
        assert tag != "link", "no external stylesheet"
        assert not (tag == "script" and attrs.get("src")), "no external script"
        for name in ("src", "href"):
            value = attrs.get(name) or ""
            assert not re.match(r"^(https?:)?//", value), f"<{tag} {name}={value!r}> reaches the network"
    assert "@import" not in html and "url(http" not in html


def test_every_f1_cell_equals_summary_json(fabricated: Path, fabricated_report: tuple[ReportStats, str]) -> None:
    summary = ScoreReport.model_validate_json((fabricated / "summary.json").read_text())
    runs = {f"{r.benchmark}/{r.mode}/{r.model}": r for r in summary.runs}
    cells = [(a, text) for a, text in _parse(fabricated_report[1]).cells if "data-f1" in a]
    assert cells
    for attrs, text in cells:
        run = runs[str(attrs["data-run"])]
        group = str(attrs["data-group"])
        kind, _, name = group.partition(":")
        stats = run.overall if group == "overall" else {"task_type": run.per_task_type, "category": run.per_category,
                                                         "task": run.per_task}[kind][name]
        assert float(str(attrs["data-f1"])) == stats.f1
        assert text.strip() == pct(stats.f1)


def test_every_delta_cell_equals_summary_json(fabricated: Path, fabricated_report: tuple[ReportStats, str]) -> None:
    summary = ScoreReport.model_validate_json((fabricated / "summary.json").read_text())
    (pair,) = summary.paired
    groups = {g.group: g for g in pair.groups}
    cells = [a for a, _ in _parse(fabricated_report[1]).cells if "data-delta" in a]
    assert {a["data-group"] for a in cells} >= {"overall", "task_type:risk_prediction"}
    for attrs in cells:
        group = groups[str(attrs["data-group"])]
        assert attrs["data-pair"] == pair.a
        assert float(str(attrs["data-delta"])) == group.delta
        assert (float(str(attrs["data-ci-low"])), float(str(attrs["data-ci-high"]))) == (group.ci_low, group.ci_high)


def test_one_blob_per_result_row_and_the_index_points_at_them(fabricated_report: tuple[ReportStats, str]) -> None:
    stats, html = fabricated_report
    parsed = _parse(html)
    index = json.loads(parsed.texts["report-index"])
    blob_ids = {attrs["id"] for tag, attrs in parsed.tags if tag == "script" and attrs.get("type") == BLOB_TYPE}
    trajectories = {t for t in blob_ids if t and t.startswith("t")}
    assert stats.trajectories == len(trajectories) == 8
    referenced = {b for row in index["rows"] for mode in row[7:9] if mode for b in mode[3]}
    assert referenced == trajectories
    run = decode_blob(parsed.texts["t0"])
    assert run["steps"][0]["kind"] == "system"
    assert "shared-texts" in blob_ids and "img-i0" in blob_ids
    assert decode_blob(parsed.texts["img-i0"])["uri"].startswith("data:image/jpeg")


def test_outcomes_in_the_index(fabricated_report: tuple[ReportStats, str]) -> None:
    index = json.loads(_parse(fabricated_report[1]).texts["report-index"])
    agent = {row[2]: OUTCOMES[row[8][0]] for row in index["rows"]}
    curated = {row[2]: OUTCOMES[row[7][0]] for row in index["rows"]}
    assert agent == {"q1": "right", "q2": "wrong", "q3": "invalid", "q10": "error"}
    assert curated == {"q1": "wrong", "q2": "right", "q3": "right", "q10": "right"}
    assert [row[2] for row in index["rows"]] == ["q1", "q2", "q3", "q10"]  # natural order


def test_recorded_text_cannot_break_out_of_the_page(tmp_path: Path) -> None:
    evil = '</script><script>alert("x")</script><!-- & \u2028'
    runs = write_fabricated(tmp_path / "runs", model="<b>m</b>", output=evil)
    stats = build_report(load_inputs([runs]), tmp_path / "r.html")
    html = stats.path.read_text(encoding="utf-8")
    assert "alert(" not in html and "<b>m</b>" not in html
    parsed = _parse(html)
    outputs = [s["text"] for t, text in parsed.texts.items() if t.startswith("t")
               for s in decode_blob(text)["steps"] if s.get("name") == "ehr.run_sql_query" and s["kind"] == "tool"]
    assert outputs and set(outputs) == {evil}


def test_unreadable_result_rows_are_noted_not_fatal(tmp_path: Path) -> None:
    runs = write_fabricated(tmp_path / "runs")
    path = runs / "synthetic-bench" / "agent" / "openai_gpt-x" / "results.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"qid": "q99", "broken": true}\n')
    write_scores(score_path(runs, n_resamples=100), runs)
    stats = build_report(load_inputs([runs]), tmp_path / "r.html")
    assert stats.bad_rows == 1 and stats.trajectories == 8
    assert "1 result rows could not be read" in stats.path.read_text(encoding="utf-8")


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path, fabricated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import clinseek.reporting._write as write_module

    def boom(*_args: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(write_module, "build_index", boom)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="disk full"):
        write_report([fabricated], out / "report.html")
    assert list(out.iterdir()) == []


def test_manifests_and_sources_are_shown(fabricated_report: tuple[ReportStats, str]) -> None:
    html = fabricated_report[1]
    assert 'data-run="synthetic-bench/agent/openai:gpt-x"' in html
    assert "0123456789" in html and "seed 3" in html


def test_rewriting_replaces_the_old_report(tmp_path: Path, fabricated: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text("old")
    assert write_report([fabricated], out) == out
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_exports_are_sorted() -> None:
    """Constants, then classes, then functions, each alphabetical (ruff's RUF022 order)."""

    def key(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert report_pkg.__all__ == sorted(report_pkg.__all__, key=key)
    assert all(hasattr(report_pkg, name) for name in report_pkg.__all__)


def test_one_results_tree_under_two_score_folders_is_read_once(tmp_path: Path) -> None:
    runs = write_fabricated(tmp_path / "x" / "runs")  # both modes
    write_scores(score_path(runs / "synthetic-bench" / "agent", n_resamples=100), tmp_path / "x")
    write_scores(score_path(runs / "synthetic-bench" / "curated", n_resamples=100), tmp_path / "y")
    inputs = load_inputs([tmp_path / "x", tmp_path / "y"])
    assert inputs.sources[0].results == runs  # every results.jsonl, the curated one included
    stats = build_report(inputs, tmp_path / "r.html")
    assert stats.trajectories == 8 and stats.question_rows == 4


def test_several_runs_of_a_question_are_listed_in_run_order(tmp_path: Path) -> None:
    from _report_helpers import result_row, write_run

    rows = [result_row("q1", "agent", "m", gold=["yes"], answer=["yes"]).model_copy(update={"run_index": i})
            for i in (1, 0, 2)]
    write_run(tmp_path / "runs", rows)
    stats = build_report(load_inputs([tmp_path / "runs"]), tmp_path / "r.html")
    parsed = _parse(stats.path.read_text(encoding="utf-8"))
    (row,) = json.loads(parsed.texts["report-index"])["rows"]
    assert [decode_blob(parsed.texts[b])["run_index"] for b in row[8][3]] == [0, 1, 2]


def test_scripted_baselines_are_not_called_clinseekagent_and_empty_usage_is_not_drawn(demo_report: ReportStats) -> None:
    """The demo's runs are both scripted baselines: $0, no tokens; their agent mode is not ClinSeekAgent."""
    html = demo_report.path.read_text(encoding="utf-8")
    headline = html[html.index('<section id="headline">'):html.index('<section id="figures">')]
    assert "<td>Agent mode (scripted baseline)</td>" in headline and "<td>ClinSeekAgent</td>" not in headline
    index = json.loads(_parse(html).texts["report-index"])
    assert index["agent_titles"] == ["Agent mode (scripted baseline)"] * len(index["models"])
    figures = html[html.index('<section id="figures">'):html.index('<section id="questions">')]
    assert "tokens per run" not in figures.split("Not drawn for")[0]  # no empty token or cost chart ...
    assert "no run reported tokens per run (input + output), cost per run (USD) above 0" in figures  # ... but a note
    assert "turns per run" in figures


def test_scripted_agent_titles_in_the_question_browser_index(tmp_path: Path) -> None:
    from clinseek.reporting._plots import mode_name

    assert mode_name("agent", "openai:gpt-5.1") == "ClinSeekAgent"
    assert mode_name("agent", "baseline:null") == "Agent mode (scripted baseline)"
    assert mode_name("curated", "baseline:null") == "Curated Input"
