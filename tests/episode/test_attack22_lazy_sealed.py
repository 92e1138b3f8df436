"""Adversarial review of the lazily taken sealed database (issue 22, commit 11d8e73).

An episode takes its sealed database from the reader's pool on its first query (``take`` in ``_build.py``) and a
run creates databases ahead on a thread of its own (``SealedPool.prepare``). Each test is one attack on that: a
first query that fails half-way, a close racing it, the prepare thread at the process's exit, the pool's
``_live`` accounting through failures.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clinseek.episode import EpisodeKey, _sealed, build_episode, open_store_reader
from clinseek.errors import EpisodeError
from clinseek.tools import ToolContext, call_tool
from policy.crafted import S, T

_BIG = [f"candidate number {i} " * 20 for i in range(300_000)]
"""A candidate list of ~130 MB of text: more than a 64MB episode database holds."""


def _live(pool: _sealed.SealedPool) -> int:
    return sum(pool._live.values())


def _idle(pool: _sealed.SealedPool) -> int:
    return sum(map(len, pool._idle.values()))


def test_candidates_that_do_not_fit_are_the_episodes_error_not_the_models_sql_error(small_store: Path) -> None:
    """The candidate lists are copied in by the first query now (not at build): a list too big for the episode's
    ``memory_limit`` must still be an infrastructure error (``EpisodeError`` naming the table and the limit), never
    DuckDB's out-of-memory text shown to the model as an ``sql_error`` of its own query; the database taken goes back
    wiped and the pool's count stays right."""
    with open_store_reader(small_store) as reader:
        pool = reader.sealed
        ep = build_episode(reader, EpisodeKey(S, T), candidates={"big": _BIG}, memory_limit="64MB")
        live = _live(pool)
        with pytest.raises(EpisodeError, match=r"candidates\.big_candidates.*memory_limit"):
            ep.execute("SELECT 1", tables=())
        with pytest.raises(EpisodeError, match=r"candidates\.big_candidates"):
            asyncio.run(call_tool(ToolContext(ep), "ehr.run_sql_query",
                                  {"sql_query": "SELECT count(*) FROM labevents", "subject_id": S}))
        with pytest.raises(EpisodeError, match=r"candidates\.big_candidates"):
            asyncio.run(call_tool(ToolContext(ep), "ehr.get_candidates_by_keyword",
                                  {"table_name": "big_candidates", "keyword": "7"}))
        assert ep._con is None and ep._loader.__self__.sealed is None  # type: ignore[union-attr]
        assert _live(pool) == live and _idle(pool) == live  # every database taken came back (wiped) or was closed
        ep.close()
        for sealed in pool._idle["64MB"]:
            assert _sealed.leftovers(sealed.con) == [_sealed._SLOT_ROW]  # no half-copied candidate list kept


_EXIT = """
import sys, threading
from clinseek.episode._sealed import SealedPool
pool = SealedPool()
thread = threading.Thread(target=pool.prepare, args=(64, "1GB"), daemon=True)
thread.start()
while not pool._live.get("1GB"):
    pass
pool.close()
"""


def test_a_process_that_closes_its_pool_while_databases_are_prepared_exits_cleanly(tmp_path: Path) -> None:
    """``SealedPool.prepare`` runs on a daemon thread (``Executor.reader``): a short run's process that closes its
    reader and exits while that thread is inside ``duckdb.connect`` must exit with 0, not abort (SIGABRT, "FATAL:
    exception not rethrown": the interpreter ends a daemon thread inside DuckDB's C++ code). ``close`` returns only
    once no database is being created."""
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", _EXIT], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]


def test_close_waits_for_a_database_being_prepared_and_counts_stay_right() -> None:
    pool = _sealed.SealedPool()
    thread = threading.Thread(target=pool.prepare, args=(64, "64MB"), daemon=True)
    thread.start()
    while not pool._live.get("64MB"):
        time.sleep(0.001)
    pool.close()
    assert not pool._preparing  # nothing is being created once close returned
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert pool._live["64MB"] == 0 and pool._idle == {}


_LONG = "SELECT sum(hash(i)) FROM range(20000000000) t(i)"
"""A query that runs far past the time limits below (one DuckDB thread)."""


def test_a_close_during_the_first_query_stops_it_before_its_statement(
    small_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``close`` interrupts the running statement; while the first query is still taking its database (``take``:
    creating one costs ~30 ms, more on a loaded machine) there is none to interrupt. The query must then not start
    its statement (it would hold the database, and the close, until its time limit), and the database goes back."""
    with open_store_reader(small_store) as reader:
        pool = reader.sealed
        acquire = pool.acquire
        taking = threading.Event()

        def slow(memory_limit: str, **options: bool) -> _sealed.Sealed:
            taking.set()
            time.sleep(0.5)
            return acquire(memory_limit, **options)

        monkeypatch.setattr(pool, "acquire", slow)
        ep = build_episode(reader, EpisodeKey(S, T))
        failed: list[BaseException] = []

        def first() -> None:
            try:
                ep.execute(_LONG, tables=(), timeout_s=60)
            except BaseException as err:  # what the query raised is the test's result
                failed.append(err)

        thread = threading.Thread(target=first)
        thread.start()
        assert taking.wait(10)
        started = time.monotonic()
        ep.close()
        thread.join(timeout=60)
        assert time.monotonic() - started < 10
        assert len(failed) == 1 and isinstance(failed[0], EpisodeError) and "closed" in str(failed[0])
        assert _live(pool) == _idle(pool)  # the database taken went back


def test_first_queries_from_threads_of_one_episode_take_one_database(small_store: Path) -> None:
    with open_store_reader(small_store) as reader:
        pool = reader.sealed
        ep = build_episode(reader, EpisodeKey(S, T), candidates={"labevents": ["Creatinine"]})
        live = _live(pool)
        results: list[object] = []
        barrier = threading.Barrier(8)

        def first() -> None:
            barrier.wait()
            results.append(ep.execute("SELECT count(*) FROM labevents_candidates", tables=["labevents_candidates"]).rows)

        threads = [threading.Thread(target=first) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert results == [[(1,)]] * 8
        assert _live(pool) - _idle(pool) == 1 and _live(pool) <= live + 1  # one database given out
        ep.close()
        assert _live(pool) == _idle(pool)


def test_prepare_racing_acquire_release_and_close_keeps_the_count() -> None:
    """Databases created, handed out, given back, closed, from four threads at once: ``_live`` never goes negative and
    ends at 0 once everything is closed; no database is handed out twice."""
    pool = _sealed.SealedPool()
    out: list[_sealed.Sealed] = []
    seen: set[int] = set()
    doubled: list[int] = []
    lock = threading.Lock()
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            sealed = pool.acquire("64MB")
            with lock:
                if id(sealed) in seen:
                    doubled.append(id(sealed))
                seen.add(id(sealed))
                out.append(sealed)
            assert min(pool._live.values()) >= 0
            with lock:
                seen.discard(id(sealed))
                out.remove(sealed)
            pool.release(sealed)

    threads = [threading.Thread(target=pool.prepare, args=(16, "64MB")),
               *(threading.Thread(target=churn) for _ in range(3))]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    pool.close()
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    assert not doubled and out == []
    assert pool._live == {"64MB": 0} and not any(pool._idle.values())
