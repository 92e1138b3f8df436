"""The SQL guard on its own (no episode): adversarial statements refused, good ones qualified."""

from __future__ import annotations

import pytest
from _tool_attacks import REFUSED

from clinseek.errors import ToolError
from clinseek.schema import get_table
from clinseek.tools import guard_sql

_PRESENT = {"hosp.labevents", "hosp.patients", "hosp.d_labitems", "hosp.admissions"}


def _resolve(db: str | None, name: str) -> tuple[str, str] | None:
    try:
        table = get_table(f"{db}.{name}" if db else name)
    except Exception:
        return None
    return (table.module, table.name) if table.qualified in _PRESENT else None


def test_at_least_50_adversarial_statements() -> None:
    assert len(REFUSED) >= 50


@pytest.mark.parametrize(("sql", "kinds"), REFUSED, ids=[s for s, _ in REFUSED])
def test_adversarial_statement_is_refused(sql: str, kinds: str) -> None:
    with pytest.raises(ToolError) as info:
        guard_sql(sql, _resolve, available="...")
    assert info.value.kind in kinds.split("|"), info.value.message


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM labevents", "SELECT * FROM hosp.labevents"),
        ("select count(*) from hosp.LABEVENTS l", "SELECT COUNT(*) FROM hosp.labevents AS l"),
        ("FROM patients", "SELECT * FROM hosp.patients"),
        (
            "WITH x AS (SELECT itemid FROM labevents) SELECT * FROM x JOIN d_labitems USING (itemid)",
            "WITH x AS (SELECT itemid FROM hosp.labevents) SELECT * FROM x JOIN hosp.d_labitems USING (itemid)",
        ),
        ("SELECT 1 UNION ALL SELECT 2", "SELECT 1 UNION ALL SELECT 2"),
        ("SELECT * FROM range(3) r", "SELECT * FROM RANGE(0, 3) AS r"),
        ("SELECT * FROM labevents;", "SELECT * FROM hosp.labevents"),
    ],
)
def test_read_only_queries_pass_with_qualified_tables(sql: str, expected: str) -> None:
    assert guard_sql(sql, _resolve, available="...") == expected


def test_unknown_table_error_lists_what_is_available() -> None:
    with pytest.raises(ToolError, match=r"available: hosp\.labevents"):
        guard_sql("SELECT * FROM chartevents", _resolve, available="hosp.labevents")


_TABLES = "call ehr.get_table_names for this episode's tables (ehr.get_column_names for a table's columns)"
_COLUMNS = "call ehr.get_column_names (table_name=...) for a table's columns (ehr.get_table_names for the tables)"


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT name FROM sqlite_master",
     f"'sqlite_master' is a database catalog, not a table of this episode: {_TABLES}; available: hosp.emar"),
    ("SELECT name FROM sqlite_schema WHERE type = 'table'",
     f"'sqlite_schema' is a database catalog, not a table of this episode: {_TABLES}; available: hosp.emar"),
    ("SELECT table_name FROM information_schema.tables",
     f"'information_schema.tables' is a database catalog, not a table of this episode: {_TABLES}; available: hosp.emar"),
    ("SELECT tablename FROM pg_catalog.pg_tables",
     f"'pg_catalog.pg_tables' is a database catalog, not a table of this episode: {_TABLES}; available: hosp.emar"),
    ("SELECT column_name FROM INFORMATION_SCHEMA.COLUMNS WHERE table_name = 'labevents'",
     f"'INFORMATION_SCHEMA.COLUMNS' is a database catalog, not a table of this episode: {_COLUMNS}; "
     "available: hosp.emar"),
    ("PRAGMA table_info(labevents)", f"only read-only queries (SELECT/WITH) run here, not PRAGMA; {_COLUMNS}"),
    ("SHOW TABLES", f"only read-only queries (SELECT/WITH) run here, not SHOW; {_TABLES}"),
    ("SELECT * FROM duckdb_tables()", "function duckdb_tables() is not available: queries may read only this "
     f"episode's tables (no files, URLs, settings or catalogs); {_TABLES}"),
])
def test_a_catalog_of_any_engine_points_to_the_tools(sql: str, message: str) -> None:
    """fixnc21: sqlite_master got "(did you mean 'emar' or 'd_items'?)", a fuzzy guess at a patient table."""
    with pytest.raises(ToolError) as info:
        guard_sql(sql, _resolve, available="hosp.emar")
    assert info.value.message == message
