"""Sealed episodes from a live PostgreSQL database are the episodes of the DuckDB store of the same demo: table by
table and row by row, inventory, curated timeline, for many (patient, cutoff) pairs; the leakage audit passes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from test_audit import audit_all, random_keys

from clinseek.bench import render_text_timeline
from clinseek.episode import (
    MM_POLICY,
    TEXT_POLICY,
    Episode,
    EpisodeKey,
    PostgresStoreReader,
    StoreReader,
    build_episode,
    open_store_reader,
)
from clinseek.store import connect_store
from pgserver import PgDatabase

psycopg = pytest.importorskip("psycopg")

PAIRS = 8
"""Pairs compared row by row (every value in Python); every patient is compared by fingerprint below."""


@pytest.fixture(scope="module")
def pg_reader(pg_demo: PgDatabase) -> Iterator[StoreReader]:
    with open_store_reader(pg_demo.reader_url) as reader:
        yield reader


@pytest.fixture(scope="module")
def duck_reader(demo_store: Path) -> Iterator[StoreReader]:
    with open_store_reader(demo_store) as reader:
        yield reader


def _keys(store: Path, n: int, seed: int) -> list[EpisodeKey]:
    keys = random_keys(store, n, seed=seed)
    import duckdb

    con = duckdb.connect(str(store), read_only=True)
    try:  # some keys hide an ED stay's codes too
        stays = dict(con.execute("SELECT subject_id, min(stay_id) FROM ed.edstays GROUP BY 1").fetchall())
    finally:
        con.close()
    return [EpisodeKey(k.subject_id, k.prediction_time, k.policy, target_hadm_id=k.target_hadm_id,
                       target_stay_id=stays.get(k.subject_id) if i % 5 == 2 else None, study_ids=k.study_ids)
            for i, k in enumerate(keys)]


def _table(ep: object, name: str) -> tuple[tuple[str, ...], tuple[str, ...], list[tuple[object, ...]]]:
    got = ep.execute(f"SELECT * FROM {name}", tables=[name], max_rows=10**7, timeout_s=60)  # type: ignore[attr-defined]
    return got.columns, got.types, sorted(got.rows, key=repr)


def test_the_reader_is_postgres(pg_reader: StoreReader, pg_demo: PgDatabase) -> None:
    assert isinstance(pg_reader, PostgresStoreReader) and pg_reader.dialect == "postgres"
    assert pg_reader.location == pg_demo.reader_url.replace(":reader-secret", "")
    assert "hosp.labevents" in pg_reader.present and "icu.chartevents" not in pg_reader.present


def test_episodes_from_postgres_equal_the_duckdb_stores_table_by_table(
    pg_reader: StoreReader, duck_reader: StoreReader, demo_store: Path
) -> None:
    compared = 0
    for key in _keys(demo_store, PAIRS, seed=2525):
        with build_episode(pg_reader, key) as live, build_episode(duck_reader, key) as stored:
            assert live.table_counts() == stored.table_counts(), key
            for name in stored.table_counts():
                assert _table(live, name) == _table(stored, name), (name, key)
                times = stored.event_times(name)
                assert (live.event_times(name) is None) == (times is None)
                if times is not None:
                    assert live.event_times(name).equals(times), (name, key)  # type: ignore[union-attr]
                compared += stored.table_counts()[name]
            assert render_text_timeline(live) == render_text_timeline(stored), key
    assert compared > 30_000


def _every_patient_keys(store: Path) -> list[EpisodeKey]:
    """Three cutoffs for every patient of the store: inside their first admission (its target), exactly at
    one of their lab times (the boundary itself; the multimodal policy), and the midnight after their last
    discharge (with their first ED stay as the target stay, where they have one)."""
    con = connect_store(store)
    try:
        rows = con.execute(
            "SELECT p.subject_id, a.hadm_id, a.admittime, a.dischtime, last_disch, lab, stay FROM hosp.patients p "
            "LEFT JOIN (SELECT subject_id, hadm_id, admittime, dischtime, max(dischtime) OVER (PARTITION BY subject_id) "
            "  AS last_disch FROM hosp.admissions QUALIFY row_number() OVER (PARTITION BY subject_id "
            "  ORDER BY admittime, hadm_id) = 1) a USING (subject_id) "
            "LEFT JOIN (SELECT subject_id, quantile_disc(charttime, 0.5) AS lab FROM hosp.labevents GROUP BY 1) l "
            "  USING (subject_id) "
            "LEFT JOIN (SELECT subject_id, min(stay_id) AS stay FROM ed.edstays GROUP BY 1) e USING (subject_id) "
            "ORDER BY p.subject_id"
        ).fetchall()
    finally:
        con.close()
    keys = []
    for subject_id, hadm_id, admit, disch, last_disch, lab, stay in rows:
        if hadm_id is None:
            continue
        keys.append(EpisodeKey(subject_id, admit + (disch - admit) / 2, TEXT_POLICY, target_hadm_id=hadm_id))
        keys.append(EpisodeKey(subject_id, lab or admit, MM_POLICY))
        midnight = datetime.combine(last_disch.date(), datetime.min.time()) + timedelta(days=1)
        keys.append(EpisodeKey(subject_id, midnight, TEXT_POLICY, target_stay_id=stay))
    return keys


def _fingerprint(ep: Episode, name: str) -> tuple[object, ...]:
    """Columns, types, row count and an order-free hash of every row of one table (computed in DuckDB)."""
    head = ep.execute(f"SELECT * FROM {name} LIMIT 0", tables=[name], timeout_s=60)
    body = ep.execute(f"SELECT count(*), sum(hash(t)::HUGEINT), bit_xor(hash(t)) FROM {name} t", tables=[name],
                      timeout_s=60)
    return head.columns, head.types, body.rows[0]


@pytest.mark.slow  # 50 pairs, every table loaded from both sources: ~45 s (all 300: ~5 min of one CPU)
@pytest.mark.timeout(1800)
def test_half_the_demo_patients_at_one_of_three_cutoffs(pg_reader: StoreReader, duck_reader: StoreReader,
                                                       demo_store: Path) -> None:
    every = _every_patient_keys(demo_store)
    assert len({k.subject_id for k in every}) == 100 and len(every) == 300
    keys = [every[3 * i + i % 3] for i in range(0, 100, 2)]  # every other patient; each kind of cutoff for a third
    rows = 0
    for i, key in enumerate(keys):
        with build_episode(pg_reader, key) as live, build_episode(duck_reader, key) as stored:
            counts = stored.table_counts()
            assert live.table_counts() == counts, key
            for name in counts:
                assert _fingerprint(live, name) == _fingerprint(stored, name), (name, key)
                rows += counts[name]
            if i % 10 == 0:
                assert render_text_timeline(live) == render_text_timeline(stored), key
    assert rows > 50_000


def test_the_leakage_audit_passes_on_the_postgres_source(pg_reader: StoreReader, demo_store: Path) -> None:
    checked = audit_all(demo_store, random_keys(demo_store, 6, seed=11), pg_reader)
    assert checked > 1000


def test_a_subject_the_database_does_not_hold(pg_reader: StoreReader) -> None:
    from clinseek.errors import EpisodeError

    with pytest.raises(EpisodeError, match=r"postgresql://clinseek_reader@.*: subject_id 1 is not in hosp\.patients"):
        build_episode(pg_reader, EpisodeKey(1, datetime(2150, 1, 1)))


def test_record_tools_on_a_postgres_source_load_the_table_and_give_the_duckdb_stores_text(
    pg_reader: StoreReader, duck_reader: StoreReader, demo_store: Path
) -> None:
    """A PostgreSQL source does not compose the record tools' statements (its collation, text functions and
    numeric types are not DuckDB's): the tools load the table and read the copy, and give the text the DuckDB
    store gives by one statement on the store."""
    from clinseek.tools import Limits, ToolContext, get_tool

    assert not pg_reader.composes and duck_reader.composes
    key = _keys(demo_store, 1, seed=7)[0]
    calls = [("ehr.get_records_by_time", {"table_name": "labevents", "start_time": "2100-01-01", "end_time": "2200-01-01"}),
             ("ehr.get_latest_records", {"table_name": "admissions"}),
             ("ehr.get_records_by_keyword", {"table_name": "prescriptions", "keyword": "a"}),
             ("ehr.get_records_by_value", {"table_name": "labevents", "column_name": "label", "value": "Creatinine"}),
             ("ehr.get_unique_values", {"table_name": "emar", "column_name": "event_txt"})]
    with build_episode(pg_reader, key) as live, build_episode(duck_reader, key) as stored:
        for name, args in calls:
            got = [get_tool(name).fn(ToolContext(ep, Limits(max_rows=5)), **args) for ep in (live, stored)]
            assert got[0].content == got[1].content and got[0].data == got[1].data, (name, args)
        loaded = live.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'hosp'", tables=()).rows
        assert {r[0] for r in loaded} >= {"labevents", "admissions", "prescriptions", "emar"}
        kept = stored.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'hosp'", tables=()).rows
        assert not {r[0] for r in kept} & {"labevents", "admissions", "prescriptions", "emar"}
