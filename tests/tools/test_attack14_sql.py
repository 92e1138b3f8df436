"""Attack 14: SQLite as models write it, checked against real SQLite on the episode's own rows.

The oracle is the standard library's ``sqlite3``: the episode's visible ``labevents`` rows copied into
a SQLite table (typed columns, times as SQLite text 'YYYY-MM-DD HH:MM:SS'), SQLite's ``'now'``
replaced by the prediction time. Each query here was answered wrongly, or refused with an error that
did not teach the fix, before this session.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import sqlite3
from typing import Any

import anyio
import pytest
from _tool_cases import Case

from clinseek.tools import Limits, ToolContext, ToolResult, call_tool

_ORACLES: dict[int, sqlite3.Connection] = {}


def run(ep: Any, sql: str) -> ToolResult:
    ctx = ToolContext(episode=ep, limits=Limits(max_rows=1000, max_tool_chars=1_000_000))
    return anyio.run(call_tool, ctx, "ehr.run_sql_query", {"sql_query": sql})


def _sqlite_value(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return float(v)
    return v


def oracle(ep: Any) -> sqlite3.Connection:
    """The episode's visible labevents in an in-memory SQLite database (built once per episode)."""
    if id(ep) not in _ORACLES:
        result = ep.execute("SELECT * FROM labevents", max_rows=1_000_000, tables=None)
        con = sqlite3.connect(":memory:")
        kinds = [
            "INTEGER" if "INT" in t.upper() else "REAL" if t.upper() == "DOUBLE" else "TEXT"
            for t in result.types
        ]
        con.execute(
            "CREATE TABLE labevents ("
            + ", ".join(f'"{c}" {k}' for c, k in zip(result.columns, kinds, strict=True))
            + ")"
        )
        con.executemany(
            f"INSERT INTO labevents VALUES ({', '.join('?' * len(result.columns))})",
            [tuple(_sqlite_value(v) for v in row) for row in result.rows],
        )
        _ORACLES[id(ep)] = con
    return _ORACLES[id(ep)]


def _norm(v: Any) -> Any:
    v = _sqlite_value(v)
    return round(float(v), 6) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def same_as_sqlite(ep: Any, case: Case, sql: str) -> ToolResult:
    """Run ``sql`` through the tool; assert it gives SQLite's rows (``'now'`` = the prediction time)."""
    result = run(ep, sql)
    now = case.prediction_time.isoformat(sep=" ")
    lite = re.sub(r"'now'", f"'{now}'", sql, flags=re.IGNORECASE).replace("date()", f"date('{now}')")
    want = [tuple(_norm(v) for v in row) for row in oracle(ep).execute(lite).fetchall()]
    assert result.ok, result.content
    got = [tuple(_norm(v) for v in row) for row in result.data["rows"]]
    assert got == want, (sql, result.content[:400])
    return result


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT date('now') AS today",
        "SELECT count(*) FROM labevents WHERE date(charttime) < date('now')",
        "SELECT count(*) FROM labevents WHERE date(charttime) = date('NOW')",
        "SELECT date() AS today",
    ],
)
def test_date_now_is_the_prediction_time(episode: Any, case: Case, sql: str) -> None:
    # One-argument date('now') was read as DuckDB's CAST('now' AS DATE): "Conversion Error: invalid
    # date field format"; date() gave "the query does not parse: SQL cannot be None".
    result = same_as_sqlite(episode, case, sql)
    assert result.content.startswith("Note: read as SQLite") and "prediction time" in result.content


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT strftime('%f', charttime) FROM labevents ORDER BY labevent_id LIMIT 3",
        "SELECT strftime('%Y-%m-%d %H:%M:%f', charttime) FROM labevents ORDER BY labevent_id LIMIT 3",
        "SELECT strftime('%S.%f', charttime) AS s, count(*) FROM labevents GROUP BY s ORDER BY s",
    ],
)
def test_strftime_specifiers_duckdb_reads_otherwise_are_sqlite(episode: Any, case: Case, sql: str) -> None:
    # strftime('%f', x) is also valid DuckDB (format first) but %f there is microseconds ('000000'),
    # SQLite's %f is 'SS.SSS': the DuckDB reading was a silent wrong answer.
    same_as_sqlite(episode, case, sql)


