"""``ehr.run_sql_query`` with SQL as models write it: SQLite read and translated on a real episode,
valid DuckDB untouched, every refusal still a refusal, and every error naming the construct."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from _tool_attacks import REFUSED, SQLITE_REFUSED
from _tool_cases import Case

from clinseek.errors import ToolError
from clinseek.tools import Limits, ToolContext, ToolResult, call_tool, guard_sql
from clinseek.tools._sqlite_dialect import SqliteDialect

_PYTHON_CLASS = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:Exception|Error)\b")
"""A Python exception class name (``AttributeError``, ``BinderException``); DuckDB's "Binder Error" is not one."""


def run(ep: Any, sql: str, limits: Limits | None = None) -> ToolResult:
    ctx = ToolContext(episode=ep, limits=limits or Limits(max_rows=1000, max_tool_chars=1_000_000))
    return anyio.run(call_tool, ctx, "ehr.run_sql_query", {"sql_query": sql})


def _resolve(db: str | None, name: str) -> tuple[str, str] | None:
    known = {
        "labevents": "hosp",
        "patients": "hosp",
        "admissions": "hosp",
        "d_labitems": "hosp",
        "icustays": "icu",
    }
    return (known[name], name) if name in known and db in (None, known[name]) else None


@pytest.mark.parametrize(
    ("sql", "kinds"), REFUSED + SQLITE_REFUSED, ids=[s for s, _ in REFUSED + SQLITE_REFUSED]
)
@pytest.mark.parametrize("force", [False, True], ids=["detect", "force"])
def test_attacks_are_refused_with_the_dialect_layer(sql: str, kinds: str, force: bool, case: Case) -> None:
    with pytest.raises(ToolError) as info:
        guard_sql(sql, _resolve, available="...", prediction_time=case.prediction_time,
                  dialect=SqliteDialect(case.prediction_time, force=force))  # fmt: skip
    assert info.value.kind in kinds.split("|"), info.value.message


@pytest.mark.parametrize(("sql", "kinds"), SQLITE_REFUSED, ids=[s for s, _ in SQLITE_REFUSED])
def test_sqlite_attacks_are_refused_on_a_real_episode(episode: Any, sql: str, kinds: str) -> None:
    result = run(episode, sql)
    assert not result.ok and result.error_kind in kinds.split("|"), result.content


def test_sqlite_runs_and_says_so_in_one_line(episode: Any, case: Case) -> None:
    t = case.prediction_time
    result = run(
        episode,
        "SELECT count(*) AS n, max(datetime(charttime, 'start of day')) AS last_day, "
        "24 * (julianday('now') - julianday(max(charttime))) AS hours_ago FROM labevents "
        "WHERE datetime(charttime) >= datetime('now', '-1 year') AND strftime('%Y', charttime) >= '1900'",
    )
    assert result.ok, result.content
    first, rest = result.content.split("\n", 1)
    assert first.startswith("Note: read as SQLite") and "the prediction time" in first
    assert "Note" not in rest and result.data["dialect"] == "sqlite"
    n, last_day, hours_ago = result.data["rows"][0]
    duck = run(
        episode,
        "SELECT count(*), max(date_trunc('day', charttime)), "
        f"epoch(TIMESTAMP '{t}' - max(charttime)) / 3600 FROM labevents "
        f"WHERE charttime >= TIMESTAMP '{t}' - INTERVAL 1 YEAR",
    )
    assert duck.ok and "Note" not in duck.content and "dialect" not in duck.data
    assert (n, last_day) == tuple(duck.data["rows"][0][:2])
    if n:
        assert abs(hours_ago - duck.data["rows"][0][2]) < 1e-3


def test_now_is_the_prediction_time_and_the_wall_clock_never_shows(episode: Any, case: Case) -> None:
    now = run(episode, "SELECT datetime('now') AS now")
    assert now.ok and now.data["rows"] == [[case.prediction_time]]
    assert case.prediction_time.isoformat(sep=" ") in now.content.split("\n", 1)[0]
    for sql in (
        "SELECT datetime(CURRENT_TIMESTAMP) AS now",
        "SELECT datetime(strftime('%Y-%m-%d %H:%M:%S'))",
        "SELECT datetime(strftime('%Y-%m-%d %H:%M:%S', CURRENT_TIMESTAMP))",
    ):
        clock = run(episode, sql)
        assert not clock.ok or clock.data["rows"] == [[case.prediction_time]], clock.content


