"""Conformance 25: BigQuery's date differences, and SQLite's integer overflow, sum() and CAST(x AS NUMERIC).

Measured before the fixes (``ehr.run_sql_query``'s guard against ZetaSQL's documented rules, the SQLite translator
against the standard library's ``sqlite3``):

- BigQuery's ``DATE_DIFF(end, start, DAY)`` (any part) was a binder error: sqlglot's DuckDB reader took ``end`` for
  DuckDB's quoted unit and ``DAY`` for a column (``Referenced column "DAY" not found``); ``DATE_DIFF`` and
  ``DATETIME_DIFF`` in ``WEEK`` were refused, ``WEEK(MONDAY)`` and ``ISOWEEK`` in ``DATETIME_DIFF`` DuckDB errors, and
  ``TIMESTAMP_DIFF(a, b, MONTH)`` (BigQuery refuses the part) ran as DuckDB's month boundaries.
- a row whose 64-bit arithmetic overflows at run time (``subject_id * subject_id * subject_id`` read as SQLite) got
  DuckDB's "Overflow in multiplication of INT64" with the 32-bit advice (``CAST(a AS BIGINT) * b``, already so).
- ``CAST(x AS NUMERIC)`` read as SQLite was always a DOUBLE: '1e3' -> 1000.0 (SQLite: the INTEGER 1000), an
  INTEGER column's 2^53 + 1 -> 2^53 (SQLite keeps the integer).
- every ``sum()`` in a query read as SQLite was refused by the tool ("error() may give another value"): the
  translation's own ``error()`` (SQLite's "integer overflow", session 23) met the guard's volatile-function check.
- ``sum()`` of integers whose total fits 64 bits but whose running total leaves them in some order (2^62, 2^62,
  -2^62) was the exact total here; SQLite fails or not by the order it reads the rows.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import sqlite3
from typing import Any

import duckdb
import pytest
import sqlglot
from test_attack21_sql import run
from test_conf23_sql import both

from clinseek.errors import ToolError
from clinseek.tools import guard_sql
from clinseek.tools._sqlite_dialect import SqliteDialect, translate

# -- 1. BigQuery's DATE_DIFF / DATETIME_DIFF / TIMESTAMP_DIFF ----------------------------------------------------------

PAIRS = [
    (dt.datetime(2024, 1, 6, 23, 0), dt.datetime(2024, 1, 8, 1, 0)),  # Saturday night to Monday
    (dt.datetime(2024, 1, 7, 0, 0), dt.datetime(2024, 1, 6, 23, 59, 59)),  # one second back across a Sunday
    (dt.datetime(2023, 12, 31, 10, 30), dt.datetime(2024, 1, 1, 9, 15)),  # a Sunday to a Monday across the year
    (dt.datetime(2024, 12, 29, 12, 0), dt.datetime(2024, 12, 30, 0, 0, 0, 500)),  # ISO year 2025 begins 12-30
    (dt.datetime(2024, 3, 31, 23, 0), dt.datetime(2024, 4, 1, 0, 30)),  # a quarter's end
    (dt.datetime(2008, 12, 25, 15, 30), dt.datetime(2010, 7, 7, 10, 20)),  # BigQuery's own example: 559 days
    (dt.datetime(2100, 5, 1, 8, 0), dt.datetime(2100, 2, 27, 17, 45, 30)),  # backwards, months
]
"""(start, end) pairs at the boundaries each part counts."""
_WEEKDAYS = ["SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"]


def _week_start(x: dt.datetime, first: int) -> dt.date:
    """The first day of the week holding ``x``, weeks beginning on ``first`` (0 Sunday)."""
    return x.date() - dt.timedelta(days=(x.isoweekday() % 7 - first) % 7)


def bigquery_boundaries(part: str, start: dt.datetime, end: dt.datetime) -> int:
    """BigQuery's DATETIME_DIFF(end, start, part) (date_functions, datetime_functions): the part boundaries from
    ``start`` to ``end``, ``end - start`` counted in whole parts after truncating both to the part."""
    if part.startswith("WEEK") or part == "ISOWEEK":
        first = 1 if part == "ISOWEEK" else _WEEKDAYS.index(part[5:-1]) if "(" in part else 0
        return (_week_start(end, first) - _week_start(start, first)).days // 7
    if part == "YEAR":
        return end.year - start.year
    if part == "ISOYEAR":
        return end.isocalendar()[0] - start.isocalendar()[0]
    if part == "QUARTER":
        return (end.year * 4 + (end.month - 1) // 3) - (start.year * 4 + (start.month - 1) // 3)
    if part == "MONTH":
        return (end.year * 12 + end.month) - (start.year * 12 + start.month)
    micros = {"DAY": 86_400_000_000, "HOUR": 3_600_000_000, "MINUTE": 60_000_000, "SECOND": 1_000_000,
              "MILLISECOND": 1000, "MICROSECOND": 1, "NANOSECOND": 1}[part]  # fmt: skip
    epoch = dt.datetime(1970, 1, 1)

    def units(x: dt.datetime) -> int:
        return ((x - epoch) // dt.timedelta(microseconds=1)) // micros

    return (units(end) - units(start)) * (1000 if part == "NANOSECOND" else 1)


def bigquery_elapsed(part: str, start: dt.datetime, end: dt.datetime) -> int:
    """BigQuery's TIMESTAMP_DIFF(end, start, part): whole parts elapsed (a DAY is 24 hours), toward zero."""
    micros = {"DAY": 86_400_000_000, "HOUR": 3_600_000_000, "MINUTE": 60_000_000, "SECOND": 1_000_000,
              "MILLISECOND": 1000, "MICROSECOND": 1, "NANOSECOND": 1}[part]  # fmt: skip
    elapsed = (end - start) // dt.timedelta(microseconds=1)
    whole = abs(elapsed) // micros * (1 if elapsed >= 0 else -1)
    return whole * (1000 if part == "NANOSECOND" else 1)


