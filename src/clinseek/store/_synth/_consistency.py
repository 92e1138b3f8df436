"""Whole-store consistency checks (written for synthetic stores; usable on any clinseek store).

Each check is one SQL query that counts offending rows; :func:`check_consistency` returns one
message per failing check. Tables absent from the store are skipped.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ...schema import Table, tables
from .._duck import connect_store

_NOTE_MODULE = "note"  # notes may be signed after a death; their event time is not checked against dod


def _present(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables()").fetchall()
    return {r[0] for r in rows}


def _count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    return int(con.execute(sql).fetchall()[0][0])


def _links(present: set[str]) -> list[tuple[str, str]]:
    """(check name, SQL counting bad rows) for keys that must point at existing rows of the same subject."""
    out = []
    for t in tables():
        if t.qualified not in present or t.qualified in ("hosp.patients",):
            continue
        names = t.column_names
        if "subject_id" in names:
            out.append((f"{t.qualified}: subject_id without a patient",
                        f"SELECT count(*) FROM {t.qualified} x WHERE x.subject_id NOT IN (SELECT subject_id FROM hosp.patients)"))
        if "hadm_id" in names and t.qualified != "hosp.admissions":
            out.append((f"{t.qualified}: hadm_id without an admission of the same subject",
                        f"SELECT count(*) FROM {t.qualified} x LEFT JOIN hosp.admissions a ON a.hadm_id = x.hadm_id "
                        "WHERE x.hadm_id IS NOT NULL AND (a.hadm_id IS NULL OR a.subject_id <> x.subject_id)"))
        if "stay_id" in names and t.module == "icu" and t.name != "icustays":
            out.append((f"{t.qualified}: stay_id without an ICU stay of the same admission",
                        f"SELECT count(*) FROM {t.qualified} x LEFT JOIN icu.icustays s ON s.stay_id = x.stay_id "
                        "WHERE s.stay_id IS NULL OR s.hadm_id <> x.hadm_id"))
        if "stay_id" in names and t.module == "ed" and t.name != "edstays":
            out.append((f"{t.qualified}: stay_id without an ED stay of the same subject",
                        f"SELECT count(*) FROM {t.qualified} x LEFT JOIN ed.edstays s ON s.stay_id = x.stay_id "
                        "WHERE s.stay_id IS NULL OR s.subject_id <> x.subject_id"))
    return out


def _after_death(t: Table) -> str | None:
    """SQL counting rows whose event time lies after the end of the patient's day of death."""
    if t.event_time is None or t.event_time.parent is not None or t.module == _NOTE_MODULE or not t.is_patient_table:
        return None
    return (f"SELECT count(*) FROM {t.qualified} t JOIN hosp.patients p USING (subject_id) "
            f"WHERE p.dod IS NOT NULL AND ({t.event_time.expr}) > p.dod + INTERVAL 1 DAY")


