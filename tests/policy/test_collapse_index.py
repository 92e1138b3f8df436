"""Microbiology in the event index (layout 3): the survey counts exactly the rows the policy's own select keeps.

The collapse of pending results (one row per culture and test while its result is not known) is stored at
ingest as one index row per interval in which a row is kept (``clinseek.store._collapse``). Checked at every
cutoff around every breakpoint (each event and result instant, one second before, at and after it) of every
microbiology row, under both policies (``<`` and ``<=``): the survey's index part against the policy's
visible rows (``Policy.timeline_select``), on an adversarial store (pending then final, results re-reported
later, NULL times and ids, ties of ids and instants, rows of other encounters and patients in the same group
keys, a row kept, then not, then kept again, a result stored before the specimen) and on the MIMIC-IV demo.

Every cutoff of a patient is checked in one statement: the policy's SQL with its subject and cutoff
parameters read from a table of (subject, cutoff) pairs through a ``LATERAL`` join; a sample of the same
keys also goes through ``StoreReader.survey`` itself, one key at a time.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import re
import shutil
from itertools import groupby
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.episode import open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY, EpisodeKey, get_policy
from clinseek.schema import get_table, tables
from clinseek.store import EVENT_INDEX, EVENT_INDEX_VERSION, event_index_layout, ingest
from clinseek.store._collapse import (
    BATCH_ROWS,
    _group_rows,
    collapse_index_rows,
    collapse_index_select,
    kept_intervals,
)
from clinseek.store._eventindex import _timed

from .crafted import DONE, LATER, OPEN, OTHER, ROWS, S, d, ts, write_store

MICRO = "hosp.microbiologyevents"
POLICIES = (TEXT_POLICY, MM_POLICY)  # cutoff exclusive, inclusive


def _micro(microevent_id: int | None, spec: int | None, test: int | None, chart: str | None, stored: str | None, *,
           chartdate: str | None = None, storedate: str | None = None, subject_id: int = S,
           hadm_id: int | None = OPEN) -> dict[str, Any]:
    return dict(
        microevent_id=microevent_id, subject_id=subject_id, hadm_id=hadm_id, micro_specimen_id=spec,
        chartdate=d(chartdate) if chartdate else (d(chart[:5]) if chart else None),
        charttime=ts(chart) if chart else None, spec_type_desc="BLOOD CULTURE", test_itemid=test,
        test_name="Blood Culture", storetime=ts(stored) if stored else None,
        storedate=d(storedate) if storedate else (d(stored[:5]) if stored else None),
        org_name="E. COLI", ab_name="CEFTRIAXONE", interpretation="R",
    )


ADVERSARIAL = [
    # pending, then a preliminary result, the same culture re-reported a day later, one row never resulted
    _micro(1, 70, 1, "06-01 08:00", "06-03 08:00"),
    _micro(2, 70, 1, "06-01 08:00", "06-04 10:00"),
    _micro(3, 70, 1, "06-01 08:00", None),
    # a result that reverts: 11 is the only pending row (kept), then 10 (a lower id) is drawn and 11 is not kept,
    # then 10 is resulted and 11 is kept again; 12 was stored before its specimen time
    _micro(11, 71, 1, "06-02 06:00", "06-06 00:00"),
    _micro(10, 71, 1, "06-02 12:00", "06-05 00:00"),
    _micro(12, 71, 1, "06-02 13:00", "06-02 11:00"),
    # ties: one id twice (same specimen time, results a minute apart), equal instants across rows, and an
    # event time equal to another row's result instant, resulted at its own event time
    _micro(20, 72, 2, "06-03 08:00", "06-04 08:00"),
    _micro(20, 72, 2, "06-03 08:00", "06-04 08:01"),
    _micro(21, 72, 2, "06-03 08:00", "06-04 08:00"),
    _micro(22, 72, 2, "06-04 08:00", "06-04 08:00"),
    # NULL times: a specimen known by its date only, a result by its date only, no specimen time at all, no
    # result at all, a NULL id (ordered last) and a NULL test
    _micro(30, 73, None, None, None, chartdate="06-03", storedate="06-05"),
    _micro(31, 73, None, None, "06-04 00:00", chartdate=None),
    _micro(None, 73, None, "06-03 12:00", None),
    _micro(32, 73, None, "06-05 00:00", None),
    # a NULL specimen and test, rows of other encounters (and none) in one group
    _micro(40, None, None, "06-01 00:00", "06-07 00:00", hadm_id=DONE),
    _micro(41, None, None, "05-31 00:00", "06-08 00:00", hadm_id=LATER),
    _micro(42, None, None, "06-06 00:00", "06-06 12:00", hadm_id=None),
    # another patient with the same group keys: never in this patient's groups
    _micro(5, 70, 1, "06-01 09:00", None, subject_id=OTHER),
    _micro(4, 70, 1, "06-01 07:00", "06-02 00:00", subject_id=OTHER),
    _micro(6, None, None, "05-30 00:00", None, subject_id=OTHER, hadm_id=None),
]


LABS = "hosp.labevents"


def _cutoffs(con: duckdb.DuckDBPyConnection, table: str = MICRO) -> list[tuple[int, dt.datetime]]:
    """(subject, cutoff): one second before, at and after every event and result instant of every row."""
    if table == LABS:
        return con.execute(
            f"SELECT DISTINCT subject_id, x + o * INTERVAL 1 SECOND FROM (SELECT subject_id, charttime AS x FROM {LABS} "
            f"UNION SELECT subject_id, coalesce(storetime, charttime) FROM {LABS}), (VALUES (-1), (0), (1)) AS _o(o) "
            "WHERE x IS NOT NULL ORDER BY 1, 2"
        ).fetchall()
    return con.execute(
        f"SELECT DISTINCT subject_id, x + o * INTERVAL 1 SECOND FROM (SELECT subject_id, coalesce(charttime, "
        f"chartdate + INTERVAL 1 DAY) AS x FROM {MICRO} UNION SELECT subject_id, coalesce(storetime, storedate + "
        f"INTERVAL 1 DAY) FROM {MICRO}), (VALUES (-1), (0), (1)) AS _o(o) WHERE x IS NOT NULL ORDER BY 1, 2"
    ).fetchall()


def _at_every_cutoff(con: duckdb.DuckDBPyConnection, query: tuple[str, list[Any]], cutoffs: list[tuple[int, dt.datetime]],
                     count: str, times: str) -> pa.Table:
    """``query`` (a policy statement; ``$1`` the subject, ``$2`` the cutoff) at every (subject, cutoff): its rows
    aggregated over ``_v`` into ``n`` (``count``) and ``times`` (``times``), one row per pair sorted by pair; a pair
    without rows (or ``n`` 0) is absent. Arrow, not Python objects: the demo's labs give millions of times."""
    sql = re.sub(r"\$2\b", "_c.cutoff", re.sub(r"\$1\b", "_c.subject_id", query[0]))
    return con.sql(
        f"SELECT _c.subject_id, _c.cutoff, CAST({count} AS BIGINT) AS n, CAST({times} AS TIMESTAMP[]) AS times "
        f"FROM (SELECT unnest($1) AS subject_id, unnest($2) AS cutoff) AS _c, LATERAL ({sql}) AS _v GROUP BY 1, 2 "
        "HAVING n <> 0 ORDER BY 1, 2",
        params=[[s for s, _ in cutoffs], [c for _, c in cutoffs], *query[1][2:]],
    ).to_arrow_table()


