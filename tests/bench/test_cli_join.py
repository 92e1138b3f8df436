"""``clinseek bench validate|build|join`` through typer's CliRunner, and the EHR-Bench join."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bench._bench_fakes import mm_row, text_row, write_json, write_jsonl
from clinseek.bench import TEXT_FILE, join_ehr_bench, load_questions
from clinseek.cli import app

runner = CliRunner()


def test_validate_ok_and_problems_set_the_exit_code(tmp_path: Path) -> None:
    good = write_json(tmp_path / "good.json", [text_row(1), text_row(2, "labevents")])
    result = runner.invoke(app, ["bench", "validate", str(good)])
    assert result.exit_code == 0, result.output
    assert "2 valid rows" in result.output and "ok" in result.output
    row = mm_row(1)
    del row["snapshot_spec"]
    bad = write_jsonl(tmp_path / "bad.jsonl", [row, mm_row(2)])
    result = runner.invoke(app, ["bench", "validate", str(bad)])
    assert result.exit_code == 1
    assert "ehrxqa_image_test_1 (line 1): field 'snapshot_spec'" in result.output


def test_validate_release_flag_reports_counts(tmp_path: Path) -> None:
    write_json(tmp_path / TEXT_FILE, [text_row(1)])
    result = runner.invoke(app, ["bench", "validate", str(tmp_path), "--release"])
    assert result.exit_code == 1
    assert "rows: expected 1800, found 1" in result.output


def test_build_command_writes_a_valid_directory(demo_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "b"
    args = [
        "bench",
        "build",
        "--store",
        str(demo_store),
        "--out",
        str(out),
        "--tasks",
        "labevents,medrecon_atc",
        "--per-task",
        "3",
        "--seed",
        "7",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "labevents: 3" in result.output and "skipped medrecon_atc" in result.output
    assert len(load_questions(out)) == 3
    assert runner.invoke(app, ["bench", "validate", str(out), "--store", str(demo_store)]).exit_code == 0


def _ehr_bench(tmp_path: Path) -> Path:
    root = tmp_path / "ehr_bench"
    root.mkdir()
    rows = [
        {"instruction": "i", "input": f"## Admissions [2150-01-0{i} 00:00:00]\n- type: EW", "output": "yes"}
        for i in range(1, 4)
    ]
    write_jsonl(root / "ehr_bench_risk_prediction.jsonl", rows)
    return root


def test_join_fills_input_and_reports_unmatched(tmp_path: Path) -> None:
    rows = [
        text_row(0),
        text_row(1, label="no", output="no"),
        text_row(7),
        text_row(2, source_file="missing.jsonl"),
    ]
    manifest = write_json(tmp_path / "t.json", rows)
    result = join_ehr_bench(manifest, _ehr_bench(tmp_path), out=tmp_path / "joined.json")
    assert (result.total, result.joined) == (4, 1)
    assert any("different output" in u for u in result.unmatched)
    assert any("out of range" in u for u in result.unmatched)
    assert any("missing.jsonl not found" in u for u in result.unmatched)
    joined = {q.qid: q for q in load_questions(tmp_path / "joined.json")}
    assert (
        joined["ehr_bench_risk_prediction_0"].curated_text
        == "## Admissions [2150-01-01 00:00:00]\n- type: EW"
    )
    assert joined["ehr_bench_risk_prediction_1"].curated_text is None


def test_join_command(tmp_path: Path) -> None:
    manifest = write_json(tmp_path / "t.json", [text_row(0)])
    result = runner.invoke(app, ["bench", "join", str(manifest), "--ehr-bench", str(_ehr_bench(tmp_path))])
    assert result.exit_code == 0, result.output
    assert "joined 1 of 1" in result.output
    assert json.loads((tmp_path / "t.joined.json").read_text())[0]["input"].startswith("## Admissions")
