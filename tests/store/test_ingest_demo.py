"""Ingest of the real MIMIC-IV demo 2.2 + MIMIC-IV-ED demo 2.2 (the ``demo_store`` session fixture)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from clinseek.schema import get_table
from clinseek.store import connect_store, open_store, stored_instants


@pytest.fixture(scope="module")
def con(demo_store: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = connect_store(demo_store)
    yield connection
    connection.close()


def test_every_table_row_count_equals_the_readme(
    con: duckdb.DuckDBPyConnection, demo_counts: dict[str, int]
) -> None:
    stored = dict(con.execute("SELECT table_name, row_count FROM clinseek_meta.table_info").fetchall())
    assert set(stored) == set(demo_counts)  # every README table, nothing else
    for name, expected in demo_counts.items():
        assert stored[name] == expected, name
        assert con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0] == expected, name


def test_absent_chartevents_is_not_a_table(demo_store: Path) -> None:
    store = open_store(demo_store)
    assert not store.has_table("icu.chartevents")
    assert store.has_table("icu.icustays")


def test_column_names_and_types_are_as_registered(con: duckdb.DuckDBPyConnection) -> None:
    for (name,) in con.execute("SELECT table_name FROM clinseek_meta.table_info").fetchall():
        table = get_table(name)
        described = con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
            "ORDER BY column_index",
            [table.module, table.name],
        ).fetchall()
        registered = [(c.name, c.type) for c in table.columns]
        assert described[: len(registered)] == registered, name
        # then the store's own row instants, reserved names only (clinseek.store.stored_instants)
        present = {n for (n,) in con.execute("SELECT table_name FROM clinseek_meta.table_info").fetchall()}
        instants = stored_instants(table, present)
        expected = [] if instants is None else list(instants.columns)
        assert [c for c, _ in described[len(registered):]] == expected, name


def test_labevents_is_ordered_by_subject_then_charttime(con: duckdb.DuckDBPyConnection) -> None:
    unordered = con.execute(
        "SELECT count(*) FROM (SELECT subject_id, charttime, "
        "lag(subject_id) OVER w AS prev_subject, lag(charttime) OVER w AS prev_time "
        "FROM hosp.labevents WINDOW w AS (ORDER BY rowid)) "
        "WHERE subject_id < prev_subject OR (subject_id = prev_subject AND charttime < prev_time)"
    ).fetchall()[0][0]
    assert unordered == 0
    subjects = con.execute("SELECT count(DISTINCT subject_id) FROM hosp.labevents").fetchall()[0][0]
    assert subjects > 1


def test_no_empty_or_nan_strings_are_stored(con: duckdb.DuckDBPyConnection) -> None:
    for (name,) in con.execute("SELECT table_name FROM clinseek_meta.table_info").fetchall():
        table = get_table(name)
        for col in table.columns:
            if col.type != "VARCHAR":
                continue
            bad = con.execute(
                f"SELECT count(*) FROM {name} WHERE trim(\"{col.name}\") = '' "
                f"OR lower(\"{col.name}\") IN ('nan', 'nat')"
            ).fetchall()[0][0]
            assert bad == 0, f"{name}.{col.name}"


def test_empty_fields_are_null_not_text(con: duckdb.DuckDBPyConnection) -> None:
    # the demo's outpatient labs have no hadm_id and most rows no comment
    nulls = con.execute(
        "SELECT count(*) FILTER (hadm_id IS NULL), count(*) FILTER (comments IS NULL) FROM hosp.labevents"
    ).fetchall()[0]
    assert nulls[0] > 0 and nulls[1] > 0


def test_date_columns_accept_midnight_timestamps(con: duckdb.DuckDBPyConnection) -> None:
    # microbiologyevents.chartdate arrives as "2180-08-06 00:00:00"
    kind, missing = con.execute(
        "SELECT typeof(chartdate), count(*) FILTER (chartdate IS NULL) FROM hosp.microbiologyevents GROUP BY 1"
    ).fetchall()[0]
    assert kind == "DATE" and missing == 0


def test_upper_case_alias_header_is_read(con: duckdb.DuckDBPyConnection) -> None:
    # the demo's procedureevents header spells ORIGINALAMOUNT / ORIGINALRATE in upper case
    filled = con.execute(
        "SELECT count(originalamount), count(originalrate) FROM icu.procedureevents"
    ).fetchall()[0]
    assert filled[0] > 0 and filled[1] > 0


def test_provenance_is_recorded(con: duckdb.DuckDBPyConnection, shared_data: Path) -> None:
    info = dict(con.execute("SELECT key, value FROM clinseek_meta.store_info").fetchall())
    assert info["kind"] == "ingest"
    assert info["source.mimic_iv"] == str((shared_data / "mimic-iv-demo-2.2").resolve())
    sha, source = con.execute(
        "SELECT source_sha256, source_file FROM clinseek_meta.table_info WHERE table_name = 'hosp.patients'"
    ).fetchall()[0]
    listed = (shared_data / "mimic-iv-demo-2.2" / "SHA256SUMS.txt").read_text().split("\n")
    assert f"{sha} hosp/patients.csv.gz" in [" ".join(line.split()) for line in listed]
    assert source.endswith("hosp/patients.csv.gz")
