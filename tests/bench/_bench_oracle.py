"""Hand-written SQL on the raw store that recomputes builder labels independently (test oracle)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from clinseek.bench import Question


def _one(con: Any, sql: str, params: list[Any]) -> Any:
    rows = con.execute(sql, params).fetchall()
    assert len(rows) == 1, (sql, params, rows)
    return rows[0]


def _ed_stay(con: Any, q: Question) -> tuple[Any, ...]:
    return _one(
        con,
        "SELECT stay_id, intime, outtime, hadm_id FROM ed.edstays WHERE subject_id = ? AND intime = ?",
        [q.subject_id, q.prediction_time - dt.timedelta(seconds=1)],
    )


def _dies(con: Any, hadm_id: int) -> bool:
    flag, death = _one(
        con, "SELECT hospital_expire_flag, deathtime FROM hosp.admissions WHERE hadm_id = ?", [hadm_id]
    )
    return flag == 1 or death is not None


def _icu_12h(con: Any, q: Question, outtime: dt.datetime) -> bool:
    sql = "SELECT count(*) FROM icu.icustays WHERE subject_id = ? AND intime >= ? AND intime <= ?"
    return _one(con, sql, [q.subject_id, q.prediction_time, outtime + dt.timedelta(hours=12)])[0] > 0


def expected_risk(con: Any, q: Question) -> bool:
    """The yes/no answer of a risk question, recomputed from the raw store."""
    task = q.task
    if task.startswith("ED_") and task != "ED_Reattendance_3day":
        _, _, outtime, hadm = _ed_stay(con, q)
        if task == "ED_Hospitalization":
            return hadm is not None
        if task == "ED_ICU_Tranfer_12hour":
            return _icu_12h(con, q, outtime)
        if task == "ED_Inpatient_Mortality":
            return _dies(con, hadm)
        return _icu_12h(con, q, outtime) or (hadm is not None and _dies(con, hadm))
    if task == "ED_Reattendance_3day":
        out = q.prediction_time - dt.timedelta(seconds=1)
        sql = "SELECT count(*) FROM ed.edstays WHERE subject_id = ? AND intime > ? AND intime <= ?"
        return _one(con, sql, [q.subject_id, out, out + dt.timedelta(days=3)])[0] > 0
    if task in ("Inpatient_Mortality",):
        return _dies(con, q.hadm_id)
    if task.startswith("LengthOfStay_"):
        days = int(task.split("_")[1].removesuffix("day"))
        sql = "SELECT dischtime - admittime > ? FROM hosp.admissions WHERE hadm_id = ?"
        return bool(_one(con, sql, [dt.timedelta(days=days), q.hadm_id])[0])
    if task.startswith("Readmission_"):
        days = int(task.split("_")[1].removesuffix("day"))
        disch = q.prediction_time - dt.timedelta(seconds=1)
        sql = "SELECT count(*) FROM hosp.admissions WHERE subject_id = ? AND admittime > ? AND admittime <= ?"
        return _one(con, sql, [q.subject_id, disch, disch + dt.timedelta(days=days)])[0] > 0
    return expected_icu(con, q)


def expected_icu(con: Any, q: Question) -> bool:
    """The yes/no answer of an ICU risk question, recomputed from the raw store."""
    task = q.task
    if task == "ICU_Readmission":
        out = q.prediction_time - dt.timedelta(seconds=1)
        sql = "SELECT count(*) FROM icu.icustays WHERE hadm_id = ? AND intime > ?"
        return _one(con, sql, [q.hadm_id, out])[0] > 0
    intime = q.prediction_time - dt.timedelta(hours=4)
    stay = _one(
        con,
        "SELECT los, outtime FROM icu.icustays WHERE subject_id = ? AND intime = ?",
        [q.subject_id, intime],
    )
    days = int(task.split("_")[-1].removesuffix("day"))
    if task.startswith("ICU_Stay_"):
        return stay[1] - intime > dt.timedelta(days=days)
    death = _one(con, "SELECT deathtime FROM hosp.admissions WHERE hadm_id = ?", [q.hadm_id])[0]
    return death is not None and death <= intime + dt.timedelta(days=days)


_RX_TIME = (
    "greatest(prescriptions.starttime, (SELECT p.entertime FROM hosp.pharmacy p "
    "WHERE p.pharmacy_id = prescriptions.pharmacy_id), (SELECT a.admittime FROM hosp.admissions a "
    "WHERE a.hadm_id = prescriptions.hadm_id))"
)
"""A prescription is shown once it has started and its pharmacy order was entered (POLICY.md; the demo has a
pharmacy row with an entertime for every prescription), and not before its admission starts (attack21)."""

_POE_TIME = (
    "greatest(poe.ordertime, coalesce((SELECT a.admittime FROM hosp.admissions a WHERE a.hadm_id = poe.hadm_id), "
    "poe.ordertime))"
)
"""An order is shown once placed, and not before its admission starts (attack21: MIMIC keeps orders only for
hospitalizations, so an order placed in the ED told that the patient would be admitted)."""

NEXT_BATCH_SQL = {
    "labevents": "SELECT DISTINCT d.label FROM hosp.labevents e JOIN hosp.d_labitems d USING (itemid) "
    "WHERE e.subject_id = ? AND e.charttime = ?",
    "prescriptions": f"SELECT DISTINCT drug FROM hosp.prescriptions WHERE subject_id = ? AND {_RX_TIME} = ?",
    "emar": "SELECT DISTINCT medication FROM hosp.emar WHERE subject_id = ? AND charttime = ?",
    "poe": f"SELECT DISTINCT order_type FROM hosp.poe WHERE subject_id = ? AND {_POE_TIME} = ?",
    "services": "SELECT DISTINCT curr_service FROM hosp.services WHERE subject_id = ? AND transfertime = ?",
    "transfers": "SELECT DISTINCT careunit FROM hosp.transfers WHERE subject_id = ? AND intime = ? AND careunit IS NOT NULL",
    "microbiologyevents": "SELECT DISTINCT test_name FROM hosp.microbiologyevents WHERE subject_id = ? "
    "AND coalesce(charttime, chartdate + INTERVAL 1 DAY) = ?",
    "omr": "SELECT DISTINCT result_name FROM hosp.omr WHERE subject_id = ? AND chartdate + INTERVAL 1 DAY = ?",
    "pyxis": "SELECT DISTINCT name FROM ed.pyxis WHERE subject_id = ? AND charttime = ?",
    "medrecon": "SELECT DISTINCT name FROM ed.medrecon WHERE subject_id = ? AND charttime = ?",
    "inputevents": "SELECT DISTINCT d.label FROM icu.inputevents e JOIN icu.d_items d USING (itemid) "
    "WHERE e.subject_id = ? AND e.starttime = ?",
    "outputevents": "SELECT DISTINCT d.label FROM icu.outputevents e JOIN icu.d_items d USING (itemid) "
    "WHERE e.subject_id = ? AND e.charttime = ?",
    "admissions": "SELECT DISTINCT admission_type FROM hosp.admissions WHERE subject_id = ? AND admittime = ?",
}


def coding_sql(task: str) -> str | None:
    """Hand SQL for the coding tasks (parameters: encounter id [, cutoff date])."""
    return {
        "diagnoses_icd": "SELECT DISTINCT d.long_title FROM hosp.diagnoses_icd c JOIN hosp.d_icd_diagnoses d "
        "USING (icd_code, icd_version) WHERE c.hadm_id = ?",
        "diagnosis": "SELECT DISTINCT icd_title FROM ed.diagnosis WHERE stay_id = ?",
        "procedures_icd": "SELECT DISTINCT d.long_title FROM hosp.procedures_icd c JOIN hosp.d_icd_procedures d "
        "USING (icd_code, icd_version) WHERE c.hadm_id = ? AND c.chartdate >= ?",
    }.get(task)


EVENT_TIME_SQL = {
    "admissions": ("hosp.admissions", "admittime"),
    "transfers": ("hosp.transfers", "intime"),
    "services": ("hosp.services", "transfertime"),
    "labevents": ("hosp.labevents", "charttime"),
    "microbiologyevents": ("hosp.microbiologyevents", "coalesce(charttime, chartdate + INTERVAL 1 DAY)"),
    "prescriptions": ("hosp.prescriptions", _RX_TIME),
    "pharmacy": ("hosp.pharmacy", "greatest(starttime, entertime, (SELECT a.admittime FROM hosp.admissions a "
                 "WHERE a.hadm_id = pharmacy.hadm_id))"),
    "emar": ("hosp.emar", "charttime"),
    "poe": ("hosp.poe", _POE_TIME),
    "omr": ("hosp.omr", "chartdate + INTERVAL 1 DAY"),
    "icustays": ("icu.icustays", "intime"),
    "chartevents": ("icu.chartevents", "charttime"),
    "datetimeevents": ("icu.datetimeevents", "charttime"),
    "inputevents": ("icu.inputevents", "starttime"),
    "ingredientevents": ("icu.ingredientevents", "starttime"),
    "outputevents": ("icu.outputevents", "charttime"),
    "procedureevents": ("icu.procedureevents", "starttime"),
    "edstays": ("ed.edstays", "intime"),
    "vitalsign": ("ed.vitalsign", "charttime"),
    "medrecon": ("ed.medrecon", "charttime"),
    "pyxis": ("ed.pyxis", "charttime"),
    "discharge": ("note.discharge", "charttime"),
    "radiology": ("note.radiology", "charttime"),
}
"""Event time of each table with its own time, written out by hand from POLICY.md."""


def expected_next_event(con: Any, q: Question, present: set[str]) -> set[str]:
    """The tables holding the patient's earliest event at or after the cutoff."""
    firsts: dict[str, Any] = {}
    for name, (table, expr) in EVENT_TIME_SQL.items():
        if table in present:
            sql = f"SELECT min({expr}) FROM {table} WHERE subject_id = ? AND {expr} >= ?"
            first = con.execute(sql, [q.subject_id, q.prediction_time]).fetchall()[0][0]
            if first is not None:
                firsts[name] = first
    soonest = min(firsts.values())
    return {n for n, t in firsts.items() if t == soonest}
