"""Adversarial review of lazily loaded sealed episodes (issues #4 and #21).

Each test is one attack on :func:`clinseek.episode.build_episode` / :meth:`Episode.execute` as a
hostile agent (through ``ehr.run_sql_query`` and directly) or a careless user: a query must never
see a table incompletely while the inventory lists it, never see anything that is not the episode's
(a reused database included), and builds and loads must survive threads, asyncio, ``fork`` and a
store replaced on disk without hanging or leaking the store file.
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

from clinseek.episode import Episode, EpisodeKey, _sealed, build_episode, open_store_reader
from clinseek.errors import EpisodeError, StoreError
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table
from clinseek.store import connect_store
from clinseek.tools import ToolContext, call_tool
from policy.crafted import S, T, build_crafted_store

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


def test_a_table_the_caller_did_not_name_is_refused_never_seen_in_part(
    demo_store: Path, demo_key: EpisodeKey
) -> None:
    """No retry on DuckDB's error text: a table missing from ``tables`` is DuckDB's catalog error, nothing loads."""
    with build_episode(demo_store, demo_key) as ep:
        with pytest.raises(duckdb.CatalogException, match="labevents"):
            ep.execute("SELECT count(*) FROM labevents", tables=())
        with pytest.raises(duckdb.CatalogException, match="labevents"):
            ep.execute("SELECT count(*) FROM query_table('hosp.lab' || 'events')", tables=["admissions"])
        assert ep._pending == set(ep.table_counts()) - {"hosp.admissions"}
        with pytest.raises(duckdb.CatalogException, match="no_such_function"):
            ep.execute("SELECT no_such_function(1)", tables=())


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM labevents",
        "SELECT count(*) FROM hosp.LabEvents l JOIN d_labitems d ON d.itemid = l.itemid",
        'SELECT count(*) FROM "hosp"."labevents"',
        "WITH x AS (SELECT * FROM labevents) SELECT count(*) FROM x, admissions",
        "WITH admissions AS (SELECT * FROM labevents) SELECT count(*) FROM admissions",
        "SELECT count(*) FROM admissions, (WITH admissions AS (SELECT 1 AS a) SELECT * FROM admissions) AS inner_one",
        "SELECT (SELECT max(valuenum) FROM labevents WHERE itemid IN (SELECT itemid FROM d_labitems)) AS m",
        "SELECT hadm_id FROM admissions UNION SELECT hadm_id FROM diagnoses_icd EXCEPT SELECT hadm_id FROM transfers",
        "SELECT count(*) FROM admissions a, LATERAL (SELECT count(*) AS n FROM labevents l WHERE l.hadm_id = a.hadm_id) x",
        "SELECT count(*) FROM (SELECT * FROM emar) AS emar_rows WHERE EXISTS (SELECT 1 FROM emar_detail)",
        "SELECT datetime(charttime, '-1 day') FROM labevents LIMIT 1",
        "SELECT count(*) FROM labevents GROUP BY ALL HAVING count(*) > (SELECT count(*) FROM poe)",
    ],
)
def test_the_guard_names_every_table_a_query_reads(demo_store: Path, demo_key: EpisodeKey, sql: str) -> None:
    """Through ``ehr.run_sql_query`` a fresh episode (only the guard's tables loaded) answers as one with
    every table loaded: the parse the guard checks lists every table DuckDB reads."""
    with open_store_reader(demo_store) as reader:
        with build_episode(reader, demo_key) as full:
            full.execute("SELECT 1")  # every table
            expected = asyncio.run(call_tool(ToolContext(episode=full), "ehr.run_sql_query", {"sql_query": sql}))
        with build_episode(reader, demo_key) as fresh:
            got = asyncio.run(call_tool(ToolContext(episode=fresh), "ehr.run_sql_query", {"sql_query": sql}))
    assert expected.ok, expected.content
    assert (got.ok, got.content) == (True, expected.content)


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
    """After every table is loaded the catalog holds the inventory (dictionaries whole, as tables: they hold
    no patient data) and the candidate tables, and nothing else: no loader view, no store."""
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
        assert objects == {("memory", n) for n in [*ep.table_counts(), *ep.candidate_tables()]} | {
            ("temp", f"main.{_sealed.LOAD_VIEW}")  # the view loads copy through: empty between loads
        }
        assert ep.execute(f"SELECT * FROM {_sealed.LOAD_VIEW}", tables=()).rows == []
        for name in (n for n in ep.table_counts() if get_table(n).visibility == "dictionary"):
            assert ep.execute(f"SELECT count(*) FROM {name}").rows == [(ep.table_counts()[name],)]
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
            ep.execute("SELECT count(*) FROM labevents", tables=["labevents"])
        ep._loader = loader
        assert "hosp.labevents" in ep._pending
        n = ep.table_counts()["hosp.labevents"]
        assert ep.execute("SELECT count(*) FROM labevents", tables=["labevents"]).rows == [(n,)]


def test_a_table_too_big_for_the_episode_fails_as_the_episodes_error_not_the_querys(
    demo_store: Path, demo_key: EpisodeKey
) -> None:
    """A load that runs out of the episode's memory names the table and the limit, and reaches the
    runner as an infrastructure error rather than as an ``sql_error`` the model is asked to fix."""
    with build_episode(demo_store, demo_key, memory_limit="2MB") as ep:
        with pytest.raises(EpisodeError, match=r"cannot load hosp\.labevents .*memory_limit"):
            ep.execute("SELECT count(*) FROM labevents", tables=["labevents"])
        assert "hosp.labevents" in ep._pending
        assert ep.execute(f"SELECT * FROM {_sealed.LOAD_VIEW}", tables=()).rows == []  # the failed copy left nothing
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
    """Episodes of one reader built and first queried at once (threads, asyncio): same answers as one by one,
    each database reused by the next episode shows nothing of the one before."""
    keys = _demo_keys(demo_store, 8)
    serial = {}
    for key in keys:
        with build_episode(demo_store, key) as ep:  # fresh readers and databases
            serial[key] = _fingerprint(ep)

    with open_store_reader(demo_store) as reader:

        def one(key: EpisodeKey) -> list[Any]:
            with build_episode(reader, key) as ep:
                return _fingerprint(ep)

        with ThreadPoolExecutor(max_workers=8) as pool:
            threaded = list(pool.map(one, keys * 3))
        assert threaded == [serial[k] for k in keys * 3]

        async def main() -> list[tuple[EpisodeKey, set[int], int]]:
            async def task(key: EpisodeKey) -> tuple[EpisodeKey, set[int], int]:
                ep = await asyncio.to_thread(build_episode, reader, key)
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
                    await asyncio.to_thread(ep.close)

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
            return [(n, ep.execute(f"SELECT count(*) FROM {n}", tables=[n]).rows[0][0]) for n in order]

        with ThreadPoolExecutor(max_workers=6) as pool:
            for got in pool.map(hit, range(6)):
                assert dict(got) == {n: counts[n] for n in names}


def test_a_reader_is_refused_in_a_forked_child_which_opens_its_own(small_store: Path) -> None:
    """No fork hook: a child forked while the parent holds a reader (and one of its threads the reader's
    lock) gets a clear error from the inherited reader and builds with a reader of its own."""
    with open_store_reader(small_store) as reader:
        with build_episode(reader, EpisodeKey(S, T)) as ep:
            ep.execute("SELECT count(*) FROM labevents", tables=["labevents"])
        reader._lock.acquire()  # what a parent thread reading a dictionary holds during the fork
        try:

            def child() -> Any:
                try:
                    build_episode(reader, EpisodeKey(S, T))
                except StoreError as err:
                    refused = str(err)
                with open_store_reader(small_store) as own, build_episode(own, EpisodeKey(S, T)) as mine:
                    rows = mine.execute("SELECT DISTINCT subject_id FROM labevents", tables=["labevents"]).rows
                return refused, rows

            outcome = _in_fork(child, timeout_s=15)
        finally:
            reader._lock.release()
    assert outcome[0] == "ok", outcome
    refused, rows = outcome[1]
    assert "opened in process" in refused and "open its own" in refused
    assert rows == [(S,)]


_FORK_SCRIPT = """
import os, sys
from datetime import datetime
from clinseek.episode import EpisodeKey, build_episode
key = EpisodeKey({subject_id}, datetime.fromisoformat("{cutoff}"))
with build_episode(sys.argv[1], key) as ep:  # its own reader, closed with it: nothing is left open
    ep.execute("SELECT count(*) FROM labevents")
pid = os.fork()
if pid == 0:  # the child builds its own episode and exits normally (the interpreter finalizes)
    with build_episode(sys.argv[1], key) as ep:
        rows = ep.execute("SELECT DISTINCT subject_id FROM labevents").rows
    sys.exit(0 if rows == [({subject_id},)] else 3)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_nothing_outlives_an_episode_a_forked_child_could_inherit(small_store: Path) -> None:
    """No process-wide cache: after an episode built from a path closes, nothing of clinseek's DuckDB is
    left for a forked child to inherit (DuckDB hangs or crashes destroying a parent's database)."""
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
        with open_store_reader(path) as reader, build_episode(reader, EpisodeKey(S, T)) as fresh:
            assert fresh.table_counts()["hosp.labevents"] == 0
    finally:
        old.close()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd (Linux)")
def test_a_closed_episode_or_reader_does_not_keep_the_store_open(tmp_path: Path) -> None:
    path = build_crafted_store(tmp_path / "store.duckdb")
    ep = build_episode(path, EpisodeKey(S, T))  # its own reader
    ep.execute("SELECT count(*) FROM labevents")
    assert _store_fds(path)
    ep.close()
    gc.collect()
    assert _store_fds(path) == []  # the closed episode object is still referenced here
    assert ep.closed
    reader = open_store_reader(path)
    shared = build_episode(reader, EpisodeKey(S, T))
    shared.execute("SELECT count(*) FROM labevents")
    shared.close()
    assert _store_fds(path)  # the caller's reader stays open until the caller closes it
    reader.close()
    gc.collect()
    assert _store_fds(path) == []
    with pytest.raises(StoreError, match="closed"):
        build_episode(reader, EpisodeKey(S, T))


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
