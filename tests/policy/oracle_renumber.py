"""The renumbering of per-patient counters (``clinseek.schema.Sequence``), written independently of the policy's
SQL, over the frozen oracle's rows (``oracle_sql`` predates it): the oracle shows a ``sequence`` column's
original value, this module turns it into what an episode shows.

For each renumbered column: the owner's visible rows (the oracle's timeline of the owner, with its event times)
sorted by (event time, original counter) are numbered 1..n; the column shows the number (or the owner's id with
its trailing digits replaced by it) of the owner row whose original id the row holds, NULL when none is visible.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

from clinseek.policy import EpisodeKey
from clinseek.schema import Sequence, Table, get_table

from . import oracle_sql


def renumber(
    con: duckdb.DuckDBPyConnection, table: Table, key: EpisodeKey, rows: pa.Table, *, op: str, linked_only: bool,
    present: Any, cache: dict[Any, dict[str, tuple[int, str]]] | None = None,
) -> pa.Table:
    """``rows`` (the oracle's visible or timeline rows of ``table`` for ``key``) as the episode shows them;
    ``cache``: the owners' numbers by (owner, key), kept across calls on one store."""
    cache = {} if cache is None else cache
    original = rows  # a column's original ids, read before another renumbered column replaces them
    for column in table.renumbered:
        sequence = column.sequence
        if column.column not in rows.column_names:
            continue
        numbers = cache.get((sequence.owner, key))
        if numbers is None:
            numbers = cache[sequence.owner, key] = _numbers(con, sequence, key, op, linked_only, present)
        via = original.column(column.via).to_pylist()
        found = [numbers.get(v) if v is not None else None for v in via]
        values = [None if f is None else (f[1] if column.part == "id" else f[0]) for f in found]
        index = rows.column_names.index(column.column)
        rows = rows.set_column(index, column.column, pa.array(values, type=rows.schema.field(index).type))
    return rows


def _numbers(
    con: duckdb.DuckDBPyConnection, sequence: Sequence, key: EpisodeKey, op: str, linked_only: bool, present: Any
) -> dict[str, tuple[int, str]]:
    """Per original id of the owner's visible rows: (its number, its renumbered id)."""
    numbers: dict[str, tuple[int, str]] = {}
    if present is not None and sequence.owner not in present:
        return numbers
    owner = get_table(sequence.owner)
    statement = oracle_sql.timeline_sql(
        owner, key, op=op, linked_only=linked_only, present=present, encounters=None, since=None, until=None
    )
    assert statement is not None
    result = con.execute(statement[0], statement[1] or None)
    names = [d[0] for d in result.description]
    visible = result.fetchall()
    at, ident, counter = names.index("_event_time"), names.index(sequence.id), names.index(sequence.counter)
    for n, row in enumerate(sorted(visible, key=lambda r: (r[at], r[counter], r[ident])), start=1):
        numbers[row[ident]] = (n, f"{key.subject_id}-{n}")
    return numbers
