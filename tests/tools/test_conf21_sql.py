"""Conformance 21: other engines' SQL gets the answer its own engine documents, or an error that names the DuckDB
form to write.

Measured before the fixes on the demo case (subject 10014354, prediction time 2148-08-31 01:39:00), through
``ehr.run_sql_query``. Each expected answer is the engine's documented meaning (cited per test); the tests run on
every store of the ``episode`` fixture.

Wrong answers (before):

- BigQuery ``TIMESTAMP_DIFF(dischtime, admittime, HOUR)`` gave 14 for a 13.9-hour stay: sqlglot wrote it as DuckDB's
  ``date_diff`` (hour boundaries crossed); BigQuery counts whole hours (13).
- ``SAFE_CAST('1.5' AS INT64)`` gave 2 (DuckDB reads the text as a number and rounds); BigQuery gives NULL.
- ``DATETIME_DIFF(a, b, WEEK)`` / ``DATE_DIFF(a, b, WEEK)`` (BigQuery) and ``DATEDIFF(week, a, b)`` (T-SQL) count
  Sunday-week boundaries (Saturday -> Sunday is 1); DuckDB's ``date_diff('week')`` counts 7-day spans (0).

Errors that did not say what to write (before): ``SELECT TOP 5`` ("syntax error at or near 5"), ``ISNULL(a, b)``
("did you mean isnan"), ``GETDATE()`` ("did you mean get_type"), ``SAFE_CAST(x AS FLOAT64)`` ("did you mean int64"),
``x ILIKE ANY(ARRAY[...])`` ("No function matches '~~*(VARCHAR, VARCHAR[])'"), ``'now'::timestamp`` (a conversion
error), ...
"""

from __future__ import annotations

from typing import Any

import pytest
from _tool_cases import Case
from test_attack21_sql import _rows, run

# -- 1a. CAST of text to an integer ---------------------------------------------------------------------------------


def test_a_query_read_as_sqlite_truncates_text_cast_to_integer(episode: Any) -> None:
    """SQLite (lang_expr.html, "CAST expressions"): casting TEXT to INTEGER takes the longest prefix that is an
    integer, so '1.5' is 1 and '-1.5' is -1; DuckDB alone would round to 2 and -2."""
    got = run(episode, "SELECT CAST('1.5' AS INTEGER) AS a, CAST('-1.5' AS INTEGER) AS b, "
                       "TRY_CAST('2.7' AS BIGINT) AS c, datetime('now') AS n")
    assert [r[:3] for r in _rows(got)] == [(1, -1, 2)], got.content
    # read as SQLite after DuckDB's binder refused the bare column
    got = run(episode, "SELECT subject_id, hadm_id, CAST('2.5' AS INTEGER) AS v FROM admissions GROUP BY subject_id")
    assert _rows(got)[0][2] == 2, got.content


def test_a_duckdb_query_keeps_duckdbs_cast_of_text_to_integer(episode: Any) -> None:
    """Valid DuckDB keeps DuckDB's meaning (docs/sql.md): DuckDB's cast of '1.5' to an integer rounds (2). Session 23:
    ``CAST('1.5' AS INT64)`` is BigQuery's (INT64 is BigQuery's name): an error there, as in BigQuery
    (tests/tools/test_conf23_sql.py)."""
    got = run(episode, "SELECT CAST('1.5' AS INTEGER) AS a, TRY_CAST('2.5' AS BIGINT) AS b")
    assert _rows(got) == [(2, 3)], got.content


def test_safe_cast_of_text_to_int64_reads_the_text_as_bigquery_does(episode: Any) -> None:
    """BigQuery (conversion_functions, CAST AS INT64 / SAFE_CAST): a STRING casts to INT64 only when it is an integer
    literal (or a hex string: '0x1F' is 31); SAFE_CAST gives NULL where CAST would fail, so '1.5' is NULL. A FLOAT64
    rounds half away from zero (2.5 -> 3), as DuckDB does."""
    got = run(episode, "SELECT SAFE_CAST('1.5' AS INT64) AS a, SAFE_CAST('12' AS INT64) AS b, "
                       "SAFE_CAST(2.5 AS INT64) AS c, SAFE_CAST('abc' AS INT64) AS d, SAFE_CAST('0x1F' AS INT64) AS e")
    assert _rows(got) == [(None, 12, 3, None, 31)], got.content


def test_safe_cast_of_a_text_column_to_int64_keeps_only_integers(episode: Any) -> None:
    got = run(episode, "SELECT count(*) FROM labevents WHERE SAFE_CAST(value AS INT64) IS NOT NULL")
    want = run(episode, r"SELECT count(*) FROM labevents WHERE regexp_full_match(value, '\s*[+-]?[0-9]+\s*')")
    assert _rows(got) == _rows(want), got.content
    decimals = run(episode, r"SELECT count(*) FROM labevents WHERE regexp_full_match(value, '\s*[0-9]+\.[0-9]+\s*')")
    assert _rows(decimals)[0][0] > 0  # the case that differs is in the data