def test_a_bare_column_runs_after_duckdb_rejects_it(episode: Any) -> None:
    result = run(episode, "SELECT itemid, max(valuenum) FROM labevents")
    assert result.ok and result.content.startswith("Note: read as SQLite"), result.content
    assert "arg_max" in result.content.split("\n", 1)[0]
    want = run(episode, "SELECT arg_max(itemid, valuenum), max(valuenum) FROM labevents")
    assert result.data["rows"] == want.data["rows"]
    ordered = run(episode, "SELECT count(*) FROM labevents ORDER BY charttime")
    assert ordered.ok and ordered.data["rows"] == run(episode, "SELECT count(*) FROM labevents").data["rows"]


VALID = [
    "SELECT count(*) / 2, count(*) // 2, CAST(avg(valuenum) AS INTEGER) FROM labevents",
    "SELECT valuenum FROM labevents ORDER BY valuenum NULLS LAST, labevent_id LIMIT 5",
    "SELECT strftime(charttime, '%Y-%m') AS m, count(*) FROM labevents GROUP BY m ORDER BY m",
    "SELECT strftime('%Y', charttime) AS y FROM labevents ORDER BY y LIMIT 3",
    "SELECT label FROM d_labitems WHERE label LIKE 'Glu%' ORDER BY label LIMIT 5",
    "SELECT date(charttime), charttime + INTERVAL 1 MONTH FROM labevents ORDER BY charttime LIMIT 3",
    "SELECT max(valuenum, 2) FROM labevents",
    "SELECT ifnull(valueuom, '-'), group_concat(DISTINCT flag) FROM labevents GROUP BY ALL ORDER BY ALL",
    "FROM labevents SELECT itemid, count(*) GROUP BY itemid ORDER BY 2 DESC, 1 LIMIT 3",
    "SELECT * EXCLUDE (comments) FROM labevents QUALIFY row_number() OVER (ORDER BY charttime) <= 2",
    "SELECT iif(valuenum > 1, 'high', 'low') AS k, count(*) FROM labevents GROUP BY k ORDER BY k",
]


@pytest.mark.parametrize("sql", VALID)
def test_valid_duckdb_runs_unchanged(episode: Any, case: Case, sql: str) -> None:
    plain = guard_sql(sql, _resolve, available="...", prediction_time=case.prediction_time,
                      dialect=lambda tree, text: None)  # fmt: skip
    hooked = guard_sql(sql, _resolve, available="...", prediction_time=case.prediction_time,
                       dialect=SqliteDialect(case.prediction_time))  # fmt: skip
    assert hooked == plain
    result = run(episode, sql)
    assert result.ok and "Note" not in result.content and "dialect" not in result.data, result.content
    direct = episode.execute(plain, max_rows=1000)
    assert [list(r) for r in direct.rows] == result.data["rows"]


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("SELECT datetime(charttime, '-' || valuenum || ' days') FROM labevents", ["modifier", "to_days"]),
        ("SELECT datetime(charttime, 'start of week') FROM labevents", ["start of week", "date_trunc"]),
        ("SELECT strftime('%Q', charttime) FROM labevents", ["%Q", "strftime(x, '%Y-%m')"]),
        ("SELECT julianday(charttime, 'next tuesday') FROM labevents", ["next tuesday", "INTERVAL"]),
        ("SELECT unknown_function(charttime) FROM labevents", ["unknown_function"]),
        ("SELECT no_such_column FROM labevents", ["no_such_column"]),
        (
            "SELECT strftime('%Y', charttime) - julianday(charttime, 'start of year', 'unixepoch') FROM labevents",
            ["unixepoch"],
        ),
        ("SELECT 'a' - 1 FROM labevents", ["-"]),
    ],
)
def test_errors_name_the_construct_never_a_python_class(episode: Any, sql: str, names: list[str]) -> None:
    result = run(episode, sql)
    assert not result.ok
    assert not _PYTHON_CLASS.search(result.content), result.content
    for name in names:
        assert name in result.content, result.content


def test_the_guard_names_sqlite_forms_when_no_dialect_reads_them() -> None:
    for sql, form in [
        ("SELECT datetime(charttime) FROM labevents", "CAST(x AS TIMESTAMP)"),
        ("SELECT datetime(charttime, '-1 year') FROM labevents", "INTERVAL 1 DAY"),
        ("SELECT strftime('%J', charttime) FROM labevents", "epoch(x) / 86400 + 2440587.5"),
    ]:
        with pytest.raises(ToolError) as info:
            guard_sql(sql, _resolve, available="...")
        assert form in info.value.message and not _PYTHON_CLASS.search(info.value.message), info.value.message


