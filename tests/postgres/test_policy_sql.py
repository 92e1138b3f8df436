"""The policy's SQL written for PostgreSQL gives, on a mimic-code database, exactly what the DuckDB SQL gives on
the store of the same data: every table's visible rows, the row counts and the visible encounters, for many keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from test_audit import random_keys

from clinseek.policy import EpisodeKey, get_policy
from clinseek.schema import tables
from clinseek.store._pgsource import PgSource
from duck_arrow import arrow
from pgserver import PgDatabase

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def demo_source(pg_demo: PgDatabase) -> Iterator[PgSource]:
    source = PgSource(pg_demo.reader_url)
    yield source
    source.close()


@pytest.fixture(scope="module")
def synthetic_source(pg_synthetic: PgDatabase) -> Iterator[PgSource]:
    source = PgSource(pg_synthetic.reader_url)
    yield source
    source.close()


def _sorted(data: pa.Table, blank_is_null: bool) -> pa.Table:
    if blank_is_null:  # a synthetic store may hold '' where ingest (and a PostgreSQL source) gives NULL
        for i, field in enumerate(data.schema):
            if pa.types.is_string(field.type):
                column = data.column(i)
                blank = pc.equal(pc.utf8_trim(column, characters=" "), "")
                data = data.set_column(i, field, pc.if_else(blank, pa.scalar(None, pa.string()), column))
    return data.sort_by([(name, "ascending") for name in data.column_names]) if data.num_rows else data


def _same(con: duckdb.DuckDBPyConnection, source: PgSource, sql: str, params: list[Any], *,
          blank_is_null: bool = False) -> int:
    """Run a policy query on both; the same schema and the same rows (in any order). Returns the row count."""
    expected = arrow(con, sql, params)  # planned once (tests/duck_arrow.py)
    got = source.arrow(sql, params, what="test")
    assert got.schema == expected.schema
    assert _sorted(got, blank_is_null).equals(_sorted(expected, blank_is_null))
    return expected.num_rows


def _check_keys(store: Path, source: PgSource, keys: list[EpisodeKey], *, blank_is_null: bool = False) -> int:
    con = duckdb.connect(str(store), read_only=True)
    checked = 0
    try:
        for i, key in enumerate(keys):
            policy = get_policy(key.policy)
            present = source.present
            inventory = policy.visible_inventory_select(key, present=present)  # rows and event times per table
            assert inventory is not None
            assert sorted(con.execute(*inventory).fetchall()) == sorted(source.tuples(*inventory, what="test"))
            encounters: dict[str, list[int]] = {}
            for owner, (sql, params) in policy.encounter_selects(key, present=present).items():
                ids = sorted(r[0] for r in con.execute(sql, params).fetchall())
                assert sorted(r[0] for r in source.tuples(sql, params, what="test")) == ids, owner
                encounters[owner] = ids
            for table in tables():
                if table.qualified not in present or table.visibility not in ("event", "static"):
                    continue
                # encounter masks as the builder lists them, and (for the first keys) as subqueries
                for listed in (encounters, None) if i < 2 else (encounters,):
                    query = policy.visible_select(table, key, present=present, encounters=listed)
                    if query is not None:
                        checked += _same(con, source, *query, blank_is_null=blank_is_null)
    finally:
        con.close()
    return checked


def test_every_table_renders_and_gives_the_rows_of_the_store(demo_store: Path, demo_source: PgSource) -> None:
    keys = random_keys(demo_store, 6, seed=25)
    keys += [EpisodeKey(k.subject_id, k.prediction_time, k.policy, target_stay_id=stay)
             for k, stay in zip(keys[:2], _ed_stays(demo_store, keys[:2]), strict=True)]
    assert _check_keys(demo_store, demo_source, keys) > 1000


def test_dictionaries_come_whole(demo_store: Path, demo_source: PgSource) -> None:
    con = duckdb.connect(str(demo_store), read_only=True)
    key = EpisodeKey(0, random_keys(demo_store, 1, seed=1)[0].prediction_time)
    try:
        for table in tables():
            if table.qualified in demo_source.present and table.visibility == "dictionary":
                query = get_policy(key.policy).visible_select(table, key, present=demo_source.present)
                assert query is not None
                assert _same(con, demo_source, *query) > 0
    finally:
        con.close()


def test_partitioned_chartevents_notes_and_linked_cxr_studies(synthetic_store: Path, synthetic_source: PgSource) -> None:
    keys = random_keys(synthetic_store, 4, seed=7)
    keys = [EpisodeKey(k.subject_id, k.prediction_time, k.policy, target_hadm_id=k.target_hadm_id,
                       study_ids=k.study_ids, hide_cxr_reports=i % 4 == 1) for i, k in enumerate(keys)]
    assert any(k.study_ids for k in keys)
    assert _check_keys(synthetic_store, synthetic_source, keys, blank_is_null=True) > 1000


def _ed_stays(store: Path, keys: list[EpisodeKey]) -> list[int | None]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        found = []
        for key in keys:
            row = con.execute("SELECT min(stay_id) FROM ed.edstays WHERE subject_id = ?", [key.subject_id]).fetchone()
            found.append(None if row is None else row[0])
        return found
    finally:
        con.close()
