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
