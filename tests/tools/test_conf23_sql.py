"""Conformance 23: SQLite's integers, BigQuery's CAST and DAYOFWEEK, and SQLite's names of translated columns.

Measured before the fixes (the translator against the standard library's ``sqlite3``, ``ehr.run_sql_query`` against
ZetaSQL's documented rules):

- integer arithmetic read as SQLite was DuckDB's: ``9223372036854775807 + 1`` and ``2147483647 + 1`` (and
  ``subject_id * 1000000``, INTEGER columns being 32-bit) stopped with "Overflow in addition of INT64/INT32" where
  SQLite gives a REAL and 2147483648; ``sum()`` beyond 64 bits was a HUGEINT (SQLite: "integer overflow");
  ``total(x) OVER (...)`` was a syntax error.
- ``CAST(x AS INTEGER)`` of an integer above 2^53 read as SQLite went through a DOUBLE: 9007199254740993 came back
  9007199254740992 (SQLite keeps every digit).
- an unaliased translated column was named by sqlglot's text (``COUNT( * )`` -> ``count(*)``, ``max(b)+1`` ->
  ``max(b) + 1``, ``(b)`` kept its parentheses, a comment dropped): 13 of 21 shapes differed from sqlite3's names.
- BigQuery's ``CAST(x AS INT64)`` had DuckDB's meaning ('1.5' -> 2, '1e2' -> 100, '-0x1F' an error), and CAST and
  SAFE_CAST of a FLOAT64 rounded half to even (2.5 -> 2; BigQuery 3); ``EXTRACT(DAYOFWEEK FROM x)`` in a BigQuery
  query was DuckDB's 0-6 (BigQuery 1-7) and ``EXTRACT(WEEK ...)`` the ISO week.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

import duckdb
import pytest
import sqlglot
from test_attack21_sql import run
from test_conf22_sql import BIGQUERY_INT64

from clinseek.errors import ToolError
from clinseek.tools import guard_sql
from clinseek.tools._sqlite_dialect import SqliteDialect, translate

ROWS = [
    (1, 2147483647, 9223372036854775807, 1.5, "9007199254740993"),
    (2, -5, -9223372036854775808, -2.5, " 12"),
    (3, 46341, 9007199254740993, 9007199254740993.0, "-9007199254740993.9"),
    (4, 32767, -9007199254740993, -0.5, "9223372036854775808"),
    (5, None, None, None, None),
]
"""Integers at the edges of 32, 53 and 64 bits (``i`` is a DuckDB INTEGER, as the episode's id columns are)."""


def both(sql: str, rows: list[tuple[Any, ...]] = ROWS) -> tuple[Any, Any, str]:
    """``sql`` run by SQLite and, translated, by DuckDB over the same table ``t``: (SQLite's, DuckDB's, DuckDB SQL);
    an error is ``("error", message)``."""
    lite, duck = sqlite3.connect(":memory:"), duckdb.connect()
    try:
        lite.execute("CREATE TABLE t (k INTEGER, i INTEGER, b INTEGER, r REAL, s TEXT)")
        duck.execute("CREATE TABLE t (k INTEGER, i INTEGER, b BIGINT, r DOUBLE, s VARCHAR)")
        lite.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
        duck.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
        tree, _ = translate(sqlglot.parse_one(sql, read="sqlite"), dt.datetime(2100, 12, 31))
        translated = tree.sql(dialect="duckdb")
        out = []
        for con, text in ((lite, sql), (duck, translated)):
            try:
                out.append(con.execute(text).fetchall())
            except (sqlite3.Error, duckdb.Error) as err:
                out.append(("error", str(err)))
        return out[0], out[1], translated
    finally:
        lite.close()
        duck.close()


# -- 2. CAST(x AS INTEGER) keeps every digit ---------------------------------------------------------------------------


@pytest.mark.parametrize("expr", ["CAST(b AS INTEGER)", "CAST(i AS INTEGER)", "CAST(r AS INTEGER)", "CAST(s AS INTEGER)",
                                  "printf('%d', b)", "CAST(b / 2 AS INTEGER) - CAST(s AS INTEGER) / 2",
                                  "CAST(CAST(b AS TEXT) AS INTEGER)", "CAST(9007199254740993 AS INTEGER)",
                                  "CAST(-9007199254740993 AS BIGINT)", "CAST(9007199254740993.0 AS INTEGER)"])
def test_sqlite_cast_to_integer_is_exact_above_2_to_the_53(expr: str) -> None:
    """SQLite converts an integer to INTEGER as it is and text by its digits; only a REAL is a double (2^53 + 1 as a
    REAL is 2^53). Before: every number went through a DOUBLE (9007199254740993 -> 9007199254740992)."""
    lite, duck, translated = both(f"SELECT k, {expr} FROM t ORDER BY k")
    assert duck == lite, translated


# -- 4. SQLite's name of an unaliased column is its exact source text --------------------------------------------------

NAMED = [
    "SELECT  COUNT( * ) FROM t", 'SELECT B, t.b, "b", T.B, hadmid, (b), ( b ) FROM t', "SELECT max(b)+1, -b FROM t",
    "SELECT 1, 'abc', NULL, 1.50, -1", "SELECT count(*)  , b FROM t", "SELECT b -- c\n, count(*) /* k */ FROM t",
    "SELECT CASE WHEN b > 1\n  THEN 1 ELSE 0 END FROM t", "SELECT julianday(ts) - julianday('2100-01-01') FROM t",
    "SELECT * FROM (SELECT  COUNT( * ) FROM t)", "SELECT  b+1 FROM t UNION SELECT  b FROM t",
    "SELECT (SELECT max(b) FROM t)", 'SELECT "b"+1, [b]*2 FROM t', "WITH c AS (SELECT b FROM t) SELECT  Count(B) FROM c",
    "SELECT strftime('%Y',ts), datetime(ts,'+1 day') FROM t", "SELECT DISTINCT  b * 2 FROM t",
    "SELECT b, MAX( ts ) FROM t", "SELECT count(*) OVER (PARTITION BY b ORDER BY ts) FROM t",
    "SELECT CAST(b AS REAL) / 2 FROM t", "SELECT IFNULL(b,0), iif(b>0,1,0) FROM t",
    "SELECT b IN (1,2), b BETWEEN 1 AND 2 FROM t", 'SELECT x."MAX( b )" FROM (SELECT b, MAX( b ) FROM t) AS x',
]  # fmt: skip
"""Unaliased outputs as models write them: spacing and case in calls, operators without spaces, comments, a CASE over
two lines, literals, a scalar sub-query, a window, a UNION, a CTE, and a sub-query's column read by its SQLite name."""


@pytest.mark.parametrize("sql", NAMED)
def test_translated_columns_are_named_by_their_exact_source_text_as_sqlite_names_them(sql: str) -> None:
    """SQLite (cursor.description) names an unaliased output by its text as written, a column by its declared name;
    before, the name was sqlglot's regenerated text (``COUNT( * )`` -> ``count(*)``, ``max(b)+1`` -> ``max(b) + 1``,
    ``(b)`` -> ``(b)``, a comment dropped)."""
    lite, duck = sqlite3.connect(":memory:"), duckdb.connect()
    try:
        for con in (lite, duck):
            con.execute("CREATE TABLE t (b INTEGER, HadmId INTEGER, ts TIMESTAMP)")
            con.execute("INSERT INTO t VALUES (1, 2, '2100-01-01 10:00:00')")
        want = [d[0] for d in lite.execute(sql).description]
        tree, translation = translate(sqlglot.parse_one(sql, read="sqlite"), dt.datetime(2100, 12, 31), sql)
        got = [d[0] for d in duck.execute(tree.sql(dialect="duckdb")).description]
        if translation.names:
            got = [n or c for n, c in zip(translation.names, got, strict=True)]
        assert got == want, tree.sql(dialect="duckdb")
    finally:
        lite.close()
        duck.close()


def test_the_tool_names_a_translated_query_s_columns_by_their_source_text(episode: Any) -> None:
    got = run(episode, "SELECT  COUNT( * ), round(julianday('now') - julianday(MAX(admittime)),2) FROM admissions")
    assert got.ok and got.data["dialect"] == "sqlite", got.content
    assert got.data["columns"] == ["COUNT( * )", "round(julianday('now') - julianday(MAX(admittime)),2)"], got.data


# -- 5. EXTRACT(DAYOFWEEK / WEEK) in a query written for BigQuery ------------------------------------------------------

DAYS = [dt.datetime(2024, 1, 6, 10), dt.datetime(2024, 1, 7, 23, 59), dt.datetime(2024, 12, 31), dt.datetime(2100, 3, 1),
        dt.datetime(2023, 1, 1), dt.datetime(2023, 1, 2, 1)]  # fmt: skip


def _resolve(db: str | None, name: str) -> tuple[str, str] | None:
    return ("main", "t") if db is None and name.lower() == "t" else None


def guarded(sql: str) -> list[tuple[Any, ...]]:
    """``sql`` through the guard (read as SQLite where it is not DuckDB, as the tool reads it), over ``t(k, x)``."""
    duck = duckdb.connect()
    try:
        duck.execute("CREATE TABLE t (k INTEGER, x TIMESTAMP, s VARCHAR)")
        duck.executemany("INSERT INTO t VALUES (?, ?, ?)", [(k, x, None) for k, x in enumerate(DAYS)])
        text = guard_sql(sql, _resolve, available="t", dialect=SqliteDialect(dt.datetime(2100, 12, 31)))
        return duck.execute(text).fetchall()
    finally:
        duck.close()


def _bigquery_dayofweek(x: dt.datetime) -> int:
    return x.isoweekday() % 7 + 1  # BigQuery: "DAYOFWEEK: Returns values in the range [1,7] with Sunday as the first"


@pytest.mark.parametrize("marker", ["SAFE_CAST(s AS INT64)", "CAST(s AS INT64)", "CAST(k AS FLOAT64)",
                                    "TIMESTAMP_DIFF(x, x, HOUR)", "TIMESTAMP_ADD(x, INTERVAL 1 DAY)", "DATETIME_TRUNC(x, DAY)"])
def test_extract_dayofweek_and_week_in_a_bigquery_query_are_bigquerys(marker: str) -> None:
    """BigQuery (date_functions, EXTRACT): DAYOFWEEK is 1-7 from Sunday, WEEK the Sunday week from 0 (days before the
    year's first Sunday are in week 0), WEEK(MONDAY) the same from Monday. sqlglot writes them as DuckDB's EXTRACT,
    0-6 and the ISO week: before, a BigQuery query got DuckDB's numbers."""
    got = guarded(f"SELECT k, EXTRACT(DAYOFWEEK FROM x), EXTRACT(WEEK FROM x), EXTRACT(WEEK(MONDAY) FROM x), {marker} "
                  "FROM t ORDER BY k")
    want = [(k, _bigquery_dayofweek(x), int(x.strftime("%U")), int(x.strftime("%W"))) for k, x in enumerate(DAYS)]
    assert [r[:4] for r in got] == want


@pytest.mark.parametrize("sql", [
    "SELECT k, EXTRACT(DAYOFWEEK FROM x), dayofweek(x) FROM t ORDER BY k",
    "SELECT k, EXTRACT(DOW FROM x), dayofweek(x) FROM t ORDER BY k",
    "SELECT k, EXTRACT(DAYOFWEEK FROM x), dayofweek(x), 'SAFE_CAST(s AS INT64)' FROM t ORDER BY k",
    "SELECT k, EXTRACT(DAYOFWEEK FROM x), dayofweek(x), datetime(x, '+1 day') FROM t ORDER BY k",
    "SELECT k, EXTRACT(DAYOFWEEK FROM x), dayofweek(x), CAST(strftime('%w', x) AS INTEGER) FROM t ORDER BY k",
    "SELECT k, EXTRACT(DAYOFWEEK FROM x), dayofweek(x), SAFE_CAST(s AS INT64) FROM t ORDER BY k",
])  # fmt: skip
def test_dayofweek_keeps_duckdbs_numbering_outside_bigquery(sql: str) -> None:
    """Valid DuckDB keeps DuckDB's 0-6 from Sunday; so does a query read as SQLite (SQLite has neither EXTRACT nor
    dayofweek(); its strftime('%w') is 0-6 too) and DuckDB's own dayofweek() in any query (BigQuery has none)."""
    got = guarded(sql)
    bigquery = "SAFE_CAST(s" in sql and "'SAFE" not in sql
    want = [x.isoweekday() % 7 for x in DAYS]
    assert [r[1] for r in got] == [w + 1 if bigquery else w for w in want]
    assert [r[2] for r in got] == want


def test_a_bigquery_week_from_another_day_is_refused_naming_duckdbs_forms() -> None:
    with pytest.raises(ToolError) as info:
        guarded("SELECT EXTRACT(WEEK(TUESDAY) FROM x), SAFE_CAST(s AS INT64) FROM t")
    assert "strftime(x, '%U')" in info.value.message and "WEEK(TUESDAY)" in info.value.message


# -- 3. BigQuery's CAST(x AS INT64) --------------------------------------------------------------------------------


def _text(s: str | None) -> str:
    return "NULL" if s is None else "'" + s.replace("'", "''") + "'"


@pytest.mark.parametrize(("text", "want"), BIGQUERY_INT64)
def test_bigquery_cast_of_text_to_int64_reads_it_as_bigquery_or_fails_as_bigquery(text: str | None, want: int | None
                                                                                   ) -> None:
    """BigQuery (conversion_functions, CAST AS INT64; ZetaSQL's StringToNumeric): the same texts as SAFE_CAST, and
    where SAFE_CAST is NULL for a text, CAST is an error. Before: DuckDB's CAST ('1.5' -> 2, '1e2' -> 100, '1_000' ->
    1000, '-0x1F' an error)."""
    sql = f"SELECT CAST(s AS INT64), SAFE_CAST(s AS INT64) FROM (SELECT {_text(text)} AS s)"
    if want is None and text is not None:
        with pytest.raises(duckdb.InvalidInputException, match="BigQuery reads no INT64 in the text"):
            guarded(sql)
        assert guarded(sql.replace("CAST(s AS INT64), ", "")) == [(None,)]
    else:
        assert guarded(sql) == [(want, want)]


@pytest.mark.parametrize(("sql", "want"), [
    ("CAST(2.5e0 AS INT64)", 3), ("CAST(-2.5e0 AS INT64)", -3), ("SAFE_CAST(0.5e0 AS INT64)", 1),
    ("CAST(CAST('3.5' AS FLOAT64) AS INT64)", 4), ("CAST(2.5 AS INT64)", 3), ("CAST(TRUE AS INT64)", 1),
    ("CAST(CAST(' 12 ' AS INT64) AS INT64)", 12), ("CAST('3000000000' AS INTEGER) + 0 * SAFE_CAST('1' AS INT64)",
                                                    3_000_000_000),
    ("SAFE_CAST('3000000000' AS INT)", 3_000_000_000), ("CAST(CAST(CAST('0x10' AS INT64) AS STRING) AS INT64)", 16),
])  # fmt: skip
def test_bigquery_cast_of_a_number_rounds_half_away_from_zero_into_int64(sql: str, want: int) -> None:
    """BigQuery: a FLOAT64 to INT64 "returns the closest integer value; halfway cases such as 1.5 or -0.5 round away
    from zero" (DuckDB's cast of a DOUBLE rounds half to even: 2.5 -> 2); INTEGER and INT are INT64 (DuckDB's
    INTEGER is 32 bits)."""
    assert guarded(f"SELECT {sql}") == [(want,)]


def test_a_duckdb_cast_keeps_duckdbs_meaning() -> None:
    """No BigQuery construct: DuckDB's CAST (and TRY_CAST) of '1.5' is 2."""
    assert guarded("SELECT CAST('1.5' AS BIGINT), TRY_CAST('1e2' AS INTEGER), CAST(2.5e0 AS BIGINT)") == [(2, 100, 2)]


def test_casts_nested_too_deeply_are_refused_not_expanded() -> None:
    sql = "s"
    for _ in range(6):
        sql = f"CAST(CAST({sql} AS INT64) AS STRING)"
    with pytest.raises(ToolError, match="nested in casts too deeply"):
        guarded(f"SELECT {sql} FROM t")


def test_the_tool_says_where_bigquery_s_cast_fails(episode: Any) -> None:
    got = run(episode, "SELECT CAST('1.5' AS INT64) AS n")
    assert not got.ok and "BigQuery reads no INT64 in the text '1.5'" in got.content, got.content


# -- 1. SQLite's 64-bit integers: a REAL beyond 64 bits, sum()'s "integer overflow" ----------------------------------

CONSTANTS = [
    "9223372036854775807 + 1", "9223372036854775807 * 2", "-9223372036854775808 - 1", "-(-9223372036854775808)",
    "(-9223372036854775807 - 1) / -1", "(-9223372036854775807 - 1) % -1", "9223372036854775808",
    "-9223372036854775808", "2147483647 + 1",
    "3037000500 * 3037000500", "-3037000500 * 3037000500", "(9223372036854775807 + 1) - 1", "7 / 0", "7 % 0", "-7 / 2",
    "-7 % 2", "7 % -2", "4294967296 * 4294967296", "-(-(-9223372036854775808))", "2147483647 * 2",
    "65536 * 65536 * 65536 * 65536", "1 - 9223372036854775807 - 3",
]  # fmt: skip
"""Integer literal arithmetic at and beyond the 32- and 64-bit edges (SQLite: a REAL beyond 64 bits)."""


@pytest.mark.parametrize("expr", CONSTANTS)
def test_integer_literal_arithmetic_gives_sqlites_value_and_type(expr: str) -> None:
    """SQLite (lang_expr.html, "Operators"; sqlite3AddInt64): an integer result that overflows 64 bits is the REAL of
    the same operation on doubles, an integer literal beyond 64 bits is a REAL, -9223372036854775808 the integer.
    Before: DuckDB's "Overflow in addition of INT64" (and of INT32 for 2147483647 + 1), a HUGEINT for the literal."""
    lite, duck, translated = both(f"SELECT {expr}")
    assert duck == lite, translated
    assert [type(v) for v in duck[0]] == [type(v) for v in lite[0]], (duck, lite)  # a REAL is a float


@pytest.mark.parametrize("sql", ["SELECT k, b FROM t ORDER BY 1 + 1, k DESC", "SELECT k, b FROM t ORDER BY (3 - 1), k DESC",
                                 "SELECT count(*), max(k) FROM t GROUP BY 1 + 1"])
def test_an_order_by_of_literal_arithmetic_stays_an_expression(sql: str) -> None:
    """``ORDER BY 1 + 1`` orders by a constant in SQLite; folded to ``ORDER BY 2`` it would order by the second
    column."""
    lite, duck, translated = both(sql)
    assert duck == lite, translated


INTEGER_COLUMNS = [
    ("subject_id + 1", [2147483647, -5]), ("subject_id * subject_id", [2147483647, -5, 46341]),
    ("anchor_age * anchor_age", [32767, 200]), ("subject_id * hadm_id * 1000", [10_000_032, 20_000_000]),
    ("-subject_id * 3 - anchor_age", [2147483647, 32767]), ("(subject_id + 0) * (subject_id - 0)", [2147483647]),
    ("subject_id * 1000000", [10_000_032]), ("sum(subject_id * subject_id)", [2147483647, 2147483647]),
    ("CAST(subject_id AS INTEGER) * subject_id", [2147483647]), ("count(*) * 2147483647 * 2", [1, 2]),
]  # fmt: skip
"""Arithmetic of the episode's INTEGER (32-bit in DuckDB) and SMALLINT columns that SQLite computes in 64 bits."""


@pytest.mark.parametrize(("expr", "values"), INTEGER_COLUMNS)
def test_integer_column_arithmetic_is_64_bit_as_in_sqlite(expr: str, values: list[int]) -> None:
    """Before: "Overflow in multiplication of INT32" (subject_id and hadm_id are INTEGER columns, anchor_age SMALLINT)."""
    lite, duck = sqlite3.connect(":memory:"), duckdb.connect()
    try:
        lite.execute("CREATE TABLE patients (subject_id INTEGER, hadm_id INTEGER, anchor_age INTEGER)")
        duck.execute("CREATE TABLE patients (subject_id INTEGER, hadm_id INTEGER, anchor_age SMALLINT)")
        rows = [(v, v, min(v, 32767)) for v in values]
        for con in (lite, duck):
            con.executemany("INSERT INTO patients VALUES (?, ?, ?)", rows)
        sql = f"SELECT {expr} FROM patients"
        tree, _ = translate(sqlglot.parse_one(sql, read="sqlite"), dt.datetime(2100, 12, 31), sql)
        assert sorted(duck.execute(tree.sql(dialect="duckdb")).fetchall()) == sorted(lite.execute(sql).fetchall())
    finally:
        lite.close()
        duck.close()


@pytest.mark.parametrize(("sql", "rows"), [
    ("SELECT sum(b) FROM t", [*ROWS[:1], (9, 0, 1, 0.0, "")]),
    ("SELECT sum(b) FROM t", [*ROWS[1:2], (9, 0, -1, 0.0, "")]),
    ("SELECT k, sum(b) OVER (ORDER BY k) FROM t", [*ROWS[:1], (9, 0, 1, 0.0, "")]),
    ("SELECT sum(b) + 1 FROM t WHERE k > 0 HAVING sum(b) IS NOT NULL", [*ROWS[:1], (9, 0, 2, 0.0, "")]),
    ("SELECT sum(b) FILTER (WHERE k < 10) FROM t", [*ROWS[:1], (9, 0, 1, 0.0, "")]),
    ("SELECT sum(b) FILTER (WHERE k > 0) OVER () FROM t", [*ROWS[:1], (9, 0, 1, 0.0, "")]),
])  # fmt: skip
def test_sum_of_integers_beyond_64_bits_is_sqlites_integer_overflow_error(sql: str, rows: list[tuple[Any, ...]]) -> None:
    """SQLite (lang_aggfunc.html, sum): "If ... all inputs are integers ... sum() will throw an 'integer overflow'
    exception"; DuckDB's sum of integers is a 128-bit HUGEINT (before: 9223372036854775808, no error)."""
    lite, duck, translated = both(sql, rows)
    assert lite[0] == "error" and "integer overflow" in lite[1]
    assert duck[0] == "error" and "integer overflow: SQLite's sum()" in duck[1], translated


SUMMED = [(1, 5, 2**62, 1.5, ""), (2, -5, 2**62 - 1, -2.5, ""), (3, 7, -3, 0.25, ""), (4, None, None, None, None)]


@pytest.mark.parametrize("sql", [
    "SELECT sum(b), sum(r), sum(i), total(i), total(r), sum(b) - 1 FROM t",
    "SELECT k, sum(b) OVER (ORDER BY k), total(i) OVER (ORDER BY k), total(r) OVER (PARTITION BY s ORDER BY k) FROM t "
    "ORDER BY k",
    "SELECT sum(b) FILTER (WHERE k > 1), total(r) FILTER (WHERE r > 0), sum(i) FILTER (WHERE s = ''), count(*) "
    "FILTER (WHERE r > 0) FROM t",
    "SELECT k, sum(i) FILTER (WHERE r > 0) OVER (ORDER BY k), total(r) FILTER (WHERE r < 1) OVER (ORDER BY k) FROM t "
    "ORDER BY k",
])  # fmt: skip
def test_sums_within_64_bits_and_totals_are_sqlites(sql: str) -> None:
    """Within 64 bits sum() is the exact integer (2^62 + 2^62 - 1); total() a REAL, with a FILTER and over a window
    too (before: ``COALESCE(SUM(x), 0.0) OVER (...)``, a syntax error, and a FILTER's condition was taken for a bare
    column, ``FILTER (WHERE any_value(r) > 0)``). Beyond 2^53, SQLite's total() and avg() depend on its
    version (3.43 added exact summation: total(2^63 - 1, -2^63) is 0.0 in 3.40, -1.0 since), so not compared there."""
    lite, duck, translated = both(sql, SUMMED)
    assert duck == lite, translated


def test_a_run_time_overflow_beyond_64_bits_names_sqlites_real_and_the_duckdb_form(episode: Any) -> None:
    """The documented limit: a DuckDB column has one type, so a row whose 64-bit product overflows is DuckDB's error
    (SQLite would give that row a REAL), with the hint saying so; within 64 bits the product is SQLite's."""
    got = run(episode, "SELECT subject_id * 1000000 * 1000, datetime('now') FROM patients")
    want = run(episode, "SELECT CAST(subject_id AS BIGINT) * 1000000 * 1000 FROM patients")
    assert [r[0] for r in got.data["rows"]] == [r[0] for r in want.data["rows"]], got.content
    got = run(episode, "SELECT subject_id * subject_id * subject_id * subject_id, datetime('now') FROM patients")
    assert not got.ok and "Overflow in multiplication of INT64" in got.content, got.content
    assert "turn into a REAL" in got.content and "CAST(a AS DOUBLE) * b" in got.content, got.content