def _resolve(db: str | None, name: str) -> tuple[str, str] | None:
    return ("main", "t") if db is None and name.lower() == "t" else None


def pairs(sql: str) -> list[tuple[Any, ...]]:
    """``sql`` through the guard (read as SQLite where it is not DuckDB, as the tool reads it), over ``t(k, a, b)``
    holding :data:`PAIRS` (``a`` the start, ``b`` the end)."""
    duck = duckdb.connect()
    try:
        duck.execute("CREATE TABLE t (k INTEGER, a TIMESTAMP, b TIMESTAMP)")
        duck.executemany("INSERT INTO t VALUES (?, ?, ?)", [(k, a, b) for k, (a, b) in enumerate(PAIRS)])
        text = guard_sql(sql, _resolve, available="t", dialect=SqliteDialect(dt.datetime(2100, 12, 31)))
        return duck.execute(text).fetchall()
    finally:
        duck.close()


BOUNDARY_PARTS = ["DAY", "WEEK", "WEEK(SUNDAY)", "WEEK(MONDAY)", "WEEK(WEDNESDAY)", "WEEK(SATURDAY)", "ISOWEEK",
                  "MONTH", "QUARTER", "YEAR", "ISOYEAR", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND",
                  "NANOSECOND"]  # fmt: skip


@pytest.mark.parametrize("part", BOUNDARY_PARTS)
def test_bigquery_datetime_diff_counts_the_part_boundaries_from_start_to_end(part: str) -> None:
    """BigQuery (datetime_functions, DATETIME_DIFF: "Gets the number of unit boundaries between two DATETIME values
    ... WEEK: This date part begins on Sunday ... ISOWEEK: Uses ISO 8601 week boundaries"; negative when the first
    value is earlier). Before: WEEK refused, WEEK(...) and ISOWEEK DuckDB errors."""
    got = pairs(f"SELECT k, DATETIME_DIFF(b, a, {part}), DATETIME_DIFF(a, b, {part}) FROM t ORDER BY k")
    want = [(k, bigquery_boundaries(part, a, b), bigquery_boundaries(part, b, a)) for k, (a, b) in enumerate(PAIRS)]
    assert got == want


@pytest.mark.parametrize("part", [p for p in BOUNDARY_PARTS if not p.endswith(("SECOND", "MINUTE", "HOUR"))])
def test_bigquery_date_diff_of_dates_counts_the_part_boundaries(part: str) -> None:
    """BigQuery (date_functions, DATE_DIFF(end_date, start_date, granularity)); ``DATE(x)`` and a column alike.
    Before: a binder error for every part (``Referenced column "DAY" not found``)."""
    got = pairs(f"SELECT k, DATE_DIFF(DATE(b), CAST(a AS DATE), {part}), date_diff(b, a, {part.lower()}) FROM t "
                "ORDER BY k")
    want = [(k, bigquery_boundaries(part, dt.datetime.combine(a.date(), dt.time()), dt.datetime.combine(b.date(),
                                                                                                        dt.time())),
             bigquery_boundaries(part, a, b)) for k, (a, b) in enumerate(PAIRS)]  # fmt: skip
    assert got == want


