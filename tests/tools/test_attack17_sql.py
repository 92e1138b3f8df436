"""Attack 17: PostgreSQL- and MySQL-flavoured SQL that sqlglot's DuckDB reading silently changed.

The guard regenerates every query through sqlglot. For a few functions DuckDB itself does not have,
sqlglot's reading produced *valid* DuckDB with another meaning, so the query ran and answered wrongly
(DuckDB alone would have refused it). Measured before the fix, on the demo case (subject 10014354,
prediction time 2148-08-31 01:39:00):

- ``to_char(charttime, 'YYYY-MM')`` ran as ``CAST(charttime AS TEXT)``: one group per timestamp
  ('2146-07-17 11:40:00', 77 rows) rather than per month;
- ``make_interval(days => 1)`` ran as ``INTERVAL '1 year'`` (sqlglot puts the first named argument in
  the ``years`` slot): 4,557 lab rows "in the last day" instead of 69;
- MySQL's ``DATE_SUB('2148-08-31 01:39:00', INTERVAL 1 DAY)`` (read as SQLite after DuckDB's binder
  refused it) ran as ``CAST('2148-08-31 01:39:00' AS DATE) - INTERVAL 1 DAY``: 129 rows instead of 69;
- ``dose_val_rx * 2`` (a text column in arithmetic) got DuckDB's bare "No function matches ...
  '*(VARCHAR, INTEGER_LITERAL)'" with no word on how to convert, where ``sum(dose_val_rx)`` got it.
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


def _now(case: Case) -> str:
    return case.prediction_time.isoformat(sep=" ")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT to_char(charttime, 'YYYY-MM') AS m, count(*) FROM labevents GROUP BY m ORDER BY m",
        "SELECT to_char(valuenum, 'FM999.00') FROM labevents WHERE valuenum IS NOT NULL",
        "SELECT count(*) FROM labevents WHERE to_char(charttime, 'HH24') = '08'",
    ],
)
def test_to_char_with_a_format_is_refused_not_run_as_plain_text(episode: Any, sql: str) -> None:
    result = run(episode, sql)
    assert not result.ok, (sql, result.content[:300])
    assert "to_char" in result.content and "strftime(x, '%Y-%m')" in result.content, result.content


@pytest.mark.parametrize("unit", ["days", "hours", "mins"])
def test_make_interval_with_named_arguments_is_not_read_as_years(episode: Any, case: Case, unit: str) -> None:
    duck_unit = {"days": "DAY", "hours": "HOUR", "mins": "MINUTE"}[unit]
    sql = f"SELECT count(*) FROM labevents WHERE charttime > TIMESTAMP '{_now(case)}' - make_interval({unit} => 1)"
    result = run(episode, sql)
    if result.ok:  # a faithful translation would do as well as a refusal
        want = run(
            episode,
            f"SELECT count(*) FROM labevents WHERE charttime > TIMESTAMP '{_now(case)}' - "
            f"INTERVAL 1 {duck_unit}",
        )
        assert result.data["rows"] == want.data["rows"], (sql, result.content[:300])
    else:
        assert "make_interval" in result.content and "INTERVAL" in result.content, result.content


@pytest.mark.parametrize(
    ("mysql", "duckdb"),
    [
        ("DATE_SUB('{now}', INTERVAL 1 DAY)", "TIMESTAMP '{now}' - INTERVAL 1 DAY"),
        ("DATE_SUB('{now}', INTERVAL 6 HOUR)", "TIMESTAMP '{now}' - INTERVAL 6 HOUR"),
        ("DATE_ADD('{now}', INTERVAL -2 DAY)", "TIMESTAMP '{now}' - INTERVAL 2 DAY"),
    ],
)
def test_mysql_date_sub_of_a_datetime_literal_keeps_its_time(
    episode: Any, case: Case, mysql: str, duckdb: str
) -> None:
    now = _now(case)
    got = run(episode, f"SELECT count(*) FROM labevents WHERE charttime >= {mysql.format(now=now)}")
    want = run(episode, f"SELECT count(*) FROM labevents WHERE charttime >= {duckdb.format(now=now)}")
    assert got.ok and want.ok, (got.content[:300], want.content[:300])
    assert got.data["rows"] == want.data["rows"], got.content[:300]


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        # DuckDB reads date_add(text, interval) too (no SQLite reading): before, 2100-01-01 02:00:00
        ("SELECT DATE_ADD('2100-01-01 10:30:00', INTERVAL 2 HOUR) AS t", "2100-01-01 12:30:00"),
        ("SELECT DATE_SUB('2100-01-01 10:30:00', INTERVAL 90 MINUTE) AS t", "2100-01-01 09:00:00"),
        ("SELECT DATE_ADD('2100-01-01 10:30', INTERVAL 1 DAY) AS t", "2100-01-02 10:30:00"),
    ],
)
def test_mysql_date_add_of_a_datetime_literal_is_a_timestamp(episode: Any, sql: str, want: str) -> None:
    result = run(episode, sql)
    assert result.ok, result.content
    assert str(result.data["rows"][0][0]) == want, result.content


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT dose_val_rx * 2 FROM prescriptions",
        "SELECT avg(dose_val_rx + 0) FROM prescriptions",
        "SELECT 2 * value FROM labevents",
        "SELECT value - 1 FROM labevents",
    ],
)
def test_a_text_column_in_arithmetic_is_told_how_to_convert(episode: Any, sql: str) -> None:
    result = run(episode, sql)
    assert not result.ok, result.content[:300]
    assert "TRY_CAST(x AS DOUBLE)" in result.content, result.content


@pytest.mark.parametrize(
    ("abbreviated", "unit"),
    [("30 mins", "30 MINUTE"), ("1 mon", "1 MONTH"), ("6 hrs", "6 HOUR"), ("1 yr", "1 YEAR"), ("90 min", "90 MINUTE")],
)
def test_an_abbreviated_interval_unit_keeps_its_meaning(episode: Any, case: Case, abbreviated: str, unit: str) -> None:
    """``INTERVAL '30 mins'`` is valid DuckDB (its interval text reads PostgreSQL's abbreviations; '1 mon' is how
    PostgreSQL prints a month). sqlglot wrote it back as ``INTERVAL '30' MINS``, which DuckDB reads as one
    second aliased ``MINS``: a syntax error in a WHERE clause, silently one second in a select list."""
    now = _now(case)
    for shape in (
        "SELECT count(*) FROM labevents WHERE charttime > TIMESTAMP '{now}' - INTERVAL {iv}",
        "SELECT TIMESTAMP '{now}' - INTERVAL {iv}",
    ):
        got = run(episode, shape.format(now=now, iv=f"'{abbreviated}'"))
        want = run(episode, shape.format(now=now, iv=unit))
        assert got.ok and want.ok, (got.content[:300], want.content[:300])
        assert got.data["rows"] == want.data["rows"], (shape, got.content[:300], want.content[:300])


@pytest.mark.parametrize(
    ("written", "ours"),
    [
        ("mimiciv_hosp.labevents", "hosp.labevents"),
        ("mimiciv_icu.icustays", "icu.icustays"),
        ("mimiciv_ed.edstays", "ed.edstays"),
        ("MIMICIV_HOSP.admissions", "hosp.admissions"),
    ],
)
def test_mimic_codes_schema_names_read_the_same_table(episode: Any, written: str, ours: str) -> None:
    """mimic-code's PostgreSQL build and PhysioNet's BigQuery name the modules ``mimiciv_hosp``, ``mimiciv_icu``,
    ``mimiciv_ed``: the names models learned. Before: ``unknown_table`` ("no table 'mimiciv_hosp.labevents'")."""
    got = run(episode, f"SELECT count(*) FROM {written}")
    want = run(episode, f"SELECT count(*) FROM {ours}")
    if not want.ok:  # a table this store does not have
        pytest.skip(want.content[:100])
    assert got.ok, got.content[:300]
    assert got.data["rows"] == want.data["rows"]


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        # before: "Binder Error: Referenced column "HOUR" not found in FROM clause!"
        ("SELECT TIMESTAMPDIFF(HOUR, admittime, dischtime) FROM admissions", ["TIMESTAMPDIFF", "date_sub('hour'"]),
        ("SELECT TIMESTAMPDIFF(DAY, admittime, dischtime) FROM admissions", ["TIMESTAMPDIFF", "date_sub('day'"]),
        # before: DuckDB's "Scalar Function with name date_format does not exist!" alone
        ("SELECT DATE_FORMAT(admittime, '%Y-%m') FROM admissions", ["strftime(x, '%Y-%m')"]),
        ("SELECT UNIX_TIMESTAMP(admittime) FROM admissions", ["epoch(x)"]),
        ("SELECT to_date('2100-01-31', 'YYYY-MM-DD')", ["strptime("]),
    ],
)
def test_mysql_and_postgresql_date_functions_duckdb_lacks_name_duckdbs_form(
    episode: Any, sql: str, names: list[str]
) -> None:
    result = run(episode, sql)
    assert not result.ok, result.content[:300]
    for name in names:
        assert name in result.content, result.content


def test_postgresql_to_timestamp_with_a_format_names_strptime(episode: Any) -> None:
    """``to_timestamp(text, 'YYYY-MM-DD HH24:MI')`` (PostgreSQL): sqlglot read the format as the epoch's scale and
    wrote ``TO_TIMESTAMP(text / POWER(10, 'YYYY-...'))``; DuckDB answered about ``/(STRING_LITERAL, DOUBLE)``,
    a construct the model never wrote."""
    result = run(episode, "SELECT count(*) FROM labevents WHERE charttime > to_timestamp('2100-01-31 10:00', "
                          "'YYYY-MM-DD HH24:MI')")
    assert not result.ok
    assert "strptime(" in result.content and "POWER" not in result.content, result.content
    ok = run(episode, "SELECT to_timestamp(4102444800) AS t")  # DuckDB's own: epoch seconds
    assert ok.ok and str(ok.data["rows"][0][0]).startswith("2100-01-01"), ok.content


@pytest.mark.xfail(strict=True, reason="SQLite's round() rounds the decimal text of the double (1.005 -> 1.01); the "
                   "translation rounds the binary double as DuckDB does (1.00499999... -> 1.0). Only values whose "
                   "decimal form ends in 5 exactly at the rounding digit differ; not translated")
def test_sqlite_round_of_a_decimal_half_is_sqlites(episode: Any) -> None:
    result = run(episode, "SELECT round(1.005, 2), round(2.675, 2) WHERE julianday('now') > 0")
    assert result.ok and result.data["dialect"] == "sqlite", result.content
    assert result.data["rows"] == [[1.01, 2.68]]  # sqlite3 3.40.1: SELECT round(1.005, 2), round(2.675, 2)
