"""Adversarial review of lazily loaded sealed episodes (issue #4).

Each test is one attack on :func:`clinseek.episode.build_episode` / :meth:`Episode.execute` as a
hostile agent (through ``ehr.run_sql_query`` and directly) or a careless user: a query must never
see a table incompletely or not at all while the inventory lists it, never see anything that is
not the episode's, and builds and loads must survive threads, asyncio, ``fork`` and a store
replaced on disk without hanging or leaking the store file.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import pytest

from clinseek.episode import (
    Episode,
    EpisodeKey,
    _episode,
    _source,
    build_episode,
    clear_store_cache,
    store_snapshot,
)
from clinseek.errors import EpisodeError, StoreError
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table
from clinseek.store import connect_store
from clinseek.tools import ToolContext, call_tool
from policy.crafted import OTHER, S, T, build_crafted_store

# ---------------------------------------------------------------- helpers


def _demo_keys(store: Path, n: int) -> list[EpisodeKey]:
    """``n`` patients with the most lab rows, cutoff at their last discharge, policies and targets mixed."""
    con = connect_store(store)
    try:
        rows = con.execute(
            "SELECT a.subject_id, max(a.dischtime), max(a.hadm_id) FROM hosp.admissions a "
            "JOIN (SELECT subject_id, count(*) AS n FROM hosp.labevents GROUP BY 1) l USING (subject_id) "
            "GROUP BY a.subject_id, l.n ORDER BY l.n DESC, a.subject_id LIMIT ?",
            [n],
        ).fetchall()
    finally:
        con.close()
    return [
        EpisodeKey(s, t, (TEXT_POLICY, MM_POLICY)[i % 2], target_hadm_id=h if i % 3 == 0 else None)
        for i, (s, t, h) in enumerate(rows)
    ]


@pytest.fixture(scope="module")
def demo_key(demo_store: Path) -> EpisodeKey:
    return _demo_keys(demo_store, 1)[0]


def _in_fork(target: Callable[[], Any], timeout_s: float = 20.0) -> tuple[str, Any]:
    """Run ``target`` in a forked child; ``("hung", None)`` when it does not finish in ``timeout_s``."""
    ctx = multiprocessing.get_context("fork")
    results = ctx.SimpleQueue()

    def child() -> None:
        try:
            results.put(("ok", target()))
        except BaseException as err:  # reported to the parent, never raised in the child
            results.put(("error", f"{type(err).__name__}: {err}"))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (Python >= 3.12)
        proc = ctx.Process(target=child, daemon=True)
        proc.start()
    proc.join(timeout_s)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return ("hung", None)
    return results.get() if not results.empty() else ("died", proc.exitcode)


def _store_fds(path: Path) -> list[str]:
    """Open file descriptors of this process on ``path`` (also once it is deleted)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.removesuffix(" (deleted)") == str(path):
            found.append(target)
    return found


# ---------------------------------------------------------------- 1. names a word scan cannot see


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        ("SELECT count(*) FROM query_table('hosp.lab' || 'events')", None),
        ("SELECT count(*) FROM query_table(reverse('stnevebal.psoh'))", None),
        ("SELECT count(*) FROM query_table(?)", ["hosp.labevents"]),
        ("SELECT count(*) FROM query('SELECT * FROM hosp.lab' || 'events')", None),
        (
            "SELECT count(*) FROM json_execute_serialized_sql("
            "json_serialize_sql('SELECT * FROM hosp.lab' || 'events'))",
            None,
        ),
    ],
)
def test_a_computed_table_name_sees_the_whole_table(
    demo_store: Path, demo_key: EpisodeKey, sql: str, params: list[str] | None
) -> None:
    """The word scan cannot see a name built at run time; the table must still be there, complete."""
    with build_episode(demo_store, demo_key) as ep:
        assert ep.execute(sql, params).rows == [(ep.table_counts()["hosp.labevents"],)]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT table_schema || '.' || table_name FROM query_table('information' || '_schema.tables') "
        "WHERE table_catalog = 'memory'",
        "SELECT schema || '.' || name FROM (DESCRIBE) WHERE database = 'memory'",
        "DESCRIBE",
    ],
)
def test_a_catalog_listing_the_word_scan_cannot_see_lists_the_whole_inventory(
    demo_store: Path, demo_key: EpisodeKey, sql: str
) -> None:
    with build_episode(demo_store, demo_key) as ep:
        rows = ep.execute(sql, max_rows=1000).rows
        listed = (
            {r[0] for r in rows}
            if len(rows[0]) == 1
            else {f"{r[1]}.{r[2]}" for r in rows if r[0] == "memory"}
        )
        assert listed == set(ep.table_counts())