@pytest.mark.parametrize("cast", ["SAFE_CAST({x} AS FLOAT64)", "CAST({x} AS FLOAT64)"])
def test_float64_is_double(episode: Any, cast: str) -> None:
    """BigQuery's FLOAT64 is a double-precision float (data-types): DuckDB's DOUBLE, the same values."""
    got = run(episode, f"SELECT {cast.format(x=chr(39) + '1.5' + chr(39))} AS a")
    assert _rows(got) == [(1.5,)], got.content
    if cast.startswith("SAFE"):
        assert _rows(run(episode, "SELECT SAFE_CAST('abc' AS FLOAT64) AS a")) == [(None,)]


# -- 1b. BigQuery's TIMESTAMP_DIFF and DATETIME_DIFF ----------------------------------------------------------------


def test_bigquery_timestamp_diff_counts_whole_units(episode: Any) -> None:
    """BigQuery (timestamp_functions, TIMESTAMP_DIFF): "the result is 0 because only the number of whole specified
    HOUR intervals are included" for TIMESTAMP_DIFF("2001-02-01 01:00:00", "2001-02-01 00:00:01", HOUR); 2018-08-14
    minus 2018-10-14 in DAY is -61 (ZetaSQL's TimestampDiff: "the number of whole <part> differences")."""
    got = run(episode, "SELECT TIMESTAMP_DIFF(TIMESTAMP '2001-02-01 01:00:00', TIMESTAMP '2001-02-01 00:00:01', HOUR) "
                       "AS a, TIMESTAMP_DIFF(TIMESTAMP '2018-08-14', TIMESTAMP '2018-10-14', DAY) AS b, "
                       "TIMESTAMP_DIFF(TIMESTAMP '2001-02-01 00:00:01', TIMESTAMP '2001-02-01 01:00:00', HOUR) AS c, "
                       "TIMESTAMP_DIFF(TIMESTAMP '2001-02-02 00:30:00', TIMESTAMP '2001-02-01 23:45:00', MINUTE) AS d")
    assert _rows(got) == [(0, -61, 0, 45)], got.content


def test_bigquery_timestamp_diff_of_a_stay_is_whole_hours(episode: Any) -> None:
    got = run(episode, "SELECT hadm_id, TIMESTAMP_DIFF(dischtime, admittime, HOUR) FROM admissions ORDER BY 1")
    want = run(episode, "SELECT hadm_id, CAST(trunc(epoch(dischtime - admittime) / 3600) AS BIGINT) FROM admissions "
                        "ORDER BY 1")
    assert _rows(got) == _rows(want), got.content


def test_bigquery_datetime_diff_counts_boundaries(episode: Any) -> None:
    """BigQuery (datetime_functions, DATETIME_DIFF): 2010-07-07 10:20 minus 2008-12-25 15:30 in DAY is 559 (day
    boundaries; 558 whole days); ZetaSQL's DiffDatetimes: "2001-02-01 01:00:00" minus "2001-02-01 00:59:59" in HOUR
    is 1."""
    got = run(episode, "SELECT DATETIME_DIFF(DATETIME '2010-07-07 10:20:00', DATETIME '2008-12-25 15:30:00', DAY) AS a, "
                       "DATETIME_DIFF(DATETIME '2001-02-01 01:00:00', DATETIME '2001-02-01 00:59:59', HOUR) AS b")
    assert _rows(got) == [(559, 1)], got.content


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT DATETIME_DIFF(DATETIME '2017-10-15 00:00:00', DATETIME '2017-10-14 00:00:00', WEEK) AS w",
        "SELECT DATE_DIFF(DATE '2017-10-15', DATE '2017-10-14', WEEK) AS w",
        "SELECT DATEDIFF(week, DATE '2017-10-14', DATE '2017-10-15') AS w",
        "SELECT DATEDIFF(wk, DATE '2017-10-14', DATE '2017-10-15') AS w",
        "SELECT DATETIME_DIFF(DATETIME '2017-12-18 00:00:00', DATETIME '2017-12-17 00:00:00', ISOWEEK) AS w",
    ],
)
def test_a_week_difference_counts_sunday_boundaries_or_is_refused(episode: Any, sql: str) -> None:
    """BigQuery (datetime_functions, DATETIME_DIFF): "Each WEEK begins on Sunday, so there is one part boundary
    between Saturday, 2017-10-14 00:00:00 and Sunday, 2017-10-15 00:00:00" (1); T-SQL (SET DATEFIRST): "DATEDIFF
    always uses Sunday as the first day of the week". DuckDB's date_diff('week') counts whole 7-day spans (0). The
    DuckDB form the refusal names must give the engine's answer."""
    result = run(episode, sql)
    if result.ok:
        assert _rows(result) == [(1,)], result.content
        return
    assert "date_trunc('week'" in result.content and "Sunday" in result.content, result.content
    sunday = run(episode, "SELECT date_diff('day', date_trunc('week', DATE '2017-10-14' + 1), "
                          "date_trunc('week', DATE '2017-10-15' + 1)) // 7")
    assert _rows(sunday) == [(1,)]


