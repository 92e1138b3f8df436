"""Attack 21: SQL written for other engines (PostgreSQL as mimic-code writes it, BigQuery, MySQL) that the tool
answered silently otherwise than its own engine would.

Measured before the fixes on the demo case (subject 10014354, prediction time 2148-08-31 01:39:00), through
``ehr.run_sql_query``; the expected side is each engine's documented meaning, written here as plain DuckDB:

- mimic-code's PostgreSQL function ``DATETIME_DIFF(dischtime, admittime, 'HOUR')`` (``postgres-functions.sql``:
  ``EXTRACT(EPOCH FROM end - start) / 3600.0``, fractional) ran as ``date_diff('HOUR', ...)``, the boundaries
  crossed: 14 for a 13.9-hour stay, ``'DAY'`` 10 for 9.626 days (sqlglot reads the quoted unit as BigQuery's
  unquoted one);
- ``round(avg(valuenum)::numeric, 2)`` (PostgreSQL's idiom: its ``round(double, int)`` does not exist) gave
  47.18 where PostgreSQL gives 47.17: DuckDB's bare ``NUMERIC`` is ``DECIMAL(18, 3)``, so the value is rounded
  to 3 places first (``round(47.1749::numeric, 2)`` = 47.18);
- ``label SIMILAR TO '%(Creat|Gluc)%'`` (SQL's pattern: ``%`` any text) counted 0 labels, not 38: DuckDB's
  ``SIMILAR TO`` is a regular expression, where ``%`` is a percent sign;
- BigQuery's ``APPROX_QUANTILES(valuenum, 2)[OFFSET(1)]`` and ``ARRAY_AGG(...)[OFFSET(0)]`` returned the whole
  list: DuckDB's grammar rejects ``OFFSET(1)`` there, SQLite's reads ``[OFFSET(1)]`` as a column alias, so the
  query ran as SQLite with the subscript gone; the same for a DuckDB subscript ``(array_agg(x))[1]`` in a query
  read as SQLite after a bind error;
- ``DATE(charttime) >= DATE_SUB(DATE '2148-08-31', INTERVAL 2 DAY)`` (MySQL/BigQuery: a DATE) counted 128 rows,
  not 275: read as SQLite, ``DATE_SUB`` became a TIMESTAMP compared as text with the date ('2148-08-29' <
  '2148-08-29 00:00:00'), so the first day was left out.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _tool_cases import Case

from clinseek.tools import Limits, ToolContext, ToolResult, call_tool


def run(ep: Any, sql: str) -> ToolResult:
    ctx = ToolContext(episode=ep, limits=Limits(max_rows=1000, max_tool_chars=1_000_000))
    return anyio.run(call_tool, ctx, "ehr.run_sql_query", {"sql_query": sql})


def _rows(result: ToolResult) -> list[tuple[Any, ...]]:
    assert result.ok, result.content[:400]
    return [tuple(round(v, 6) if isinstance(v, float) else v for v in row) for row in result.data["rows"]]


@pytest.mark.parametrize(("unit", "seconds"), [("HOUR", 3600), ("DAY", 86400), ("MINUTE", 60)])
def test_mimic_code_datetime_diff_with_a_quoted_unit_is_not_counted_in_boundaries(
    episode: Any, unit: str, seconds: int
) -> None:
    sql = f"SELECT hadm_id, DATETIME_DIFF(dischtime, admittime, '{unit}') FROM admissions ORDER BY 1"
    result = run(episode, sql)
    if result.ok:  # mimic-code's function: fractional
        want = run(episode, f"SELECT hadm_id, epoch(dischtime - admittime) / {seconds}.0 FROM admissions ORDER BY 1")
        assert _rows(result) == _rows(want), result.content[:300]
    else:
        assert "DATETIME_DIFF" in result.content and "epoch(" in result.content, result.content
        assert "date_diff(" in result.content, result.content  # BigQuery's count is named too


def test_bigquery_datetime_diff_with_a_bare_unit_still_runs(episode: Any) -> None:
    got = run(episode, "SELECT hadm_id, DATETIME_DIFF(dischtime, admittime, HOUR) FROM admissions ORDER BY 1")
    want = run(episode, "SELECT hadm_id, date_diff('hour', admittime, dischtime) FROM admissions ORDER BY 1")
    assert _rows(got) == _rows(want)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT round(47.1749::numeric, 2) AS v",
        "SELECT round(CAST(47.1749 AS NUMERIC), 2) AS v",
        "SELECT round(CAST(47.1749 AS DECIMAL), 2) AS v",
    ],
)
def test_a_cast_to_numeric_without_precision_is_not_rounded_to_three_places(episode: Any, sql: str) -> None:
    result = run(episode, sql)
    if result.ok:
        assert _rows(result) == [(47.17,)], result.content
    else:
        assert "DECIMAL(18, 3)" in result.content and "DOUBLE" in result.content, result.content


def test_numeric_with_a_precision_and_double_keep_their_meaning(episode: Any) -> None:
    got = run(episode, "SELECT CAST(47.1749 AS NUMERIC(10, 2)) AS a, round(47.1749::double, 2) AS b, "
                       "CAST(1.23456 AS DECIMAL(18, 3)) AS c")
    assert [tuple(str(v) for v in row) for row in _rows(got)] == [("47.17", "47.17", "1.235")], got.content


@pytest.mark.parametrize(
    ("pattern", "regex", "negate"),
    [
        ("%(Creat|Gluc)%", ".*(Creat|Gluc).*", False),
        ("%(Creat|Gluc)%", ".*(Creat|Gluc).*", True),
        ("Creat%", "Creat.*", False),
        ("_lucose%", ".lucose.*", False),
        ("%[0-9]%", ".*[0-9].*", False),
        ("%, %", ".*, .*", False),
    ],
)
def test_similar_to_reads_percent_and_underscore_as_sql_does(
    episode: Any, pattern: str, regex: str, negate: bool
) -> None:
    not_ = "NOT " if negate else ""
    got = run(episode, f"SELECT count(*) FROM d_labitems WHERE label {not_}SIMILAR TO '{pattern}'")
    want = run(episode, f"SELECT count(*) FROM d_labitems WHERE {not_}regexp_full_match(label, '{regex}')")
    assert _rows(got) == _rows(want), got.content[:300]
    assert _rows(want)[0][0] > 0


def test_similar_to_a_regular_expression_keeps_duckdbs_meaning(episode: Any) -> None:
    got = run(episode, "SELECT count(*) FROM d_labitems WHERE label SIMILAR TO '.*Creat.*'")
    want = run(episode, "SELECT count(*) FROM d_labitems WHERE regexp_full_match(label, '.*Creat.*')")
    assert _rows(got) == _rows(want)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT APPROX_QUANTILES(valuenum, 2)[OFFSET(1)] AS median FROM labevents",
        "SELECT ARRAY_AGG(valuenum ORDER BY charttime DESC)[OFFSET(0)] AS last FROM labevents",
        "SELECT ARRAY_AGG(valuenum ORDER BY charttime DESC)[SAFE_OFFSET(0)] FROM labevents",
        "SELECT ARRAY_AGG(valuenum ORDER BY charttime DESC)[ORDINAL(1)] FROM labevents",
    ],
)
def test_a_bigquery_array_subscript_is_not_dropped(episode: Any, sql: str) -> None:
    result = run(episode, sql)
    assert not result.ok, result.content[:300]  # before: the whole list, the subscript read as a column alias
    assert "OFFSET" in result.content and "[n + 1]" in result.content, result.content


def test_a_list_subscript_is_not_read_as_a_sqlite_alias(episode: Any) -> None:
    # DuckDB's binder refuses the bare itemid; the SQLite reading must not turn [1] into a column name
    result = run(episode, "SELECT hadm_id, itemid, (array_agg(valuenum ORDER BY charttime))[1] AS first "
                          "FROM labevents GROUP BY hadm_id")
    if result.ok:
        assert not any(isinstance(v, list) for row in result.data["rows"] for v in row), result.content[:300]
    else:
        assert "itemid" in result.content, result.content


@pytest.mark.parametrize(
    ("mysql", "days"),
    [("DATE_SUB(DATE '{day}', INTERVAL 2 DAY)", 2), ("DATE_ADD(DATE '{day}', INTERVAL -3 DAY)", 3)],
)
def test_date_sub_of_a_date_is_a_date_when_compared_with_date(episode: Any, case: Case, mysql: str, days: int) -> None:
    day = case.prediction_time.date().isoformat()
    got = run(episode, f"SELECT count(*) FROM labevents WHERE DATE(charttime) >= {mysql.format(day=day)}")
    want = run(episode, f"SELECT count(*) FROM labevents WHERE CAST(charttime AS DATE) >= DATE '{day}' - {days}")
    assert _rows(got) == _rows(want), got.content[:300]
