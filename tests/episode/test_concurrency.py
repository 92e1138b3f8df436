"""Many episodes of different patients used at once never see each other's rows."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import anyio
import anyio.to_thread

from clinseek.episode import Episode, EpisodeKey, build_episode
from policy.crafted import OTHER, S, T

CHECKS = [
    "SELECT DISTINCT subject_id FROM patients",
    "SELECT DISTINCT subject_id FROM admissions",
    "SELECT DISTINCT subject_id FROM labevents",
    "SELECT DISTINCT subject_id FROM diagnoses_icd",
]


def _run(store: Path, subject_id: int, rounds: int) -> set[int]:
    seen: set[int] = set()
    with build_episode(store, EpisodeKey(subject_id, T)) as ep:
        for _ in range(rounds):
            for sql in CHECKS:
                seen |= {r[0] for r in ep.execute(sql).rows}
    return seen


def test_threads_building_and_querying_at_once(small_store: Path) -> None:
    subjects = [S, OTHER] * 4
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda s: (s, _run(small_store, s, 3)), subjects))
    for subject_id, seen in results:
        assert seen == {subject_id}


def test_one_episode_shared_by_threads(small_store: Path) -> None:
    with build_episode(small_store, EpisodeKey(OTHER, T)) as ep:
        with ThreadPoolExecutor(max_workers=6) as pool:
            found = list(pool.map(lambda sql: ep.execute(sql).rows, CHECKS * 10))
    assert all(rows in ([(OTHER,)], []) for rows in found)


def test_asyncio_tasks(small_store: Path) -> None:
    async def main() -> dict[int, set[int]]:
        seen: dict[int, set[int]] = {}

        async def one(i: int, subject_id: int) -> None:
            key = EpisodeKey(subject_id, T if i % 2 else datetime(2150, 6, 11))
            ep: Episode = await anyio.to_thread.run_sync(build_episode, small_store, key)
            try:
                for sql in CHECKS:
                    result = await anyio.to_thread.run_sync(ep.execute, sql)
                    seen.setdefault(subject_id, set()).update(r[0] for r in result.rows)
            finally:
                await anyio.to_thread.run_sync(ep.close)

        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(one, i, (S, OTHER)[i % 2])
        return seen

    seen = anyio.run(main, backend="asyncio")
    assert seen == {S: {S}, OTHER: {OTHER}}
