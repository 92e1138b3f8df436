"""Leakage between training and evaluation is refused: by qid, or by the same (subject_id, prediction_time)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from clinseek.bench import TEXT_FILE
from clinseek.distill import ExportFilters, export_dataset, load_exclusions


def _manifest_rows(bench: Path) -> list[dict]:
    return json.loads((bench / TEXT_FILE).read_text())


def _write_bench(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / TEXT_FILE).write_text(json.dumps(rows))
    return folder


def _exported_qids(out: Path) -> set[str]:
    jsonl = {json.loads(line)["qid"] for line in (out / "train.jsonl").read_text().splitlines()}
    parquet = set(pq.read_table(out / "train.parquet", columns=["qid"]).column("qid").to_pylist())
    assert jsonl == parquet
    return jsonl


@pytest.fixture(scope="module")
def baseline(distill_runs: Path, tmp_path_factory: pytest.TempPathFactory):
    return export_dataset([distill_runs], tmp_path_factory.mktemp("base") / "out", ExportFilters(include_baselines=True, min_f1=0.0))


def test_excluding_the_evaluation_benchmark_refuses_every_run_of_it(
    distill_runs: Path, distill_bench, baseline, tmp_path: Path
) -> None:
    bench, questions = distill_bench
    result = export_dataset([distill_runs], tmp_path / "out", ExportFilters(include_baselines=True, min_f1=0.0, exclude_benchmarks=[str(bench)]))
    assert result.samples == [] and _exported_qids(result.out) == set()
    assert {r.qid for r in result.leakage_refusals} == {s.qid for s in baseline.samples}
    assert result.card.excluded_questions == len(questions)
    assert len(result.card.leakage_refusals) == len(result.leakage_refusals)
    assert "Refused because the question is in an excluded benchmark" in (result.out / "README.md").read_text()


def test_an_excluded_qid_never_appears(distill_runs: Path, distill_bench, baseline, tmp_path: Path) -> None:
    bench, _ = distill_bench
    target = baseline.samples[0]
    rows = [r for r in _manifest_rows(bench) if r["qid"] == target.qid]
    rows[0]["subject_id"] = 1  # another patient: the qid alone must be enough
    excluded = _write_bench(tmp_path / "eval", rows)
    result = export_dataset([distill_runs], tmp_path / "out", ExportFilters(include_baselines=True, min_f1=0.0, exclude_benchmarks=[str(excluded)]))
    assert target.qid not in _exported_qids(result.out)
    assert {r.qid for r in result.leakage_refusals} == {target.qid}
    assert result.leakage_refusals[0].detail["in_excluded_benchmark"] == [
        f"qid {target.qid} is in excluded benchmark {excluded}"
    ]
    assert len(result.samples) == len(baseline.samples) - 1


def test_the_same_patient_and_moment_under_another_qid_is_refused(
    distill_runs: Path, distill_bench, baseline, tmp_path: Path
) -> None:
    bench, _ = distill_bench
    target = baseline.samples[-1]
    rows = [dict(r, qid="eval_question_1") for r in _manifest_rows(bench) if r["qid"] == target.qid]
    excluded = _write_bench(tmp_path / "eval", rows)
    result = export_dataset([distill_runs], tmp_path / "out", ExportFilters(include_baselines=True, min_f1=0.0, exclude_benchmarks=[str(excluded)]))
    assert {r.qid for r in result.leakage_refusals} == {target.qid}
    assert "is asked in" in result.leakage_refusals[0].detail["in_excluded_benchmark"][0]
    assert target.qid not in _exported_qids(result.out)


def test_exclusions_compare_timestamps_not_strings(distill_bench) -> None:
    bench, questions = distill_bench
    q = questions[0]
    exclusions = load_exclusions([bench])
    assert exclusions.match("other", q.subject_id, q.prediction_time.isoformat(sep="T"))
    assert exclusions.match("other", q.subject_id, q.prediction_time.isoformat(sep=" "))
    assert exclusions.match("other", q.subject_id + 1, q.prediction_time.isoformat()) == []


def test_excluding_subjects_refuses_the_patient_at_any_time(distill_runs: Path, distill_bench, baseline,
                                                              tmp_path: Path) -> None:
    bench, _ = distill_bench
    target = baseline.samples[0]
    rows = [dict(r, qid="eval_question_1", prediction_time="2001-01-01 00:00:00")
            for r in _manifest_rows(bench) if r["qid"] == target.qid]
    excluded = str(_write_bench(tmp_path / "eval", rows))
    loose = export_dataset([distill_runs], tmp_path / "a", ExportFilters(include_baselines=True, min_f1=0.0, exclude_benchmarks=[excluded]))
    assert loose.leakage_refusals == []
    strict = export_dataset([distill_runs], tmp_path / "b",
                            ExportFilters(include_baselines=True, min_f1=0.0, exclude_benchmarks=[excluded], exclude_subjects=True))
    refused = {r.qid for r in strict.leakage_refusals}
    assert target.qid in refused
    assert all(s.subject_id != target.subject_id for s in strict.samples)
