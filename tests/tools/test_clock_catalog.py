"""The wall clock over the whole DuckDB catalog: every function that can run without arguments is
either refused as ``clock`` (or another refusal) or returns nothing that tells today's date or time.

The functions come from the installed DuckDB's ``duckdb_functions()``, so a DuckDB upgrade that
adds a clock reader fails here until :func:`clinseek.episode.clock_names` covers it.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import Any

import anyio
import duckdb
import pytest

from clinseek.episode import SQL_DATETIME_VALUES, clock_names
from clinseek.tools import Limits, ToolContext, ToolResult, call_tool

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DAY_S = 86_400


def _catalog() -> list[tuple[str, str, int, str | None, str | None]]:
    con = duckdb.connect()
    try:
        return con.execute(
            "SELECT DISTINCT function_name, function_type, len(parameters), return_type, stability "
            "FROM duckdb_functions() ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()


def _zero_argument_calls() -> list[str]:
    """Every scalar, aggregate and macro of the installed DuckDB that accepts no argument, as a call."""
    names = {
        name
        for name, kind, params, *_ in _catalog()
        if kind in ("scalar", "aggregate", "macro") and params == 0 and _IDENTIFIER.match(name)
    }
    return sorted(f"{n}()" for n in names)


def _bare_values() -> list[str]:
    names = {n for n, _, params, *_ in _catalog() if params == 0 and _IDENTIFIER.match(n)}
    return sorted({*SQL_DATETIME_VALUES, *names})


def run(ep: Any, sql: str) -> ToolResult:
    ctx = ToolContext(episode=ep, limits=Limits(sql_timeout_s=5))
    return anyio.run(call_tool, ctx, "ehr.run_sql_query", {"sql_query": sql})


def _near_now(seconds: float) -> bool:
    now = dt.datetime.now(dt.UTC).timestamp()
    return abs(seconds - now) < 2 * _DAY_S


def reveals_clock(value: Any) -> bool:
    """Whether a result value tells today's date or time (as a date/time, an epoch, a UUIDv1/6/7 or text)."""
    today = dt.datetime.now(dt.UTC)
    if isinstance(value, list | tuple):
        return any(reveals_clock(v) for v in value)
    if isinstance(value, dict):
        return any(reveals_clock(v) for v in (*value.keys(), *value.values()))
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return _near_now(aware.timestamp())
    if isinstance(value, dt.date):
        return abs((value - today.date()).days) <= 2
    if isinstance(value, dt.time):
        return True  # a time of day with no date is a clock reading (no MIMIC function makes one from nothing)
    if isinstance(value, uuid.UUID):
        return value.version in (1, 6, 7)
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return any(_near_now(value / scale) for scale in (1, 1e3, 1e6, 1e9)) or abs(value - today.timestamp() / _DAY_S) < 2
    if isinstance(value, str):
        days = [today.date() + dt.timedelta(days=d) for d in (-1, 0, 1)]
        if any(d.isoformat() in value or d.strftime("%Y%m%d") in value for d in days):
            return True
        try:
            return reveals_clock(uuid.UUID(value))
        except ValueError:
            return False
    return False


def _check(ep: Any, sql: str) -> str:
    """``"refused:<kind>"`` or ``"ran"``; fails if a result that ran tells the clock."""
    result = run(ep, sql)
    if not result.ok:
        return f"refused:{result.error_kind}"
    rows = result.data.get("rows", []) if result.data else []
    assert not reveals_clock(rows), (sql, rows)
    return "ran"


def test_every_zero_argument_function_is_refused_or_tells_no_time(episode: Any) -> None:
    calls = _zero_argument_calls()
    assert len(calls) > 40  # the catalog was read
    outcomes = {call: _check(episode, f"SELECT {call}") for call in calls}
    for name in clock_names().functions:
        assert outcomes.get(f"{name}()", "refused:clock") == "refused:clock", name
    assert sum(o == "ran" for o in outcomes.values()) > 20  # pi(), version() ... still run (random() and uuid() are refused as not_repeatable)


def test_every_bare_name_is_refused_or_tells_no_time(episode: Any) -> None:
    for name in _bare_values():
        for sql in (f'SELECT "{name}"', f"SELECT {name}"):
            outcome = _check(episode, sql)
            if name in clock_names().values:
                assert outcome == "refused:clock", sql


def test_the_derived_names_hold_every_time_reader_of_the_catalog() -> None:
    names = clock_names()
    assert names.duckdb_version == duckdb.__version__
    readers = {
        name.lower()
        for name, kind, params, returns, stability in _catalog()
        if kind == "scalar" and params == 0 and stability != "CONSISTENT" and re.match(r"(DATE|TIME)", returns or "")
    }
    assert readers and readers <= names.functions
    assert {"now", "today", "uuidv7", "ago", "pg_postmaster_start_time"} <= names.functions
    assert {"uuid", "gen_random_uuid", "random", "current_database"}.isdisjoint(names.functions)
    assert set(SQL_DATETIME_VALUES) <= names.values


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT uuid_extract_timestamp(uuidv7())",
        "SELECT age(admittime) FROM admissions",
        "SELECT ago(INTERVAL 1 DAY)",
        "SELECT pg_postmaster_start_time()",
        'SELECT "current_date"',
        "SELECT system.main.now()",
        "SELECT main.today()",
        "SELECT date_diff('day', admittime, get_current_timestamp()) FROM admissions",
        "SELECT list_transform([1], x -> transaction_timestamp())",
        "SELECT CURRENT_TIMESTAMP(3)",
    ],
)
def test_clock_routes_are_refused_with_the_prediction_time(episode: Any, sql: str) -> None:
    result = run(episode, sql)
    assert not result.ok and result.error_kind == "clock", result.content
    assert f"TIMESTAMP '{episode.key.prediction_time.isoformat(sep=' ')}'" in result.content


def test_two_argument_age_runs_against_the_prediction_time(episode: Any) -> None:
    cutoff = episode.key.prediction_time.isoformat(sep=" ")
    result = run(episode, f"SELECT age(TIMESTAMP '{cutoff}', TIMESTAMP '2100-01-01') AS a")
    assert result.ok, result.content
    assert not reveals_clock(result.data["rows"])