@pytest.mark.parametrize("part", ["DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND"])
def test_bigquery_timestamp_diff_counts_whole_parts_elapsed(part: str) -> None:
    """BigQuery (timestamp_functions, TIMESTAMP_DIFF: ``TIMESTAMP_DIFF('2010-07-07 10:20:00', '2008-12-25 15:30:00',
    HOUR)`` is 13410, whole hours; "DAY: Equivalent to 24 HOURs")."""
    got = pairs(f"SELECT k, TIMESTAMP_DIFF(b, a, {part}), TIMESTAMP_DIFF(a, b, {part}) FROM t ORDER BY k")
    want = [(k, bigquery_elapsed(part, a, b), bigquery_elapsed(part, b, a)) for k, (a, b) in enumerate(PAIRS)]
    assert got == want


@pytest.mark.parametrize("part", ["WEEK", "WEEK(MONDAY)", "ISOWEEK", "MONTH", "QUARTER", "YEAR", "ISOYEAR"])
def test_a_part_bigquery_s_timestamp_diff_refuses_is_refused_naming_datetime_diff(part: str) -> None:
    """BigQuery's TIMESTAMP_DIFF takes NANOSECOND to DAY; before, MONTH ran as DuckDB's month boundaries."""
    with pytest.raises(ToolError, match=r"TIMESTAMP_DIFF takes NANOSECOND to DAY only") as info:
        pairs(f"SELECT TIMESTAMP_DIFF(b, a, {part}) FROM t")
    assert f"DATETIME_DIFF(a, b, {part})" in info.value.message


def test_bigquery_examples_and_literals() -> None:
    """The documented examples: 559 days; a WEEK boundary between Saturday 2017-10-14 and Sunday 2017-10-15; 3 YEAR
    but 2 ISOYEAR boundaries from 2014-12-30 (ISO year 2015) to 2017-12-30; text literals coerced to dates."""
    assert pairs("SELECT DATETIME_DIFF(DATETIME '2010-07-07 10:20:00', DATETIME '2008-12-25 15:30:00', DAY), "
                 "DATETIME_DIFF(DATETIME '2017-10-15 00:00:00', DATETIME '2017-10-14 00:00:00', WEEK), "
                 "DATE_DIFF('2017-10-15', '2017-10-14', WEEK), DATE_DIFF(DATE '2017-12-30', DATE '2014-12-30', YEAR), "
                 "DATE_DIFF(DATE '2017-12-30', DATE '2014-12-30', ISOYEAR)") == [(559, 1, 1, 3, 2)]


@pytest.mark.parametrize("sql", ["SELECT k, date_diff('day', a, b), datediff('hour', a, b), date_diff('week', a, b) "
                                 "FROM t ORDER BY k",
                                 "SELECT k, DATE_DIFF('DAY', a, b), date_diff('hour', a, b), date_diff('week', a, b) "
                                 "FROM t ORDER BY k"])  # fmt: skip
