"""The ``ehr.run_sql_query`` truncation notice gives the total row count and the exact next page
(``LIMIT``/``OFFSET``) whichever cap cut first; no text a model sees carries terminal escape codes."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest

from clinseek.tools import Limits, ToolContext, ToolResult, call_tool

_PAGE = re.compile(r"LIMIT (\d+) OFFSET (\d+)\.\]$")
ROWS = "SELECT i, repeat(chr(65 + CAST(i % 26 AS INTEGER)), 40) AS pad FROM range(1000) t(i) ORDER BY i"


def run(ep: Any, sql: str, limits: Limits) -> ToolResult:
    return anyio.run(call_tool, ToolContext(episode=ep, limits=limits), "ehr.run_sql_query", {"sql_query": sql})


def _page(result: ToolResult) -> tuple[int, int]:
    found = _PAGE.search(result.content)
    assert found, result.content[-400:]
    return int(found.group(1)), int(found.group(2))


@pytest.mark.parametrize(
    ("limits", "why"),
    [(Limits(max_rows=50), "the row limit"), (Limits(max_tool_chars=2_000), "the output character limit")],
)
def test_following_the_notice_continues_exactly_where_the_output_stopped(episode: Any, limits: Limits,
                                                                         why: str) -> None:
    seen: list[int] = []
    sql, expected = ROWS, 1000
    for page in range(3):
        result = run(episode, sql, limits)
        assert result.ok
        rows = [r[0] for r in result.data["rows"]]
        if not result.truncated:  # a whole page (its own LIMIT): the rows continue where the last one stopped
            assert page > 0 and rows[0] == len(seen)
            break
        assert result.data["row_count"] == expected  # the total of the query as run
        assert f"of {expected} rows ({why})" in result.content
        shown = int(re.search(r"showing the first (\d+) of", result.content).group(1))  # type: ignore[union-attr]
        seen += rows[:shown]
        size, offset = _page(result)
        assert offset == len(seen)  # the next page starts right after the last row shown
        sql, expected = f"{ROWS} LIMIT {size} OFFSET {offset}", size
    assert seen == list(range(len(seen)))


def test_a_query_with_its_own_limit_and_offset_gets_the_rest_of_its_window(episode: Any) -> None:
    result = run(episode, f"{ROWS} LIMIT 120 OFFSET 10", Limits(max_tool_chars=2_000))
    assert result.data["row_count"] == 120
    shown = int(re.search(r"showing the first (\d+) of 120", result.content).group(1))  # type: ignore[union-attr]
    assert _page(result) == (120 - shown, 10 + shown)


def test_a_syntax_error_reaches_the_model_without_terminal_codes(episode: Any) -> None:
    result = run(episode, "SELECT (1", Limits())
    assert not result.ok and result.error_kind == "sql_syntax"
    assert "\x1b" not in result.content and "SELECT (1" in result.content


def test_escape_codes_in_data_are_removed(episode: Any) -> None:
    result = run(episode, "SELECT chr(27) || '[31mred' || chr(27) || '[0m' AS v", Limits())
    assert result.ok and "\x1b" not in result.content and "red" in result.content
