"""Attack (session 12, sqlload12): a store written through ``ATTACH ... ROW_GROUP_SIZE`` (an in-memory connection
with the file attached) is never open twice in one process by two DuckDB instances (two buffer managers on one
file: the reader's blocks stale or torn while the writer checkpoints). DuckDB's instance cache only knows files
opened by ``duckdb.connect(path)``; its unique file handles must refuse the second open either way, as a
``StoreError`` naming the file. And the store written so reads back complete (``check_complete``) after a second
write (a resumed ingest) that frees and adds blocks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clinseek.errors import StoreError
from clinseek.store import connect_store


def test_a_store_being_written_is_not_opened_again_for_reading(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    writer = connect_store(path, read_only=False)
    try:
        writer.execute("CREATE TABLE t AS SELECT range AS i FROM range(100000)")
        writer.execute("CHECKPOINT")
        with pytest.raises(StoreError, match=r"s\.duckdb"):
            connect_store(path).close()
    finally:
        writer.close()


def test_a_store_being_read_is_not_opened_again_for_writing(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    writer = connect_store(path, read_only=False)
    writer.execute("CREATE TABLE t AS SELECT range AS i FROM range(100000)")
    writer.close()
    reader = connect_store(path)
    try:
        with pytest.raises(StoreError, match=r"s\.duckdb"):
            connect_store(path, read_only=False).close()
        assert reader.execute("SELECT count(*) FROM t").fetchall() == [(100000,)]
    finally:
        reader.close()


@pytest.mark.parametrize("second", [
    ["DROP TABLE t", "CREATE TABLE u AS SELECT range AS i FROM range(1000)"],
    ["CREATE TABLE u AS SELECT range AS i, repeat('y', 80) AS s FROM range(300000)"],
    ["CREATE OR REPLACE TABLE t AS SELECT * FROM t WHERE i % 2 = 0", "CHECKPOINT"],
])
def test_a_store_written_twice_reads_back_complete(tmp_path: Path, second: list[str]) -> None:
    path = tmp_path / "s.duckdb"
    con = connect_store(path, read_only=False)
    con.execute("CREATE TABLE t AS SELECT range AS i, repeat('x', 50) || range AS s FROM range(200000)")
    con.close()
    con = connect_store(path, read_only=False)
    for sql in second:
        con.execute(sql)
    con.close()
    con = connect_store(path)  # check_complete: the file holds every block its header counts
    try:
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchall()[0][0] >= 1
    finally:
        con.close()
