"""The sealed per-question snapshot: one patient, one cutoff, one policy, no way out.

A caller opens a :class:`StoreReader` (:func:`open_store_reader`), passes it to :func:`build_episode` for
every question, and closes it. :func:`build_episode` reads what :mod:`clinseek.policy` lets an
:class:`EpisodeKey` see through the reader into a sealed in-memory DuckDB database; :class:`Episode`
runs read-only SQL on it under a time limit and a row cap. The tools, the curated renderers and
(through the policy's inverse) the label builder all read patient data this way.
"""

from ..errors import EpisodeError, EpisodeQueryError, EpisodeTimeout
from ..policy import MM_POLICY, TEXT_POLICY, EpisodeKey
from ._build import DEFAULT_MEMORY_LIMIT, CandidateSource, build_episode, check_candidate_table
from ._clock import (
    SQL_DATETIME_VALUES,
    ClockNames,
    clock_names,
    duckdb_syntax_error,
    session_names,
    volatile_names,
)
from ._episode import CANDIDATE_SCHEMA, Episode
from ._order import sort_rows, tied
from ._pgreader import PostgresStoreReader
from ._reader import DuckDBStoreReader, StoreReader, TableInventory, TimelineRows, open_store_reader
from ._result import QueryResult

__all__ = [
    "CANDIDATE_SCHEMA",
    "DEFAULT_MEMORY_LIMIT",
    "MM_POLICY",
    "SQL_DATETIME_VALUES",
    "TEXT_POLICY",
    "CandidateSource",
    "ClockNames",
    "DuckDBStoreReader",
    "Episode",
    "EpisodeError",
    "EpisodeKey",
    "EpisodeQueryError",
    "EpisodeTimeout",
    "PostgresStoreReader",
    "QueryResult",
    "StoreReader",
    "TableInventory",
    "TimelineRows",
    "build_episode",
    "check_candidate_table",
    "clock_names",
    "duckdb_syntax_error",
    "open_store_reader",
    "session_names",
    "sort_rows",
    "tied",
    "volatile_names",
]