def test_a_catalog_error_while_tables_are_unloaded_loads_them_all_and_runs_again(
    demo_store: Path, demo_key: EpisodeKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last wall: a way to name a table that no word announces (here: the word list emptied)."""
    monkeypatch.setattr(_episode, "_CATALOG_WORDS", frozenset())
    monkeypatch.setattr(_episode, "_CATALOG_PREFIXES", ())
    with build_episode(demo_store, demo_key) as ep:
        n = ep.table_counts()["hosp.labevents"]
        assert ep.execute("SELECT count(*) FROM query_table('hosp.lab' || 'events')").rows == [(n,)]
        assert not ep._pending
        with pytest.raises(duckdb.CatalogException, match="no_such_table"):
            ep.execute("SELECT * FROM no_such_table")
    with build_episode(demo_store, demo_key) as ep:  # an unknown function is no reason to load anything
        with pytest.raises(duckdb.CatalogException, match="no_such_function"):
            ep.execute("SELECT no_such_function(1)")
        assert ep._pending == set(ep.table_counts())


def test_the_tool_refuses_computed_names(demo_store: Path, demo_key: EpisodeKey) -> None:
    """Through ``ehr.run_sql_query`` the guard refuses them before the episode sees them."""
    with build_episode(demo_store, demo_key) as ep:
        ctx = ToolContext(episode=ep)
        for sql in (
            "SELECT count(*) FROM query_table('hosp.lab' || 'events')",
            "SELECT count(*) FROM query('SELECT 1')",
            "SELECT * FROM json_execute_serialized_sql('x')",
        ):
            result = asyncio.run(call_tool(ctx, "ehr.run_sql_query", {"sql_query": sql}))
            assert not result.ok and result.error_kind == "forbidden_function", (sql, result)


# ---------------------------------------------------------------- 2. nothing that is not the episode's


def test_every_object_a_query_can_name_is_the_episodes(demo_store: Path, demo_key: EpisodeKey) -> None:
    """After every table is loaded the catalog holds the inventory, the dictionaries' Arrow views
    (whole dictionaries, which hold no patient data) and nothing else: no loader view, no store."""
    with build_episode(demo_store, demo_key, candidates={"diagnoses_ccs": ["A", "B"]}) as ep:
        ep.execute("SELECT 1 FROM duckdb_tables()")  # loads everything
        objects = {
            (db, f"{schema}.{name}")
            for db, schema, name in ep.execute(
                "SELECT database_name, schema_name, table_name FROM duckdb_tables() UNION ALL "
                "SELECT database_name, schema_name, view_name FROM duckdb_views() WHERE NOT internal",
                max_rows=1000,
            ).rows
        }
        dictionaries = {n for n in ep.table_counts() if get_table(n).visibility == "dictionary"}
        expected = {("memory", n) for n in [*ep.table_counts(), *ep.candidate_tables()]} | {
            ("temp", "main._dict_" + n.replace(".", "_")) for n in dictionaries
        }
        assert objects == expected
        for name in dictionaries:
            view = "_dict_" + name.replace(".", "_")
            assert ep.execute(f"SELECT count(*) FROM {view}").rows == [(ep.table_counts()[name],)]
        databases = {r[0] for r in ep.execute("SELECT database_name FROM duckdb_databases()").rows}
        assert databases == {"memory", "system", "temp"}
        settings = dict(ep.execute("SELECT name, value FROM duckdb_settings()", max_rows=10**4).rows)
        assert not any(str(demo_store) in str(v) for v in settings.values())


def test_a_failed_load_leaves_the_table_pending(demo_store: Path, demo_key: EpisodeKey) -> None:
    with build_episode(demo_store, demo_key) as ep:
        loader = ep._loader
        assert loader is not None

        def failing(con: Any, name: str, expected_rows: int) -> None:
            if name == "hosp.labevents":
                raise RuntimeError("the store went away")
            loader(con, name, expected_rows)

        ep._loader = failing
        with pytest.raises(RuntimeError):
            ep.execute("SELECT count(*) FROM labevents")
        ep._loader = loader
        assert "hosp.labevents" in ep._pending
        assert ep.execute("SELECT count(*) FROM labevents").rows == [(ep.table_counts()["hosp.labevents"],)]


def test_a_table_too_big_for_the_episode_fails_as_the_episodes_error_not_the_querys(
    demo_store: Path, demo_key: EpisodeKey
) -> None:
    """A load that runs out of the episode's memory names the table and the limit, and reaches the
    runner as an infrastructure error rather than as an ``sql_error`` the model is asked to fix."""
    with build_episode(demo_store, demo_key, memory_limit="2MB") as ep:
        with pytest.raises(EpisodeError, match=r"cannot load hosp\.labevents .*memory_limit"):
            ep.execute("SELECT count(*) FROM labevents")
        assert "hosp.labevents" in ep._pending
        with pytest.raises(EpisodeError, match=r"hosp\.labevents"):
            asyncio.run(
                call_tool(
                    ToolContext(episode=ep), "ehr.run_sql_query", {"sql_query": "SELECT * FROM labevents"}
                )
            )


# ---------------------------------------------------------------- 3. concurrency


def _fingerprint(ep: Episode) -> list[Any]:
    """What one patient's episode shows of the tables an agent reads first (loads them)."""
    return [
        ep.execute("SELECT count(*), count(DISTINCT subject_id), min(subject_id) FROM labevents").rows,
        ep.execute(
            "SELECT hadm_id, admittime, dischtime, hospital_expire_flag FROM admissions ORDER BY admittime"
        ).rows,
        ep.execute(
            "SELECT icd_code, icd_version, count(*) FROM diagnoses_icd GROUP BY ALL ORDER BY ALL",
            max_rows=10**4,
        ).rows,
        ep.execute(
            "SELECT l.label, count(*) FROM labevents JOIN d_labitems l USING (itemid) GROUP BY ALL ORDER BY ALL",
            max_rows=10**4,
        ).rows,
        ep.table_counts(),
    ]


def test_fresh_episodes_of_many_patients_from_threads_and_asyncio(demo_store: Path) -> None:
    """Every episode's first queries load at once on the shared reader: same answers as one by one."""
    keys = _demo_keys(demo_store, 8)
    serial = {}
    for key in keys:
        with build_episode(demo_store, key) as ep:
            serial[key] = _fingerprint(ep)

    def one(key: EpisodeKey) -> list[Any]:
        with build_episode(demo_store, key) as ep:
            return _fingerprint(ep)

    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(one, keys * 2))
    assert threaded == [serial[k] for k in keys * 2]

    async def main() -> list[tuple[EpisodeKey, set[int], int]]:
        async def task(key: EpisodeKey) -> tuple[EpisodeKey, set[int], int]:
            ep = await asyncio.to_thread(build_episode, demo_store, key)
            try:
                ctx = ToolContext(episode=ep)
                seen: set[int] = set()
                n = -1
                for sql in (
                    "SELECT DISTINCT subject_id FROM labevents",
                    "SELECT DISTINCT subject_id FROM admissions",
                    "SELECT count(*) AS n FROM labevents",
                ):
                    result = await call_tool(ctx, "ehr.run_sql_query", {"sql_query": sql})
                    assert result.ok, result
                    if sql.startswith("SELECT count"):
                        n = result.data["rows"][0][0]
                    else:
                        seen |= {r[0] for r in result.data["rows"]}
                return key, seen, n
            finally:
                ep.close()

        return list(await asyncio.gather(*(task(k) for k in keys * 2)))

    for key, seen, n in asyncio.run(main()):
        assert seen == {key.subject_id}
        assert n == serial[key][-1]["hosp.labevents"]


