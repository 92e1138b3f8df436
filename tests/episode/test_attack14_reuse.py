"""attack14: a wiped and reused sealed database (``SealedPool``) still carries counters of the episodes before it.

``txid_current()`` and the catalog's object ids (``duckdb_tables().table_oid``) keep counting across the
episodes a reader's pool hands the same database to, so an episode reads how many statements and table loads
the episodes before it (other patients, other questions) made. No row crosses, but activity does: the promise
"a cache must never let one episode's result reach another" is met for rows, not for this. Not fixed in the
database (xfail): the counters belong to DuckDB's database instance, and a fresh database per episode is the cost
the pool exists to avoid. The model never reads them (session 20): ``ehr.run_sql_query``'s guard refuses
``txid_current()`` (with every function without parameters whose value is the session's, not the data's) as
``not_repeatable``, and the catalog's table functions (``duckdb_tables()``, ...) as ``forbidden_function``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from clinseek.episode import EpisodeKey, build_episode, open_store_reader
from clinseek.errors import ToolError
from clinseek.tools import ToolContext, get_tool

_COUNTERS = "SELECT txid_current(), (SELECT max(table_oid) FROM duckdb_tables())"
_FIRST = EpisodeKey(10027602, datetime(2201, 11, 1))
_SECOND = EpisodeKey(10014354, datetime(2148, 8, 25))


def _counters(store: Path, busy: bool) -> tuple[int, int]:
    with open_store_reader(store) as reader:
        if busy:  # another patient's episode first, in the same reader
            with build_episode(reader, _FIRST) as ep:
                for table in ("emar", "labevents", "poe", "prescriptions"):
                    ep.execute(f"SELECT count(*) FROM {table}")
        with build_episode(reader, _SECOND) as ep:
            txid, oid = ep.execute(_COUNTERS).rows[0]
    return txid, oid


@pytest.mark.xfail(strict=True, reason="txid_current() and catalog oids count across reused sealed databases")
def test_attack14_an_episode_reads_no_counter_of_the_episodes_before_it(demo_store: Path) -> None:
    assert _counters(demo_store, busy=True) == _counters(demo_store, busy=False)


@pytest.mark.parametrize(("sql", "kind"), [
    ("SELECT txid_current()", "not_repeatable"),
    ("SELECT txid_current() - 1 AS n FROM admissions", "not_repeatable"),
    ("SELECT current_database(), current_schema()", "not_repeatable"),
    ("SELECT max(table_oid) FROM duckdb_tables()", "forbidden_function"),
    ("SELECT max(oid) FROM duckdb_schemas()", "forbidden_function"),
])
def test_attack14_the_model_reads_no_counter_of_a_reused_database(demo_store: Path, sql: str, kind: str) -> None:
    """The path the model has (the tool's guard) refuses what reads the database's counters or session."""
    with open_store_reader(demo_store) as reader, build_episode(reader, _SECOND) as ep:
        with pytest.raises(ToolError) as refused:
            get_tool("ehr.run_sql_query").fn(ToolContext(ep), sql_query=sql)
    assert refused.value.kind == kind, refused.value.message
    if kind == "not_repeatable":  # not the advice for random(): order by a column, sample with a seed
        assert "reads the database session" in refused.value.message and "seed" not in refused.value.message
