"""The quirks of real MIMIC that make leakage possible are present, so the temporal policy is tested on them."""

from __future__ import annotations

import duckdb

from clinseek.schema import get_table


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


def scalar(con: duckdb.DuckDBPyConnection, sql: str) -> object:
    return con.execute(sql).fetchall()[0][0]


def test_tables_without_their_own_time_exist() -> None:
    for name in ("hosp.diagnoses_icd", "hosp.drgcodes", "ed.triage", "ed.diagnosis", "hosp.emar_detail",
                 "hosp.poe_detail", "note.discharge_detail", "note.radiology_detail"):
        assert not any(c.is_time for c in get_table(name).columns), name


def test_date_only_values_are_stored(con: duckdb.DuckDBPyConnection) -> None:
    assert scalar(con, "SELECT count(*) FROM hosp.omr") > 0
    assert scalar(con, "SELECT count(*) FROM hosp.procedures_icd WHERE chartdate IS NOT NULL") > 0
    assert scalar(con, "SELECT count(*) FROM hosp.patients WHERE dod IS NOT NULL") > 0
    assert scalar(con, "SELECT count(*) FROM hosp.microbiologyevents WHERE charttime IS NULL AND chartdate IS NOT NULL") > 0


def test_results_are_stored_after_they_are_drawn(con: duckdb.DuckDBPyConnection) -> None:
    assert scalar(con, "SELECT min(storetime - charttime) > INTERVAL 0 MINUTE FROM hosp.labevents")
    assert scalar(con, "SELECT count(*) FROM icu.chartevents WHERE storetime > charttime") > 0
    assert scalar(con, "SELECT count(*) FROM hosp.microbiologyevents WHERE storetime > charttime + INTERVAL 1 DAY") > 0


def test_outcome_columns_are_filled(con: duckdb.DuckDBPyConnection) -> None:
    assert scalar(con, "SELECT count(*) FROM hosp.admissions WHERE deathtime IS NOT NULL AND hospital_expire_flag = 1") > 0
    assert scalar(con, "SELECT count(DISTINCT discharge_location) FROM hosp.admissions") >= 3
    assert scalar(con, "SELECT count(DISTINCT drg_mortality) FROM hosp.drgcodes WHERE drg_type = 'APR'") >= 2
    assert scalar(con, "SELECT count(DISTINCT disposition) FROM ed.edstays") >= 2


def test_hadm_id_is_sometimes_null(con: duckdb.DuckDBPyConnection) -> None:
    for table in ("hosp.labevents", "note.radiology", "hosp.transfers", "ed.edstays"):
        assert scalar(con, f"SELECT count(*) FROM {table} WHERE hadm_id IS NULL") > 0, table


def test_discharge_notes_are_signed_after_discharge(con: duckdb.DuckDBPyConnection) -> None:
    assert scalar(con, "SELECT count(*) FROM hosp.admissions") == scalar(con, "SELECT count(*) FROM note.discharge")
    assert scalar(
        con, "SELECT bool_and(n.storetime > a.dischtime) FROM note.discharge n JOIN hosp.admissions a USING (hadm_id)"
    )


def test_orders_are_discontinued_by_later_orders(con: duckdb.DuckDBPyConnection) -> None:
    assert scalar(
        con,
        "SELECT count(*) FROM hosp.poe o JOIN hosp.poe d ON d.poe_id = o.discontinued_by_poe_id WHERE d.ordertime > o.ordertime",
    ) > 0
    assert scalar(con, "SELECT bool_and(split_part(poe_id, '-', 1) = CAST(subject_id AS VARCHAR)) FROM hosp.poe")
    assert scalar(con, "SELECT bool_and(split_part(emar_id, '-', 1) = CAST(subject_id AS VARCHAR)) FROM hosp.emar")


def test_infusions_end_after_they_start(con: duckdb.DuckDBPyConnection) -> None:
    assert scalar(con, "SELECT bool_and(endtime > starttime) FROM icu.inputevents")
    assert scalar(con, "SELECT count(*) FROM icu.inputevents WHERE itemid = 221906") > 0  # norepinephrine