def _difference(got: pa.Table, want: pa.Table) -> str:
    """The first (subject, cutoff) whose rows differ (for the failure message)."""
    mine = {(s, c): (n, t) for s, c, n, t in zip(*(got.column(i).to_pylist() for i in range(4)), strict=True)}
    theirs = {(s, c): (n, t) for s, c, n, t in zip(*(want.column(i).to_pylist() for i in range(4)), strict=True)}
    for pair in sorted(mine.keys() | theirs.keys()):
        if mine.get(pair) != theirs.get(pair):
            return f"at {pair}: the survey {mine.get(pair)}, the policy's rows {theirs.get(pair)}"
    return f"no pair differs: {got.schema} vs {want.schema}"


def _check_every_cutoff(store: Path, *, sample: int, table: str = MICRO, every: int = 1) -> int:
    """The survey's part of ``table`` (microbiology, labs) equals the policy's visible rows at every ``every``-th
    cutoff (both policies), and ``StoreReader.survey`` gives the same for every ``sample``-th key. Returns the rows
    compared."""
    compared = 0
    with open_store_reader(store) as reader, duckdb.connect(str(store), read_only=True) as con:
        assert table in reader.indexed, f"the store's event index does not cover {table}"
        cutoffs = _cutoffs(con, table)[::every]
        for name in POLICIES:
            policy = get_policy(name)
            key = EpisodeKey(cutoffs[0][0], cutoffs[0][1], name)
            visible = policy.timeline_select(get_table(table), key, present=reader.present)
            survey = policy.visible_inventory_select(key, present=[table], indexed=reader.indexed)
            assert visible is not None and survey is not None and "event_index" in survey[0]
            want = _at_every_cutoff(con, visible, cutoffs, "count(*)", "list(_v._event_time ORDER BY _v._event_time)")
            got = _at_every_cutoff(con, survey, cutoffs, "sum(_v.n)", "flatten(list(_v.times))")
            assert got.equals(want), (name, _difference(got, want))
            compared += pc.sum(want.column("n")).as_py() or 0
            row = {pair: i for i, pair in enumerate(zip(want.column("subject_id").to_pylist(),
                                                        want.column("cutoff").to_pylist(), strict=True))}
            for subject_id, cutoff in cutoffs[::sample]:
                key = EpisodeKey(subject_id, cutoff, name)
                found = reader.survey(policy, key)[0][table]
                times = None if found.times is None else found.times.to_pylist()
                i = row.get((subject_id, cutoff))
                expected = (0, []) if i is None else (want["n"][i].as_py(), want["times"][i].as_py())
                assert (found.rows, times if found.rows else []) == expected, key
    return compared


