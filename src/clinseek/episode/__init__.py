"""The sealed per-question snapshot: one patient, one cutoff, one policy, no way out.

:func:`build_episode` copies what :mod:`clinseek.policy` lets an :class:`EpisodeKey` see from a
store into a new in-memory DuckDB database and seals it; :class:`Episode` runs read-only SQL on
it under a time limit and a row cap. The tools, the curated renderers and (through the policy's
inverse) the label builder all read patient data this way.
"""

from ..errors import EpisodeError, EpisodeQueryError, EpisodeTimeout
from ..policy import MM_POLICY, TEXT_POLICY, EpisodeKey
from ._build import CandidateSource, build_episode, check_candidate_table
from ._clock import SQL_DATETIME_VALUES, ClockNames, clock_names
from ._episode import CANDIDATE_SCHEMA, Episode
from ._result import QueryResult
from ._source import StoreSnapshot, clear_store_cache, store_snapshot

__all__ = [
    "CANDIDATE_SCHEMA",
    "MM_POLICY",
    "SQL_DATETIME_VALUES",
    "TEXT_POLICY",
    "CandidateSource",
    "ClockNames",
    "Episode",
    "EpisodeError",
    "EpisodeKey",
    "EpisodeQueryError",
    "EpisodeTimeout",
    "QueryResult",
    "StoreSnapshot",
    "build_episode",
    "check_candidate_table",
    "clear_store_cache",
    "clock_names",
    "store_snapshot",
]
