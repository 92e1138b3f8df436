"""A bad row fails that row, not the run: ``clinseek run`` answers every valid row, records each
invalid one as an ``invalid_input`` result with its reason (scored as missing), and exits non-zero."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clinseek.bench import MM_FILE, TEXT_FILE
from clinseek.cli import app
from clinseek.cli._out import EXIT_INVALID_INPUT
from clinseek.runner import read_results


def _run(bench: Path, store: Path, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(app, [
        "run", "--bench", str(bench), "--store", str(store), "--model", "baseline:evidence", "--mode", "curated",
        "--out", str(out), "--no-progress", "--concurrency", "2", *extra,
    ], env={"COLUMNS": "200"})


def _rows(out: Path, benchmark: str) -> dict[str, Any]:
    found = read_results(out / benchmark / "curated" / "baseline_evidence" / "results.jsonl").rows
    assert len({r.qid for r in found}) == len(found), "one row per qid"
    return {r.qid: r for r in found}


def _shift_year(value: str, years: int) -> str:
    when = dt.datetime.fromisoformat(value)
    return when.replace(year=when.year + years).isoformat(sep=" ")


@pytest.fixture()
def text_bench(synthetic_bench: tuple[Path, list[Any]], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The synthetic benchmark's text split with four bad rows among the good ones (qid -> what is wrong)."""
    source, _ = synthetic_bench
    rows = json.loads((source / TEXT_FILE).read_text(encoding="utf-8"))
    good = rows[0]
    bad = [
        {**good, "qid": "bad_task", "task": "Inpatient_Mortallity"},
        {k: v for k, v in good.items() if k != "subject_id"} | {"qid": "bad_field"},
        {**good, "qid": "bad_year", "prediction_time": _shift_year(good["prediction_time"], 30)},
        {**good, "qid": "bad_early", "prediction_time": _shift_year(good["prediction_time"], -60)},
    ]
    out = tmp_path / "bench"
    out.mkdir()
    (out / TEXT_FILE).write_text(json.dumps(rows[:2] + bad + rows[2:]), encoding="utf-8")
    return out, {"bad_task": "did you mean 'Inpatient_Mortality'", "bad_field": "subject_id",
                 "bad_year": "after the patient's last record", "bad_early": "before the patient's first record"}


def test_one_failing_row_among_good_ones(text_bench: tuple[Path, dict[str, str]], synthetic_store: Path,
                                         tmp_path: Path) -> None:
    bench, wrong = text_bench
    result = _run(bench, synthetic_store, tmp_path / "runs")
    assert result.exit_code == EXIT_INVALID_INPUT, result.output
    rows = _rows(tmp_path / "runs", "clinseek-bench-text")
    good = [r for q, r in rows.items() if q not in wrong]
    assert good and all(r.status in ("answered", "no_answer") for r in good)
    assert any(r.status == "answered" for r in good)
    for qid, needle in wrong.items():
        assert rows[qid].status == "invalid_input", qid
        assert needle in (rows[qid].error or ""), (qid, rows[qid].error)
        assert "invalid input:" in result.output and needle in result.output
    assert "4 invalid input" in result.output


def test_invalid_rows_are_scored_as_missing_and_recorded_again_on_resume(
    text_bench: tuple[Path, dict[str, str]], synthetic_store: Path, tmp_path: Path
) -> None:
    bench, wrong = text_bench
    out = tmp_path / "runs"
    assert _run(bench, synthetic_store, out).exit_code == EXIT_INVALID_INPUT
    again = _run(bench, synthetic_store, out)
    assert again.exit_code == EXIT_INVALID_INPUT, again.output
    rows = _rows(out, "clinseek-bench-text")
    assert {q for q, r in rows.items() if r.status == "invalid_input"} == set(wrong)
    scored = CliRunner().invoke(app, ["score", str(out), "--out", str(tmp_path / "scores")])
    assert scored.exit_code == 0, scored.output
    per_question = [json.loads(line) for line in (tmp_path / "scores" / "per_question.jsonl").read_text().splitlines()]
    missing = {q["qid"] for q in per_question if q["status"] == "missing"}
    assert set(wrong) <= missing
    assert all(q["f1"] == 0.0 for q in per_question if q["qid"] in wrong)


