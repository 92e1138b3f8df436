"""Evidence predicts outcomes: sicker patients get more labs, pressors and ICU care and die more;
home medications repeat across admissions so history predicts the next prescriptions."""

from __future__ import annotations

import duckdb


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


def scalar(con: duckdb.DuckDBPyConnection, sql: str) -> object:
    return con.execute(sql).fetchall()[0][0]


def test_patients_who_die_have_more_abnormal_labs(con: duckdb.DuckDBPyConnection) -> None:
    got = dict(rows(con, """
        SELECT a.hospital_expire_flag, avg(CASE WHEN l.flag = 'abnormal' THEN 1.0 ELSE 0.0 END)
        FROM hosp.labevents l JOIN hosp.admissions a USING (hadm_id)
        WHERE l.itemid IN (50813, 50912, 51301, 50882) GROUP BY ALL"""))
    assert got[1] > got[0]


def test_patients_who_die_get_pressors_more_often(con: duckdb.DuckDBPyConnection) -> None:
    got = dict(rows(con, """
        SELECT a.hospital_expire_flag, avg(CASE WHEN p.hadm_id IS NULL THEN 0.0 ELSE 1.0 END)
        FROM hosp.admissions a LEFT JOIN (SELECT DISTINCT hadm_id FROM icu.inputevents WHERE itemid = 221906) p USING (hadm_id)
        GROUP BY ALL"""))
    assert got[1] > got[0]


def test_triage_acuity_predicts_admission(con: duckdb.DuckDBPyConnection) -> None:
    got = dict(rows(con, """
        SELECT e.hadm_id IS NOT NULL, avg(t.acuity) FROM ed.edstays e JOIN ed.triage t USING (stay_id) GROUP BY ALL"""))
    assert got[True] < got[False]  # ESI 1 is the most urgent


def test_icu_admissions_get_more_labs_per_day(con: duckdb.DuckDBPyConnection) -> None:
    got = dict(rows(con, """
        SELECT icu, sum(n) / sum(days) FROM (
            SELECT a.hadm_id IN (SELECT hadm_id FROM icu.icustays) AS icu, epoch(a.dischtime - a.admittime) / 86400 AS days,
                   (SELECT count(*) FROM hosp.labevents l WHERE l.hadm_id = a.hadm_id) AS n
            FROM hosp.admissions a) GROUP BY icu"""))
    assert got[True] > got[False]


def test_vitals_are_worse_before_an_icu_death(con: duckdb.DuckDBPyConnection) -> None:
    got = dict(rows(con, """
        SELECT a.hospital_expire_flag, avg(c.valuenum) FROM icu.chartevents c JOIN hosp.admissions a USING (hadm_id)
        WHERE c.itemid = 220045 GROUP BY ALL"""))
    assert got[1] > got[0]  # faster heart rate


def test_home_medications_repeat_across_admissions(con: duckdb.DuckDBPyConnection) -> None:
    overlap = scalar(con, """
        WITH d AS (SELECT DISTINCT p.subject_id, p.hadm_id, p.drug, a.admittime FROM hosp.prescriptions p
                   JOIN hosp.admissions a USING (hadm_id)),
             later AS (SELECT d2.subject_id, d2.hadm_id, d2.drug,
                              EXISTS (SELECT 1 FROM d d1 WHERE d1.subject_id = d2.subject_id AND d1.admittime < d2.admittime
                                      AND d1.drug = d2.drug) AS seen
                       FROM d d2 WHERE EXISTS (SELECT 1 FROM d d1 WHERE d1.subject_id = d2.subject_id AND d1.admittime < d2.admittime))
        SELECT avg(CASE WHEN seen THEN 1.0 ELSE 0.0 END) FROM later""")
    assert overlap > 0.4


def test_labs_repeat_every_day(con: duckdb.DuckDBPyConnection) -> None:
    share = scalar(con, """
        SELECT avg(CASE WHEN n > 1 THEN 1.0 ELSE 0.0 END) FROM (
            SELECT hadm_id, itemid, count(*) AS n FROM hosp.labevents WHERE hadm_id IS NOT NULL GROUP BY ALL)""")
    assert share > 0.5


def test_discharge_note_agrees_with_the_record(con: duckdb.DuckDBPyConnection) -> None:
    bad = scalar(con, """
        SELECT count(*) FROM note.discharge n JOIN hosp.admissions a USING (hadm_id)
        WHERE (a.hospital_expire_flag = 1) <> contains(n.text, 'Discharge Disposition:' || chr(10) || 'Expired')""")
    assert bad == 0
    mentions = scalar(con, """
        SELECT avg(CASE WHEN contains(n.text, p.drug) THEN 1.0 ELSE 0.0 END) FROM note.discharge n
        JOIN (SELECT DISTINCT hadm_id, drug FROM hosp.prescriptions) p USING (hadm_id)""")
    assert mentions > 0.9
