"""newcomer20: a misspelled table name got the list of every table but no suggestion (task names got one)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import clinseek


def _patient(store: Path) -> tuple[int, str]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        subject_id, last = con.execute(
            "SELECT subject_id, max(dischtime) FROM hosp.admissions GROUP BY 1 ORDER BY 1 LIMIT 1").fetchone()
    finally:
        con.close()
    return subject_id, str(last)


@pytest.mark.parametrize(("tool", "args"), [
    ("ehr.run_sql_query", {"sql_query": "SELECT * FROM labevent"}),
    ("ehr.get_latest_records", {"table_name": "labevent"}),
    ("ehr.get_records_by_time", {"table_name": "hosp.labevent", "start_time": "2100-01-01 00:00:00",
                                 "end_time": "2200-01-01 00:00:00"}),
])
def test_a_misspelled_table_gets_the_closest_name(synthetic_store: Path, tool: str, args: dict[str, str]) -> None:
    subject_id, cutoff = _patient(synthetic_store)
    with clinseek.open_episode(synthetic_store, subject_id, cutoff) as episode:
        reply = episode.call_tool(tool, args)
        unrelated = episode.call_tool(tool, {**args, **{k: v.replace("labevent", "zzqqx") for k, v in args.items()}})
    assert reply.result.error_kind == "unknown_table"
    assert "(did you mean 'labevents'?); available: " in reply.text, reply.text
    assert unrelated.result.error_kind == "unknown_table" and "did you mean" not in unrelated.text, unrelated.text
