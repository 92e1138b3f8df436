"""AgentEHR-Bench: the builder (labels re-derived here from the raw store), release checks, candidate tables."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from clinseek.bench import (
    AGENTEHR_FILE,
    AGENTEHR_TASKS,
    Question,
    build_benchmark,
    load_agentehr_tables,
    load_questions,
    question_candidates,
    store_candidate_table,
    validate_benchmark,
)
from clinseek.bench._vocab import icd_procedure_to_ccs, icd_to_ccs
from clinseek.errors import ClinseekError, RegistryError
from clinseek.store import open_store

TASKS = [t.name for t in AGENTEHR_TASKS]


@pytest.fixture(scope="module")
def demo_agentehr(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The AgentEHR-Bench evaluation-set shape (6 x 100) drawn from the MIMIC-IV demo."""
    out = tmp_path_factory.mktemp("agentehr_demo") / "bench"
    build_benchmark(demo_store, out=out, per_task=100, benchmark="agentehr")
    return out


def test_demo_build_validates_as_the_release(demo_agentehr: Path, demo_store: Path) -> None:
    assert (demo_agentehr / AGENTEHR_FILE).is_file()
    report = validate_benchmark(demo_agentehr, store=demo_store, release=True)
    assert report.ok, report.problems
    questions = load_questions(demo_agentehr)
    assert len(questions) == 600 and {q.task for q in questions} == set(TASKS)
    assert all(q.benchmark == "agentehr-bench" and not q.candidates and q.label for q in questions)
    manifest = json.loads((demo_agentehr / "build_manifest.json").read_text(encoding="utf-8"))
    assert manifest["benchmark"] == "agentehr" and manifest["counts"] == dict.fromkeys(TASKS, 100)


def test_release_check_names_what_is_off(demo_agentehr: Path, tmp_path: Path) -> None:
    lines = (demo_agentehr / AGENTEHR_FILE).read_text(encoding="utf-8").splitlines()
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    problems = validate_benchmark(short, release=True).problems
    assert any("rows: expected 600, found 599" in p for p in problems)
    assert any("rows per task" in p and "'diagnoses_ccs': 99" in p for p in problems)


def _raw(store: Path, sql: str, params: list[object]) -> list[tuple[object, ...]]:
    con = open_store(store).connect()
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def _oracle(store: Path, q: Question) -> set[str]:
    """The gold items of ``q`` from hand-written SQL on the raw store (AgentEHR's definitions)."""
    t_star = q.prediction_time + dt.timedelta(minutes=1)
    sid = q.subject_id
    if q.task == "labevents":
        rows = _raw(store, "SELECT DISTINCT d.label FROM hosp.labevents e JOIN hosp.d_labitems d USING (itemid) "
                    "WHERE e.subject_id = ? AND e.charttime = ?", [sid, t_star])
    elif q.task == "microbiologyevents":
        rows = _raw(store, "SELECT DISTINCT test_name FROM hosp.microbiologyevents WHERE subject_id = ? AND "
                    "coalesce(charttime, chartdate + INTERVAL 1 DAY) = ?", [sid, t_star])
    elif q.task == "prescriptions":
        rows = _raw(store, "SELECT DISTINCT drug FROM hosp.prescriptions WHERE subject_id = ? AND starttime = ?",
                    [sid, t_star])
    elif q.task == "transfers":
        rows = _raw(store, "SELECT DISTINCT careunit FROM hosp.transfers WHERE subject_id = ? AND intime = ? "
                    "AND eventtype = 'transfer'", [sid, t_star])
    elif q.task == "diagnoses_ccs":
        (disch,), = _raw(store, "SELECT dischtime FROM hosp.admissions WHERE hadm_id = ?", [q.target_hadm_id])
        assert q.prediction_time == disch - dt.timedelta(minutes=2)
        codes = _raw(store, "SELECT icd_code, icd_version FROM hosp.diagnoses_icd WHERE hadm_id = ?", [q.target_hadm_id])
        return {n for c, v in codes for n in icd_to_ccs(str(c), int(str(v)))}
    else:
        assert q.prediction_time.time() == dt.time(23, 58)
        codes = _raw(store, "SELECT icd_code, icd_version FROM hosp.procedures_icd WHERE hadm_id = ? AND chartdate = ?",
                     [q.target_hadm_id, q.prediction_time.date()])
        return {n for c, v in codes for n in icd_procedure_to_ccs(str(c), int(str(v)))}
    return {str(r[0]).strip() for r in rows if r[0] is not None and str(r[0]).strip()}


def test_labels_are_the_definitions_recomputed_from_the_raw_store(demo_agentehr: Path, demo_store: Path) -> None:
    questions = load_questions(demo_agentehr)
    for task in TASKS:
        for q in [q for q in questions if q.task == task][:15]:
            assert set(q.label) == _oracle(demo_store, q), (q.qid, q.label)


