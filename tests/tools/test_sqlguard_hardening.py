"""Hardening found by an adversarial tester: deep nesting, huge values, the wall clock, long echoes."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import anyio
import pytest

from clinseek.errors import ToolError
from clinseek.tools import Limits, ToolContext, ToolResult, call_tool, guard_sql

_PT = dt.datetime(2150, 3, 4, 5, 6, 7)


def _resolve(db: str | None, name: str) -> tuple[str, str] | None:
    return ("hosp", name) if name in {"labevents", "patients", "admissions"} else None


def _guard(sql: str) -> str:
    return guard_sql(sql, _resolve, available="...", prediction_time=_PT)


def run(ep: Any, name: str, limits: Limits | None = None, **args: Any) -> ToolResult:
    ctx = ToolContext(episode=ep, limits=limits or Limits())
    return anyio.run(call_tool, ctx, name, args)


@pytest.mark.parametrize("depth", [300, 2000])
def test_deeply_nested_query_is_a_syntax_error(depth: int) -> None:
    with pytest.raises(ToolError) as info:
        _guard("SELECT " + "(" * depth + "1" + ")" * depth)
    assert info.value.kind == "sql_syntax"
    assert len(info.value.message) < 300


def test_overlong_sql_is_a_bad_argument() -> None:
    with pytest.raises(ToolError) as info:
        _guard("SELECT 1" + " " * 20_001)
    assert info.value.kind == "bad_argument"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT list(range(1000000000))",
        "SELECT * FROM range(1000000000)",
        "SELECT * FROM generate_series(1, 2000000)",
        "SELECT generate_series(0, 5000000, 2)",
        "SELECT unnest(range(0, 5000000))",
        "SELECT unnest(generate_series(1, labevent_id)) FROM labevents",
        "SELECT * FROM range(TIMESTAMP '2100-01-01', TIMESTAMP '2200-01-01', INTERVAL 1 SECOND)",
        "SELECT repeat('x', 1000000000)",
        "SELECT repeat('x', valuenum::INT) FROM labevents",
        "SELECT lpad('x', 1000000000, 'y')",
        "SELECT rpad('x', 1000000000)",
        "SELECT list_resize([1], 1000000000)",
        "SELECT array_resize([1], 1e9)",
        "SELECT bar(1, 0, 1, 1000000000)",
        "SELECT printf('%999999999d', 1)",
        "SELECT printf('%-0999999999d', 1)",
        "SELECT printf('%.999999999f', 1.5)",
        "SELECT printf('%*d', 999999999, 1)",
        "SELECT printf('%5.*f', 999999999, 1.5)",
        "SELECT printf(comments, 1) FROM labevents",
        "SELECT format('{:>999999999}', 1)",
        "SELECT format('{0:.999999999f}', 1.5)",
        "SELECT format('{:{}}', 1, 999999999)",
        "SELECT format(value, 1) FROM labevents",
    ],
)
def test_huge_value_builders_are_refused(sql: str) -> None:
    with pytest.raises(ToolError) as info:
        _guard(sql)
    assert info.value.kind == "too_large"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM range(10)",
        "SELECT unnest(range(0, 5))",
        "SELECT * FROM generate_series(TIMESTAMP '2150-01-01', TIMESTAMP '2150-01-31', INTERVAL 1 DAY)",
        "SELECT repeat('-', 10), lpad('7', 3, '0'), string_split('a,b', ',')",
        "SELECT printf('%05d|%-8s|%.2f|%%|%x', 7, 'ab', 1.5, 255)",
        "SELECT format('{} {:>8} {:0>5} {:.3f} {{999999999}} {:,}', 'a', 'b', 7, 1.5, 1234567)",
    ],
)
def test_small_value_builders_pass(sql: str) -> None:
    assert _guard(sql).startswith("SELECT")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT now()",
        "SELECT current_timestamp",
        "SELECT current_date",
        "SELECT today()",
        "SELECT get_current_timestamp()",
        "SELECT * FROM labevents WHERE charttime > now() - INTERVAL 1 DAY",
    ],
)
def test_wall_clock_is_refused_with_the_prediction_time(sql: str) -> None:
    with pytest.raises(ToolError) as info:
        _guard(sql)
    assert info.value.kind == "clock"
    assert "TIMESTAMP '2150-03-04 05:06:07'" in info.value.message


def test_explain_is_refused_without_sqlglot_warnings(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), pytest.raises(ToolError) as info:
        _guard("EXPLAIN SELECT 1")
    assert info.value.kind in ("read_only", "sql_syntax")
    assert not [r for r in caplog.records if r.name.startswith("sqlglot")]


def test_huge_range_is_refused_quickly_on_a_real_episode(episode: Any) -> None:
    result = run(
        episode, "ehr.run_sql_query", Limits(sql_timeout_s=3), sql_query="SELECT list(range(1000000000))"
    )
    assert not result.ok and result.error_kind == "too_large"  # refused before it runs (not a timeout)


def test_deep_nesting_is_a_tool_error_on_a_real_episode(episode: Any) -> None:
    result = run(episode, "ehr.run_sql_query", sql_query="SELECT " + "(" * 500 + "1" + ")" * 500)
    assert not result.ok and result.error_kind == "sql_syntax"


def test_clock_message_gives_this_episodes_prediction_time(episode: Any) -> None:
    result = run(episode, "ehr.run_sql_query", sql_query="SELECT now()")
    assert not result.ok and result.error_kind == "clock"
    assert episode.key.prediction_time.isoformat(sep=" ") in result.content


def test_long_keyword_is_echoed_short(episode: Any) -> None:
    keyword = "zq" * 10_000
    result = run(episode, "ehr.get_records_by_keyword", table_name="labevents", keyword=keyword)
    assert len(result.content) < 1_000
    assert "chars]" in result.content


def test_one_all_null_row_is_shown_as_a_row(episode: Any) -> None:
    result = run(episode, "ehr.run_sql_query", sql_query="SELECT NULL AS dod, NULL AS x")
    assert result.ok and result.data["rows"] == [[None, None]]
    assert "(1 row, all values NULL)" in result.content


def test_column_names_mark_joined_labels(episode: Any) -> None:
    result = run(episode, "ehr.get_column_names", table_name="labevents")
    assert "label" in result.data["joined_labels"] and "label" not in result.data["sql_columns"]
    assert "JOIN hosp.d_labitems USING (itemid)" in result.content
    joined = run(
        episode,
        "ehr.run_sql_query",
        sql_query="SELECT label FROM labevents JOIN hosp.d_labitems USING (itemid) LIMIT 1",
    )
    assert joined.ok, joined.content
    for column in result.data["sql_columns"]:
        probe = run(episode, "ehr.run_sql_query", sql_query=f"SELECT {column} FROM labevents LIMIT 1")
        assert probe.ok, (column, probe.content)
