"""Conformance 22: text converted to a number, and the names of translated columns, as the engine the query was
written for gives them.

Measured before the fixes (``ehr.run_sql_query``, and the translator against the standard library's ``sqlite3``):

- a query read as SQLite converted text with DuckDB's cast: ``CAST('2e2' AS INTEGER)`` was 200 and
  ``CAST('12abc' AS INTEGER)`` NULL, where SQLite reads the longest leading integer (2, 12); ``CAST('<0.5' AS REAL)``
  was NULL (SQLite: 0.0, its leading real); ``CAST(charttime AS INTEGER)`` was NULL (SQLite's times are text: the
  year); ``printf('%d', '2e2')`` was '200'.
- BigQuery's ``SAFE_CAST('-0x1F' AS INT64)`` was NULL (BigQuery: -31), ``SAFE_CAST('1e2' AS INT64)`` 100 (NULL).
- an outer query that read a translated sub-query's column by SQLite's name failed (``SELECT hadm_id FROM (SELECT
  hadm_id, max(admittime) FROM admissions)``: "hadm_id must appear in the GROUP BY clause"; ``"count(*)"``: not
  found, DuckDB names it ``count_star()``).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

import anyio
import duckdb
import pytest
import sqlglot
from test_attack21_sql import _rows, run

from clinseek.tools import Limits, ToolContext, call_tool
from clinseek.tools._sqlite_dialect import translate

# -- a. SQLite's conversion of text to a number -----------------------------------------------------------------------

TEXTS = [
    "2e2", "12abc", " 7 ", "abc", "1.9", "-0x1F", "0x1F", "+5", "-5.9", "", " \t\n-12x", "\x0b3", "\xa05", "１２",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809", "9" * 44, "0" * 40 + "12", "- 5", "+-5",
    "1e400", "-0", "3.", ".5", "-.5", "1e", "1.5e3x", "inf", "nan", "<0.5", ">100", "2100-01-31 10:00:00", None,
]  # fmt: skip
"""Texts SQLite's conversion reads in every way it can: exponents, hex, signs, white space, overflow, junk."""


@pytest.mark.parametrize("expr", ["CAST(s AS INTEGER)", "CAST(s AS BIGINT)", "printf('%d', s)", "CAST(s AS REAL)",
                                  "CAST(s AS NUMERIC) * 1.0", "CAST(ts AS INTEGER)", "CAST(ts AS REAL)"])
def test_sqlite_cast_of_text_to_a_number_gives_what_sqlite_gives(expr: str) -> None:
    """SQLite (lang_expr.html, "CAST expressions"): text cast to INTEGER is its longest prefix that is an integer
    (after white space; 0 when there is none; beyond 64 bits, the nearest end), to REAL its longest prefix that is
    a real; ``printf('%d')`` reads its argument the same way. A time is text in SQLite (2100-01-31... -> 2100)."""
    lite = sqlite3.connect(":memory:")
    duck = duckdb.connect()
    try:
        lite.execute("CREATE TABLE t (i INTEGER, s TEXT, ts TIMESTAMP)")
        duck.execute("CREATE TABLE t (i INTEGER, s VARCHAR, ts TIMESTAMP)")
        rows = [(i, s, "2100-01-31 10:00:00" if i % 2 else None) for i, s in enumerate(TEXTS)]
        lite.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        duck.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        sql = f"SELECT i, {expr} FROM t ORDER BY i"
        tree, _ = translate(sqlglot.parse_one(sql, read="sqlite"), dt.datetime(2100, 12, 31))
        translated = tree.sql(dialect="duckdb")
        assert duck.execute(translated).fetchall() == lite.execute(sql).fetchall(), translated
    finally:
        lite.close()
        duck.close()


def test_a_query_read_as_sqlite_casts_text_to_integer_by_its_leading_integer(episode: Any) -> None:
    got = run(episode, "SELECT CAST('2e2' AS INTEGER) AS a, CAST('12abc' AS INTEGER) AS b, CAST(' 7 ' AS INTEGER) "
                       "AS c, CAST('abc' AS INTEGER) AS d, CAST('1.9' AS INTEGER) AS e, CAST('-0x1F' AS INTEGER) AS f, "
                       "printf('%d', '2e2') AS g, CAST('<0.5' AS REAL) AS h, datetime('now') AS n")
    assert [r[:8] for r in _rows(got)] == [(2, 12, 7, 0, 1, 0, "2", 0.0)], got.content


def test_a_lab_value_cast_as_sqlite_reads_it_gives_sqlites_sum(episode: Any) -> None:
    """labevents.value is text ('<0.5', '7.2', 'NEG', ...): the SQLite sums of its casts, over the same values."""
    ctx = ToolContext(episode=episode, limits=Limits(max_rows=100_000, max_tool_chars=10_000_000))
    sql = "SELECT value, count(*) FROM labevents GROUP BY value"
    counted = _rows(anyio.run(call_tool, ctx, "ehr.run_sql_query", {"sql_query": sql}))
    assert sum(n for _, n in counted) == _rows(run(episode, "SELECT count(*) FROM labevents"))[0][0]
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE labevents (value TEXT)")
    lite.executemany("INSERT INTO labevents VALUES (?)", [(v,) for v, n in counted for _ in range(n)])
    sql = "SELECT total(CAST(value AS INTEGER)), total(CAST(value AS REAL)), count(CAST(value AS INTEGER)) FROM labevents"
    want = [tuple(round(v, 6) for v in lite.execute(sql).fetchone())]
    lite.close()
    assert _rows(run(episode, sql)) == want


