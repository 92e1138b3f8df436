"""The store's event index: an episode's inventory read from it is exactly the per-table policy statements'.

Every store built by ingest, the synthetic generator and the crafted fixtures carries the index
(``clinseek_meta.event_index``); the reader takes an inventory from it only while the store's row counts
are those recorded with it. Compared here key by key against the same reader with the index switched
off: every admission's start, middle and end (one second either side), both policies, with and without
a target encounter, on the crafted, hole and synthetic stores and the MIMIC-IV demo. The visible
encounter ids read in the same statement are compared with the policy's own encounter statements
(``Policy.encounter_selects``).
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from clinseek.episode import EpisodeKey, build_episode, open_store_reader
from clinseek.episode._reader import StoreReader, TableInventory
from clinseek.policy import get_policy
from clinseek.schema import get_table
from clinseek.store import EVENT_INDEX, indexable, valid_event_index, write_event_index
from policy.holes import build_holes_store

POLICIES = ("clinseek-text-v1", "multimodal-strict-temporal-scope-v1")


def _norm(inventory: dict[str, TableInventory]) -> dict[str, tuple[int, list[Any] | None]]:
    return {k: (v.rows, None if v.times is None else v.times.to_pylist()) for k, v in inventory.items()}


def _keys(store: Path, every: int = 1) -> list[EpisodeKey]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        admissions = con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM hosp.admissions "
            "WHERE admittime IS NOT NULL AND dischtime IS NOT NULL ORDER BY subject_id, admittime, hadm_id"
        ).fetchall()
        stays = dict(con.execute("SELECT hadm_id, min(stay_id) FROM icu.icustays GROUP BY hadm_id").fetchall())
    finally:
        con.close()
    second = dt.timedelta(seconds=1)
    keys = []
    for subject_id, hadm_id, admit, disch in admissions[::every]:
        cutoffs = (admit - second, admit + second, admit + (disch - admit) / 2, disch, disch + second,
                   disch + dt.timedelta(days=500))
        for policy in POLICIES:
            for cutoff in cutoffs:
                keys.append(EpisodeKey(subject_id, cutoff, policy))
            keys.append(EpisodeKey(subject_id, disch + second, policy, target_hadm_id=hadm_id,
                                   target_stay_id=stays.get(hadm_id)))
    return keys


def _encounters(reader: StoreReader, key: EpisodeKey) -> dict[str, list[int]]:
    """The policy's own encounter statements (``Policy.encounter_selects``), ids ascending."""
    return {owner: sorted(ids) for owner, ids in reader.encounters(get_policy(key.policy), key).items()}


def _check_same(reader: StoreReader, keys: list[EpisodeKey]) -> None:
    assert reader.indexed, "the store has no valid event index"
    indexed = reader.indexed
    seen = 0
    for key in keys:
        policy = get_policy(key.policy)
        inventory, encounters = reader.survey(policy, key)
        reader.indexed = frozenset()
        try:
            per_table, per_table_encounters = reader.survey(policy, key)
        finally:
            reader.indexed = indexed
        assert _norm(inventory) == _norm(per_table) == _norm(reader.inventory(policy, key)), key
        assert encounters == per_table_encounters == _encounters(reader, key), key
        seen += sum(map(len, encounters.values()))
    assert seen, "no key saw an encounter"


def test_crafted_and_hole_stores_give_the_same_inventory_from_the_index(small_store: Path, tmp_path: Path) -> None:
    holes = build_holes_store(tmp_path / "holes.duckdb")
    for store in (small_store, holes):
        with open_store_reader(store) as reader:
            _check_same(reader, _keys(store, every=3))


def test_synthetic_store_gives_the_same_inventory_from_the_index(synthetic_store: Path) -> None:
    with open_store_reader(synthetic_store) as reader:
        assert reader.indexed == {n for n in reader.present if indexable(get_table(n))}
        _check_same(reader, _keys(synthetic_store, every=30))


@pytest.mark.slow
def test_demo_store_gives_the_same_inventory_from_the_index(demo_store: Path) -> None:
    with open_store_reader(demo_store) as reader:
        _check_same(reader, _keys(demo_store, every=40))