def test_strftime_g_is_sqlite_iso_year_not_duckdb_milliseconds(episode: Any) -> None:
    # SQLite (3.46+) %g: the ISO year's last two digits; DuckDB's %g: milliseconds ('000').
    # (a pending lab row's labevent_id is NULL: SQLite sorts NULL first, DuckDB last)
    got = run(episode, "SELECT strftime('%g', charttime) FROM labevents WHERE labevent_id IS NOT NULL "
              "ORDER BY labevent_id LIMIT 1")
    want = run(
        episode, "SELECT right(strftime(charttime, '%G'), 2) FROM labevents WHERE labevent_id IS NOT NULL "
        "ORDER BY labevent_id LIMIT 1"
    )
    assert got.ok and got.data["rows"] == want.data["rows"], got.content


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT format('%d results', count(*)) FROM labevents",
        "SELECT format('%s: %.1f', itemid, valuenum) FROM labevents WHERE valuenum IS NOT NULL ORDER BY labevent_id LIMIT 3",
        "SELECT format('%d results', count(*)), date('now', '-1 day') FROM labevents",
    ],
)
def test_format_is_sqlite_printf(episode: Any, case: Case, sql: str) -> None:
    # SQLite's format() is printf(); DuckDB's format('%d results', n) ignores n and returns the text
    # as written: a silent wrong answer, also in a query read (and noted) as SQLite.
    same_as_sqlite(episode, case, sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM labevents WHERE value > 5",
        "SELECT coalesce(valuenum, value) FROM labevents",
        "SELECT count(*) FROM labevents WHERE charttime > 5",
    ],
)
def test_duckdb_errors_name_no_construct_that_was_not_written(episode: Any, sql: str) -> None:
    # DuckDB's "... an explicit cast is required" matched the hint for SQLite's `a IS b`: the model was
    # told "(DuckDB: a IS b -> a IS NOT DISTINCT FROM b)" for a query with no IS at all.
    result = run(episode, sql)
    assert not result.ok
    assert "IS NOT DISTINCT" not in result.content, result.content


def test_a_double_quoted_string_error_says_strings_take_single_quotes(episode: Any) -> None:
    # SQLite reads "abnormal" as a string when no column has that name; DuckDB: "Referenced column
    # "abnormal" not found", which does not say what to write.
    result = run(episode, 'SELECT count(*) FROM labevents WHERE flag = "abnormal"')
    assert not result.ok
    assert "'abnormal'" in result.content and "single quotes" in result.content, result.content


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM labevents; -- the count",
        "SELECT count(*) FROM labevents;\n/* done */\n",
        "SELECT count(*) FROM labevents WHERE date(charttime, '+1 day') > '2000-01-01'; -- SQLite",
    ],
)
def test_a_comment_after_the_last_semicolon_is_one_statement(episode: Any, case: Case, sql: str) -> None:
    # sqlglot returns the trailing comment as a second (Semicolon) statement: "got 2 statements".
    same_as_sqlite(episode, case, sql)


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("SELECT date(current_timestamp)", "clock"),
        ("SELECT format('%s', now())", "clock"),
        ("SELECT count(*) FROM labevents; -- x\nSELECT 1", "one_statement"),
    ],
)
def test_the_new_readings_are_still_guarded(episode: Any, sql: str, kind: str) -> None:
    result = run(episode, sql)
    assert not result.ok and result.error_kind == kind, result.content