def test_duckdb_s_date_diff_keeps_duckdb_s_meaning(sql: str) -> None:
    """DuckDB's date_diff(part, start, end) (the part quoted and first): end - start in DuckDB's count (its 'week' is
    the day boundaries over 7, toward zero: no week start)."""
    def days(a: dt.datetime, b: dt.datetime) -> int:
        return (b.date() - a.date()).days

    want = [(k, days(a, b), bigquery_boundaries("HOUR", a, b), abs(days(a, b)) // 7 * (1 if b >= a else -1))
            for k, (a, b) in enumerate(PAIRS)]
    assert pairs(sql) == want


def test_the_tool_runs_bigquery_s_date_diff(episode: Any) -> None:
    got = run(episode, "SELECT hadm_id, DATE_DIFF(dischtime, admittime, DAY) AS days, DATE_DIFF(DATE(dischtime), "
                       "DATE(admittime), WEEK) AS weeks FROM admissions ORDER BY hadm_id")
    want = run(episode, "SELECT hadm_id, date_diff('day', admittime, dischtime), (date_diff('day', date_trunc('week', "
                        "admittime + INTERVAL 1 DAY), date_trunc('week', dischtime + INTERVAL 1 DAY)) // 7) FROM "
                        "admissions ORDER BY hadm_id")
    assert got.ok and got.data["rows"] == want.data["rows"] and got.data["rows"], got.content


# -- 3. sum() of integers: SQLite's error does not depend on DuckDB's row order --------------------------------------


def test_a_sum_in_a_query_read_as_sqlite_runs_and_a_model_s_error_call_is_still_refused(episode: Any) -> None:
    """Before: "error() may give another value" for every sum() read as SQLite (the translation's overflow check)."""
    got = run(episode, "SELECT sum(anchor_age), total(anchor_age), datetime('now') FROM patients")
    want = run(episode, "SELECT sum(anchor_age), CAST(sum(anchor_age) AS DOUBLE) FROM patients")
    assert got.ok and got.data["dialect"] == "sqlite", got.content
    assert [r[:2] for r in got.data["rows"]] == want.data["rows"]
    refused = run(episode, "SELECT error('x'), datetime('now') FROM patients")
    assert not refused.ok and "error() may give another value" in refused.content, refused.content


MIXED = [
    ([2**62, 2**62, -(2**62)], True), ([-(2**62), -(2**62), -1, 2**62], True), ([2**62, 2**62 - 1, -3], False),
    ([-(2**62), -(2**62), 2**62], False), ([2**63 - 1, -1, 1], True), ([2**62, None, 2**62, -(2**62) - 7], True),
]  # fmt: skip
"""Integers whose total fits 64 bits, and whether some order of adding them leaves 64 bits on the way."""


def _outcome(result: Any) -> Any:
    return "error" if result[0] == "error" else result


@pytest.mark.parametrize(("values", "order_matters"), MIXED)
@pytest.mark.parametrize("sql", ["SELECT sum(b) FROM t", "SELECT sum(b) FROM t GROUP BY s",
                                 "SELECT sum(b) FILTER (WHERE k >= 0) FROM t", "SELECT DISTINCT sum(b) OVER () FROM t",
                                 "SELECT sum(b) OVER (PARTITION BY s) FROM t"])  # fmt: skip
def test_a_sum_of_integers_is_the_same_in_every_row_order(values: list[int | None], order_matters: bool,
                                                          sql: str) -> None:
    """SQLite (func.c, sumStep/sumFinalize): the running total of integers is 64-bit; once it leaves 64 bits the
    sum ends as "integer overflow", even when later rows bring it back, so SQLite's answer depends on the order it
    reads the rows (checked: sqlite3 gives both answers over the orders below). Here the answer is the same in every
    order: SQLite's value where every order gives it, else an error naming the order and total(x)."""
    lite, duck = set(), set()
    for order in itertools.permutations(values):
        rows = [(k, 0, v, 0.0, "") for k, v in enumerate(order)]
        got_lite, got_duck, translated = both(sql, rows)
        lite.add(str(_outcome(got_lite)))
        duck.add(str(_outcome(got_duck)))
        if order_matters:
            assert got_duck[0] == "error" and "by the order of the rows" in got_duck[1], translated
    assert (len(lite) > 1) == order_matters, lite
    assert len(duck) == 1
    if not order_matters:
        assert duck == lite


# -- 2. a row whose 64-bit arithmetic overflows at run time ------------------------------------------------------------


@pytest.mark.parametrize("expr", ["subject_id * subject_id * subject_id", "sum(subject_id * subject_id * subject_id)",
                                  "subject_id * subject_id * subject_id * subject_id - 1",
                                  "-subject_id * subject_id * subject_id * 10"])  # fmt: skip
def test_a_run_time_64_bit_overflow_names_sqlites_real_and_the_form_that_gives_it(episode: Any, expr: str) -> None:
    """SQLite (vdbe.c, OP_Multiply/OP_Add: sqlite3MulInt64 fails -> the REAL of the operands as doubles) gives the rows
    whose 64-bit arithmetic overflows a REAL; a DuckDB column has one type, so DuckDB's error stands (no added
    statement for a query that does not overflow), and says what SQLite gives: the REAL of the very operation that
    overflowed (checked against sqlite3), and the form that gives it in every row (checked against sqlite3 too).
    Before: the 32-bit advice, ``CAST(a AS BIGINT) * b``, for a 64-bit overflow."""
    got = run(episode, f"SELECT {expr}, datetime('now') FROM patients")
    assert not got.ok and "Overflow in multiplication of INT64" in got.content, got.content
    found = re.search(r"INT64 \((-?\d+) \* (-?\d+)\)", got.content)
    assert found is not None, got.content
    lite = sqlite3.connect(":memory:")
    try:
        (real,) = lite.execute(f"SELECT {found.group(1)} * {found.group(2)}").fetchone()
        assert isinstance(real, float) and f"the REAL {real!r}" in got.content, got.content
        assert "CAST(a AS DOUBLE) * b" in got.content and "CAST(a AS REAL)" in got.content
        ids = [r[0] for r in run(episode, "SELECT subject_id FROM patients").data["rows"]]
        lite.execute("CREATE TABLE patients (subject_id INTEGER)")
        lite.executemany("INSERT INTO patients VALUES (?)", [(i,) for i in ids])
        advised = expr.replace("subject_id * subject_id", "CAST(subject_id AS REAL) * subject_id", 1)
        mine = run(episode, f"SELECT {advised}, datetime('now') FROM patients")
        assert mine.ok, mine.content
        want = lite.execute(f"SELECT {expr} FROM patients").fetchall()
        assert sorted(r[0] for r in mine.data["rows"]) == sorted(r[0] for r in want)
    finally:
        lite.close()


def test_a_32_bit_overflow_in_duckdb_sql_keeps_the_bigint_advice(episode: Any) -> None:
    got = run(episode, "SELECT subject_id * subject_id * subject_id FROM patients")
    assert not got.ok and "INT32" in got.content and "CAST(a AS BIGINT) * b" in got.content, got.content
    assert "the REAL" not in got.content


# -- 4. CAST(x AS NUMERIC) read as SQLite ------------------------------------------------------------------------------

NUMERIC_TEXTS = ["9223372036854775808", "12345678901234567890", "1e3", " 12 ", "0x10", "1.5", "3.0", "-0", "-0.0",
                 "9223372036854775807", "-9223372036854775808", "-9223372036854775809", "9007199254740993", "12abc",
                 "abc", "", ".5", "5.", "1e18", "1e15", "  -7e2x", "+12", "1e400", "-1e2", "2251799813685247.0",
                 "2251799813685248.0", "1e-3", "\t42\n", "1_000", "１２"]  # fmt: skip
"""Texts at SQLite's NUMERIC edges: integers at 53 and 64 bits, integral reals at 2^51 ('1e15' an INTEGER, '1e18' a
REAL), hex and junk after the number, white space, no number at all."""


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@pytest.mark.parametrize("text", NUMERIC_TEXTS)
def test_cast_of_text_to_numeric_is_sqlites_integer_or_real(text: str) -> None:
    """SQLite (lang_expr.html, CAST to NUMERIC; vdbemem.c sqlite3VdbeMemNumerify): the text's leading number, an
    INTEGER when written as one within 64 bits or when its REAL value is integral within +-2^51, else a REAL; 0 for
    no number. Value and type as sqlite3 gives them (before: always a DOUBLE, 1000.0 for '1e3')."""
    sql = f"SELECT CAST({_sql_text(text)} AS NUMERIC), CAST({_sql_text(text)} AS DECIMAL(10, 2))"
    lite, duck, translated = both(sql)
    assert duck == lite, translated
    assert [type(v) for v in duck[0]] == [type(v) for v in lite[0]], (duck, lite)


def test_cast_of_a_text_column_to_numeric_has_sqlites_values() -> None:
    """A text column's rows: SQLite's value in each (a DuckDB column has one type: a DOUBLE, SQLite's INTEGER rows as
    whole doubles, exact within 2^53; documented)."""
    small = [t for t in NUMERIC_TEXTS if not isinstance(n := _lite_numeric(t), int) or abs(n) <= 2**53]
    rows = [(k, 0, 0, 0.0, t) for k, t in enumerate(small)]
    lite, duck, translated = both("SELECT k, CAST(s AS NUMERIC), CAST(s AS NUMERIC) * 2 FROM t ORDER BY k", rows)
    assert duck == lite, translated


def _lite_numeric(text: str) -> Any:
    lite = sqlite3.connect(":memory:")
    try:
        return lite.execute("SELECT CAST(? AS NUMERIC)", (text,)).fetchone()[0]
    finally:
        lite.close()


def test_cast_of_an_integer_column_to_numeric_keeps_every_digit() -> None:
    """SQLite: an INTEGER stays that INTEGER (before: a DOUBLE, 2^53 + 1 -> 2^53)."""
    lite, duck = sqlite3.connect(":memory:"), duckdb.connect()
    try:
        values = [10_000_032, 9007199254740993, -(2**63), 2**63 - 1, None]
        lite.execute("CREATE TABLE patients (subject_id INTEGER, hadm_id INTEGER)")
        duck.execute("CREATE TABLE patients (subject_id BIGINT, hadm_id INTEGER)")
        for con in (lite, duck):
            con.executemany("INSERT INTO patients VALUES (?, ?)", [(v, 20_000_000) for v in values])
        sql = "SELECT CAST(subject_id AS NUMERIC), CAST(hadm_id AS NUMERIC) * 1000000000 FROM patients"
        tree, _ = translate(sqlglot.parse_one(sql, read="sqlite"), dt.datetime(2100, 12, 31), sql)
        got = duck.execute(tree.sql(dialect="duckdb")).fetchall()
        want = lite.execute(sql).fetchall()
        assert got == want
        assert [type(v) for r in got for v in r] == [type(v) for r in want for v in r]
    finally:
        lite.close()
        duck.close()
