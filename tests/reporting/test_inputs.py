"""Finding scores, results and manifests under the folders a report is given."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _report_helpers import write_fabricated

from clinseek.errors import ReportError
from clinseek.reporting import build_report, load_inputs, load_source
from clinseek.scoring import score_path, write_scores


def test_scores_written_into_the_results_folder_find_their_results(fabricated: Path) -> None:
    source, report, questions = load_source(fabricated)
    assert source.scores == fabricated and source.results == fabricated
    assert len(source.result_files) == 2
    assert {(r.mode, r.model) for r in report.runs} == {("agent", "openai:gpt-x"), ("curated", "openai:gpt-x")}
    assert len(questions) == 8


def test_a_demo_folder_reads_scores_and_runs(tmp_path: Path) -> None:
    runs = write_fabricated(tmp_path / "demo" / "runs")
    write_scores(score_path(runs, n_resamples=100), tmp_path / "demo" / "scores")
    source, _, _ = load_source(tmp_path / "demo")
    assert source.scores == tmp_path / "demo" / "scores"
    assert source.results == tmp_path / "demo" / "runs"


def test_scores_elsewhere_find_results_through_the_scored_source(tmp_path: Path) -> None:
    runs = write_fabricated(tmp_path / "runs")
    write_scores(score_path(runs, n_resamples=100), tmp_path / "elsewhere" / "scores")
    source, _, _ = load_source(tmp_path / "elsewhere" / "scores")
    assert source.results == runs


def test_a_results_folder_without_scores_is_scored_on_the_fly(tmp_path: Path) -> None:
    runs = write_fabricated(tmp_path / "runs")
    inputs = load_inputs([runs])
    assert inputs.sources[0].scores is None
    assert len(inputs.runs) == 2 and len(inputs.paired) == 1
    assert any("scored here" in note for note in inputs.notes)


def test_modes_from_two_folders_are_paired_by_the_report(tmp_path: Path) -> None:
    agent = write_fabricated(tmp_path / "a", modes=("agent",))
    curated = write_fabricated(tmp_path / "c", modes=("curated",))
    inputs = load_inputs([agent, curated])
    assert inputs.computed_pairs == ["synthetic-bench/agent/openai:gpt-x"]
    (pair,) = inputs.paired
    assert pair.b == "synthetic-bench/curated/openai:gpt-x"


def test_the_same_run_in_two_folders_is_refused(tmp_path: Path, fabricated: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(fabricated, copy)
    with pytest.raises(ReportError, match="is in both"):
        load_inputs([fabricated, copy])


def test_a_folder_without_scores_or_results_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match=r"neither summary\.json .* nor results\.jsonl"):
        load_inputs([tmp_path])
    with pytest.raises(ReportError, match="no such folder"):
        load_inputs([tmp_path / "absent"])
    with pytest.raises(ReportError, match="no input folder"):
        load_inputs([])


def test_a_bad_per_question_line_names_file_and_line(tmp_path: Path, fabricated: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(fabricated, copy)
    with (copy / "per_question.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"qid": 1}\n')
    with pytest.raises(ReportError, match=r"per_question\.jsonl:9: not a question score"):
        load_inputs([copy])


def test_run_manifests_are_read(fabricated: Path) -> None:
    inputs = load_inputs([fabricated])
    manifest = inputs.manifests[("synthetic-bench", "agent", "openai:gpt-x")]
    assert (manifest.seed, manifest.git_commit) == (3, "0123456789abcdef")


def test_scores_without_their_results_are_shown_without_trajectories(tmp_path: Path) -> None:
    runs = write_fabricated(tmp_path / "runs")
    write_scores(score_path(runs, n_resamples=100), tmp_path / "scores")
    shutil.rmtree(runs)
    inputs = load_inputs([tmp_path / "scores"])
    assert inputs.sources[0].results is None and len(inputs.questions) == 8
    assert any("trajectories are not shown" in note for note in inputs.notes)
    stats = build_report(inputs, tmp_path / "r.html")
    assert (stats.question_rows, stats.trajectories) == (4, 0)


def test_scores_older_than_their_results_are_refused_with_the_rescore_command(tmp_path: Path) -> None:
    runs = write_fabricated(tmp_path / "demo" / "runs")
    scores = tmp_path / "demo" / "scores"
    write_scores(score_path(runs, n_resamples=100), scores)
    load_source(tmp_path / "demo")  # fresh: fine
    first = sorted(runs.rglob("results.jsonl"))[0]
    lines = first.read_text().splitlines(keepends=True)
    first.write_text("".join(reversed(lines)))  # a rerun rewrote the rows
    with pytest.raises(ReportError, match=r"older than the results .*changed: .*results\.jsonl") as info:
        build_report(load_inputs([tmp_path / "demo"]), tmp_path / "report.html")
    assert f"clinseek score {runs} --out {scores}" in str(info.value)
    assert not (tmp_path / "report.html").exists()
    write_scores(score_path(runs, n_resamples=100), scores)  # rescored: the report is made
    build_report(load_inputs([tmp_path / "demo"]), tmp_path / "report.html")
    extra = runs / "other-bench" / "agent" / "m" / "results.jsonl"
    extra.parent.mkdir(parents=True)
    shutil.copy(first, extra)
    with pytest.raises(ReportError, match=r"new: other-bench/agent/m/results\.jsonl"):
        load_source(tmp_path / "demo")
