"""The SQL guard's verdicts, kept by everything they depend on (a model sends the same texts again).

Guarding a text costs sqlglot a parse, a walk and a write-out (~1-3 ms, most of an
``ehr.run_sql_query`` call on a warm episode). A verdict is a pure function of the text, the
episode's cutoff (SQLite's ``'now'``, the clock refusal's message) and the episode's table names and
candidate tables (which names resolve, the list in an ``unknown_table`` message): exactly the cache
key. It holds the SQL to run and the tables it reads, or the refusal; never a row. Two episodes
with the same key get the same verdict because they would compute the same one.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass

from ..errors import ToolError
from ._sqlguard import GuardedQuery, check_sql
from ._sqlite_dialect import SqliteDialect
from ._tables import available_in, resolve_in

Signature = tuple[frozenset[str], tuple[str, ...]]
"""An episode's EHR table names and candidate tables (:attr:`clinseek.episode.Episode.signature`)."""

VERDICTS = 2048
"""Verdicts kept (least recently used dropped first)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the guard said about one text in one kind of episode.

    Attributes:
        query: the SQL to run and the tables it reads; ``None`` when refused.
        note: the line saying the text was read as SQLite (and what changed), or ``None``.
        refusal: ``(kind, message)`` of the :class:`ToolError` the guard raised, when refused.
        names: read as SQLite: SQLite's names of the result's columns where DuckDB's differ (``None``: keep), in
            column order (:attr:`~clinseek.tools._sqlite_dialect.Translation.names`); else empty.
    """

    query: GuardedQuery | None
    note: str | None
    refusal: tuple[str, str] | None
    names: tuple[str | None, ...] = ()

    def checked(self) -> GuardedQuery:
        """The query to run.

        Raises:
            ToolError: the guard's refusal (a new error each time: the verdict holds only its text).
        """
        if self.query is None:
            assert self.refusal is not None
            raise ToolError(*self.refusal)
        return self.query


@functools.lru_cache(maxsize=VERDICTS)
def guard_verdict(
    sql: str, prediction_time: dt.datetime, signature: Signature, *, sqlite: bool = False
) -> Verdict:
    """The SQL guard's verdict on ``sql`` in an episode with this cutoff and these tables (kept by all four).

    Args:
        sql: the model's text.
        prediction_time: the episode's cutoff.
        signature: the episode's EHR table names and candidate tables.
        sqlite: read the text as SQLite even without a SQLite-only construct (the second reading after
            DuckDB rejected the first one while binding).
    """
    tables, candidates = signature
    dialect = SqliteDialect(prediction_time, force=sqlite)
    try:
        query = check_sql(
            sql,
            functools.partial(resolve_in, tables, candidates),
            available=available_in(tables, candidates),
            prediction_time=prediction_time,
            dialect=dialect,
        )
    except ToolError as err:
        return Verdict(None, None, (err.kind, err.message))
    if dialect.translation is None:
        return Verdict(query, None, None)
    return Verdict(query, dialect.translation.note(), None, dialect.translation.names)