def test_unknown_agentehr_task_is_refused_before_writing(demo_store: Path, tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="unknown AgentEHR-Bench task"):
        build_benchmark(demo_store, tasks=["ED_Hospitalization"], out=tmp_path / "b", benchmark="agentehr")
    assert not (tmp_path / "b").exists()


# --- candidate tables --------------------------------------------------------------------------------------


def test_dictionary_tables_map_codes_to_every_category(demo_store: Path) -> None:
    dx = store_candidate_table(demo_store, "diagnoses_ccs", 1)
    assert dx.column_names == ["candidate", "icd_code", "icd_version", "long_title"]
    assert len(set(dx.column("candidate").to_pylist())) == 262
    row = dx.filter(pa.compute.equal(dx.column("icd_code"), "4280")).to_pylist()
    assert row and row[0]["candidate"] == "Congestive heart failure; nonhypertensive" and row[0]["icd_version"] == 9
    labs = store_candidate_table(demo_store, "labevents", 1)
    assert labs.column_names == ["candidate", "itemid", "fluid", "category"]
    (n,), = _raw(demo_store, "SELECT count(*) FROM hosp.d_labitems WHERE label IS NOT NULL AND trim(label) <> ''", [])
    assert labs.num_rows == n


@pytest.mark.parametrize(("task", "table", "column"), [
    ("prescriptions", "hosp.prescriptions", "drug"),
    ("transfers", "hosp.transfers", "careunit"),
    ("microbiologyevents", "hosp.microbiologyevents", "test_name"),
])
def test_vocabularies_never_depend_on_the_patients_own_rows(demo_store: Path, task: str, table: str, column: str) -> None:
    sole = _raw(demo_store, f"SELECT {column}, min(subject_id) FROM {table} WHERE {column} IS NOT NULL "
                f"GROUP BY {column} HAVING count(DISTINCT subject_id) = 1 ORDER BY 1 LIMIT 1", [])
    if not sole:
        pytest.skip(f"every {column} of the demo has two patients or more")
    (name, owner), = sole
    other, = _raw(demo_store, f"SELECT min(subject_id) FROM {table} WHERE subject_id <> ?", [owner])[0]
    assert name not in store_candidate_table(demo_store, task, int(owner)).column("candidate").to_pylist()
    assert name in store_candidate_table(demo_store, task, int(other)).column("candidate").to_pylist()


def _agentehr_db(root: Path, tables: dict[str, tuple[list[str], list[tuple[object, ...]]]]) -> Path:
    db = root / "database" / "candidate_table.db"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    for name, (columns, rows) in tables.items():
        con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} TEXT' for c in columns)})")
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(columns))})", rows)
    con.commit()
    con.close()
    return db


def test_agentehr_candidate_db_is_imported_from_its_data_root(tmp_path: Path) -> None:
    _agentehr_db(tmp_path, {
        "labevents_candidates": (["itemid", "candidate", "fluid", "category"],
                                 [("50912", "Creatinine", "Blood", "Chemistry"), ("1", "", "Blood", "x")]),
        "prescriptions_atc_candidates": (["ndc_code", "candidate"], [("00000000001", "ANTIBACTERIALS")]),
        "radiology_candidates": (["candidate"], [("CT HEAD",)]),
    })
    tables = load_agentehr_tables(tmp_path)
    assert set(tables) == {"labevents", "prescriptions"}
    assert tables["labevents"].to_pylist() == [
        {"itemid": "50912", "candidate": "Creatinine", "fluid": "Blood", "category": "Chemistry"}]
    assert load_agentehr_tables(tmp_path / "database" / "candidate_table.db")["prescriptions"].num_rows == 1


def test_agentehr_candidate_db_with_patient_columns_is_refused(tmp_path: Path) -> None:
    db = _agentehr_db(tmp_path, {"transfers_candidates": (["candidate", "subject_id"], [("MICU", "10000032")])})
    with pytest.raises(ClinseekError, match=r"candidate_table\.db: table 'transfers_candidates'.*'subject_id'"):
        load_agentehr_tables(db)


def test_missing_agentehr_candidate_db_names_the_layout(tmp_path: Path) -> None:
    with pytest.raises(ClinseekError, match=r"database/candidate_table\.db.*<task>_candidates"):
        load_agentehr_tables(tmp_path)


def test_question_gets_the_imported_table_or_a_clear_error(demo_agentehr: Path, demo_store: Path, tmp_path: Path) -> None:
    _agentehr_db(tmp_path, {"labevents_candidates": (["candidate"], [("Creatinine",)])})
    questions = load_questions(demo_agentehr)
    lab = next(q for q in questions if q.task == "labevents")
    assert question_candidates(lab, demo_store, tmp_path)["labevents_candidates"].num_rows == 1
    assert question_candidates(lab, demo_store)["labevents_candidates"].num_rows > 1000
    micro = next(q for q in questions if q.task == "microbiologyevents")
    with pytest.raises(ClinseekError, match="no table for task 'microbiologyevents'"):
        question_candidates(micro, demo_store, tmp_path)
