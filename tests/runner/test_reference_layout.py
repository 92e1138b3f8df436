"""Runs written in the reference's layout (``clinseek run --layout reference``, ``clinseek export``) are read
back by ``clinseek score`` with the same per-question F1, resume from their own rows, and carry the
reference's fields so its extractor finds the same answers."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.errors import ClinseekError
from clinseek.refformat import finish_answer, reference_model_name
from clinseek.runner import RunOptions, RunSettings, export_reference, read_results, run_benchmark
from clinseek.runner._reflayout import REFERENCE_CODEC
from clinseek.scoring import score_path


def _f1(root: Path, model: str) -> dict[tuple[str, str], float]:
    """(mode, qid) → per-question F1 of one model's runs under ``root``."""
    scored = score_path(root, n_resamples=50)
    return {(q.mode, q.qid): q.f1 for q in scored.questions if q.model == model}


@pytest.fixture(scope="module")
def reference_run(synthetic_bench, synthetic_store, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """baseline:evidence in both modes, written in the reference's layout."""
    _, questions = synthetic_bench
    out = tmp_path_factory.mktemp("reference_layout")
    anyio.run(lambda: run_benchmark(questions, synthetic_store, "both", "baseline:evidence", out,
                                    settings=RunSettings(run=RunOptions(concurrency=4, layout="reference"))))
    return out


def test_run_writes_the_seed_layout_with_both_status_fields(reference_run: Path, synthetic_bench) -> None:
    _, questions = synthetic_bench
    n_text = sum(q.task_type != "multimodal" for q in questions)
    n_mm = len(questions) - n_text
    files = sorted(p.relative_to(reference_run).as_posix() for p in reference_run.rglob("results.jsonl"))
    assert files == [
        f"ehr_bench/agentic/full{n_text}/baseline_evidence/results.jsonl",
        f"ehr_bench/oneshot/full{n_text}/baseline_evidence/results.jsonl",
        f"mm_bench/agentic/full{n_mm}/baseline_evidence/results.jsonl",
        f"mm_bench/oneshot/full{n_mm}/baseline_evidence/results.jsonl",
    ]
    for path in reference_run.rglob("results.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            assert row["status"] in {"success", "incomplete", "error", "ok"}  # the reference's terms
            assert row["clinseek_status"] in {"answered", "no_answer", "infra_error"}  # ours, beside
            assert {"label", "question", "messages", "completed", "stop_reason", "qid", "task"} <= set(row)
            ours = REFERENCE_CODEC.decode(row)
            items = [*(ours.answer or []), *ours.invalid_answer]
            if items:  # the reference's own extractor (last finish call, synthetic one-shot finish included)
                assert finish_answer(row["messages"]) == items


def test_score_reads_the_reference_layout_with_identical_per_question_f1(reference_run: Path, synthetic_runs) -> None:
    runs, _, _ = synthetic_runs  # the same baseline run in clinseek's layout
    ours = _f1(runs, "baseline:evidence")
    theirs = _f1(reference_run, "baseline_evidence")
    assert ours and theirs == ours
    scored = score_path(reference_run, n_resamples=50)
    assert {s.format for s in scored.report.sources} == {"exported"}
    assert scored.report.layout == "reference"


def test_resume_reads_the_reference_rows_back(reference_run: Path, synthetic_bench, synthetic_store) -> None:
    _, questions = synthetic_bench
    summary = anyio.run(lambda: run_benchmark(questions, synthetic_store, "both", "baseline:evidence", reference_run,
                                              settings=RunSettings(run=RunOptions(concurrency=4, layout="reference"))))
    assert all(run.ran == 0 and run.resumed == run.total for run in summary.runs)
    for path in reference_run.rglob("results.jsonl"):
        report = read_results(path, REFERENCE_CODEC.decode)
        assert report.torn_lines == 0 and report.rows


def test_export_of_a_finished_run_scores_the_same(synthetic_runs, tmp_path: Path) -> None:
    runs, _, _ = synthetic_runs
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["export", str(runs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "ehr_bench" / "oneshot").is_dir() and (out / "mm_bench" / "agentic").is_dir()
    for model in ("baseline:evidence", "baseline:null"):
        assert _f1(out, reference_model_name(model)) == _f1(runs, model)
    originals = {(r.mode, r.qid, r.run_index): r for p in runs.rglob("results.jsonl") for r in read_results(p).rows
                 if r.model == "baseline:evidence"}
    back = {(r.mode, r.qid, r.run_index): r for p in out.rglob("results.jsonl")
            for r in read_results(p, REFERENCE_CODEC.decode).rows if r.model == "baseline:evidence"}
    assert back == originals  # every field, the trajectory included, comes back unchanged
    with pytest.raises(ClinseekError, match="outside"):
        export_reference(runs, runs / "export")


def test_cli_run_with_the_reference_layout(synthetic_bench, synthetic_store, tmp_path: Path) -> None:
    bench, _ = synthetic_bench
    out = tmp_path / "runs"
    args = ["run", "--bench", str(bench), "--store", str(synthetic_store), "--model", "baseline:null",
            "--mode", "curated", "--out", str(out), "--layout", "reference", "--split", "smoke2", "--limit", "2",
            "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert [p.relative_to(out).as_posix() for p in out.rglob("results.jsonl")] == [
        "ehr_bench/oneshot/smoke2/baseline_null/results.jsonl"
    ]
    bad = CliRunner().invoke(app, [*args[:-5], "--split", "a/b", "--no-progress"])
    assert bad.exit_code == 2 and "--split" in bad.output