def test_one_episode_first_named_by_many_threads_at_once(demo_store: Path, demo_key: EpisodeKey) -> None:
    """Several threads name the same not-yet-loaded tables at once: each loads once, every answer whole."""
    with build_episode(demo_store, demo_key) as ep:
        counts = ep.table_counts()
        names = [n for n in counts if get_table(n).visibility != "dictionary"]
        barrier = threading.Barrier(6)

        def hit(i: int) -> list[tuple[str, int]]:
            barrier.wait()
            order = names[i % len(names) :] + names[: i % len(names)]
            return [(n, ep.execute(f"SELECT count(*) FROM {n}").rows[0][0]) for n in order]

        with ThreadPoolExecutor(max_workers=6) as pool:
            for got in pool.map(hit, range(6)):
                assert dict(got) == {n: counts[n] for n in names}


def test_a_child_forked_while_a_snapshot_is_being_read_can_build(small_store: Path) -> None:
    """Another thread holds the snapshot cache's lock at the moment of the fork (reading a store's
    dictionaries): the child must still build and query episodes, not wait forever."""
    store_snapshot(small_store.resolve())
    _source._LOCK.acquire()  # what a thread inside store_snapshot() holds during the fork
    try:

        def child() -> Any:
            with build_episode(small_store, EpisodeKey(S, T)) as ep:
                return ep.execute("SELECT DISTINCT subject_id FROM labevents").rows

        outcome = _in_fork(child, timeout_s=15)
    finally:
        _source._LOCK.release()
    assert outcome == ("ok", [(S,)])