def test_outside_record_runs_with_the_explicit_flag(text_bench: tuple[Path, dict[str, str]], synthetic_store: Path,
                                                  tmp_path: Path) -> None:
    bench, _ = text_bench
    result = _run(bench, synthetic_store, tmp_path / "runs", "--allow-outside-record")
    assert result.exit_code == EXIT_INVALID_INPUT  # the unknown task and the missing field still are invalid
    rows = _rows(tmp_path / "runs", "clinseek-bench-text")
    assert rows["bad_year"].status != "invalid_input"
    assert any("allow-outside-record" in w for w in rows["bad_year"].input_warnings)
    assert {q for q, r in rows.items() if r.status == "invalid_input"} == {"bad_task", "bad_field"}


def _mm_rows(synthetic_bench: tuple[Path, list[Any]]) -> list[dict[str, Any]]:
    source, _ = synthetic_bench
    return [json.loads(line) for line in (source / MM_FILE).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_multimodal_row_without_scope_fails_alone(synthetic_bench: tuple[Path, list[Any]], synthetic_store: Path,
                                                    tmp_path: Path) -> None:
    source, _ = synthetic_bench
    mm = _mm_rows(synthetic_bench)
    broken = {k: v for k, v in mm[0].items() if k != "scope"} | {"qid": "no_scope"}
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / TEXT_FILE).write_text((source / TEXT_FILE).read_text(encoding="utf-8"), encoding="utf-8")
    (bench / MM_FILE).write_text("\n".join(json.dumps(r) for r in [*mm, broken]) + "\n", encoding="utf-8")
    result = _run(bench, synthetic_store, tmp_path / "runs")
    assert result.exit_code == EXIT_INVALID_INPUT, result.output
    text = _rows(tmp_path / "runs", "clinseek-bench-text")
    assert text and all(r.status != "invalid_input" for r in text.values())  # the text rows ran
    images = _rows(tmp_path / "runs", "clinseek-bench-mm")
    assert images["no_scope"].status == "invalid_input" and "scope" in (images["no_scope"].error or "")
    assert all(r.status != "invalid_input" for q, r in images.items() if q != "no_scope")


def test_a_linked_study_missing_from_the_store_is_invalid_unless_allowed(
    synthetic_bench: tuple[Path, list[Any]], synthetic_store: Path, tmp_path: Path
) -> None:
    mm = _mm_rows(synthetic_bench)
    ghost = {**mm[0], "qid": "ghost_study", "study_ids": [99_999_999], "dicom_ids": ["no-such-image"]}
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / MM_FILE).write_text("\n".join(json.dumps(r) for r in [*mm, ghost]) + "\n", encoding="utf-8")
    refused = _run(bench, synthetic_store, tmp_path / "refused")
    assert refused.exit_code == EXIT_INVALID_INPUT, refused.output
    row = _rows(tmp_path / "refused", "clinseek-bench-mm")["ghost_study"]
    assert row.status == "invalid_input" and "99999999 is not in the store" in (row.error or "")
    allowed = _run(bench, synthetic_store, tmp_path / "allowed", "--allow-missing-cxr")
    assert allowed.exit_code == 0, allowed.output
    row = _rows(tmp_path / "allowed", "clinseek-bench-mm")["ghost_study"]
    assert row.status != "invalid_input"
    assert any("99999999" in w for w in row.input_warnings) and any("no-such-image" in w for w in row.input_warnings)


def test_an_empty_manifest_is_refused(synthetic_store: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / TEXT_FILE).write_text("[]", encoding="utf-8")
    result = _run(bench, synthetic_store, tmp_path / "runs")
    assert result.exit_code != 0
    assert "holds no rows" in str(result.exception) + result.output
