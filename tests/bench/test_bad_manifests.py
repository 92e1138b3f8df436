"""Manifests that cannot be answered honestly are refused by ``bench validate``: unknown tasks (with
"did you mean"), empty manifests, and prediction times outside the patient's record."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clinseek.bench import (
    AGENTEHR_TASKS,
    MM_ROW_TASKS,
    MM_TASKS,
    RECORD_MARGIN,
    TEXT_FILE,
    TEXT_TASKS,
    build_benchmark,
    check_questions,
    known_tasks,
    read_manifest,
    validate_benchmark,
)
from clinseek.cli import app
from clinseek.store import record_spans


@pytest.fixture(scope="module")
def built(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("bad_manifests") / "bench"
    build_benchmark(synthetic_store, tasks=["Inpatient_Mortality", "labevents"], per_task=2, seed=3, out=out)
    return list(json.loads((out / TEXT_FILE).read_text(encoding="utf-8")))


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_an_unknown_text_task_is_refused_with_did_you_mean(built: list[dict[str, Any]], tmp_path: Path) -> None:
    manifest = _write(tmp_path / "m.json", [{**built[0], "task": "inpatient_mortality"}, built[1]])
    read = read_manifest(manifest)
    assert len(read.rows) == 1 and len(read.errors) == 1
    error = read.errors[0]
    assert error.field == "task"
    assert "did you mean 'Inpatient_Mortality'" in error.problem
    assert all(t.name in error.problem for t in TEXT_TASKS)  # the known names are listed


@pytest.mark.parametrize("kind", ["multimodal", "agentehr"])
def test_unknown_tasks_of_every_kind_are_refused(kind: str, tmp_path: Path) -> None:
    known = known_tasks(kind)
    row: dict[str, Any] = {"qid": "q1", "subject_id": 1, "prediction_time": "2150-01-01 00:00:00",
                           "task": known[0] + "s", "label": ["x"]}
    if kind == "multimodal":
        row |= {"source_benchmark": "ehrxqa", "question": "?", "scope": "patient_scope", "study_ids": [1],
                "snapshot_spec": {"time_policy": "inclusive_leq_cutoff"},
                "leakage_policy_version": "multimodal-strict-temporal-scope-v1"}
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps(row) + "\n", encoding="utf-8")
    read = read_manifest(manifest)
    assert read.kind == kind and not read.rows
    assert f"did you mean {known[0]!r}" in read.errors[0].problem


def test_the_known_tasks_are_the_registries() -> None:
    assert known_tasks("text") == tuple(t.name for t in TEXT_TASKS)
    assert known_tasks("agentehr") == tuple(t.name for t in AGENTEHR_TASKS)
    assert {t.row_task for t in MM_TASKS} <= set(known_tasks("multimodal")) == set(MM_ROW_TASKS)
    assert set(MM_ROW_TASKS) == {"ehrxqa_image", "medmod_decompensation", "medmod_in_hospital_mortality",
                                 "medmod_phenotyping", "medmod_radiology"}


@pytest.mark.parametrize("text", ["[]", "", "\n\n"])
def test_an_empty_manifest_is_a_problem(tmp_path: Path, text: str) -> None:
    manifest = tmp_path / ("m.json" if text == "[]" else "m.jsonl")
    manifest.write_text(text, encoding="utf-8")
    report = validate_benchmark(manifest)
    assert not report.ok and "holds no rows" in report.problems[0]
    result = CliRunner().invoke(app, ["bench", "validate", str(manifest)])
    assert result.exit_code == 1 and "ok" not in result.output.splitlines()[-1]


def test_a_cutoff_after_the_record_is_refused_unless_allowed(
    built: list[dict[str, Any]], synthetic_store: Path, tmp_path: Path
) -> None:
    row = built[0]
    _, last = record_spans(synthetic_store, [row["subject_id"]])[row["subject_id"]]
    assert last is not None
    typo = (last + RECORD_MARGIN + dt.timedelta(minutes=1)).isoformat(sep=" ")
    just_in = (last + RECORD_MARGIN).isoformat(sep=" ")
    manifest = _write(tmp_path / "m.json", [{**row, "prediction_time": typo},
                                            {**row, "qid": "inside", "prediction_time": just_in}])
    report = validate_benchmark(manifest, store=synthetic_store)
    outside = [p for p in report.problems if "prediction_time" in p]
    assert len(outside) == 1 and row["qid"] in outside[0] and "after the patient's last record" in outside[0]
    assert "--allow-outside-record" in outside[0]
    allowed = validate_benchmark(manifest, store=synthetic_store, outside_record_ok=True)
    assert not [p for p in allowed.problems if "prediction_time" in p]
    assert any("allowed by --allow-outside-record" in n for n in allowed.notes)
    cli = CliRunner().invoke(app, ["bench", "validate", str(manifest), "--store", str(synthetic_store)])
    assert cli.exit_code == 1
    cli_ok = CliRunner().invoke(app, ["bench", "validate", str(manifest), "--store", str(synthetic_store),
                                      "--allow-outside-record"])
    assert cli_ok.exit_code == 0, cli_ok.output


def test_a_cutoff_before_the_first_record_is_refused(built: list[dict[str, Any]], synthetic_store: Path,
                                                     tmp_path: Path) -> None:
    row = built[0]
    first, _ = record_spans(synthetic_store, [row["subject_id"]])[row["subject_id"]]
    assert first is not None
    manifest = _write(tmp_path / "m.json", [{**row, "prediction_time": (first - dt.timedelta(seconds=1)).isoformat(sep=" ")}])
    problems = check_questions(synthetic_store, read_manifest(manifest).questions())
    assert [(p.kind, p.field) for p in problems] == [("record", "prediction_time")]
    assert "before the patient's first record" in problems[0].problem


def test_every_built_question_lies_within_its_record(built: list[dict[str, Any]], synthetic_store: Path,
                                                     tmp_path: Path) -> None:
    manifest = _write(tmp_path / "m.json", built)
    assert check_questions(synthetic_store, read_manifest(manifest).questions()) == []
    assert validate_benchmark(manifest, store=synthetic_store).ok


def test_every_store_problem_names_the_manifest_row_and_its_place(
    built: list[dict[str, Any]], synthetic_store: Path, tmp_path: Path
) -> None:
    """``validate`` and ``run`` name the manifest file, the row and its item (not the store as the file),
    the field and what is wrong; a number as prediction_time is told as a number, not as a time zone;
    the good rows run (newcomer25)."""
    good = built[0]
    late = dt.datetime.fromisoformat(good["prediction_time"]).replace(year=2300).isoformat(sep=" ")
    rows = [good, {**built[1], "qid": "ghost", "subject_id": 99_999_999}, {**built[2], "qid": "late", "prediction_time": late},
            {**built[3], "qid": "number", "prediction_time": 1_234_567}]
    manifest = _write(tmp_path / TEXT_FILE, rows)
    problems = validate_benchmark(manifest, store=synthetic_store).problems
    assert any(p.startswith(f"{manifest}: row ghost (item 2): field 'subject_id': 99999999 is not in the store")
               for p in problems), problems
    assert any(p.startswith(f"{manifest}: row late (item 3): field 'prediction_time': ") for p in problems), problems
    number = next(p for p in problems if "row number" in p)
    assert "(item 4): field 'prediction_time'" in number and "got the number 1234567" in number, number
    assert "naive" not in number and "time zone" not in number
    result = CliRunner().invoke(app, ["run", "--bench", str(tmp_path), "--store", str(synthetic_store), "--model",
                                      "baseline:null", "--out", str(tmp_path / "runs"), "--no-progress"],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 4, result.output
    assert f"invalid input: {manifest}: row ghost (item 2): field 'subject_id'" in result.output
    assert f"invalid input: {manifest}: row late (item 3): field 'prediction_time'" in result.output
    assert f"(store {synthetic_store})" in result.output
    assert "1 answered" in result.output or "1 no answer" in result.output, result.output
