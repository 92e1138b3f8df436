"""The SQL guard's verdicts are kept by text, cutoff and tables: never one episode's answer in another's.

A model sends the same SQL text to many episodes; the kept verdict (the SQL to run, the tables it
reads, or the refusal) must be the one each episode would have computed itself, and the rows always
come from the episode that asked.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from clinseek.episode import Episode, EpisodeKey, build_episode, open_store_reader
from clinseek.tools import ToolContext, call_tool
from clinseek.tools._sqlcache import guard_verdict
from policy.crafted import OTHER, S, T, build_crafted_store


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_crafted_store(tmp_path_factory.mktemp("sql_cache") / "crafted.duckdb")


@pytest.fixture
def episodes(small_store: Path) -> Iterator[dict[str, Episode]]:
    """Two patients at the same cutoff, one of them also a day earlier, and one with a candidate table."""
    with open_store_reader(small_store) as reader:
        made = {
            "s": build_episode(reader, EpisodeKey(S, T)),
            "other": build_episode(reader, EpisodeKey(OTHER, T)),
            "s_earlier": build_episode(reader, EpisodeKey(S, T - dt.timedelta(days=1))),
            "s_candidates": build_episode(reader, EpisodeKey(S, T), candidates={"labevents": ["Creatinine"]}),
        }
        try:
            yield made
        finally:
            for ep in made.values():
                ep.close()


def _run(ep: Episode, sql: str) -> tuple[bool, str, list[list[object]]]:
    result = asyncio.run(call_tool(ToolContext(ep), "ehr.run_sql_query", {"sql_query": sql}))
    return result.ok, result.content, result.data.get("rows", [])


def test_the_same_text_in_two_patients_episodes_reads_each_ones_rows(episodes: dict[str, Episode]) -> None:
    guard_verdict.cache_clear()
    sql = "SELECT DISTINCT subject_id FROM labevents"
    for _ in range(2):  # the second round hits the kept verdicts
        assert _run(episodes["s"], sql)[2] == [[S]]
        assert _run(episodes["other"], sql)[2] == [[OTHER]]
    assert guard_verdict.cache_info().hits >= 2


def test_sqlite_now_is_each_episodes_own_cutoff(episodes: dict[str, Episode]) -> None:
    sql = "SELECT datetime('now') AS now"
    assert _run(episodes["s"], sql)[2] == [[T]]
    assert _run(episodes["s_earlier"], sql)[2] == [[T - dt.timedelta(days=1)]]
    assert _run(episodes["s"], sql)[2] == [[T]]


def test_the_clock_refusal_quotes_each_episodes_cutoff(episodes: dict[str, Episode]) -> None:
    sql = "SELECT now()"
    for name, cutoff in (("s", T), ("s_earlier", T - dt.timedelta(days=1)), ("s", T)):
        ok, content, _ = _run(episodes[name], sql)
        assert not ok and cutoff.isoformat(sep=" ") in content


def test_a_table_one_episode_has_and_another_lacks(episodes: dict[str, Episode]) -> None:
    sql = "SELECT candidate FROM labevents_candidates"
    for _ in range(2):
        ok, _, rows = _run(episodes["s_candidates"], sql)
        assert ok and rows == [["Creatinine"]]
        ok, content, _ = _run(episodes["s"], sql)
        assert not ok and "no table 'labevents_candidates'" in content
        assert "candidates.labevents_candidates" not in content  # the list of tables is this episode's own


def test_a_kept_refusal_is_a_new_error_each_time(episodes: dict[str, Episode]) -> None:
    sql = "DROP TABLE labevents"
    first = _run(episodes["s"], sql)
    second = _run(episodes["other"], sql)
    assert not first[0] and first[1] == second[1]