def test_current_timestamp_in_a_sqlite_reading_is_the_prediction_time(episode: Any, case: Case) -> None:
    # Read as SQLite (strftime('%f', ...) now is), CURRENT_TIMESTAMP is SQLite's 'now': the prediction time.
    result = run(episode, "SELECT strftime('%Y-%m-%d %H:%M:%f', current_timestamp) AS t")
    assert (not result.ok and result.error_kind == "clock") or result.data["rows"] == [
        [case.prediction_time.strftime("%Y-%m-%d %H:%M:%S.000")]
    ], result.content


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT printf('%.1f%%', 100 * count(*) / 7) FROM labevents WHERE date(charttime, '+0 days') IS NOT NULL",
        "SELECT printf('%s/%d', itemid, valuenum) FROM labevents WHERE julianday(charttime) > 0 ORDER BY labevent_id LIMIT 5",
        "SELECT format('%s|%s|%d', flag, valueuom, valuenum) FROM labevents ORDER BY labevent_id LIMIT 5",
    ],
)
def test_printf_arguments_are_read_as_sqlite_reads_them(episode: Any, case: Case, sql: str) -> None:
    # DuckDB's printf refuses %s of a number, %f of an integer and %d of a real ("Invalid type
    # specifier"); SQLite converts, and prints NULL as '' (%s) or 0 (%d).
    same_as_sqlite(episode, case, sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM labevents WHERE charttime BETWEEN date('now', '-1 month') AND date('now')",
        "SELECT count(*) FROM labevents WHERE charttime <= date('now', '-1 day')",
        "SELECT count(*) FROM labevents WHERE charttime = date(charttime, '+0 days')",
        "SELECT count(*) FROM labevents WHERE date(charttime) > 2000",
        "SELECT max(charttime) FROM labevents WHERE charttime <= strftime('%Y-%m-%d', 'now')",
        "SELECT count(*) FROM labevents WHERE charttime > '2100-01-01' AND charttime <= date('now')",
        "SELECT count(*) FROM labevents WHERE datetime(charttime) <= '2148-08-31' OR strftime('%j', charttime) = 5",
    ],
)
def test_a_time_compared_with_date_text_compares_text_as_sqlite(episode: Any, case: Case, sql: str) -> None:
    # SQLite's date() is text: '2148-08-31 00:00:00' > '2148-08-31'. Translated to a DATE, DuckDB compared a
    # TIMESTAMP with it as midnight: rows charted at exactly 00:00 (many in MIMIC) were counted in
    # `charttime <= date('now')` (56 rows on the demo case) where SQLite leaves them out.
    same_as_sqlite(episode, case, sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT avg(value) FROM labevents",
        "SELECT count(*) FROM labevents WHERE value > 5",
        "SELECT total(value), date('now') FROM labevents",
    ],
)
def test_a_text_column_used_as_a_number_is_told_how_to_convert(episode: Any, sql: str) -> None:
    # SQLite reads text as its leading number; DuckDB's "No function matches ... 'avg(VARCHAR)'" or
    # "Cannot compare values of type VARCHAR and type INTEGER_LITERAL" named no way to write it.
    result = run(episode, sql)
    assert not result.ok
    assert "TRY_CAST(x AS DOUBLE)" in result.content and "valuenum" in result.content, result.content


def test_limit_minus_one_is_no_limit_as_in_sqlite(episode: Any, case: Case) -> None:
    # SQLite: a negative LIMIT means no limit (LIMIT -1 OFFSET n is its idiom for "skip n");
    # DuckDB: "LIMIT/OFFSET cannot be negative", also after reading the query as SQLite.
    n = run(episode, "SELECT count(*) FROM labevents").data["rows"][0][0]
    same_as_sqlite(
        episode, case, f"SELECT labevent_id FROM labevents ORDER BY labevent_id LIMIT -1 OFFSET {max(n - 3, 0)}"
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT charttime FROM labevents WHERE datetime(charttime) > '2000' ORDER BY labevent_id LIMIT 2",
        "SELECT count(*) FROM labevents WHERE time(charttime) BETWEEN '08' AND '12:00'",
        "SELECT count(*) FROM labevents WHERE datetime(charttime, '+0 days') <= '2148-08-31'",
    ],
)
def test_datetime_compared_with_text_compares_text_as_sqlite(episode: Any, case: Case, sql: str) -> None:
    # datetime() is text in SQLite: datetime(x) > '2000' compares text; translated to a TIMESTAMP,
    # DuckDB cast '2000' to a timestamp and failed ("Conversion Error: invalid timestamp field format").
    same_as_sqlite(episode, case, sql)


def test_a_scalar_subquery_with_several_rows_is_told_to_use_in(episode: Any) -> None:
    # d_labitems has several 'Glucose' items: SQLite silently took the first (a blood-gas item with no
    # rows: NULL); DuckDB refuses, and its message pointed at a setting the guard refuses (SET).
    result = run(
        episode,
        "SELECT max(valuenum) FROM labevents WHERE itemid = (SELECT itemid FROM d_labitems WHERE label = 'Glucose')",
    )
    if result.ok:  # one 'Glucose' item on this store
        return
    assert "IN (SELECT" in result.content and "SET " not in result.content, result.content


def test_a_printf_type_error_names_the_cast(episode: Any) -> None:
    # Valid DuckDB (runs as DuckDB): printf('%d', <a DOUBLE>) fails at run time with "Invalid type
    # specifier"; SQLite converts. The message now names the cast to write.
    result = run(episode, "SELECT printf('%d%%', 100 * sum(flag = 'abnormal') / count(*)) FROM labevents")
    assert not result.ok and "CAST(x AS BIGINT)" in result.content, result.content