_CHECKS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("ICU stay outside its admission",
     "SELECT count(*) FROM icu.icustays s JOIN hosp.admissions a USING (hadm_id) "
     "WHERE s.intime < a.admittime OR s.outtime > a.dischtime OR s.subject_id <> a.subject_id",
     ("icu.icustays", "hosp.admissions")),
    ("icustays.los differs from outtime - intime (days)",
     "SELECT count(*) FROM icu.icustays WHERE abs(los - epoch(outtime - intime) / 86400.0) > 1e-6",
     ("icu.icustays",)),
    ("admission with dischtime before admittime",
     "SELECT count(*) FROM hosp.admissions WHERE dischtime < admittime", ("hosp.admissions",)),
    ("deathtime without hospital_expire_flag = 1, discharge_location DIED and a matching dod",
     "SELECT count(*) FROM hosp.admissions a JOIN hosp.patients p USING (subject_id) WHERE a.deathtime IS NOT NULL "
     "AND (a.hospital_expire_flag <> 1 OR a.discharge_location IS DISTINCT FROM 'DIED' OR p.dod IS DISTINCT FROM CAST(a.deathtime AS DATE))",
     ("hosp.admissions", "hosp.patients")),
    ("hospital_expire_flag = 1 or DIED without a deathtime",
     "SELECT count(*) FROM hosp.admissions WHERE deathtime IS NULL AND (hospital_expire_flag = 1 OR discharge_location = 'DIED')",
     ("hosp.admissions",)),
    ("admission after the patient's death",
     "SELECT count(*) FROM hosp.admissions a JOIN hosp.patients p USING (subject_id) WHERE p.dod IS NOT NULL AND a.admittime > p.dod + INTERVAL 1 DAY",
     ("hosp.admissions", "hosp.patients")),
    ("transfers of an admission are not contiguous",
     "SELECT count(*) FROM (SELECT outtime, lead(intime) OVER (PARTITION BY hadm_id ORDER BY intime, transfer_id) AS nxt "
     "FROM hosp.transfers WHERE hadm_id IS NOT NULL) WHERE nxt IS NOT NULL AND outtime <> nxt",
     ("hosp.transfers",)),
    ("transfers do not cover the admission (first row after admittime or discharge row not at dischtime)",
     "SELECT count(*) FROM hosp.admissions a LEFT JOIN (SELECT hadm_id, min(intime) AS first_in, "
     "max(CASE WHEN eventtype = 'discharge' THEN intime END) AS disch FROM hosp.transfers GROUP BY hadm_id) t USING (hadm_id) "
     "WHERE t.first_in IS NULL OR t.first_in > a.admittime OR t.disch IS DISTINCT FROM a.dischtime",
     ("hosp.transfers", "hosp.admissions")),
    ("ED stay whose admission starts before the ED arrival or after the ED departure",
     "SELECT count(*) FROM ed.edstays e JOIN hosp.admissions a USING (hadm_id) "
     "WHERE a.admittime < e.intime OR a.admittime > e.outtime OR a.subject_id <> e.subject_id",
     ("ed.edstays", "hosp.admissions")),
    ("ED stay ending before it starts",
     "SELECT count(*) FROM ed.edstays WHERE outtime < intime", ("ed.edstays",)),
    ("lab resulted before it was drawn",
     "SELECT count(*) FROM hosp.labevents WHERE storetime < charttime", ("hosp.labevents",)),
    ("chart event outside its ICU stay",
     "SELECT count(*) FROM icu.chartevents c JOIN icu.icustays s USING (stay_id) WHERE c.charttime < s.intime OR c.charttime > s.outtime",
     ("icu.chartevents", "icu.icustays")),
    ("inpatient event outside its admission",
     "SELECT count(*) FROM (SELECT hadm_id, starttime AS t FROM hosp.prescriptions UNION ALL "
     "SELECT hadm_id, charttime FROM hosp.emar) x JOIN hosp.admissions a USING (hadm_id) "
     "WHERE x.t < a.admittime - INTERVAL 1 DAY OR x.t > a.dischtime",
     ("hosp.prescriptions", "hosp.emar", "hosp.admissions")),
    ("CXR studies differ between metadata and chexpert",
     "SELECT count(*) FROM ((SELECT DISTINCT study_id FROM cxr.metadata EXCEPT SELECT study_id FROM cxr.chexpert) "
     "UNION ALL (SELECT study_id FROM cxr.chexpert EXCEPT SELECT study_id FROM cxr.metadata))",
     ("cxr.metadata", "cxr.chexpert")),
    ("CXR studies differ between metadata and reports",
     "SELECT count(*) FROM ((SELECT DISTINCT study_id FROM cxr.metadata EXCEPT SELECT study_id FROM cxr.reports) "
     "UNION ALL (SELECT study_id FROM cxr.reports EXCEPT SELECT study_id FROM cxr.metadata))",
     ("cxr.metadata", "cxr.reports")),
    ("CXR studies differ between chexpert and negbio",
     "SELECT count(*) FROM ((SELECT study_id FROM cxr.chexpert EXCEPT SELECT study_id FROM cxr.negbio) "
     "UNION ALL (SELECT study_id FROM cxr.negbio EXCEPT SELECT study_id FROM cxr.chexpert))",
     ("cxr.chexpert", "cxr.negbio")),
    ("CXR images differ between metadata and split",
     "SELECT count(*) FROM ((SELECT dicom_id FROM cxr.metadata EXCEPT SELECT dicom_id FROM cxr.split) "
     "UNION ALL (SELECT dicom_id FROM cxr.split EXCEPT SELECT dicom_id FROM cxr.metadata))",
     ("cxr.metadata", "cxr.split")),
    ("CXR study with images of two subjects",
     "SELECT count(*) FROM (SELECT study_id FROM cxr.metadata GROUP BY study_id HAVING count(DISTINCT subject_id) > 1)",
     ("cxr.metadata",)),
    ("patient with an age outside 18-91 or an unknown anchor_year_group",
     "SELECT count(*) FROM hosp.patients WHERE anchor_age NOT BETWEEN 18 AND 91 OR anchor_year NOT BETWEEN 2100 AND 2220 "
     "OR anchor_year_group NOT IN ('2008 - 2010', '2011 - 2013', '2014 - 2016', '2017 - 2019', '2020 - 2022')",
     ("hosp.patients",)),
)


def check_consistency(path: Path | str) -> list[str]:
    """Problems found in a store, one message per failing check (an empty list when it is consistent).

    Checks: every subject_id has a patient; every hadm_id an admission of the same subject; ICU
    and ED ``stay_id`` s exist; no event (by the registry's event time, notes excepted) after the
    day of death; ICU stays inside their admission and ``los`` = ``outtime - intime`` in days;
    transfers contiguous and covering the admission; ``deathtime`` <=> ``hospital_expire_flag = 1``,
    ``discharge_location = 'DIED'`` and ``patients.dod``; an ED stay's admission starts during it;
    labs resulted after drawn; chart events inside their ICU stay; CXR study and image ids agree
    across metadata, chexpert, negbio, split and reports; anchor ages and years in MIMIC ranges.

    Raises:
        StoreError: the store cannot be opened.
    """
    con = connect_store(Path(path), read_only=True)
    try:
        present = _present(con)
        checks = list(_links(present))
        for t in tables():
            sql = _after_death(t)
            if sql and t.qualified in present and "hosp.patients" in present:
                checks.append((f"{t.qualified}: event after the patient's death", sql))
        checks += [(name, sql) for name, sql, needs in _CHECKS if set(needs) <= present]
        problems = []
        for name, sql in checks:
            bad = _count(con, sql)
            if bad:
                problems.append(f"{name}: {bad} row(s)")
        return problems
    finally:
        con.close()