def _norm(inventory: dict[str, Any]) -> dict[str, tuple[int, list[Any] | None]]:
    return {n: (v.rows, None if v.times is None else v.times.to_pylist()) for n, v in inventory.items()}


def test_kept_intervals_follow_the_collapse_rule() -> None:
    t = [dt.datetime(2150, 1, day) for day in range(1, 8)]
    # one row: kept from its event time on, whatever its result
    assert kept_intervals([(t[1], None)]) == [[(t[1], None)]]
    # the later-drawn row with the lower id blocks the other while it is pending; once the first result is known no
    # pending row shows: the other is kept again only with its own result (rule change, attack19: was from t[4])
    assert kept_intervals([(t[2], t[4]), (t[1], t[5])]) == [[(t[2], None)], [(t[1], t[2]), (t[5], None)]]
    # a row resulted before the first one's result hides the first one, pending, until its own result (attack19)
    assert kept_intervals([(t[1], t[6]), (t[1], t[3])]) == [[(t[1], t[3]), (t[6], None)], [(t[3], None)]]
    # a result stored before the specimen time: known as soon as visible, and the pending row goes then
    assert kept_intervals([(t[1], None), (t[2], t[0])]) == [[(t[1], t[2])], [(t[2], None)]]


@pytest.fixture(scope="module")
def adversarial_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = {**ROWS, MICRO: [*ROWS[MICRO], *ADVERSARIAL]}
    out = tmp_path_factory.mktemp("collapse") / "collapse.duckdb"
    return write_store(out, rows, "tests/policy/test_collapse_index.py")


def test_every_cutoff_of_an_adversarial_store(adversarial_store: Path) -> None:
    store = adversarial_store
    assert _check_every_cutoff(store, sample=5) > 0
    with duckdb.connect(str(store), read_only=True) as con:  # a row kept in two intervals: the one that reverts
        assert con.execute(f"SELECT count(*) FROM {EVENT_INDEX} WHERE table_name = '{MICRO}' AND valid_until "
                           "IS NOT NULL").fetchall()[0][0] > 0


def test_the_stored_collapse_is_the_windows_at_every_cutoff_of_an_adversarial_store(adversarial_store: Path) -> None:
    """The store keeps when the collapse keeps each row (``_clinseek_kept_from``; a row kept in several intervals, of a
    group of several event times: ``_clinseek_kept_list``): the visible rows and values are those of the policy's
    windows (PostgreSQL's, an older store's) one second before, at and after every instant, both policies."""
    table = get_table(MICRO)
    with open_store_reader(adversarial_store) as reader, duckdb.connect(str(adversarial_store), read_only=True) as con:
        stored = reader.instants
        assert stored[MICRO].kept is not None
        kept_list = stored[MICRO].kept[1]
        assert con.execute(f'SELECT count(*) FROM {MICRO} WHERE len("{kept_list}") > 1').fetchall()[0][0] > 0
        windowed = {**stored, MICRO: dataclasses.replace(stored[MICRO], kept=None, renumbers={})}
        compared = 0
        for subject_id, cutoff in _cutoffs(con):
            for name in POLICIES:
                key, policy = EpisodeKey(subject_id, cutoff, name), get_policy(name)
                got = con.execute(*policy.visible_select(table, key, present=reader.present, instants=stored)).fetchall()
                want = con.execute(*policy.visible_select(table, key, present=reader.present, instants=windowed)).fetchall()
                rows = sorted(map(repr, got))
                assert rows == sorted(map(repr, want)), key
                compared += len(rows)
    assert compared > 100