def test_a_store_changed_after_ingest_falls_back_to_the_per_table_statements(small_store: Path, tmp_path: Path) -> None:
    changed = tmp_path / "changed.duckdb"
    shutil.copy(small_store, changed)
    with open_store_reader(changed) as reader:
        key = EpisodeKey(1, dt.datetime(2150, 6, 10, 12), "clinseek-text-v1")
        before = _norm(reader.inventory(get_policy(key.policy), key))
        assert reader.indexed
    con = duckdb.connect(str(changed))
    try:  # a lab row the index does not know, visible at the cutoff
        con.execute(
            "INSERT INTO hosp.labevents SELECT * REPLACE (labevent_id + 1000 AS labevent_id) "
            "FROM hosp.labevents WHERE subject_id = 1 AND charttime < TIMESTAMP '2150-06-10 12:00' LIMIT 1"
        )
        assert valid_event_index(con, {"hosp.labevents", "hosp.patients"}) == frozenset()
    finally:
        con.close()
    with open_store_reader(changed) as reader:
        assert reader.indexed == frozenset()
        after = _norm(reader.inventory(get_policy(key.policy), key))
        with build_episode(reader, key) as ep:
            assert ep.table_counts()["hosp.labevents"] == after["hosp.labevents"][0]
            assert ep.execute("SELECT count(*) FROM hosp.labevents", tables=["labevents"]).rows[0][0] == after["hosp.labevents"][0]
    assert after["hosp.labevents"][0] == before["hosp.labevents"][0] + 1


def test_a_store_without_the_index_is_read_per_table(small_store: Path, tmp_path: Path) -> None:
    old = tmp_path / "old.duckdb"
    shutil.copy(small_store, old)
    con = duckdb.connect(str(old))
    try:
        con.execute(f"DROP TABLE {EVENT_INDEX}")
    finally:
        con.close()
    key = EpisodeKey(1, dt.datetime(2150, 6, 10, 12), "clinseek-text-v1")
    with open_store_reader(old) as reader, open_store_reader(small_store) as indexed:
        assert reader.indexed == frozenset() and indexed.indexed
        policy = get_policy(key.policy)
        assert _norm(reader.inventory(policy, key)) == _norm(indexed.inventory(policy, key))


def test_an_index_of_an_older_layout_is_not_used_until_it_is_rewritten(small_store: Path, tmp_path: Path) -> None:
    """A store indexed by an older clinseek (no ``event_index_version`` 2: VARCHAR names, no encounter ids) is
    read per table with the same inventory and encounters; rewriting the index (as the next ingest does) restores it."""
    old = tmp_path / "old_layout.duckdb"
    shutil.copy(small_store, old)
    con = duckdb.connect(str(old))
    try:
        con.execute(f"CREATE OR REPLACE TABLE {EVENT_INDEX} AS SELECT CAST(table_name AS VARCHAR) AS table_name, "
                    f"subject_id, event_time, target_id FROM {EVENT_INDEX}")
        con.execute("DELETE FROM clinseek_meta.store_info WHERE key = 'event_index_version'")
        assert valid_event_index(con, {"hosp.labevents", "hosp.patients"}) == frozenset()
    finally:
        con.close()
    keys = _keys(small_store, every=4)
    with open_store_reader(old) as reader, open_store_reader(small_store) as indexed:
        assert reader.indexed == frozenset() and indexed.indexed
        for key in keys:
            policy = get_policy(key.policy)
            got, want = reader.survey(policy, key), indexed.survey(policy, key)
            assert (_norm(got[0]), got[1]) == (_norm(want[0]), want[1]), key
    con = duckdb.connect(str(old))
    try:
        write_event_index(con)
    finally:
        con.close()
    with open_store_reader(old) as reader:
        assert reader.indexed == indexed.indexed
        _check_same(reader, keys)


def test_the_index_carries_the_encounter_ids_of_the_encounter_tables(small_store: Path) -> None:
    """``encounter_id`` is set exactly for the rows of ``hosp.admissions``, ``icu.icustays`` and ``ed.edstays``
    (their own ids) and the names are a one-byte ENUM."""
    con = duckdb.connect(str(small_store), read_only=True)
    try:
        rows = dict(con.execute(
            f"SELECT CAST(table_name AS VARCHAR), count(encounter_id) FROM {EVENT_INDEX} GROUP BY ALL"
        ).fetchall())
        admissions = con.execute(
            f"SELECT count(*) FROM {EVENT_INDEX} i JOIN hosp.admissions a ON i.encounter_id = a.hadm_id "
            "AND i.subject_id = a.subject_id AND i.event_time = a.admittime WHERE i.table_name = 'hosp.admissions'"
        ).fetchall()[0][0]
        kind = con.execute(
            f"SELECT data_type FROM duckdb_columns() WHERE schema_name || '.' || table_name = '{EVENT_INDEX}' "
            "AND column_name = 'table_name'"
        ).fetchall()[0][0]
    finally:
        con.close()
    assert {name for name, n in rows.items() if n} == {"hosp.admissions", "icu.icustays", "ed.edstays"} & set(rows)
    assert "hosp.admissions" in rows and admissions == rows["hosp.admissions"]
    assert kind.startswith("ENUM(")
