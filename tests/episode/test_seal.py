"""The episode is sealed: no attached store, no files, no network, no settings, no writes."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from clinseek.episode import Episode, EpisodeQueryError
from clinseek.episode._sealed import new_sealed

REFUSED_BY_TYPE = [
    "ATTACH '{store}' AS s (READ_ONLY)",
    "DETACH memory",
    "COPY (SELECT 1) TO '{tmp}/out.csv'",
    "COPY hosp.labevents FROM '{tmp}/in.csv'",
    "EXPORT DATABASE '{tmp}/dump'",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "RESET enable_external_access",
    "SET threads = 8",
    "PRAGMA threads = 8",
    "PRAGMA enable_profiling",
    "INSTALL httpfs",
    "LOAD httpfs",
    "CREATE TABLE x AS SELECT 1",
    "CREATE VIEW v AS SELECT 1",
    "CREATE MACRO m(a) AS a",
    "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
    "INSERT INTO hosp.patients (subject_id) VALUES (2)",
    "UPDATE hosp.admissions SET dischtime = NULL",
    "DELETE FROM hosp.labevents",
    "DROP TABLE hosp.labevents",
    "ALTER TABLE hosp.labevents ADD COLUMN x INTEGER",
    "USE hosp",
    "CHECKPOINT",
    "CALL pragma_version()",
    "EXPLAIN SELECT 1",
    "SELECT 1; SELECT 2",
    "SELECT 1; DROP TABLE hosp.labevents",
    "BEGIN TRANSACTION",
    "VACUUM",
    "SET VARIABLE x = 1",
    "PREPARE p AS SELECT 1",
]

FAILS_IN_DUCKDB = [
    "SELECT * FROM read_csv('{store}')",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM read_parquet('{tmp}/*.parquet')",
    "SELECT * FROM read_json('{tmp}/x.json')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_blob('{store}')",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM '{store}'",
    "SELECT * FROM 'https://example.com/x.csv'",
    "SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')",
    "SELECT * FROM sqlite_scan('{store}', 'x')",
    "SELECT * FROM leaked_rows",
    "SELECT * FROM clinseek_store.hosp.labevents",
    "SELECT * FROM cxr.chexpert",
    "SELECT * FROM query('SELECT * FROM read_csv(''/etc/passwd'')')",
]


def test_only_memory_system_temp_databases(sealed: Episode) -> None:
    names = {r[0] for r in sealed.execute("SELECT database_name FROM duckdb_databases()").rows}
    assert names == {"memory", "system", "temp"}
    paths = {r[0] for r in sealed.execute("SELECT path FROM duckdb_databases()").rows}
    assert paths == {None}


def test_configuration_is_locked(sealed: Episode) -> None:
    settings = dict(
        sealed.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('enable_external_access', 'lock_configuration', 'python_enable_replacements')"
        ).rows
    )
    assert settings == {
        "enable_external_access": "false",
        "lock_configuration": "true",
        "python_enable_replacements": "false",
    }


@pytest.mark.parametrize("template", REFUSED_BY_TYPE)
def test_non_queries_are_refused(sealed: Episode, small_store: Path, tmp_path: Path, template: str) -> None:
    sql = template.format(store=small_store, tmp=tmp_path)
    with pytest.raises((EpisodeQueryError, duckdb.Error)):
        sealed.execute(sql)
    assert sealed.execute("SELECT count(*) FROM hosp.labevents").rows == [(2,)]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("template", FAILS_IN_DUCKDB)
def test_file_network_and_catalog_escapes_fail(
    sealed: Episode, small_store: Path, tmp_path: Path, template: str
) -> None:
    leaked_rows = pa.table({"subject_id": [2]})  # a Python replacement scan would find this local  # noqa: F841
    (tmp_path / "x.json").write_text('{"a": 1}')
    with pytest.raises(duckdb.Error):
        sealed.execute(template.format(store=small_store, tmp=tmp_path))


def test_python_replacement_scans_are_off(sealed: Episode) -> None:
    leaked_rows = pa.table({"subject_id": [2]})  # noqa: F841
    with pytest.raises(duckdb.CatalogException):
        sealed.execute("SELECT * FROM leaked_rows")


def test_refusal_names_the_statement_kind(sealed: Episode) -> None:
    with pytest.raises(EpisodeQueryError, match="got a DROP statement") as info:
        sealed.execute("DROP TABLE hosp.labevents")
    assert info.value.kind == "read_only"
    with pytest.raises(EpisodeQueryError, match="exactly one statement"):
        sealed.execute("SELECT 1; SELECT 2")


def test_runaway_query_cannot_spill_to_disk(small_store: Path) -> None:
    from clinseek.episode import EpisodeKey, build_episode
    from policy.crafted import S, T

    with build_episode(small_store, EpisodeKey(S, T), memory_limit="64MB") as ep:
        assert ep.execute("SELECT current_setting('temp_directory')").rows == [("",)]
        with pytest.raises(duckdb.OutOfMemoryException):
            ep.execute("SELECT * FROM range(30000000) t(a) ORDER BY hash(a)", timeout_s=30)


def test_a_sealed_database_starts_no_threads() -> None:
    """A sealed database runs its statements on the caller's thread: creating one starts no thread of its own (DuckDB's
    default starts asynchronous I/O threads per database; a runner holds one database per question in flight)."""
    def threads() -> int:
        return len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 0

    if not threads():
        pytest.skip("no /proc/self/task on this platform")
    before = threads()
    made = [new_sealed("256MB") for _ in range(4)]
    try:
        made[0][0].execute("SELECT count(*) FROM range(100000)").fetchall()
        started = threads() - before
    finally:
        for con, _ in made:
            con.close()
    assert started < 4, f"4 sealed databases started {started} threads"