def _as_layout_2(store: Path) -> None:
    """Make ``store``'s event index what layout 2 wrote: no intervals, no microbiology rows, version 2."""
    with duckdb.connect(str(store)) as con:
        con.execute(f"CREATE OR REPLACE TABLE {EVENT_INDEX} AS SELECT table_name, subject_id, event_time, target_id, "
                    f"encounter_id FROM {EVENT_INDEX} WHERE table_name <> '{MICRO}'")
        con.execute(f"UPDATE {EVENT_INDEX}_tables SET indexed = false WHERE table_name = '{MICRO}'")
        con.execute("UPDATE clinseek_meta.store_info SET value = '2' WHERE key = 'event_index_version'")
        assert event_index_layout(con) == "2"


def test_a_store_of_layout_2_counts_microbiology_per_table_until_it_is_rewritten(adversarial_store: Path,
                                                                                    tmp_path: Path) -> None:
    new = adversarial_store
    old = tmp_path / "layout2.duckdb"
    shutil.copy(new, old)
    _as_layout_2(old)
    keys = [EpisodeKey(S, cutoff, name) for name in POLICIES
            for cutoff in (ts("06-02 12:00"), ts("06-03 08:00"), ts("06-04 08:00"), ts("06-05 12:00"))]
    with open_store_reader(old) as reader, open_store_reader(new) as indexed:
        # the tables whose pending results collapse (microbiology, labs: labpend16) are read per table
        assert MICRO not in reader.indexed and reader.indexed == indexed.indexed - {MICRO, "hosp.labevents"}
        for key in keys:
            got, want = reader.survey(get_policy(key.policy), key), indexed.survey(get_policy(key.policy), key)
            assert _norm(got[0]) == _norm(want[0]), key
            assert got[1] == want[1]


@pytest.mark.slow
def test_every_cutoff_of_every_microbiology_row_of_the_demo(demo_store: Path) -> None:
    assert _check_every_cutoff(demo_store, sample=1500) > 10_000


@pytest.mark.slow
def test_every_seventh_cutoff_of_the_demo_labs(demo_store: Path) -> None:
    """Labs collapse one row per pending specimen (labpend16): the index's intervals give the policy's rows."""
    assert _check_every_cutoff(demo_store, sample=500, table=LABS, every=7) > 100_000


@pytest.mark.slow
def test_a_resumed_ingest_upgrades_an_index_of_layout_2(demo_store: Path, shared_data: Path, tmp_path: Path) -> None:
    old = tmp_path / "layout2.duckdb"
    shutil.copy(demo_store, old)
    _as_layout_2(old)
    with open_store_reader(old) as reader:
        assert MICRO in reader.present and MICRO not in reader.indexed and reader.indexed
    said = CliRunner().invoke(app, ["data", "info", str(old)], terminal_width=400)
    assert said.exit_code == 0 and "event index layout 2, not 3: microbiology and labs are counted apart" in said.output
    report = ingest(old, mimic_iv=shared_data / "mimic-iv-demo-2.2", ed=shared_data / "mimic-iv-ed-demo-2.2",
                    progress=False)
    assert {t.status for t in report.tables} == {"skipped"}  # nothing re-read: only the index rewritten
    with duckdb.connect(str(old), read_only=True) as con, duckdb.connect(str(demo_store), read_only=True) as new:
        assert event_index_layout(con) == EVENT_INDEX_VERSION
        index = f"SELECT * FROM {EVENT_INDEX} ORDER BY ALL"
        assert con.execute(index).fetchall() == new.execute(index).fetchall()
    with open_store_reader(old) as reader:
        assert MICRO in reader.indexed
    said = CliRunner().invoke(app, ["data", "info", str(old)], terminal_width=400)
    assert said.exit_code == 0 and "event_index_version: 3" in said.output and "event index layout" not in said.output