def test_sqlite_that_duckdb_would_misread_is_detected_before_it_runs(episode: Any) -> None:
    # sqlglot's DuckDB reading of datetime(x, '10:00') is CAST(CAST(x AS DATE) + TIME '10:00' ...):
    # valid DuckDB giving x's date at 10:00. SQLite means x + 10 hours; detection reads it so.
    result = run(episode, "SELECT datetime(TIMESTAMP '2100-01-01 08:30:00', '10:00') AS t")
    assert result.ok and str(result.data["rows"][0][0]) == "2100-01-01 18:30:00", result.content


def test_text_functions_read_a_timestamp_as_sqlite_text(episode: Any) -> None:
    result = run(
        episode, "SELECT count(*) FROM labevents WHERE substr(charttime, 1, 2) = '21' AND charttime LIKE '2%'"
    )
    assert result.ok and result.content.startswith("Note: read as SQLite"), result.content
    assert (
        result.data["rows"]
        == run(episode, "SELECT count(*) FROM labevents WHERE year(charttime) BETWEEN 2100 AND 2199").data["rows"]
    )


@pytest.mark.parametrize(("sql", "hint"), [
    ("SELECT label FROM d_labitems WHERE label LIKE 'creat%'", True),  # 'Creatinine' matches with ILIKE: say so
    ("SELECT label FROM d_labitems WHERE label LIKE 'zzcreat%'", False),  # attack20: no case would match: no hint
    ("SELECT label FROM d_labitems WHERE label NOT LIKE '%a%' AND false", False),
    ("SELECT label FROM d_labitems WHERE label ILIKE 'zzcreat%'", False),
    ("SELECT label FROM d_labitems WHERE label LIKE '123%'", False),  # no letter: case cannot matter
    ("SELECT label FROM d_labitems WHERE false", False),
])
def test_an_empty_like_result_says_like_is_case_sensitive(episode: Any, sql: str, hint: bool) -> None:
    """newcomer20: SQLite's LIKE ignores case, DuckDB's does not: ``label LIKE 'creat%'`` returned no rows silently."""
    result = run(episode, sql)
    assert result.ok and result.content.startswith("The query ran and returned no rows."), result.content
    assert ("LIKE is case-sensitive here" in result.content) is hint, result.content
    assert ("with ILIKE in place of LIKE this query returns rows" in result.content) is hint


@pytest.mark.parametrize("sql", [
    "SELECT julianday('now') - julianday(admittime) FROM admissions",
    "SELECT hadm_id, datetime(admittime, '+1 month') FROM admissions",
    "SELECT count(*), 7 / 2 FROM admissions WHERE admittime < datetime('now')",
    "SELECT hadm_id, max(admittime) FROM admissions",
    "SELECT date(admittime, '+1 day') FROM admissions UNION SELECT date(dischtime, '+1 day') FROM admissions",
])
def test_a_query_read_as_sqlite_keeps_sqlites_column_names(episode: Any, sql: str) -> None:
    """newcomer20: the header was the DuckDB translation's text (``(((epoch_ms(CAST(...`` for ``julianday``,
    ``arg_max(hadm_id, admittime)`` for a bare column); SQLite names a column by what the query wrote."""
    import sqlite3

    result = run(episode, sql)
    assert result.ok and result.data.get("dialect") == "sqlite", result.content
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE admissions (hadm_id INTEGER, admittime TEXT, dischtime TEXT)")
    expected = [d[0] for d in con.execute(sql).description]
    assert result.data["columns"] == expected


def test_sqlites_names_are_given_to_the_result_not_to_the_query(episode: Any) -> None:
    """attack20: as SQL aliases, SQLite's names became visible to WHERE and ORDER BY (DuckDB binds an output alias
    there), so ``WHERE "julianday(admittime)" > ...`` filtered on the value where it was an error before (and a
    string constant in SQLite); the result's columns are renamed after the query ran instead."""
    where = run(episode, 'SELECT hadm_id, julianday(admittime) FROM admissions WHERE "julianday(admittime)" > 0')
    assert not where.ok and where.error_kind == "sql_error", where.content
    star = run(episode, "SELECT *, julianday(admittime) FROM admissions")
    assert star.ok and star.data["columns"][:2] == ["subject_id", "hadm_id"]  # a * keeps DuckDB's names