def test_an_episode_built_before_a_fork_loads_in_the_child(small_store: Path) -> None:
    """An episode inherited by a forked child loads through a reader of the child's own, not the
    parent's (whose lock and DuckDB state another parent thread may hold at the fork)."""
    ep = build_episode(small_store, EpisodeKey(OTHER, T))
    snap = store_snapshot(small_store.resolve())
    snap.lock.acquire()  # a parent thread opening a cursor on the shared reader during the fork
    try:

        def child() -> Any:
            rows = ep.execute("SELECT DISTINCT subject_id FROM labevents").rows
            return rows, store_snapshot(small_store.resolve()).pid == os.getpid()

        outcome = _in_fork(child, timeout_s=15)
    finally:
        snap.lock.release()
        ep.close()
    assert outcome == ("ok", ([(OTHER,)], True))


_FORK_SCRIPT = """
import os, sys
from datetime import datetime
from clinseek.episode import EpisodeKey, build_episode
key = EpisodeKey({subject_id}, datetime.fromisoformat("{cutoff}"))
with build_episode(sys.argv[1], key) as ep:  # the parent now holds a cached store reader
    ep.execute("SELECT count(*) FROM labevents")
pid = os.fork()
if pid == 0:  # the child builds its own episode and exits normally (the interpreter finalizes)
    with build_episode(sys.argv[1], key) as ep:
        rows = ep.execute("SELECT DISTINCT subject_id FROM labevents").rows
    sys.exit(0 if rows == [({subject_id},)] else 3)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_a_child_forked_after_the_reader_was_opened_builds_and_exits(small_store: Path) -> None:
    """The child must not destroy the reader it inherited (DuckDB hangs or crashes doing so)."""
    script = _FORK_SCRIPT.format(subject_id=S, cutoff=T.isoformat())
    done = subprocess.run(
        [sys.executable, "-c", script, str(small_store)], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout.strip()) == (0, "0"), done.stderr[-2000:]


# ---------------------------------------------------------------- 4. the store file


def test_a_store_replaced_on_disk_while_episodes_are_open(tmp_path: Path) -> None:
    """Old episodes keep loading the file they were counted on; new builds read the new file."""
    path = build_crafted_store(tmp_path / "store.duckdb")
    old = build_episode(path, EpisodeKey(S, T))
    old_counts = old.table_counts()
    other = build_crafted_store(tmp_path / "other.duckdb")
    con = connect_store(other, read_only=False)
    try:
        con.execute("DELETE FROM hosp.labevents WHERE subject_id = ?", [S])
    finally:
        con.close()
    os.replace(other, path)  # a rebuild written beside the store, then moved over it
    try:
        with build_episode(path, EpisodeKey(S, T)) as new:
            assert new.table_counts()["hosp.labevents"] == 0
            assert new.execute("SELECT count(*) FROM labevents").rows == [(0,)]
        assert old_counts["hosp.labevents"] > 0
        assert old.execute("SELECT count(*) FROM labevents").rows == [(old_counts["hosp.labevents"],)]
    finally:
        old.close()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd (Linux)")
def test_a_closed_episode_does_not_keep_the_store_open(tmp_path: Path) -> None:
    path = build_crafted_store(tmp_path / "store.duckdb")
    ep = build_episode(path, EpisodeKey(S, T))
    ep.execute("SELECT count(*) FROM labevents")
    assert _store_fds(path)
    ep.close()
    clear_store_cache()
    gc.collect()
    assert _store_fds(path) == []  # the closed episode object is still referenced here
    assert ep.closed


def test_a_closed_episode_refuses_queries_naming_unloaded_tables(
    demo_store: Path, demo_key: EpisodeKey
) -> None:
    ep = build_episode(demo_store, demo_key)
    ep.close()
    with pytest.raises(Exception, match="closed"):
        ep.execute("SELECT count(*) FROM labevents")


def test_a_build_that_names_a_path_without_a_store_fails_clearly_and_keeps_nothing_open(
    tmp_path: Path,
) -> None:
    for name, content in (("x.csv", b"a,b\n1,2\n"), ("empty.duckdb", b""), ("junk.duckdb", b"\0" * 5000)):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(StoreError, match=f"{name}: "):
            build_episode(path, EpisodeKey(S, T))
        if Path("/proc/self/fd").is_dir():
            assert _store_fds(path.resolve()) == []


@pytest.mark.parametrize("memory_limit", ["lots", "0"])
def test_a_bad_memory_limit_is_named(small_store: Path, memory_limit: str) -> None:
    with pytest.raises(EpisodeError, match="memory_limit"):
        build_episode(small_store, EpisodeKey(S, T), memory_limit=memory_limit)
