"""``clinseek data pg-index``: a subject_id index on every patient table that lacks one, nothing else."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.errors import StoreError
from clinseek.store import pg_index
from pgserver import PgDatabase

psycopg = pytest.importorskip("psycopg")

PATIENT_TABLES = 29  # the demo's hosp, icu and ed tables with a subject_id
LOOKUPS = 5  # (subject_id, key) on admissions.hadm_id, pharmacy.pharmacy_id, poe_detail.poe_id,
# icustays.stay_id, edstays.stay_id (the registry's lookups; the demo has no notes; the renumbered poe ids are
# read by one join of the patient's orders, not looked up row by row; emar.emar_id since session 16 only through
# emar_detail's parent join: its columns are known with the row)


def _plan(url: str, sql: str) -> str:
    with psycopg.connect(url) as con:
        return json.dumps(con.execute(f"EXPLAIN (FORMAT JSON) {sql}").fetchall()[0][0])


def test_pg_index_creates_what_is_missing_and_leaves_the_rest(pg_scratch: PgDatabase) -> None:
    with psycopg.connect(pg_scratch.admin_url, autocommit=True) as con:
        con.execute("CREATE INDEX mine ON mimiciv_hosp.admissions (subject_id, admittime)")
        before = con.execute("SELECT count(*) FROM pg_indexes WHERE schemaname LIKE 'mimiciv%'").fetchall()[0][0]
    planned = pg_index(pg_scratch.admin_url, dry_run=True)
    assert len(planned) == PATIENT_TABLES + LOOKUPS
    assert [e.status for e in planned].count("exists") == 1 and planned[1].name == "mimiciv_hosp.mine"
    assert [(e.table, e.columns) for e in planned[PATIENT_TABLES:]] == [
        ("hosp.admissions", ("subject_id", "hadm_id")), ("hosp.pharmacy", ("subject_id", "pharmacy_id")),
        ("hosp.poe_detail", ("subject_id", "poe_id")), ("icu.icustays", ("subject_id", "stay_id")),
        ("ed.edstays", ("subject_id", "stay_id"))]
    assert planned[8].sql == ('CREATE INDEX IF NOT EXISTS "labevents_subject_id_clinseek" ON "mimiciv_hosp"."labevents" '
                              '("subject_id")')
    with psycopg.connect(pg_scratch.admin_url) as con:  # a dry run changes nothing
        assert con.execute("SELECT count(*) FROM pg_indexes WHERE schemaname LIKE 'mimiciv%'").fetchall()[0][0] == before
    query = "SELECT * FROM mimiciv_hosp.labevents WHERE subject_id = 10000032"
    assert '"Seq Scan"' in _plan(pg_scratch.reader_url, query)
    done = pg_index(pg_scratch.admin_url)
    assert [e.status for e in done].count("created") == PATIENT_TABLES + LOOKUPS - 1
    assert "Index Scan" in _plan(pg_scratch.reader_url, query)  # plain or bitmap: the table is no longer scanned whole
    assert {e.status for e in pg_index(pg_scratch.admin_url)} == {"exists"}


def test_a_partitioned_table_is_indexed_on_every_partition(pg_scratch: PgDatabase) -> None:
    with psycopg.connect(pg_scratch.admin_url, autocommit=True) as con:
        con.execute("CREATE TABLE mimiciv_icu.chartevents (subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, "
                    "caregiver_id INTEGER, charttime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, value VARCHAR(200), "
                    "valuenum FLOAT, valueuom VARCHAR(20), warning SMALLINT) PARTITION BY RANGE (itemid)")
        con.execute("CREATE TABLE mimiciv_icu.chartevents_01 PARTITION OF mimiciv_icu.chartevents FOR VALUES FROM (0) TO (225000)")
        con.execute("CREATE TABLE mimiciv_icu.chartevents_02 PARTITION OF mimiciv_icu.chartevents DEFAULT")
    done = {e.table: e for e in pg_index(pg_scratch.admin_url)}
    assert done["icu.chartevents"].status == "created"
    with psycopg.connect(pg_scratch.admin_url) as con:
        indexed = con.execute("SELECT tablename FROM pg_indexes WHERE schemaname = 'mimiciv_icu' "
                              "AND tablename LIKE 'chartevents%' ORDER BY 1").fetchall()
    assert indexed == [("chartevents",), ("chartevents_01",), ("chartevents_02",)]


def test_the_read_only_role_cannot_index_and_is_told_who_can(pg_scratch: PgDatabase) -> None:
    with pytest.raises(StoreError) as caught:  # the scratch copy is not indexed yet: there is something to create
        pg_index(pg_scratch.reader_url)
    assert str(caught.value).endswith("#mimiciv_hosp.patients: role 'clinseek_reader' may not create an index on "
                                      "mimiciv_hosp.patients (must be owner of table patients); run pg-index as the "
                                      "role that owns the MIMIC tables")


def test_the_command_prints_each_table_and_a_total(pg_scratch: PgDatabase) -> None:
    runner = CliRunner()
    dry = runner.invoke(app, ["data", "pg-index", pg_scratch.admin_url, "--dry-run"])
    assert dry.exit_code == 0 and dry.output.count("CREATE INDEX IF NOT EXISTS") == PATIENT_TABLES + LOOKUPS
    done = runner.invoke(app, ["data", "pg-index", pg_scratch.admin_url])
    assert done.exit_code == 0, done.output
    assert "mimiciv_hosp.labevents (subject_id): created mimiciv_hosp.labevents_subject_id_clinseek (" in done.output
    assert ("mimiciv_hosp.pharmacy (subject_id, pharmacy_id): created mimiciv_hosp.pharmacy_subject_id_pharmacy_id_clinseek ("
            in done.output)
    assert done.output.rstrip().endswith(f"{PATIENT_TABLES + LOOKUPS} index(es) created, 0 already there")
    assert "admin-secret" not in done.output
