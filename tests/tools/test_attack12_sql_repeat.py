"""Attack (session 12, sqlwarm12's per-call caches and optimizer settings): the same ``ehr.run_sql_query`` asked
twice in one episode gives the same text (cold, then warm: loaded tables remembered, shapes kept, one-row path).

Sampling was the exception (found by this attack, main too): ``USING SAMPLE`` drew other rows on every call. The
guard now refuses what cannot repeat (a sample without a seed, ``random()``, ``uuid()``, ...) and a seeded sample
gives the same rows every time (the sealed database runs one thread).
"""

from __future__ import annotations

from typing import Any

import pytest

from clinseek.episode import clock_names, volatile_names
from clinseek.errors import ToolError
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
    # a sample with a seed repeats (the sealed database runs one thread); without one it is refused (below)
    "SELECT labevent_id FROM labevents USING SAMPLE 50 PERCENT (bernoulli, 7) ORDER BY 1",
    "SELECT labevent_id FROM labevents TABLESAMPLE reservoir(5 ROWS) REPEATABLE (3) ORDER BY 1",
]


def _run(episode: Any, sql: str) -> tuple[bool, str]:
    result = get_tool("ehr.run_sql_query").fn(ToolContext(episode), sql_query=sql)
    return result.ok, result.content


@pytest.mark.parametrize("sql", _REPEATABLE)
def test_the_same_query_twice_gives_the_same_text(episode: Any, sql: str) -> None:
    first = _run(episode, sql)
    assert first[0], first[1]
    assert _run(episode, sql) == first


@pytest.mark.parametrize("sql", [
    "SELECT labevent_id FROM labevents USING SAMPLE 50 PERCENT (bernoulli)",
    "SELECT labevent_id FROM labevents TABLESAMPLE 10 ROWS",
    "SELECT * FROM labevents USING SAMPLE 5",
    "SELECT labevent_id FROM labevents ORDER BY random() LIMIT 3",
    "SELECT gen_random_uuid(), uuid(), uuidv4()",
    "SELECT setseed(0.5)",
    "SELECT labevent_id FROM (SELECT labevent_id, random() AS r FROM labevents) WHERE r < 0.5",
])
def test_what_cannot_repeat_is_refused_with_the_way_out(episode: Any, sql: str) -> None:
    with pytest.raises(ToolError) as refused:
        _run(episode, sql)
    assert refused.value.kind == "not_repeatable"
    assert "seed" in refused.value.message, refused.value.message


def test_every_function_duckdb_marks_volatile_is_refused(episode: Any) -> None:
    """The class, not the examples: every volatile function of the installed DuckDB's catalog (the wall clock's are
    refused as ``clock`` first)."""
    names = volatile_names()
    assert {"random", "uuid", "setseed", "nextval", "current_query_id"} <= names
    for name in sorted(names):
        with pytest.raises(ToolError) as refused:
            _run(episode, f'SELECT "{name}"() AS v')
        expected = "clock" if f"{name}()" in clock_names().functions or name in clock_names().functions else "not_repeatable"
        assert refused.value.kind == expected, (name, refused.value.kind, refused.value.message)
