"""Tables load when a query that reads them first runs: counted at build, complete and typed when seen."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import Episode, EpisodeKey, _sealed, build_episode, open_store_reader
from clinseek.errors import EpisodeError
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table
from clinseek.store import connect_store
from clinseek.tools import ToolContext, call_tool


def _keys(store: Path, n: int, seed: int) -> list[EpisodeKey]:
    """Random admissions: cutoffs inside the stay, both policies, half of them with the target hidden."""
    con = connect_store(store)
    try:
        stays = con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM hosp.admissions "
            "WHERE dischtime > admittime ORDER BY subject_id, hadm_id"
        ).fetchall()
    finally:
        con.close()
    rng = random.Random(seed)
    keys = []
    for i, (subject_id, hadm_id, admit, disch) in enumerate(rng.sample(stays, n)):
        cutoff = admit + timedelta(seconds=int((disch - admit).total_seconds() * rng.random()))
        keys.append(
            EpisodeKey(
                subject_id,
                cutoff,
                (TEXT_POLICY, MM_POLICY)[i % 2],
                target_hadm_id=hadm_id if i % 4 < 2 else None,
            )
        )
    return keys


@pytest.fixture(scope="module", params=["demo", "synthetic"])
def store(request: pytest.FixtureRequest) -> Path:
    return request.getfixturevalue(f"{request.param}_store")


def _store_rows(store: Path, key: EpisodeKey) -> dict[str, list[tuple[object, ...]]]:
    """Every visible table read straight from the store with the policy's SQL (no episode, no reader)."""
    from clinseek.policy import get_policy
    from clinseek.schema import tables

    con = connect_store(Path(store))
    try:
        present = {r[0] for r in con.execute("SELECT table_name FROM clinseek_meta.table_info").fetchall()}
        policy = get_policy(key.policy)
        out = {}
        for table in tables():
            if table.qualified in present and table.visibility in ("event", "static"):
                query = policy.visible_select(table, key, present=present)
                if query is not None:
                    out[table.qualified] = con.execute(*query).fetchall()
        return out
    finally:
        con.close()


def test_counts_at_build_match_the_loaded_tables_and_the_policy(store: Path) -> None:
    for key in _keys(store, 8, seed=11):
        expected = _store_rows(store, key)
        with build_episode(store, key) as ep:
            counts = ep.table_counts()
            assert {n for n in counts if not get_table(n).visibility == "dictionary"} == set(expected)
            for name, n in counts.items():
                assert ep.execute(f"SELECT count(*) FROM {name}").rows == [(n,)], name
                if name in expected:
                    assert n == len(expected[name]), name
                    got = ep.execute(f"SELECT * FROM {name}", max_rows=10**7).rows
                    assert sorted(map(repr, got)) == sorted(map(repr, expected[name])), name


def test_loaded_tables_have_the_registry_types(store: Path) -> None:
    key = _keys(store, 1, seed=5)[0]
    with build_episode(store, key) as ep:
        for name in ep.table_counts():
            described = ep.execute(f"DESCRIBE {name}", max_rows=500).rows
            assert [(r[0], r[1]) for r in described] == [(c.name, c.type) for c in get_table(name).columns], (
                name
            )


def _pending(ep: Episode) -> set[str]:
    return set(ep._pending)


def test_a_query_loads_the_tables_its_caller_names_and_no_list_loads_all(demo_store: Path) -> None:
    key = _keys(demo_store, 1, seed=3)[0]
    with open_store_reader(demo_store) as reader:
        with build_episode(reader, key) as ep:
            everything = set(ep.table_counts())
            assert _pending(ep) == everything  # nothing copied at build (a fresh reader: no dictionary either)
            ep.execute("SELECT count(*) FROM labevents l JOIN d_labitems d USING (itemid)", tables=["labevents", "hosp.d_labitems"])
            assert _pending(ep) == everything - {"hosp.labevents", "hosp.d_labitems"}
            ep.execute("SELECT 'admissions' AS word", tables=())  # a name in a string is no table
            assert "hosp.admissions" in _pending(ep)
            ep.execute("SELECT 1")  # a caller that names nothing gets every table
            assert _pending(ep) == set()
        with build_episode(reader, key) as again:  # the reader's database comes back with its dictionaries
            dictionaries = {n for n in everything if get_table(n).visibility == "dictionary"}
            assert again._con is None  # taken on the first query, not at build
            again.execute("SELECT 1", tables=())
            assert _pending(again) == everything - dictionaries


