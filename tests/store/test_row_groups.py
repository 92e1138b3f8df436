"""A store is written with small row groups, so that one patient's select scans little of a table."""

from __future__ import annotations

from pathlib import Path

import duckdb

from clinseek.store import connect_store
from clinseek.store._duck import ROW_GROUP_SIZE, STORE_ALIAS


def _row_groups(con: duckdb.DuckDBPyConnection, name: str) -> tuple[int, int]:
    """(rows, row groups) of one store table."""
    rows = con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0]
    (groups,) = con.execute(f"SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('{name}')").fetchall()[0]
    return int(rows), int(groups)


def test_every_ingested_table_has_row_groups_of_at_most_the_stores_size(demo_store: Path) -> None:
    con = connect_store(demo_store)
    try:
        names = [f"{s}.{t}" for s, t in con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE schema_name IN ('hosp', 'icu', 'ed', 'clinseek_meta')"
        ).fetchall()]
        assert "hosp.labevents" in names and "clinseek_meta.event_index" in names
        for name in names:
            rows, groups = _row_groups(con, name)
            assert groups >= -(-rows // ROW_GROUP_SIZE), name  # never more rows in a group than the size
        rows, groups = _row_groups(con, "hosp.labevents")
        assert rows > 10 * ROW_GROUP_SIZE and groups >= rows // ROW_GROUP_SIZE  # the demo's 107,727 rows: 14 groups
    finally:
        con.close()


def test_a_patients_select_scans_only_its_row_groups(demo_store: Path) -> None:
    """DuckDB's zone maps skip the row groups of other patients (the tables are sorted by patient)."""
    con = connect_store(demo_store)
    try:
        subject = con.execute("SELECT min(subject_id) FROM hosp.labevents").fetchall()[0][0]
        plan = con.execute(
            "EXPLAIN ANALYZE SELECT * FROM hosp.labevents WHERE subject_id = ?", [subject]
        ).fetchall()[0][1]
        scanned = next(line for line in plan.splitlines() if "Row Groups Scanned" in line)
        done, total = (int(n) for n in scanned.split(":")[1].strip(" │").split("/"))
        assert total >= 10 and done <= 2, scanned
    finally:
        con.close()


def test_a_store_opened_for_writing_is_the_default_database(tmp_path: Path) -> None:
    """Unqualified names write into the store file (attached with the row-group size), nothing into memory."""
    path = tmp_path / "s.duckdb"
    con = connect_store(path, read_only=False)
    try:
        assert con.execute("SELECT current_database()").fetchall() == [(STORE_ALIAS,)]
        con.execute(f"CREATE TABLE t AS SELECT range AS i FROM range({3 * ROW_GROUP_SIZE})")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert _row_groups(con, "t") == (3 * ROW_GROUP_SIZE, 3)
    finally:
        con.close()
