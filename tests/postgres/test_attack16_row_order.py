"""attack16reach: a query without ORDER BY gives the same rows on an episode built from PostgreSQL as on the
episode of the DuckDB store of the same data.

Models write such queries all the time (``SELECT * FROM labevents LIMIT 20`` to look at a table, ``GROUP BY``
and ``DISTINCT`` without an order): of the 592 EHRSQL 2024 valid questions naming one demo patient, run through
``ehr.run_sql_query`` at a cutoff after all data, 7 gave other row orders on the PostgreSQL episode, and
``SELECT labevent_id, itemid, charttime FROM labevents LIMIT 5`` gave other rows (10004235: labevent_id 56737,
56738, ... from the DuckDB store; 57378, 57384, ... from PostgreSQL). The DuckDB store keeps each table in
its ingest order (the registry's sort columns, then the key) and the episode's rows came in that order; the
PostgreSQL reads came in the server's heap or index order.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from test_audit import random_keys

from clinseek.episode import StoreReader, build_episode, open_store_reader
from pgserver import PgDatabase

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def pg_reader(pg_demo: PgDatabase) -> Iterator[StoreReader]:
    with open_store_reader(pg_demo.reader_url) as reader:
        yield reader


@pytest.fixture(scope="module")
def duck_reader(demo_store: Path) -> Iterator[StoreReader]:
    with open_store_reader(demo_store) as reader:
        yield reader


def _in_order(ep: object, name: str) -> list[tuple[object, ...]]:
    got = ep.execute(f"SELECT * FROM {name}", tables=[name], max_rows=10**7, timeout_s=60)  # type: ignore[attr-defined]
    return list(got.rows)


def test_every_table_of_the_episode_comes_in_the_duckdb_stores_row_order(
    pg_reader: StoreReader, duck_reader: StoreReader, demo_store: Path
) -> None:
    differ = []
    for key in random_keys(demo_store, 6, seed=1616):
        with build_episode(pg_reader, key) as live, build_episode(duck_reader, key) as stored:
            for name in stored.table_counts():
                if _in_order(live, name) != _in_order(stored, name):
                    differ.append((key.subject_id, name))
    assert differ == []


def test_the_first_rows_of_an_unordered_query_are_the_same(pg_reader: StoreReader, duck_reader: StoreReader) -> None:
    from clinseek import open_episode

    sql = "SELECT labevent_id, itemid, charttime FROM labevents LIMIT 5"
    with open_episode(pg_reader, 10004235, datetime(2300, 1, 1)) as live, \
            open_episode(duck_reader, 10004235, datetime(2300, 1, 1)) as stored:
        assert live.call_tool("ehr.run_sql_query", {"sql_query": sql}).text == \
            stored.call_tool("ehr.run_sql_query", {"sql_query": sql}).text
        for table in ("d_labitems", "d_items"):  # dictionaries: 50808, 50826, ... from PostgreSQL; 50801, 50802, ...
            query = f"SELECT itemid FROM {table} LIMIT 5"
            assert live.call_tool("ehr.run_sql_query", {"sql_query": query}).text == \
                stored.call_tool("ehr.run_sql_query", {"sql_query": query}).text