def test_an_episode_takes_its_database_on_its_first_query_and_gives_it_back(demo_store: Path) -> None:
    """The store-only surfaces (inventory, timelines, the record tools' reads of tables not loaded) take no sealed
    database: a run's first turns need none; the first query takes one, the close gives it back for reuse."""
    key = _keys(demo_store, 1, seed=3)[0]
    with open_store_reader(demo_store) as reader:
        idle = reader.sealed._idle
        with build_episode(reader, key) as ep:
            checked = sum(map(len, idle.values()))  # the build's check of memory_limit keeps its database idle
            assert ep._con is None and checked == 1
            ep.timeline("labevents")
            assert ep._con is None
            ep.execute("SELECT count(*) FROM labevents", tables=["labevents"])
            assert ep._con is not None and sum(map(len, idle.values())) == checked - 1
        assert sum(map(len, idle.values())) == checked
        with build_episode(reader, key) as never:
            never.table_counts()
        assert sum(map(len, idle.values())) == checked  # nothing taken, nothing given back
        with pytest.raises(EpisodeError, match="memory_limit"):
            build_episode(reader, key, memory_limit="lots")  # still refused at build


def test_the_tool_loads_the_tables_of_its_parse(demo_store: Path) -> None:
    key = _keys(demo_store, 1, seed=3)[0]
    with open_store_reader(demo_store) as reader, build_episode(reader, key) as ep:
        everything = set(ep.table_counts())
        ctx = ToolContext(ep)
        for sql, loaded in (
            ("SELECT 'admissions' AS word", set()),
            ('SELECT count(*) FROM "HOSP"."Prescriptions"', {"hosp.prescriptions"}),
            ("WITH labevents AS (SELECT 1 AS x) SELECT * FROM labevents", set()),  # a CTE, not the table
            ("SELECT (SELECT count(*) FROM emar) AS n, * FROM (SELECT 1) t", {"hosp.emar"}),
        ):
            before = _pending(ep)
            result = asyncio.run(call_tool(ctx, "ehr.run_sql_query", {"sql_query": sql}))
            assert result.ok, (sql, result.content)
            assert before - _pending(ep) == loaded, sql
        assert _pending(ep) == everything - {"hosp.prescriptions", "hosp.emar"}


