"""The store reader a caller opens, passes and closes: reused databases show nothing of earlier episodes,
the inventory's event times are the tools' event times, timelines are the episode's rows, time limits hold."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from clinseek.episode import Episode, EpisodeKey, EpisodeTimeout, _sealed, build_episode, open_store_reader
from clinseek.errors import StoreError
from clinseek.policy import EVENT_TIME, MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table
from clinseek.store import connect_store
from clinseek.tools import ToolContext, get_tool
from policy.crafted import OTHER, S, T


def _keys(store: Path, n: int, seed: int) -> list[EpisodeKey]:
    """Admissions of many patients, cutoffs inside and after the stay, both policies, targets hidden or not."""
    con = connect_store(store)
    try:
        stays = con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM hosp.admissions WHERE dischtime > admittime "
            "ORDER BY subject_id, hadm_id"
        ).fetchall()
    finally:
        con.close()
    rng = random.Random(seed)
    keys = []
    for i, (subject_id, hadm_id, admit, disch) in enumerate(rng.sample(stays, n)):
        cutoff = admit + (disch - admit) * rng.random() if i % 3 else disch + timedelta(seconds=1)
        keys.append(EpisodeKey(subject_id, cutoff, (TEXT_POLICY, MM_POLICY)[i % 2],
                               target_hadm_id=hadm_id if i % 4 == 1 else None))
    return keys


def _catalog(ep: Episode) -> set[tuple[str, str, str]]:
    return {
        tuple(r)
        for r in ep.execute(
            "SELECT database_name, schema_name, table_name FROM duckdb_tables() UNION ALL "
            "SELECT database_name, schema_name, view_name FROM duckdb_views() WHERE NOT internal",
            max_rows=10_000,
            tables=(),
        ).rows
    }


def _everything(ep: Episode) -> dict[str, list[str]]:
    """Every table of the episode, every row (loads all), as sorted reprs."""
    out = {}
    for name in [*ep.table_counts(), *ep.candidate_tables()]:
        rows = ep.execute(f"SELECT * FROM {name}", max_rows=10**7).rows
        out[name] = sorted(map(repr, rows))
    return out


def test_a_reused_database_shows_nothing_of_the_episode_before(demo_store: Path) -> None:
    """Patient A's episode loads everything and has a candidate list; patient B's episode then gets the same
    database: it holds exactly what a fresh database would, and answers the same."""
    a, b = _keys(demo_store, 2, seed=1)
    assert a.subject_id != b.subject_id
    fresh = build_episode(demo_store, b, candidates={"labevents": ["Creatinine"]})  # its own reader and database
    with fresh:
        expected_rows = _everything(fresh)
        expected_catalog = _catalog(fresh)
    with open_store_reader(demo_store) as reader:
        with build_episode(reader, a, candidates={"diagnoses_ccs": ["Sepsis", "Shock"]}) as first:
            _everything(first)
            used = first._con
        with build_episode(reader, b, candidates={"labevents": ["Creatinine"]}) as second:
            assert _catalog(second) <= expected_catalog  # dictionaries kept, nothing else
            assert second._con is used  # the same database, wiped (taken by the first query)
            assert _everything(second) == expected_rows
            assert _catalog(second) == expected_catalog
            for name in second.table_counts():
                if get_table(name).is_patient_table:
                    found = second.execute(f"SELECT DISTINCT subject_id FROM {name}", max_rows=10).rows
                    assert found in ([], [(b.subject_id,)]), name


def test_a_database_that_cannot_be_wiped_is_closed_not_reused(
    small_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store_reader(small_store) as reader:
        with build_episode(reader, EpisodeKey(S, T)) as first:
            first.execute("SELECT count(*) FROM labevents", tables=["labevents"])
            used = first._con
            monkeypatch.setattr(_sealed, "leftovers", lambda con, after="": [("memory", "hosp", "labevents", "TABLE")])
        monkeypatch.undo()
        with pytest.raises(duckdb.ConnectionException):
            used.execute("SELECT 1")  # closed
        with build_episode(reader, EpisodeKey(OTHER, T)) as second:
            assert second.execute("SELECT DISTINCT subject_id FROM labevents", tables=["labevents"]).rows == [(OTHER,)]
            assert second._con is not None and second._con is not used


def test_a_database_whose_load_slot_is_not_empty_is_closed_not_reused(small_store: Path) -> None:
    """The Arrow slot loads copy through must be empty when an episode closes; if not, the database goes."""
    with open_store_reader(small_store) as reader:
        with build_episode(reader, EpisodeKey(S, T)) as first:
            first.execute("SELECT count(*) FROM labevents", tables=["labevents"])
            used = first._con
            slot = first._loader.__self__.sealed.slot  # type: ignore[union-attr]
            assert slot.empty
            slot._table = pa.table({"subject_id": [S]})  # as if a copy had left its rows behind
        assert not slot.empty
        with pytest.raises(duckdb.ConnectionException):
            used.execute("SELECT 1")  # closed
        with build_episode(reader, EpisodeKey(OTHER, T)) as second:
            second.execute("SELECT 1", tables=())
            assert second._con is not None and second._con is not used


def test_the_reader_is_the_callers(small_store: Path) -> None:
    reader = open_store_reader(small_store)
    with build_episode(reader, EpisodeKey(S, T)) as ep:
        assert ep.execute("SELECT count(*) FROM patients", tables=["patients"]).rows == [(1,)]
    assert not reader.closed  # building and closing episodes leaves it open
    reader.close()
    reader.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        build_episode(reader, EpisodeKey(S, T))
    with pytest.raises(StoreError, match="no such store file"):
        open_store_reader(small_store.with_name("missing.duckdb"))


def test_queries_past_their_time_limit_are_interrupted_by_the_watchdog(small_store: Path) -> None:
    with open_store_reader(small_store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
        slow = "SELECT count(*) FROM range(100000000000) a"
        for _ in range(3):  # one watchdog thread serves every query of the reader
            with pytest.raises(EpisodeTimeout):
                ep.execute(slow, tables=(), timeout_s=0.2)
            assert ep.execute("SELECT 42", tables=(), timeout_s=0.2).rows == [(42,)]  # the next query is not hit
        threads = [t for t in __import__("threading").enumerate() if t.name == "clinseek-query-watchdog"]
        assert len(threads) >= 1


def _view_times(ctx: ToolContext, name: str) -> list[datetime]:
    """The event times the record tools filter by (the view's ``time``), computed in the episode."""
    from clinseek.tools._views import table_view

    view = table_view(ctx, get_table(name), labels=False)
    rows = ctx.episode.execute(
        f"SELECT {view.time} FROM {view.source} ORDER BY 1", tables=view.tables, max_rows=10**7
    ).rows
    return [r[0] for r in rows]


@pytest.mark.parametrize("which", ["demo", "synthetic"])
def test_the_inventorys_event_times_are_the_record_tools_times(which: str, request: pytest.FixtureRequest) -> None:
    """``get_event_counts_by_time`` reads the inventory (store side, no load); ``get_records_by_time`` the episode's
    view: both give every table the same times, for many keys of both policies."""
    store = request.getfixturevalue(f"{which}_store")
    with open_store_reader(store) as reader:
        for key in _keys(store, 10, seed=7):
            with build_episode(reader, key) as ep:
                ctx = ToolContext(ep)
                for name in ep.table_counts():
                    times = ep.event_times(name)
                    if times is None:
                        continue
                    assert times.to_pylist() == _view_times(ctx, name), (key, name)


def test_event_counts_match_the_records_tool_in_every_window(demo_store: Path) -> None:
    counts_tool = get_tool("ehr.get_event_counts_by_time").fn
    records_tool = get_tool("ehr.get_records_by_time").fn
    with open_store_reader(demo_store) as reader:
        for key in _keys(demo_store, 4, seed=9):
            with build_episode(reader, key) as ep:
                ctx = ToolContext(ep)
                for days in (1, 30, 3650):
                    start = (key.prediction_time - timedelta(days=days)).isoformat(sep=" ")
                    end = key.prediction_time.isoformat(sep=" ")
                    counts = counts_tool(ctx, start_time=start, end_time=end).data["counts"]
                    for name, n in counts.items():
                        got = records_tool(ctx, table_name=name, start_time=start, end_time=end).data["row_count"]
                        assert got == n, (key, name, days)


def _rows(data: Any) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    return tuple(data.column_names), list(zip(*(c.to_pylist() for c in data.columns), strict=True))


def test_a_timeline_is_the_episodes_rows_in_its_window(demo_store: Path) -> None:
    # and timeline_rows, the same as Python rows: columns (labels included), rows, order and values
    with open_store_reader(demo_store) as reader:
        for key in _keys(demo_store, 4, seed=5):
            with build_episode(reader, key) as ep:
                for name, rows in ep.table_counts().items():
                    table = get_table(name)
                    if not rows or table.visibility != "event":
                        continue
                    times = ep.event_times(name)
                    assert times is not None
                    since = times[len(times) // 2].as_py()
                    until = times[len(times) - 1].as_py()
                    data = ep.timeline(name, since=since, until=until)
                    rows = ep.timeline_rows(name, since=since, until=until)  # what Curated Input formats
                    assert (rows.columns, rows.rows) == _rows(data), (key, name)
                    own = [c for c in data.column_names if c in table.column_names]
                    assert own == list(table.column_names)
                    got = sorted(map(repr, zip(*(data.column(c).to_pylist() for c in own), strict=True)))
                    ctx = ToolContext(ep)
                    from clinseek.tools._views import table_view

                    view = table_view(ctx, table, labels=False)
                    cols = ", ".join(view.col(c) for c in table.column_names)
                    expected = ep.execute(
                        f"SELECT {cols} FROM {view.source} WHERE {view.time} >= ? AND {view.time} < ?",
                        [since, until], tables=view.tables, max_rows=10**7,
                    ).rows
                    assert got == sorted(map(repr, expected)), (key, name)
                    assert data.column(EVENT_TIME).to_pylist() == sorted(data.column(EVENT_TIME).to_pylist())


def test_a_timeline_comes_in_its_total_order_from_the_reader(demo_store: Path) -> None:
    # the policy's SQL leaves the order to the reader: event time, key, every other column, NULLs last,
    # text by its bytes, as DuckDB's ORDER BY gives it
    from clinseek.policy import timeline_order

    checked = 0
    with open_store_reader(demo_store) as reader:
        for key in _keys(demo_store, 3, seed=11):
            with build_episode(reader, key) as ep:
                for name, rows in ep.table_counts().items():
                    table = get_table(name)
                    if rows < 2 or table.visibility != "event":
                        continue
                    data = ep.timeline(name)
                    order = ", ".join(f'"{c}" ASC NULLS LAST' for c in timeline_order(table))
                    con = duckdb.connect()
                    con.register("rows_", data)
                    expected = con.execute(f"SELECT * FROM rows_ ORDER BY {order}").fetchall()
                    con.close()
                    assert list(zip(*(data.column(c).to_pylist() for c in data.column_names), strict=True)) == expected
                    checked += 1
    assert checked > 10


def test_timeline_rows_order_nulls_and_nan_as_the_timeline(small_store: Path, tmp_path: Path) -> None:
    # rows alike but for a DOUBLE column: numbers first, then NaN, then NULL, as Arrow's sort of the timeline orders
    # them (icu.procedureevents: its key, orderid, is the store's own; labevents' and microbiologyevents' ids are
    # renumbered per episode, so copies of a row would not share one)
    store = tmp_path / "nan.duckdb"
    store.write_bytes(small_store.read_bytes())
    con = duckdb.connect(str(store))
    order = con.execute("SELECT min(orderid) FROM icu.procedureevents WHERE subject_id = $1 AND starttime < $2",
                        [S, T]).fetchall()[0][0]
    con.execute("UPDATE icu.procedureevents SET patientweight = 70.5 WHERE orderid = $1", [order])
    con.execute("INSERT INTO icu.procedureevents SELECT p.* REPLACE (v.x AS patientweight) FROM icu.procedureevents p, "
                "(VALUES ('NaN'::DOUBLE), (NULL), (-1.5), ('NaN'::DOUBLE), (1e9)) AS v(x) WHERE p.orderid = $1", [order])
    con.close()
    with open_store_reader(store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
        got = ep.timeline_rows("procedureevents")
        assert repr((got.columns, got.rows)) == repr(_rows(ep.timeline("procedureevents")))  # repr: NaN is no NaN
        at = got.columns.index("orderid")
        alike = [repr(row[got.columns.index("patientweight")]) for row in got.rows if row[at] == order]
        assert alike == ["-1.5", "70.5", "1000000000.0", "nan", "nan", "None"], alike


def test_timeline_rows_alike_in_event_time_and_key_keep_the_total_order(small_store: Path, tmp_path: Path) -> None:
    # rows equal in event time and key are ordered by every other column (text by its bytes, NULLs last), and
    # NULL keys sort after the keyed rows of their time: the reader's rows in the Arrow timeline's order
    # (icu.procedureevents: its key is the store's own, not renumbered per episode)
    con = duckdb.connect(str(small_store), read_only=True)
    first = con.execute("SELECT min(orderid) FROM icu.procedureevents WHERE subject_id = $1 AND starttime < $2",
                        [S, T]).fetchall()[0][0]
    con.close()
    alike = "($1, 'b'), ($1, 'a'), ($1, NULL), ($1, 'B'), ($1, 'é')"
    for i, values in enumerate((alike, alike + ", (NULL, 'z'), (NULL, 'a')")):  # then NULL keys too
        store = tmp_path / f"ties{i}.duckdb"
        store.write_bytes(small_store.read_bytes())
        con = duckdb.connect(str(store))
        con.execute("UPDATE icu.procedureevents SET location = '0 first' WHERE orderid = $1", [first])
        con.execute("INSERT INTO icu.procedureevents SELECT p.* REPLACE (v.id AS orderid, v.x AS location) FROM "
                    f"icu.procedureevents p, (VALUES {values}) AS v(id, x) WHERE p.orderid = $1", [first])
        con.close()
        with open_store_reader(store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
            got = ep.timeline_rows("procedureevents")
            assert repr((got.columns, got.rows)) == repr(_rows(ep.timeline("procedureevents")))
            at, location = got.columns.index("orderid"), got.columns.index("location")
            assert [row[location] for row in got.rows if row[at] == first] == ["0 first", "B", "a", "b", "é", None]
    assert [row[location] for row in got.rows if row[at] is None] == ["a", "z"]


def test_a_timeline_carries_the_dictionary_labels(demo_store: Path) -> None:
    key = _keys(demo_store, 1, seed=2)[0]
    with open_store_reader(demo_store) as reader, build_episode(reader, key) as ep:
        data = ep.timeline("labevents")
        labels = ep.execute(
            "SELECT l.labevent_id, d.label FROM labevents l LEFT JOIN d_labitems d USING (itemid)",
            tables=["labevents", "d_labitems"], max_rows=10**7,
        ).rows
        assert dict(zip(data.column("labevent_id").to_pylist(), data.column("label").to_pylist(), strict=True)) == dict(labels)


def test_a_closed_episode_refuses_timelines(small_store: Path) -> None:
    ep = build_episode(small_store, EpisodeKey(S, T))
    ep.close()
    with pytest.raises(Exception, match="closed"):
        ep.timeline("labevents")
    with pytest.raises(Exception, match="closed"):
        ep.timeline_rows("labevents")


def test_two_readers_of_one_store_share_nothing(small_store: Path) -> None:
    """No process-wide state: each reader has its own databases, dictionaries and watchdog; closing one
    leaves the other's episodes answering, and the closed one's open episode loads nothing more."""
    first, second = open_store_reader(small_store), open_store_reader(small_store)
    try:
        kept = build_episode(second, EpisodeKey(S, T))
        orphan = build_episode(first, EpisodeKey(S, T))
        orphan.execute("SELECT count(*) FROM patients", tables=["patients"])
        first.close()
        with pytest.raises(StoreError, match="closed"):
            orphan.execute("SELECT count(*) FROM labevents", tables=["labevents"])
        orphan.close()
        with kept:
            assert kept.execute("SELECT DISTINCT subject_id FROM labevents", tables=["labevents"]).rows == [(S,)]
        with build_episode(second, EpisodeKey(OTHER, T)) as other:
            assert other.execute("SELECT DISTINCT subject_id FROM labevents", tables=["labevents"]).rows == [(OTHER,)]
    finally:
        first.close()
        second.close()


def test_a_code_the_dictionary_does_not_list_has_no_label(small_store: Path, tmp_path: Path) -> None:
    # rows and the Arrow timeline alike: NULL labels for an itemid d_labitems lacks, the listed ones looked up (a
    # resulted row is changed, marked in `comments`: the episode renumbers labevent_id, and a pending row shows
    # no itemid, so no label)
    store = tmp_path / "unlisted.duckdb"
    store.write_bytes(small_store.read_bytes())
    con = duckdb.connect(str(store))
    first = con.execute("SELECT min(labevent_id) FROM hosp.labevents WHERE subject_id = $1 AND storetime < $2",
                        [S, T]).fetchall()[0][0]
    con.execute("UPDATE hosp.labevents SET itemid = 999999999, comments = 'unlisted' WHERE labevent_id = $1", [first])
    con.close()
    with open_store_reader(store) as reader, build_episode(reader, EpisodeKey(S, T), queries=False) as ep:
        got = ep.timeline_rows("labevents")
        assert repr((got.columns, got.rows)) == repr(_rows(ep.timeline("labevents")))
        cols = {c: i for i, c in enumerate(got.columns)}
        named = [row for row in got.rows if row[cols["itemid"]] is not None]
        assert [row[cols["label"]] for row in named if row[cols["comments"]] == "unlisted"] == [None]
        assert all(row[cols["label"]] is not None for row in named if row[cols["comments"]] != "unlisted")
        lookup = reader.dictionary_lookup("hosp.d_labitems", ("itemid",), "label")
        d_labitems = reader.dictionary("hosp.d_labitems")
        assert lookup == dict(zip(((i,) for i in d_labitems.column("itemid").to_pylist()),
                                  d_labitems.column("label").to_pylist(), strict=True))
