"""SQLite as models write it, translated to DuckDB: the same answers as SQLite itself.

Differential: every SQLite statement below runs in SQLite (the standard library's ``sqlite3``) over
text times and in DuckDB, translated by ``clinseek.tools._sqlite_dialect``, over the same rows
with typed TIMESTAMPs; the values must agree. Specifiers and modifiers newer than the local SQLite
are checked against the values SQLite's documentation gives.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator
from typing import Any

import duckdb
import pytest
import sqlglot

from clinseek.errors import ToolError
from clinseek.tools._sqlite_dialect import SqliteDialect, sqlite_forms, translate

NOW = dt.datetime(2100, 12, 31, 23, 59)
ROWS = [
    (1, "2100-01-31 10:00:00", 7, 2.7, "abc"),
    (2, "2096-02-29 12:00:00", -7, -2.7, "ABD"),
    (3, "2100-03-31 23:59:59", 0, 0.5, "12"),
    (4, None, None, None, None),
    (5, "2100-12-31 23:59:00", 2, 10.0, "x"),
    (6, "2100-06-15 08:30:15.250", 3, 1.25, "b c"),
    (7, "2099-12-28 00:00:00", 10, 3.0, "abc"),
]


@pytest.fixture(scope="module")
def dbs() -> Iterator[tuple[sqlite3.Connection, duckdb.DuckDBPyConnection]]:
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE t (id INTEGER, ts TIMESTAMP, n INTEGER, r REAL, s TEXT)")
    lite.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", ROWS)
    duck = duckdb.connect()
    duck.execute("CREATE TABLE t (id INTEGER, ts TIMESTAMP, n INTEGER, r DOUBLE, s VARCHAR)")
    duck.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", ROWS)
    yield lite, duck
    lite.close()
    duck.close()


def _duckdb_sql(sql: str) -> str:
    tree, _ = translate(sqlglot.parse_one(sql, read="sqlite"), NOW)
    return tree.sql(dialect="duckdb")


def _norm(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, dt.datetime):
        text = v.isoformat(sep=" ")
        return text[:-3] if v.microsecond else text  # SQLite writes milliseconds
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, float):
        return round(v, 6)
    return v


def _same(sql: str, dbs: tuple[sqlite3.Connection, duckdb.DuckDBPyConnection]) -> None:
    lite, duck = dbs
    want = [tuple(_norm(v) for v in r) for r in lite.execute(sql).fetchall()]
    translated = _duckdb_sql(sql)
    got = [tuple(_norm(v) for v in r) for r in duck.execute(translated).fetchall()]
    assert got == want, f"{sql}\n-> {translated}"


PER_ROW = [
    "datetime(ts)",
    "date(ts)",
    "time(ts)",
    "datetime(ts, 'start of month')",
    "datetime(ts, 'start of year', '-1 year')",
    "datetime(ts, 'start of day')",
    "date(ts, 'start of month', '+1 month', '-1 day')",
    "datetime(ts, '+1 month')",
    "datetime(ts, '-1 month')",
    "datetime(ts, '+13 months')",
    "datetime(ts, '+1 year')",
    "datetime(ts, '-3 days')",
    "datetime(ts, '+1.5 days')",
    "datetime(ts, '+90 minutes')",
    "datetime(ts, '-30 seconds')",
    "datetime(ts, '+2 hours')",
    "datetime(ts, '+2 HOURS')",
    "datetime(ts, 'weekday 0')",
    "datetime(ts, 'weekday 3')",
    "datetime(ts, '+01:30')",
    "datetime(ts, '-' || 7 || ' days')",
    "datetime(ts, 'localtime', 'utc')",
    "julianday(ts)",
    "julianday(ts) - julianday('2100-01-01')",
    "CAST(julianday('2100-12-31 23:59:00') - julianday(ts) AS INTEGER)",
    "unixepoch(ts)",
    "datetime(julianday(ts))",
    "datetime(unixepoch(ts), 'unixepoch')",
    "datetime(2488070.5)",
    "strftime('%Y', ts)",
    "strftime('%Y-%m-%d %H:%M:%S', ts)",
    "strftime('%J', ts)",
    "strftime('%s', ts)",
    "strftime('%j|%w|%W|%m|%d|%H|%M|%S|%%', ts)",
    "strftime('%f', ts)",
    "strftime('%H:%M', ts, '+1 hour')",
    "24 * (strftime('%J', '2100-12-31 23:59:00') - strftime('%J', ts))",
    "(strftime('%s', '2100-12-31 23:59:00') - strftime('%s', ts)) / 3600",
    "strftime('%Y', ts) - 2000",
    "CAST(strftime('%m', ts) AS INTEGER) + 1",
    "strftime('%Y-%m', ts) + 0",
    "datetime('2100-12-31 23:59:00', '-1 year') > ts",
    "datetime(ts) >= datetime('2100-12-31 23:59:00', 'start of year', '-0 year')",
    "strftime('%Y-%m', ts) >= '2100-03'",
    "date('2100-02-28', '+1 day') = '2100-03-01'",
    "n / 2",
    "n / 0",
    "r / 2",
    "n % 3",
    "n * 1.0 / 4",
    "CAST(r AS INTEGER)",
    "CAST(-r AS INTEGER)",
    "CAST(n AS REAL) / 4",
    "round(n)",
    "round(r, 1)",
    "max(n, 3)",
    "min(n, r)",
    "ifnull(s, 'none')",
    "iif(n > 1, 'big', 'small')",
    "substr(s, 2)",
    "substr(s, -2)",
    "substr(s, 2, 1)",
    "instr(s, 'b')",
    "s || n",
    "s LIKE 'a%'",
    "s NOT LIKE 'AB_'",
    "s IS 'abc'",
    "n IS NOT 2",
    "s GLOB 'a*'",
    "substr(ts, 1, 10)",
    "instr(ts, ':')",
    "ts LIKE '2100-0%'",
    "length(n) + length(r)",
    "replace(substr(ts, 1, 10), '-', '/')",
    "upper(s) || lower(s) || trim(' ' || s || ' ')",
]


@pytest.mark.parametrize("expr", PER_ROW)
def test_expression_gives_what_sqlite_gives(expr: str, dbs: Any) -> None:
    _same(f"SELECT id, {expr} FROM t ORDER BY id", dbs)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT total(n), total(r), sum(n), avg(n), count(*), count(s) FROM t",
        "SELECT total(n) FROM t WHERE n > 100",
        "SELECT group_concat(s) FROM (SELECT s FROM t WHERE s IS NOT NULL ORDER BY id)",
        "SELECT group_concat(s, ';') FROM (SELECT s FROM t WHERE s IS NOT NULL ORDER BY id)",
        "SELECT n FROM t ORDER BY n LIMIT 3",
        "SELECT n FROM t ORDER BY n DESC LIMIT 3",
        "SELECT s, max(n) FROM t",
        "SELECT s, min(r) FROM t",
        # attack20: the extreme's row has a NULL bare column: SQLite gives that NULL (arg_max skipped it)
        "SELECT s, max(k) FROM (SELECT CASE WHEN id = 7 THEN NULL ELSE s END AS s, n AS k FROM t)",
        "SELECT s, min(k) FROM (SELECT CASE WHEN id = 2 THEN NULL ELSE s END AS s, n AS k FROM t)",
        "SELECT id FROM t WHERE n = (SELECT max(n) FROM t)",
        "SELECT count(*) FROM t ORDER BY ts",
        "SELECT strftime('%Y', ts) AS y, count(*) FROM t GROUP BY y ORDER BY y",
        "SELECT s, count(*) FROM t GROUP BY 1 ORDER BY 1",
        "SELECT s, max(ts) FROM t GROUP BY s ORDER BY s",
        "SELECT id FROM t LIMIT 2, 3",
        "SELECT count(*) FROM t WHERE datetime(ts) >= datetime('2100-12-31 23:59:00', '-1 year')",
    ],
)
def test_statement_gives_what_sqlite_gives(sql: str, dbs: Any) -> None:
    _same(sql, dbs)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        # SQLite 3.44+ specifiers (the local SQLite may be older): values from SQLite's documentation
        ("strftime('%F %T', '2100-01-03 04:05:06')", "2100-01-03 04:05:06"),
        ("strftime('%e|%k|%l|%I|%p|%P|%R', '2100-01-03 04:05:06')", " 3| 4| 4|04|AM|am|04:05"),
        ("strftime('%u|%G|%g|%V|%U', '2100-01-03 04:05:06')", "7|2099|99|53|01"),
        # 'floor' (SQLite 3.46): clamp to the month's end instead of rolling over
        ("date('2100-01-31', '+1 month', 'floor')", "2100-02-28"),
        ("date('2100-01-31', '+1 month', 'ceiling')", "2100-03-03"),
        ("date('2096-02-29', '+1 year')", "2097-03-01"),
    ],
)
def test_newer_sqlite_forms(expr: str, expected: str) -> None:
    con = duckdb.connect()
    try:
        assert str(con.execute(_duckdb_sql(f"SELECT {expr}")).fetchall()[0][0]) == expected
    finally:
        con.close()


def test_now_is_the_prediction_time() -> None:
    con = duckdb.connect()
    try:
        got = con.execute(
            _duckdb_sql("SELECT datetime('now'), date('now', '-1 day'), strftime('%Y')")
        ).fetchall()
    finally:
        con.close()
    assert got == [(NOW, dt.date(2100, 12, 30), "2100")]
    with pytest.raises(ToolError, match="'now' is the prediction time") as info:
        translate(sqlglot.parse_one("SELECT datetime('now')", read="sqlite"), None)
    assert info.value.kind == "clock"


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("SELECT datetime(ts, '-' || n || ' days') FROM t", ["modifier", "literal text", "to_days"]),
        ("SELECT datetime(ts, '+1 fortnight') FROM t", ["'+1 fortnight'", "INTERVAL"]),
        ("SELECT datetime(ts, 'weekday 9') FROM t", ["weekday", "dayofweek"]),
        ("SELECT strftime('%Q', ts) FROM t", ["%Q", "strftime(x, '%Y-%m')"]),
        ("SELECT strftime(s, ts) FROM t", ["format must be literal", "strftime(x, '%Y-%m')"]),
        ("SELECT datetime('2100-13-01')", ["not a valid date"]),
        ("SELECT datetime('yesterday')", ["not a time SQLite reads"]),
        ("SELECT datetime(ts, 'start of week') FROM t", ["start of week", "date_trunc"]),
        ("SELECT datetime(ts, '+ 2 hours ') FROM t", ["'+ 2 hours '", "INTERVAL"]),
    ],
)
def test_untranslatable_forms_name_the_construct_and_the_duckdb_form(sql: str, names: list[str]) -> None:
    with pytest.raises(ToolError) as info:
        translate(sqlglot.parse_one(sql, read="sqlite"), NOW)
    assert info.value.kind == "sql_error"
    for name in names:
        assert name in info.value.message, info.value.message


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT datetime(charttime) FROM labevents",
        "SELECT julianday(charttime) FROM labevents",
        "SELECT strftime('%J', charttime) FROM labevents",
        "SELECT strftime('%Y', '2100-01-01') FROM labevents",
        "SELECT date(charttime, 'start of month') FROM labevents",
        "SELECT 1 FROM labevents WHERE valuenum IS 1",
    ],
)
def test_sqlite_only_forms_are_detected(sql: str) -> None:
    assert sqlite_forms(sqlglot.parse_one(sql, read="duckdb"))


VALID_DUCKDB = [
    # each is valid DuckDB whose meaning would change if it were read as SQLite
    "SELECT 7 / 2, 7 // 2, -7 % 3",
    "SELECT 'abc' LIKE 'A%', 'abc' ILIKE 'A%'",
    "SELECT CAST(2.7 AS INTEGER), CAST('12' AS INTEGER), CAST(1 AS REAL) / 3",
    "SELECT n FROM t ORDER BY n LIMIT 3",
    "SELECT strftime(ts, '%Y-%m'), strftime('%Y', ts) FROM t",
    "SELECT date(ts), max(n, 2), min(n, 2) FROM t",
    "SELECT ts + INTERVAL 1 MONTH, date_trunc('month', ts), julian(ts), epoch(ts) FROM t",
    "SELECT list_transform([1, 2, 3], x -> x * 2), {'a': 1}.a, [1, 2, 3][2]",
    "SELECT s, count(*) FROM t GROUP BY ALL ORDER BY ALL",
    "SELECT * EXCLUDE (s) FROM t QUALIFY row_number() OVER (ORDER BY id) <= 2",
    "FROM t SELECT id WHERE ts IS NOT NULL",
    "SELECT COLUMNS('^[nr]$') FROM t",
    "SELECT round(7), round(2.5), ifnull(NULL, 1), group_concat(s) FROM t",
    "SELECT 1 IS NULL, NULL IS NOT DISTINCT FROM NULL, TRUE IS TRUE",
    "SELECT CAST('2100-01-31' AS DATE) + INTERVAL 1 MONTH",
]


@pytest.mark.parametrize("sql", VALID_DUCKDB)
def test_valid_duckdb_is_never_read_as_sqlite(sql: str) -> None:
    tree = sqlglot.parse_one(sql, read="duckdb")
    assert not sqlite_forms(tree), sqlite_forms(tree)
    assert SqliteDialect(NOW)(tree, sql) is None
