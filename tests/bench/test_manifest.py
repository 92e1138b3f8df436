"""Loading released manifests (all known variants), precise errors, and the release composition check."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from bench._bench_fakes import fake_mm_release, fake_text_release, mm_row, text_row, write_json, write_jsonl
from clinseek import bench
from clinseek.bench import (
    MM_LEAKAGE_POLICY,
    TEXT_POLICY_VERSION,
    load_questions,
    read_manifest,
    validate_benchmark,
)
from clinseek.errors import ManifestError


def test_bench_all_names_exist() -> None:
    # the order is checked by ruff (RUF022)
    assert all(hasattr(bench, name) for name in bench.__all__)


def test_text_row_variants_normalise_to_lists(tmp_path: Path) -> None:
    rows = [
        text_row(1),  # string label
        text_row(2, "labevents"),  # list label
        text_row(3, "prescriptions", label=[{"name": "Heparin", "atc_name": "B01AB"}, {"name": "Insulin"}]),
        text_row(4, "labevents", label=None, ground_truth=["Sodium"]),
        text_row(5, "labevents", label=None, output="Glucose\n Potassium \n"),
        text_row(6, target_hadm_id=29990006, input="## Admissions [2150-03-01 00:00:00]\n- type: EW"),
    ]
    qs = {q.qid: q for q in load_questions(write_json(tmp_path / "t.json", rows))}
    assert qs["ehr_bench_risk_prediction_1"].label == ("yes",)
    assert qs["ehr_bench_decision_making_2"].label == ("Glucose", "Sodium")
    atc = qs["ehr_bench_decision_making_3"]
    assert atc.label == ("Heparin", "Insulin")
    assert atc.label_aliases == (("B01AB",), ())
    assert atc.label_raw == [{"name": "Heparin", "atc_name": "B01AB"}, {"name": "Insulin"}]
    assert qs["ehr_bench_decision_making_4"].label == ("Sodium",)
    assert qs["ehr_bench_decision_making_5"].label == ("Glucose", "Potassium")
    six = qs["ehr_bench_risk_prediction_6"]
    assert six.target_hadm_id == 29990006
    assert six.curated_text is not None and six.curated_text.startswith("## Admissions")
    assert six.policy == TEXT_POLICY_VERSION
    assert six.prediction_time == dt.datetime(2150, 3, 2, 8, 0, 1)
    assert six.category == "escalation_of_care"


def test_mm_row_strips_asset_prefix_and_reads_ground_truth(tmp_path: Path) -> None:
    rows = [
        mm_row(1),
        mm_row(2, "medmod_radiology", label=[{"name": "Edema"}, {"name": "Cardiomegaly"}], ground_truth=None),
        mm_row(3, "medmod_decompensation", ground_truth=[{"name": "2", "value": 2}]),
    ]
    qs = {q.qid: q for q in load_questions(write_jsonl(tmp_path / "m.jsonl", rows))}
    one = qs["ehrxqa_image_test_1"]
    assert one.image_paths == ("mimic-cxr/2.0.0/files/p18/p18880001/s51111112/aaaa-1.jpg",)
    assert one.policy == MM_LEAKAGE_POLICY
    assert one.category == "cxr_finding_presence"
    assert one.study_ids == (51111112,)
    assert qs["medmod_radiology_test_2"].label == ("Edema", "Cardiomegaly")
    assert qs["medmod_radiology_test_2"].category == "cxr_finding_enumeration"
    assert qs["medmod_decompensation_test_3"].category == "clinical_deterioration"
    assert qs["medmod_decompensation_test_3"].label_raw == [{"name": "2", "value": 2}]


def test_agentehr_rows_accept_timestamp_and_fill_qid(tmp_path: Path) -> None:
    rows = [
        {
            "subject_id": 1,
            "hadm_id": 2,
            "timestamp": "2150-01-01 00:00:00",
            "task": "prescriptions",
            "label": [{"name": "Heparin", "atc_name": "ANTITHROMBOTIC AGENTS"}],
        },
        {
            "qid": "a2",
            "subject_id": 1,
            "prediction_time": "2150-01-02 00:00:00",
            "task": "labevents",
            "ground_truth": ["Sodium"],
        },
    ]
    read = read_manifest(write_jsonl(tmp_path / "agentehr_test.jsonl", rows))
    assert read.kind == "agentehr" and not read.errors
    qs = read.questions()
    assert qs[0].qid == "agentehr_test_1"
    assert qs[0].label_aliases == (("ANTITHROMBOTIC AGENTS",),)
    assert qs[1].prediction_time == dt.datetime(2150, 1, 2)


def test_bad_rows_fail_alone_and_name_row_and_field(tmp_path: Path) -> None:
    rows = [
        text_row(1),
        text_row(2, prediction_time="yesterday"),
        text_row(3, task_type="guess"),
        text_row(1),
    ]
    read = read_manifest(write_json(tmp_path / "t.json", rows))
    assert [r.qid for r in read.rows] == ["ehr_bench_risk_prediction_1"]
    errors = {(e.row, e.field) for e in read.errors}
    assert ("ehr_bench_risk_prediction_2 (item 2)", "prediction_time") in errors
    assert ("ehr_bench_risk_prediction_3 (item 3)", "task_type") in errors
    assert ("ehr_bench_risk_prediction_1 (item 4)", "qid") in errors
    bad_time = next(e for e in read.errors if e.field == "prediction_time")
    assert "'yesterday'" in bad_time.problem and bad_time.path == tmp_path / "t.json"


def test_text_row_without_any_gold_is_rejected(tmp_path: Path) -> None:
    row = text_row(1, label=None, output=None)
    read = read_manifest(write_json(tmp_path / "t.json", [row]))
    assert len(read.errors) == 1 and "no gold answer" in read.errors[0].problem


@pytest.mark.parametrize("missing", ["scope", "snapshot_spec", "leakage_policy_version"])
def test_mm_row_without_temporal_scope_fields_is_rejected(tmp_path: Path, missing: str) -> None:
    row = mm_row(1)
    del row[missing]
    read = read_manifest(write_jsonl(tmp_path / "m.jsonl", [row]), kind="multimodal")
    assert not read.rows
    assert read.errors[0].field == missing


def test_mm_row_without_linked_ids_is_rejected(tmp_path: Path) -> None:
    row = mm_row(1)
    del row["study_ids"], row["dicom_ids"]
    read = read_manifest(write_jsonl(tmp_path / "m.jsonl", [row]))
    assert "study_ids" in read.errors[0].problem


def test_jsonl_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(mm_row(1)) + "\n{not json\n", encoding="utf-8")
    read = read_manifest(path)
    assert len(read.rows) == 1
    assert read.errors[0].row == "line 2"


def test_load_questions_raises_on_first_bad_row(tmp_path: Path) -> None:
    path = write_json(tmp_path / "t.json", [text_row(1), text_row(2, subject_id="x")])
    with pytest.raises(ManifestError) as info:
        load_questions(path)
    assert info.value.field == "subject_id"
    assert "ehr_bench_risk_prediction_2" in str(info.value.row)


def test_directory_without_manifests_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="holds none of"):
        load_questions(tmp_path)


@pytest.fixture(scope="module")
def fake_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("release")
    write_json(root / bench.TEXT_FILE, fake_text_release())
    write_jsonl(root / bench.MM_FILE, fake_mm_release())
    return root


def test_fake_release_passes_release_check(fake_release: Path) -> None:
    report = validate_benchmark(fake_release, release=True)
    assert report.ok, report.problems
    assert sorted(report.rows.values()) == [989, 1800]


def test_release_check_reports_count_mismatches(tmp_path: Path) -> None:
    rows = fake_text_release()[:-1]
    report = validate_benchmark(write_json(tmp_path / bench.TEXT_FILE, rows), release=True)
    assert any("rows: expected 1800, found 1799" in p for p in report.problems)
    assert any("rows per task" in p for p in report.problems)


def test_release_check_requires_mm_policy_version(tmp_path: Path) -> None:
    rows = fake_mm_release()
    rows[0]["leakage_policy_version"] = "something-else"
    report = validate_benchmark(write_jsonl(tmp_path / bench.MM_FILE, rows), release=True)
    assert any("leakage_policy_version" in p for p in report.problems)


def test_unknown_fields_are_noted_not_rejected(tmp_path: Path) -> None:
    report = validate_benchmark(write_json(tmp_path / "t.json", [text_row(1, new_field=3)]))
    assert report.ok
    assert any("new_field" in n for n in report.notes)


def test_file_kind_comes_from_all_rows_not_the_first(tmp_path: Path) -> None:
    first = text_row(1)
    del first["task_type"]
    read = read_manifest(write_json(tmp_path / "t.json", [first, text_row(2)]))
    assert read.kind == "text"
    assert [e.field for e in read.errors] == ["task_type"]


def test_a_bad_time_is_quoted_once(tmp_path: Path) -> None:
    path = write_json(tmp_path / "t.json", [text_row(1, prediction_time="not a time")])
    with pytest.raises(ManifestError) as info:
        load_questions(path)
    assert info.value.field == "prediction_time"
    assert str(info.value).count("'not a time'") == 1, str(info.value)


@pytest.mark.parametrize("value", [1_234_567, 2150.5])
def test_a_number_as_a_time_is_told_as_a_number(tmp_path: Path, value: float) -> None:
    """Pydantic reads a number as Unix seconds, an aware real-world instant: the error was about its time
    zone ("must be naive"); it names the number and the expected format (newcomer25)."""
    path = write_json(tmp_path / "t.json", [text_row(1, prediction_time=value)])
    with pytest.raises(ManifestError) as info:
        load_questions(path)
    assert info.value.field == "prediction_time"
    assert f"got the number {value!r}" in str(info.value) and "YYYY-MM-DD HH:MM:SS" in str(info.value)
    assert "naive" not in str(info.value)
