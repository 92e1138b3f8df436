"""The builder on the ingested MIMIC-IV demo: coverage, labels re-checked by hand-written SQL, no leakage, round trip."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from bench._bench_oracle import NEXT_BATCH_SQL, expected_next_event, expected_risk
from clinseek.bench import (
    MM_FILE,
    RISK_TASKS,
    TEXT_FILE,
    TEXT_TASKS,
    Question,
    build_benchmark,
    episode_key,
    load_questions,
    validate_benchmark,
)
from clinseek.episode import StoreReader, build_episode
from clinseek.errors import ClinseekError, RegistryError
from clinseek.store import open_store

PER_TASK = 4
EPISODES_PER_TASK = 2  # episode builds cost ~0.3 s each; two per task keep the file fast
# tasks the demo cannot support, and the reason the builder must give
UNSUPPORTED = {
    "chartevents": "icu.chartevents",  # absent from the public demo copy
    "radiology": "note.radiology",  # the demo has no notes
    "prescriptions_atc": "ATC",
    "medrecon_atc": "ATC",
}


@pytest.fixture(scope="module")
def built(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built") / "bench"
    build_benchmark(demo_store, per_task=PER_TASK, seed=42, out=out)
    return out


@pytest.fixture(scope="module")
def questions(built: Path) -> list[Question]:
    return load_questions(built)


@pytest.fixture(scope="module")
def store_con(demo_store: Path) -> Any:
    con = open_store(demo_store).connect()
    yield con
    con.close()


def _by_task(questions: list[Question]) -> dict[str, list[Question]]:
    out: dict[str, list[Question]] = {}
    for q in questions:
        out.setdefault(q.task, []).append(q)
    return out


def test_every_task_the_demo_supports_yields_rows(built: Path, questions: list[Question]) -> None:
    manifest = json.loads((built / "build_manifest.json").read_text())
    by_task = _by_task(questions)
    for spec in TEXT_TASKS:
        if spec.name in UNSUPPORTED:
            assert UNSUPPORTED[spec.name] in manifest["skipped"][spec.name]
            assert spec.name not in by_task
        else:
            assert len(by_task.get(spec.name, [])) == PER_TASK, spec.name
    # no CXR in the demo: every multimodal category is skipped with the reason, no MM file
    assert all("cxr.metadata" in manifest["skipped"][c] for c in ("cxr_finding_presence", "phenotype"))
    assert not (built / MM_FILE).exists()
    assert manifest["seed"] == 42 and manifest["store_info"]["kind"] == "ingest"


def test_built_files_pass_validate_against_the_store(built: Path, demo_store: Path) -> None:
    report = validate_benchmark(built, store=demo_store)
    assert report.ok, report.problems
    assert report.rows[str(built / TEXT_FILE)] == len(load_questions(built))


def test_risk_tasks_sample_both_answers(questions: list[Question]) -> None:
    by_task = _by_task(questions)
    for spec in RISK_TASKS:
        labels = {q.label for q in by_task[spec.name]}
        assert labels == {("yes",), ("no",)}, spec.name


def test_decision_candidates_cover_gold(questions: list[Question]) -> None:
    for q in questions:
        if q.task_type == "decision_making" and q.candidates:
            assert set(q.label) <= set(q.candidates), q.qid


def test_risk_labels_match_hand_written_sql(questions: list[Question], store_con: Any) -> None:
    checked = 0
    for q in questions:
        if q.task_type == "risk_prediction":
            assert q.label == (("yes",) if expected_risk(store_con, q) else ("no",)), q.qid
            checked += 1
    assert checked == len(RISK_TASKS) * PER_TASK


@pytest.mark.parametrize("task", sorted(NEXT_BATCH_SQL))
def test_next_batch_labels_match_hand_written_sql(
    task: str, questions: list[Question], store_con: Any
) -> None:
    rows = [q for q in questions if q.task == task]
    assert rows
    for q in rows:
        found = store_con.execute(NEXT_BATCH_SQL[task], [q.subject_id, q.prediction_time]).fetchall()
        assert set(q.label) == {r[0].strip() for r in found if r[0] is not None and r[0].strip()}, q.qid


def test_coding_labels_match_hand_written_sql(questions: list[Question], store_con: Any) -> None:
    dx = (
        "SELECT DISTINCT d.long_title FROM hosp.diagnoses_icd c JOIN hosp.d_icd_diagnoses d "
        "USING (icd_code, icd_version) WHERE c.hadm_id = ?"
    )
    ed = "SELECT DISTINCT icd_title FROM ed.diagnosis WHERE stay_id = ?"
    px = (
        "SELECT DISTINCT d.long_title FROM hosp.procedures_icd c JOIN hosp.d_icd_procedures d "
        "USING (icd_code, icd_version) WHERE c.hadm_id = ? AND c.chartdate >= ?"
    )
    for q in questions:
        if q.task == "diagnoses_icd":
            assert q.target_hadm_id == q.hadm_id
            assert set(q.label) == {r[0] for r in store_con.execute(dx, [q.target_hadm_id]).fetchall()}
        elif q.task == "diagnosis":
            assert q.target_stay_id is not None and q.hadm_id is None
            assert set(q.label) == {r[0] for r in store_con.execute(ed, [q.target_stay_id]).fetchall()}
        elif q.task == "procedures_icd":
            found = store_con.execute(px, [q.hadm_id, q.prediction_time.date()]).fetchall()
            assert set(q.label) == {r[0] for r in found}


# --- what the episode shows cannot decide the outcome -------------------------------------------------------

_OUTCOME_TASKS = {
    "Inpatient_Mortality",
    "LengthOfStay_3day",
    "LengthOfStay_7day",
    "ICU_Mortality_1day",
    "ICU_Mortality_7day",
    "ICU_Stay_7day",
    "ICU_Stay_14day",
    "ED_Inpatient_Mortality",
    "ED_Hospitalization",
    "ED_Critical_Outcomes",
}


def _assert_outcomes_hidden(q: Question, demo_reader: StoreReader) -> None:
    t = q.prediction_time
    with build_episode(demo_reader, episode_key(q)) as ep:
        assert ep.execute(
            "SELECT count(*) FROM hosp.patients WHERE dod IS NOT NULL AND dod + INTERVAL 1 DAY >= ?", [t]
        ).rows == [(0,)]
        open_adm = ep.execute(
            "SELECT count(*) FROM hosp.admissions WHERE dischtime IS NULL AND deathtime IS NULL "
            "AND discharge_location IS NULL AND hospital_expire_flag IS NULL AND admittime < ?",
            [t],
        ).rows
        late = "SELECT count(*) FROM {} WHERE {} >= ?"
        for table, col in (
            ("hosp.admissions", "admittime"),
            ("hosp.transfers", "intime"),
            ("hosp.admissions", "dischtime"),
            ("hosp.admissions", "deathtime"),
            ("hosp.transfers", "outtime"),
        ):
            assert ep.execute(late.format(table, col), [t]).rows == [(0,)], (q.qid, table, col)
        if q.hadm_id is not None and q.task in (
            "Inpatient_Mortality",
            "LengthOfStay_3day",
            "LengthOfStay_7day",
        ):
            assert open_adm[0][0] >= 1
            row = ep.execute(
                "SELECT dischtime, deathtime, discharge_location, hospital_expire_flag "
                "FROM hosp.admissions WHERE hadm_id = ?",
                [q.hadm_id],
            ).rows
            assert row == [(None, None, None, None)], q.qid
        if ep.has_table("icu.icustays"):
            stays = ep.execute(
                "SELECT outtime, los, last_careunit FROM icu.icustays WHERE intime < ? AND (outtime IS NULL)",
                [t],
            ).rows
            assert all(s == (None, None, None) for s in stays)
            assert ep.execute("SELECT count(*) FROM icu.icustays WHERE outtime >= ?", [t]).rows == [(0,)]
        if ep.has_table("ed.edstays") and q.task.startswith("ED_"):
            row = ep.execute(
                "SELECT outtime, disposition, hadm_id FROM ed.edstays WHERE intime = ?",
                [t - dt.timedelta(seconds=1)],
            ).rows
            assert row == [(None, None, None)], q.qid


def test_outcome_labels_are_not_decidable_from_the_episode(
    questions: list[Question], demo_reader: StoreReader
) -> None:
    checked = [
        q for t, qs in _by_task(questions).items() if t in _OUTCOME_TASKS for q in qs[:EPISODES_PER_TASK]
    ]
    assert len(checked) == len(_OUTCOME_TASKS) * EPISODES_PER_TASK
    for q in checked:
        _assert_outcomes_hidden(q, demo_reader)


def test_coding_answers_are_not_in_the_episode(questions: list[Question], demo_reader: StoreReader) -> None:
    for q in [q for qs in _by_task(questions).values() for q in qs[:EPISODES_PER_TASK]]:
        if q.task in ("diagnoses_icd", "diagnoses_ccs"):
            with build_episode(demo_reader, episode_key(q)) as ep:
                sql = "SELECT count(*) FROM hosp.diagnoses_icd WHERE hadm_id = ?"
                assert ep.execute(sql, [q.target_hadm_id]).rows == [(0,)]
        if q.task in ("diagnosis", "diagnosis_ccs"):
            with build_episode(demo_reader, episode_key(q)) as ep:
                sql = "SELECT count(*) FROM ed.diagnosis WHERE stay_id = ?"
                assert ep.execute(sql, [q.target_stay_id]).rows == [(0,)]


def test_next_batch_answers_are_not_in_the_episode(questions: list[Question], demo_reader: StoreReader) -> None:
    for q in [q for qs in _by_task(questions).values() for q in qs[:EPISODES_PER_TASK]]:
        if q.task == "labevents":
            with build_episode(demo_reader, episode_key(q)) as ep:
                sql = "SELECT count(*) FROM hosp.labevents WHERE charttime >= ?"
                assert ep.execute(sql, [q.prediction_time]).rows == [(0,)]


# --- determinism and refusals ---------------------------------------------------------------------------------


def test_same_seed_gives_same_questions(demo_store: Path, tmp_path: Path) -> None:
    tasks = ["ED_Hospitalization", "labevents", "diagnoses_ccs"]
    a = build_benchmark(demo_store, tasks=tasks, per_task=4, seed=3, out=tmp_path / "a")
    b = build_benchmark(demo_store, tasks=tasks, per_task=4, seed=3, out=tmp_path / "b")
    assert (a.out / TEXT_FILE).read_text() == (b.out / TEXT_FILE).read_text()
    c = build_benchmark(demo_store, tasks=tasks, per_task=4, seed=4, out=tmp_path / "c")
    assert (a.out / TEXT_FILE).read_text() != (c.out / TEXT_FILE).read_text()


def test_unknown_task_is_refused(demo_store: Path, tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="Nope"):
        build_benchmark(demo_store, tasks=["Nope"], out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_non_empty_output_is_refused(demo_store: Path, tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    with pytest.raises(ClinseekError, match="not empty"):
        build_benchmark(demo_store, tasks=["labevents"], out=tmp_path / "x")
    assert [p.name for p in (tmp_path / "x").iterdir()] == ["keep.txt"]


def test_no_question_names_an_admission_that_has_not_begun(questions: list[Question], store_con: Any) -> None:
    sql = "SELECT admittime FROM hosp.admissions WHERE hadm_id = ?"
    for q in questions:
        if q.task.startswith("ED_") or q.task in ("admissions", "diagnosis", "diagnosis_ccs"):
            assert q.hadm_id is None, q.qid
        if q.hadm_id is not None:
            assert store_con.execute(sql, [q.hadm_id]).fetchall()[0][0] < q.prediction_time, q.qid


def test_next_event_labels_match_hand_written_sql(
    questions: list[Question], store_con: Any, demo_store: Path
) -> None:
    present = set(open_store(demo_store).row_counts)
    rows = [q for q in questions if q.task == "next_event"]
    assert rows
    for q in rows:
        assert set(q.label) == expected_next_event(store_con, q, present), q.qid


def test_a_failing_task_is_reported_and_the_rest_is_built(demo_store: Path, tmp_path: Path) -> None:
    import shutil

    from clinseek.store import connect_store

    broken = tmp_path / "broken.duckdb"
    shutil.copy(demo_store, broken)
    con = connect_store(broken, read_only=False)
    con.execute("DROP TABLE hosp.d_labitems")  # still listed as present in clinseek_meta.table_info
    con.close()
    result = build_benchmark(broken, tasks=["labevents", "poe"], per_task=2, out=tmp_path / "out")
    assert result.counts == {"labevents": 0, "poe": 2}
    assert result.skipped["labevents"].startswith("failed: CatalogException")
    assert [q.task for q in load_questions(result.out)] == ["poe", "poe"]


def test_no_ed_question_is_asked_after_its_admission_began(demo_store: Path, tmp_path: Path) -> None:
    # the demo holds an ED stay registered 21 h into its admission (subject 10019003, stay 38020791):
    # at triage its hadm_id is visible, so "will the patient be admitted?" is answered by the record
    ed_tasks = ["ED_Hospitalization", "ED_ICU_Tranfer_12hour", "ED_Inpatient_Mortality", "ED_Critical_Outcomes"]
    built = build_benchmark(demo_store, tasks=ed_tasks, per_task=300, seed=1, out=tmp_path / "ed")
    asked = [q for q in load_questions(built.out) if q.task in ed_tasks]
    assert asked
    con = open_store(demo_store).connect()
    try:
        stays = []
        for q in asked:  # the ED stay asked about: the patient's stay whose triage is 1 s before the cutoff
            rows = con.execute(
                "SELECT e.stay_id, a.admittime FROM ed.edstays e "
                "LEFT JOIN hosp.admissions a USING (subject_id, hadm_id) WHERE e.subject_id = ? AND e.intime = ?",
                [q.subject_id, q.prediction_time - dt.timedelta(seconds=1)],
            ).fetchall()
            assert len(rows) == 1, q.qid
            stay_id, admittime = rows[0]
            stays.append(stay_id)
            assert admittime is None or admittime > q.prediction_time, (q.qid, q.subject_id, q.prediction_time)
        assert 38020791 not in stays
    finally:
        con.close()


def test_an_odd_per_task_draws_either_answer(demo_store: Path, tmp_path: Path) -> None:
    labels = set()
    for seed in range(8):
        built = build_benchmark(demo_store, tasks=["ED_Hospitalization"], per_task=1, seed=seed, out=tmp_path / str(seed))
        labels |= {a for q in load_questions(built.out) for a in q.label}
        assert "every label" not in built.skipped.get("ED_Hospitalization", ""), built.skipped  # the pool has both
    assert labels == {"yes", "no"}
