"""Attack (session 12, sqlwarm12's per-call caches and optimizer settings): the same ``ehr.run_sql_query`` asked
twice in one episode gives the same text (cold, then warm: loaded tables remembered, shapes kept, one-row path).

Sampling is the exception today (main too, not a regression of a branch): ``USING SAMPLE`` draws other rows on
every call, so a model asking for a sample twice sees two different answers (xfail, not strict: a draw can repeat).
"""

from __future__ import annotations

from typing import Any

import pytest

from clinseek.tools import ToolContext, get_tool

_REPEATABLE = [
    "SELECT count(*) AS n FROM labevents",
    "SELECT itemid, count(*) AS n FROM labevents GROUP BY itemid ORDER BY itemid",
    "SELECT DISTINCT itemid FROM labevents ORDER BY 1",
    "SELECT * FROM (SELECT l.*, row_number() OVER (PARTITION BY itemid ORDER BY charttime DESC, labevent_id) AS rn "
    "FROM labevents l) WHERE rn = 1 ORDER BY itemid",
    "WITH x AS (SELECT itemid, avg(valuenum) AS a FROM labevents GROUP BY itemid) "
    "SELECT x1.itemid, x1.a FROM x x1 JOIN x x2 USING (itemid) ORDER BY 1",
    "SELECT max(valuenum) AS hi, min(charttime) AS first FROM labevents",
    "SELECT count(*) FROM labevents l1 JOIN labevents l2 ON l1.itemid = l2.itemid AND l1.charttime < l2.charttime",
]


def _run(episode: Any, sql: str) -> tuple[bool, str]:
    result = get_tool("ehr.run_sql_query").fn(ToolContext(episode), sql_query=sql)
    return result.ok, result.content


@pytest.mark.parametrize("sql", _REPEATABLE)
def test_the_same_query_twice_gives_the_same_text(episode: Any, sql: str) -> None:
    first = _run(episode, sql)
    assert first[0], first[1]
    assert _run(episode, sql) == first


@pytest.mark.xfail(reason="USING SAMPLE draws other rows on every call (main too): a repeated question, another answer")
def test_a_sample_asked_twice_is_the_same_sample(episode: Any) -> None:
    sql = "SELECT labevent_id FROM labevents USING SAMPLE 50 PERCENT (bernoulli)"
    first = _run(episode, sql)
    assert first[0], first[1]
    assert _run(episode, sql) == first
