"""The wipe of a sealed database before reuse: whatever an episode left in it, recorded or not, the next episode
of the reader sees nothing of it (the database is wiped clean, or closed and replaced)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from clinseek.episode import Episode, EpisodeKey, _sealed, build_episode, open_store_reader
from policy.crafted import OTHER, S, T

_CATALOG = (
    "SELECT database_name, schema_name, table_name, 'TABLE' FROM duckdb_tables() "
    "UNION ALL SELECT database_name, schema_name, view_name, 'VIEW' FROM duckdb_views() WHERE NOT internal "
    "UNION ALL SELECT database_name, schema_name, sequence_name, 'SEQUENCE' FROM duckdb_sequences() "
    "UNION ALL SELECT database_name, '', '', 'DATABASE' FROM duckdb_databases() "
    "WHERE database_name NOT IN ('memory', 'system', 'temp')"
)
"""The catalog as a query sees it, filtered in SQL (the wipe's own check filters in Python)."""


def _catalog(con: duckdb.DuckDBPyConnection) -> set[tuple[str, ...]]:
    return {tuple(map(str, row)) for row in con.execute(_CATALOG).fetchall()}


def _con(ep: Episode) -> duckdb.DuckDBPyConnection:
    ep.execute("SELECT 1", tables=())  # the episode takes its database on its first query
    con = ep._con
    assert con is not None
    return con


# Objects an episode's database could be left holding that the episode did not record creating, as a bug
# elsewhere could leave them: each holds a row of the patient where it can.
_BEHIND_ITS_BACK: dict[str, Callable[[duckdb.DuckDBPyConnection], object]] = {
    "table in a module schema": lambda con: con.execute(f"CREATE TABLE hosp.stray AS SELECT {S} AS subject_id"),
    "table in main": lambda con: con.execute(f"CREATE TABLE main.stray AS SELECT {S} AS subject_id"),
    "empty table in icu": lambda con: con.execute("CREATE TABLE icu.stray (subject_id INTEGER)"),
    "view": lambda con: con.execute(f"CREATE VIEW ed.stray AS SELECT {S} AS subject_id"),
    "temporary table": lambda con: con.execute(f"CREATE TEMP TABLE stray AS SELECT {S} AS subject_id"),
    "registered Arrow table": lambda con: con.register("stray", pa.table({"subject_id": [S]})),
    "sequence": lambda con: con.execute("CREATE SEQUENCE note.stray START 7"),
    "candidate-schema table": lambda con: con.execute(f"CREATE TABLE candidates.stray AS SELECT {S} AS subject_id"),
}


_JOIN = "SELECT count(*) FROM labevents JOIN d_labitems USING (itemid)"
_SLOT = ("temp", "main", _sealed.LOAD_VIEW, "VIEW")


def test_what_an_episode_left_unrecorded_never_reaches_the_next_episode(small_store: Path) -> None:
    with open_store_reader(small_store) as reader:
        with build_episode(reader, EpisodeKey(S, T)) as warm:  # leaves the dictionary d_labitems, kept for reuse
            warm.execute(_JOIN, tables=["labevents", "d_labitems"])
        for kind, leave in _BEHIND_ITS_BACK.items():
            with build_episode(reader, EpisodeKey(S, T), candidates={"labevents": ["Creatinine"]}) as first:
                used = _con(first)
                clean = _catalog(used) - {("memory", "candidates", "labevents_candidates", "TABLE")}
                if ("memory", "hosp", "d_labitems", "TABLE") not in clean:  # a new database (the last one was closed)
                    first.execute(_JOIN, tables=["labevents", "d_labitems"])
                    clean = _catalog(used) - {("memory", "candidates", "labevents_candidates", "TABLE"),
                                              ("memory", "hosp", "labevents", "TABLE")}
                assert clean == {("memory", "hosp", "d_labitems", "TABLE"), _SLOT}, kind
                first.execute(_JOIN, tables=["labevents", "d_labitems"])
                leave(used)
                assert [name for _, _, name, _ in _catalog(used) if name == "stray"], kind
            with build_episode(reader, EpisodeKey(OTHER, T)) as second:
                con = _con(second)
                if con is used:  # wiped clean: the kept dictionary and the load view, nothing else
                    assert _catalog(con) == clean == set(_sealed.leftovers(con)), kind
                else:  # closed instead, and a new database given
                    with pytest.raises(duckdb.ConnectionException):
                        used.execute("SELECT 1")
                    assert _catalog(con) == {_SLOT}, kind
                rows = second.execute("SELECT DISTINCT subject_id FROM labevents", tables=["labevents"]).rows
                assert rows == [(OTHER,)], kind


def test_the_check_sees_what_a_query_sees_and_no_internal_object(small_store: Path) -> None:
    """The wipe's check lists exactly the catalog a query lists (filtered in SQL), DuckDB's own views and
    databases left out, at every step of an episode."""
    with open_store_reader(small_store) as reader:
        with build_episode(reader, EpisodeKey(S, T), candidates={"labevents": ["Creatinine"]}) as ep:
            con = _con(ep)
            assert set(_sealed.leftovers(con)) == _catalog(con)
            ep.execute(_JOIN, tables=["labevents", "d_labitems"])
            ep.execute("SELECT count(*) FROM admissions", tables=["admissions"])
            assert set(_sealed.leftovers(con)) == _catalog(con)
            assert _SLOT in _catalog(con)
            assert not {row for row in _sealed.leftovers(con) if row[0] == "system"}