def test_duckdbs_own_week_difference_keeps_its_meaning(episode: Any) -> None:
    got = run(episode, "SELECT date_diff('week', DATE '2017-10-14', DATE '2017-10-15') AS a, "
                       "datediff('week', DATE '2017-10-14', DATE '2017-10-21') AS b")
    assert _rows(got) == [(0, 1)], got.content


# -- 2. errors that name the DuckDB form ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("SELECT TOP 5 hadm_id FROM admissions", "LIMIT 5"),
        ("SELECT TOP (5) hadm_id FROM admissions ORDER BY admittime", "LIMIT"),
        ("SELECT DATEADD(day, -1, admittime) FROM admissions", "INTERVAL"),
        ("SELECT DATEADD(hour, 6, admittime) FROM admissions", "to_hours"),
        ("SELECT DATEPART(hour, admittime) FROM admissions", "hour(x)"),
        ("SELECT ISNULL(deathtime, dischtime) FROM admissions", "coalesce(a, b)"),
        ("SELECT EOMONTH(admittime) FROM admissions", "last_day(x)"),
        ("SELECT CONVERT(date, admittime) FROM admissions", "CAST(x AS DATE)"),
        ("SELECT CONVERT(varchar(10), admittime, 120) FROM admissions", "strftime"),
        ("SELECT hadm_id FROM admissions WHERE ROWNUM <= 5", "LIMIT"),
        ("SELECT TRUNC(admittime) FROM admissions", "date_trunc('day', x)"),
        ("SELECT FORMAT_DATETIME('%Y-%m', admittime) FROM admissions", "strftime(x, '%Y-%m')"),
        ("SELECT FORMAT_DATE('%Y-%m', admittime) FROM admissions", "strftime(x, '%Y-%m')"),
        ("SELECT FORMAT_TIMESTAMP('%Y-%m', admittime) FROM admissions", "strftime(x, '%Y-%m')"),
        ("SELECT count(*) FROM d_labitems WHERE regexp_contains(label, r'^Gluc')", "without the r"),
        ("SELECT DIV(7, 2)", "a // b"),
        ("SELECT FROM_UNIXTIME(4102444800)", "make_timestamp"),
        ("SELECT GROUP_CONCAT(label SEPARATOR ', ') FROM d_labitems", "string_agg(x, ', ')"),
        ("SELECT GROUP_CONCAT(label ORDER BY label SEPARATOR ', ') FROM d_labitems", "string_agg(x, ', ')"),
        ("SELECT PARSE_DATE('%Y-%m-%d', '2100-01-02')", "strptime"),
        ("SELECT PARSE_TIMESTAMP('%Y-%m-%d %H:%M', '2100-01-02 10:30')", "strptime"),
        ("SELECT DATE_TRUNC(admittime, MONTH) FROM admissions", "date_trunc('month', x)"),
    ],
)
def test_another_engines_form_is_refused_naming_duckdbs(episode: Any, sql: str, names: str) -> None:
    result = run(episode, sql)
    assert not result.ok, result.content[:300]
    assert names in result.content, result.content
    assert "Did you mean" not in result.content, result.content  # DuckDB's guess (isnan, get_type) misleads


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT GETDATE()",
        "SELECT SYSDATETIME()",
        "SELECT GETUTCDATE()",
        "SELECT CURRENT_DATETIME()",
        "SELECT SYSDATE FROM admissions",
        "SELECT SYSTIMESTAMP FROM admissions",
        "SELECT 'now'::timestamp",
        "SELECT 'today'::date",
        "SELECT count(*) FROM labevents WHERE charttime > TIMESTAMP 'now' - INTERVAL 1 DAY",
        "SELECT CAST('yesterday' AS DATE)",
    ],
)
def test_another_engines_now_is_refused_naming_the_prediction_time(episode: Any, case: Case, sql: str) -> None:
    """As DuckDB's own now() / current_timestamp (docs/tools.md): the clock refusal, naming the prediction time."""
    result = run(episode, sql)
    assert not result.ok, result.content[:300]
    assert "Error (clock)" in result.content, result.content
    assert f"TIMESTAMP '{case.prediction_time.isoformat(sep=' ')}'" in result.content, result.content


@pytest.mark.parametrize("negate", [False, True])
def test_ilike_any_array_matches_any_pattern(episode: Any, negate: bool) -> None:
    """PostgreSQL (functions-comparisons, "ANY (array)"): true if any element matches; NOT (x ILIKE ANY(...)) none."""
    not_ = "NOT " if negate else ""
    got = run(episode, f"SELECT count(*) FROM d_labitems WHERE {not_}(label ILIKE ANY(ARRAY['%gluc%', '%creat%']))")
    want = run(episode, f"SELECT count(*) FROM d_labitems WHERE {not_}(label ILIKE '%gluc%' OR label ILIKE '%creat%')")
    assert _rows(got) == _rows(want), got.content
    got = run(episode, "SELECT count(*) FROM d_labitems WHERE label LIKE ANY (ARRAY['Gluc%', 'Creat%'])")
    want = run(episode, "SELECT count(*) FROM d_labitems WHERE label LIKE 'Gluc%' OR label LIKE 'Creat%'")
    assert _rows(got) == _rows(want), got.content
    assert _rows(want)[0][0] > 0