def _collapse_rows_at_once(con: duckdb.DuckDBPyConnection, name: str = MICRO) -> list[tuple[Any, ...]]:
    """The index rows of ``name`` as ``collapse_index_rows`` built them for every group with one ``fetchall``
    (main 3f1d214, before the groups of one event time were computed in SQL): the oracle, sorted."""
    table = get_table(name)
    timed = _timed(table, {t.qualified for t in tables()})
    assert timed is not None
    rows, group, sort = _group_rows(table, *timed)
    out = []
    found = con.execute(f"SELECT {', '.join(group)}, _e, _s FROM ({rows}) ORDER BY {', '.join(group)}, {sort}").fetchall()
    for key, members in groupby(found, key=lambda row: row[:len(group)]):
        kept = [(row[len(group)], row[len(group) + 1]) for row in members]
        for (event_time, _), intervals in zip(kept, kept_intervals(kept), strict=True):
            out += [(name, key[0], event_time, None, None, start, end) for start, end in intervals]
    return sorted(out, key=repr)


def _index_rows(con: duckdb.DuckDBPyConnection, name: str, batch_rows: int = BATCH_ROWS) -> tuple[list[Any], list[Any]]:
    """(the rows of ``collapse_index_select``, those of ``collapse_index_rows``) of ``name``."""
    table = get_table(name)
    timed = _timed(table, {t.qualified for t in tables()})
    assert timed is not None
    in_sql = con.execute(collapse_index_select(table, *timed)).fetchall()
    return in_sql, _python_rows(con, name, batch_rows)


def _python_rows(con: duckdb.DuckDBPyConnection, name: str, batch_rows: int) -> list[Any]:
    """The rows of ``collapse_index_rows`` of ``name``, read ``batch_rows`` at a time."""
    table = get_table(name)
    timed = _timed(table, {t.qualified for t in tables()})
    assert timed is not None
    in_python = collapse_index_rows(con, table, *timed, batch_rows=batch_rows)
    assert in_python.schema.names == ["table_name", "subject_id", "event_time", "target_id", "encounter_id",
                                      "valid_from", "valid_until"]
    return [tuple(r.values()) for r in in_python.to_pylist()]


@pytest.mark.parametrize(("which", "name"), [("adversarial_store", MICRO), ("demo_store", MICRO), ("demo_store", LABS)])
def test_the_collapse_rows_of_sql_and_python_are_the_oracles(which: str, name: str, request: pytest.FixtureRequest) -> None:
    """The groups of one event time in SQL, the others in Python read in batches of 1, 2, 7 rows and the default
    (groups split between batches are joined, the same rows in the same order): together, the rows of
    ``kept_intervals`` over every group."""
    store = request.getfixturevalue(which)
    with duckdb.connect(str(store), read_only=True) as con:
        want = _collapse_rows_at_once(con, name)
        assert len(want) > 5, f"too few {name} rows"
        in_sql, in_python = _index_rows(con, name)
        assert in_sql, "no group of one event time"
        assert sorted(in_sql + in_python, key=repr) == want
        if which == "adversarial_store":
            assert in_python, "no group of several event times"
        for batch in (1, 2, 7):  # the SQL part does not read in batches: computed once, above
            assert _python_rows(con, name, batch) == in_python, batch
        with pytest.raises(ValueError, match="batch_rows"):
            _python_rows(con, name, 0)


def test_groups_of_one_event_time_in_sql_are_kept_intervals(tmp_path: Path) -> None:
    """Random groups whose rows share one specimen time (results before, at and after it, equal, never known; ids
    tied and NULL): ``collapse_index_select`` gives ``kept_intervals``' one interval per kept row."""
    rng = random.Random(17)
    con = duckdb.connect()
    con.execute("CREATE SCHEMA hosp")
    con.execute("CREATE TABLE hosp.microbiologyevents (microevent_id INTEGER, subject_id INTEGER, micro_specimen_id "
                "INTEGER, test_itemid INTEGER, chartdate DATE, charttime TIMESTAMP, storedate DATE, storetime TIMESTAMP)")
    base = dt.datetime(2150, 1, 1)
    rows = []
    for spec in range(400):
        chart = base + dt.timedelta(hours=rng.randrange(48))
        for _ in range(rng.randint(1, 6)):
            stored = rng.choice([None, chart, chart - dt.timedelta(hours=1),
                                 *(chart + dt.timedelta(hours=rng.randrange(1, 6)) for _ in range(3))])
            rows.append((rng.choice([None, *range(8)]), spec % 3, spec, rng.choice([None, 1]), None, chart, None, stored))
    con.executemany("INSERT INTO hosp.microbiologyevents VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    in_sql, in_python = _index_rows(con, MICRO)
    assert not in_python
    assert sorted(in_sql, key=repr) == _collapse_rows_at_once(con, MICRO)
