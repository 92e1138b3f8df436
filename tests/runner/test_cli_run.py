"""``clinseek run`` through typer's CliRunner."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.runner import read_results


def test_run_command_writes_results_and_prints_a_summary(demo_bench, demo_store: Path, tmp_path: Path) -> None:
    bench, questions = demo_bench
    result = CliRunner().invoke(app, [
        "run", "--bench", str(bench), "--store", str(demo_store), "--model", "baseline:null",
        "--mode", "curated", "--out", str(tmp_path), "--limit", "3", "--concurrency", "2", "--no-progress",
    ])
    assert result.exit_code == 0, result.output
    assert "0 infra errors of 3 (resumed 0)" in result.output
    rows = read_results(tmp_path / "clinseek-bench-text" / "curated" / "baseline_null" / "results.jsonl").rows
    assert len(rows) == 3 and len({r.task for r in rows}) == 3  # a stratified subset: 3 tasks, not the first 3 rows
    assert {r.task_type for r in rows} == {q.task_type for q in questions}


def test_tasks_filter_and_unknown_provider(demo_bench, demo_store: Path, tmp_path: Path) -> None:
    bench, _ = demo_bench
    ok = CliRunner().invoke(app, [
        "run", "--bench", str(bench), "--store", str(demo_store), "--model", "baseline:null", "--mode", "curated",
        "--out", str(tmp_path), "--tasks", "omr", "--no-progress",
    ])
    assert ok.exit_code == 0 and "2 no answer" in ok.output  # null answers nothing to decision tasks
    bad = CliRunner().invoke(app, [
        "run", "--bench", str(bench), "--store", str(demo_store), "--model", "nope:x", "--out", str(tmp_path),
        "--no-progress",
    ])
    assert bad.exit_code != 0