def test_a_table_with_no_visible_rows_is_not_read_from_the_store(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clinseek.episode import DuckDBStoreReader

    for key in _keys(demo_store, 20, seed=3):  # a key with at least one table showing nothing
        ep = build_episode(demo_store, key)
        empty = sorted(n for n, c in ep.table_counts().items() if c == 0)
        if empty:
            break
        ep.close()
    assert empty, "no demo key with a table showing nothing"
    with ep:
        def refuse(*args: object, **kwargs: object) -> object:
            raise AssertionError("read the store for an empty table")

        monkeypatch.setattr(DuckDBStoreReader, "_arrow", refuse)
        for name in empty:
            assert ep.execute(f"SELECT count(*) FROM {name}", tables=[name]).rows == [(0,)], name


@pytest.mark.parametrize(
    "catalog_query",
    [
        "SELECT schema_name || '.' || table_name, estimated_size FROM duckdb_tables()",
        "SELECT table_schema, table_name FROM information_schema.tables",
        "SHOW ALL TABLES",
    ],
)
def test_a_catalog_query_loads_every_table_first(demo_store: Path, catalog_query: str) -> None:
    key = _keys(demo_store, 1, seed=4)[0]
    with build_episode(demo_store, key) as ep:
        ep.execute(catalog_query, max_rows=1000)
        assert _pending(ep) == set()
        sizes = dict(
            ep.execute(
                "SELECT schema_name || '.' || table_name, estimated_size FROM duckdb_tables()", max_rows=1000
            ).rows
        )
        for name, n in ep.table_counts().items():
            assert sizes[name] == n, name


def test_loading_opens_no_way_out(demo_store: Path) -> None:
    key = _keys(demo_store, 1, seed=6)[0]
    with build_episode(demo_store, key) as ep:
        ep.execute("SELECT * FROM duckdb_tables()")  # loads everything
        attached = {r[0] for r in ep.execute("SELECT database_name FROM duckdb_databases()").rows}
        assert attached == {"memory", "system", "temp"}
        with pytest.raises(duckdb.Error):
            ep.execute(f"SELECT * FROM read_csv('{demo_store}')")
        views = ep.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal", max_rows=1000).rows
        assert views == [(_sealed.LOAD_VIEW,)]  # no Arrow view of a load is left behind, only the load slot ...
        assert ep.execute(f"SELECT * FROM {_sealed.LOAD_VIEW}", tables=()).rows == []  # ... empty between loads


def test_a_name_counts_as_loaded_only_once_its_table_is(demo_store: Path) -> None:
    """The names a caller gives are remembered as loaded only after the load: a load that failed is tried again, and
    every spelling of a loaded table reads it (the episode skips the look-up for names it has seen loaded)."""
    from clinseek.episode import EpisodeError

    key = _keys(demo_store, 1, seed=3)[0]
    with open_store_reader(demo_store) as reader, build_episode(reader, key) as ep:
        real = ep._loader

        def failing(con: duckdb.DuckDBPyConnection, name: str, rows: int) -> None:
            raise EpisodeError(f"cannot load {name}")

        ep._loader = failing
        with pytest.raises(EpisodeError):
            ep.execute("SELECT count(*) FROM hosp.emar", tables=["emar"])
        assert "hosp.emar" in _pending(ep)
        ep._loader = real
        expected = [(ep.table_counts()["hosp.emar"],)]
        for spelling in ("emar", " EMAR", "hosp.emar", "emar"):
            assert ep.execute("SELECT count(*) FROM hosp.emar", tables=[spelling]).rows == expected
        assert "hosp.emar" not in _pending(ep)
        ep.execute("SELECT count(*) FROM hosp.emar", tables=["emar", "labevents"])  # a known name with a new one
        assert "hosp.labevents" not in _pending(ep)
        few = ep.execute("SELECT * FROM hosp.labevents", tables=["labevents"], max_rows=10_000)  # fewer rows than the cap
        cut = ep.execute("SELECT * FROM hosp.labevents", tables=["labevents"], max_rows=2)  # the rest dropped
        assert (few.truncated, cut.truncated, len(cut.rows)) == (False, True, 2)
        assert ep.execute("SELECT count(*) FROM hosp.prescriptions", tables=["prescriptions"]).rows == [
            (ep.table_counts()["hosp.prescriptions"],)
        ]


def test_prepare_creates_databases_ahead_and_never_more_than_asked() -> None:
    """A run creates its episodes' databases on a thread of its own when it starts (``SealedPool.prepare``): the
    episodes' first queries take those; databases given out count, so a second call creates none."""
    pool = _sealed.SealedPool()
    pool.prepare(3, "64MB")
    assert len(pool._idle["64MB"]) == 3
    taken = pool.acquire("64MB")
    pool.prepare(3, "64MB")  # two idle + one given out: nothing to create
    assert len(pool._idle["64MB"]) == 2
    pool.release(taken)
    assert len(pool._idle["64MB"]) == 3
    pool.close()
    pool.prepare(3, "64MB")  # a closed pool creates nothing
    assert pool._idle == {}
    with pytest.raises(EpisodeError, match="memory_limit"):
        _sealed.SealedPool().prepare(1, "lots")


def test_a_pool_winding_down_keeps_what_built_episodes_may_still_take(demo_store: Path) -> None:
    """Once a run's last question has started (``SealedPool.wind_down``) a database given back is closed without a
    wipe, except as many as the episodes built and not yet queried may still take: those find one idle (no new
    database, ~30 ms of DuckDB's CPU each) and nothing is left to close at the run's end."""
    keys = _keys(demo_store, 4, seed=11)
    with open_store_reader(demo_store) as reader:
        pool = reader.sealed
        idle = lambda: sum(map(len, pool._idle.values()))  # noqa: E731
        queried = [build_episode(reader, k) for k in keys[:2]]
        for ep in queried:
            ep.execute("SELECT count(*) FROM admissions", tables=["admissions"])
        waiting = build_episode(reader, keys[2])  # built, not queried yet: it will take one
        never = build_episode(reader, keys[3])  # built, closed without a query
        pool.prepare(4, "1GB")
        live = sum(pool._live.values())
        pool.wind_down()  # the surplus idle (beyond the two claims) closed now
        assert idle() == 2 and sum(pool._live.values()) == live - (live - 2 - 2)
        never.close()  # its claim ends: the idle one too many is closed
        assert idle() == 1
        queried[0].close()  # given back beyond the claims: closed, not wiped
        assert idle() == 1
        waiting.execute("SELECT count(*) FROM admissions", tables=["admissions"])  # takes an idle one
        created = sum(pool._live.values())
        queried[1].close()
        waiting.close()
        assert idle() == 0 and sum(pool._live.values()) == created - 2
        again = build_episode(reader, keys[0])  # still works after winding down: a new database
        assert again.execute("SELECT count(*) FROM admissions", tables=["admissions"]).rows
        again.close()
        assert idle() == 0 and sum(pool._live.values()) == 0


def test_claims_balance_through_a_failed_first_take(demo_store: Path) -> None:
    """An episode whose first take fails (its database cannot be created) and is closed later ends its claim once."""
    key = _keys(demo_store, 1, seed=5)[0]
    with open_store_reader(demo_store) as reader:
        pool = reader.sealed
        ep = build_episode(reader, key)
        assert pool._claims["1GB"] == 1
        real = _sealed.new_sealed
        try:
            _sealed.new_sealed = lambda memory_limit: (_ for _ in ()).throw(EpisodeError("no database"))
            pool.wind_down()
            for sealed in pool._idle.pop("1GB"):  # no idle database: the take creates one
                pool._live["1GB"] -= 1
                sealed.con.close()
            with pytest.raises(EpisodeError, match="no database"):
                ep.execute("SELECT count(*) FROM admissions", tables=["admissions"])
        finally:
            _sealed.new_sealed = real
        assert pool._claims["1GB"] == 0
        ep.close()
        assert pool._claims["1GB"] == 0


def test_a_first_query_after_its_reader_closed_creates_no_database(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader closed under a built episode: its first query fails with the reader's error (a StoreError naming
    it) before any database is created (attack22's leftover: one was created, then closed at the episode's close)."""
    from clinseek.errors import StoreError

    reader = open_store_reader(demo_store)
    ep = build_episode(reader, _keys(demo_store, 1, seed=2)[0])
    reader.close()
    created: list[str] = []
    real = _sealed.new_sealed
    monkeypatch.setattr(_sealed, "new_sealed", lambda limit: created.append(limit) or real(limit))
    with pytest.raises(StoreError, match="reader is closed"):
        ep.execute("SELECT count(*) FROM admissions", tables=["admissions"])
    ep.close()
    assert created == []


def test_a_pool_winding_down_prepares_no_more_than_the_claims() -> None:
    """A run whose last question started while its databases were still being prepared: the prepare stops at what
    the built episodes may still take."""
    pool = _sealed.SealedPool()
    pool.claim("64MB")
    pool.wind_down()
    pool.prepare(4, "64MB")
    assert len(pool._idle["64MB"]) == 1
    pool.unclaim("64MB")
    assert pool._idle["64MB"] == [] and sum(pool._live.values()) == 0
    pool.close()