# -- b. BigQuery's SAFE_CAST of text to INT64 -------------------------------------------------------------------------

BIGQUERY_INT64 = [
    ("0x123", 291), ("-0x123", -291), ("-0x1F", -31), (" -0x1F ", -31), ("+0x1f", 31), ("0X1F", 31), ("\t0x1F", None),
    (" 12 ", 12), ("+12", 12), ("-0012", -12), ("\x0b12\x0c", 12), ("1.5", None), ("1e2", None), ("1_000", None),
    ("0b11", None), ("9223372036854775807", 2**63 - 1), ("9223372036854775808", None), ("-9223372036854775808", -2**63),
    ("-0x8000000000000000", -2**63), ("0x8000000000000000", None), ("0x7FFFFFFFFFFFFFFF", 2**63 - 1), ("0x", None),
    ("", None), (" ", None), ("- 5", None), ("0x1g", None), ("１２", None), ("12abc", None), (None, None),
]  # fmt: skip
"""BigQuery (conversion_functions, CAST AS INT64: "A hex string can be cast to an integer. For example, 0x123 to 291
or -0x123 to -291"); ZetaSQL's StringToNumeric<int64_t>: leading spaces trimmed, then a hex number with a sign
(safe_strto64_base, base 16, ASCII white space after it) or decimal digits with a sign and ASCII white space around
them (absl::SimpleAtoi), in INT64's range; anything else fails (SAFE_CAST: NULL)."""


def test_safe_cast_of_text_to_int64_reads_hex_signs_and_spaces_as_bigquery_does(episode: Any) -> None:
    texts = ["NULL" if s is None else "'" + s.replace("'", "''") + "'" for s, _ in BIGQUERY_INT64]
    rows = ", ".join(f"({i}, {s})" for i, s in enumerate(texts))
    got = run(episode, f"SELECT i, SAFE_CAST(s AS INT64) AS n FROM (VALUES {rows}) AS t(i, s) ORDER BY i")
    assert [n for _, n in _rows(got)] == [n for _, n in BIGQUERY_INT64], got.content


# -- c. SQLite's names of a sub-query's translated columns -----------------------------------------------------------

SUBQUERY_NAMES = [
    ("SELECT hadm_id FROM (SELECT hadm_id, max(admittime) FROM admissions)",
     "SELECT arg_max(hadm_id, admittime) FROM admissions"),
    ("SELECT subject_id, hadm_id FROM (SELECT subject_id, hadm_id, max(admittime) FROM admissions GROUP BY subject_id)",
     "SELECT subject_id, arg_max(hadm_id, admittime) FROM admissions GROUP BY subject_id"),
    ('SELECT "max(admittime)" FROM (SELECT hadm_id, max(admittime) FROM admissions)',
     "SELECT max(admittime) FROM admissions"),
    ('SELECT "count(*)" FROM (SELECT count(*) FROM admissions WHERE datetime(admittime) < datetime(\'now\'))',
     "SELECT count(*) FROM admissions"),
    ("WITH t AS (SELECT hadm_id, julianday(dischtime) - julianday(admittime) FROM admissions) "
     'SELECT round(max("julianday(dischtime) - julianday(admittime)"), 4) FROM t',
     "SELECT round(max(epoch(dischtime - admittime)) / 86400, 4) FROM admissions"),
    ("SELECT x.hadm_id, x.\"datetime(admittime, '+1 day')\" FROM (SELECT hadm_id, datetime(admittime, '+1 day') "
     "FROM admissions) AS x ORDER BY 1",
     "SELECT hadm_id, admittime + INTERVAL 1 DAY FROM admissions ORDER BY 1"),
    ("SELECT y, n FROM (SELECT strftime('%Y', admittime) AS y, count(*) AS n FROM admissions "
     "WHERE datetime(admittime) <= datetime('now') GROUP BY y) AS t(y, n) ORDER BY y",
     "SELECT strftime(admittime, '%Y'), count(*) FROM admissions GROUP BY 1 ORDER BY 1"),
]  # fmt: skip
"""EHRSQL-like questions whose outer query reads a translated sub-query's column by SQLite's name (a bare column
beside max(), ``count(*)``, a julianday difference, a shifted time) or by the column list written for it."""


@pytest.mark.parametrize(("sql", "duckdb_sql"), SUBQUERY_NAMES)
def test_an_outer_query_reads_a_translated_sub_querys_columns_by_sqlites_names(
    episode: Any, sql: str, duckdb_sql: str
) -> None:
    """SQLite names a sub-query's unaliased column by its text (a bare column by its name), and the outer query reads
    it so; before, the translated column kept DuckDB's name (``arg_max_null(hadm_id, admittime)``,
    ``count_star()``) and the outer query failed."""
    got = run(episode, sql)
    assert _rows(got) == _rows(run(episode, duckdb_sql)), got.content


def test_a_sub_querys_own_where_still_cannot_read_sqlites_names(episode: Any) -> None:
    """attack20 kept: the names are the sub-query's column list, not aliases its WHERE could bind."""
    got = run(episode, 'SELECT * FROM (SELECT hadm_id, julianday(admittime) FROM admissions '
                       'WHERE "julianday(admittime)" > 0)')
    assert not got.ok and got.error_kind == "sql_error", got.content
