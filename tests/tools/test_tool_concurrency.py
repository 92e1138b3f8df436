"""Tool calls on many episodes of different patients at once (asyncio tasks and threads) never mix rows."""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio

from clinseek.store import connect_store
from clinseek.tools import Limits, ToolContext, call_tool

N_PATIENTS = 6
ROUNDS = 5


def _keys(store: Path) -> list[Any]:
    from clinseek.episode import EpisodeKey

    con = connect_store(store)
    try:
        rows = con.execute(
            "SELECT subject_id, max(charttime) + INTERVAL 1 SECOND FROM hosp.labevents "
            "GROUP BY subject_id ORDER BY count(*) DESC, subject_id LIMIT ?",
            [N_PATIENTS],
        ).fetchall()
    finally:
        con.close()
    return [EpisodeKey(int(s), t) for s, t in rows]


async def _hammer(ctx: ToolContext) -> set[int]:
    seen: set[int] = set()
    for _ in range(ROUNDS):
        q = await call_tool(
            ctx, "ehr.run_sql_query", {"sql_query": "SELECT DISTINCT subject_id FROM labevents"}
        )
        seen |= {r[0] for r in q.data["rows"]}
        recs = await call_tool(
            ctx,
            "ehr.get_records_by_time",
            {"table_name": "labevents", "start_time": "1900-01-01", "end_time": "2400-01-01"},
        )
        col = recs.data["columns"].index("subject_id")
        seen |= {r[col] for r in recs.data["rows"]}
        await anyio.sleep(0)
    return seen


def test_concurrent_episodes_never_see_each_other(demo_store: Path) -> None:
    from clinseek.episode import build_episode

    keys = _keys(demo_store)
    episodes = [build_episode(demo_store, k) for k in keys]
    try:
        contexts = [ToolContext(ep, Limits(max_rows=50)) for ep in episodes]
        results: dict[int, set[int]] = {}

        async def main() -> None:
            async def one(ctx: ToolContext) -> None:
                results[ctx.episode.key.subject_id] = await _hammer(ctx)

            async with anyio.create_task_group() as tg:
                for ctx in contexts:
                    tg.start_soon(one, ctx)

        anyio.run(main)
        assert results == {k.subject_id: {k.subject_id} for k in keys}

        with ThreadPoolExecutor(max_workers=N_PATIENTS) as pool:
            seen = list(pool.map(lambda c: anyio.run(_hammer, c), contexts))
        assert seen == [{k.subject_id} for k in keys]
    finally:
        for ep in episodes:
            ep.close()


def test_episodes_of_one_patient_at_two_times_differ(demo_store: Path) -> None:
    from clinseek.episode import EpisodeKey, build_episode

    key = _keys(demo_store)[0]
    early = EpisodeKey(key.subject_id, key.prediction_time - dt.timedelta(days=365))
    with build_episode(demo_store, key) as late_ep, build_episode(demo_store, early) as early_ep:
        sql = {"sql_query": "SELECT max(charttime) FROM labevents"}
        late_max = anyio.run(call_tool, ToolContext(late_ep), "ehr.run_sql_query", sql).data["rows"][0][0]
        early_max = anyio.run(call_tool, ToolContext(early_ep), "ehr.run_sql_query", sql).data["rows"][0][0]
        assert late_max < key.prediction_time
        assert early_max is None or early_max < early.prediction_time
