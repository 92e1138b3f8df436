"""The renumbering of per-patient counters (``clinseek.schema.Sequence``), written independently of the policy's
SQL, over the frozen oracle's rows (``oracle_sql`` predates it): the oracle shows a ``sequence`` column's
original value, this module turns it into what an episode shows.

For each renumbered column: the owner's visible rows (the oracle's timeline of the owner, with its event times)
sorted by (event time, original counter) are numbered 1..n, apart per value of the sequence's partition columns
(MIMIC-IV-Note: per note type); the column shows the number (or the id ``<subject>[-<partition values>]-<n>``) of
the owner row whose original id the row holds, NULL when none is visible. A column renumbered only in some rows
(``Renumbered.where``: a note detail's ``field_value`` naming a note) keeps its value in the others.
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
        if column.where:  # the rows where the column names no owner row keep their value
            naming = _holds(con, original, column.where)
            kept = original.column(column.column).to_pylist()
            values = [v if n else k for v, n, k in zip(values, naming, kept, strict=True)]
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
    parts = [names.index(c) for c in sequence.partition]
    counted: dict[tuple[Any, ...], int] = {}
    for row in sorted(visible, key=lambda r: (r[at], r[counter], r[ident])):
        group = tuple(row[i] for i in parts)
        n = counted[group] = counted.get(group, 0) + 1
        numbers[row[ident]] = (n, "-".join([str(key.subject_id), *(str(v) for v in group), str(n)]))
    return numbers


def _holds(con: duckdb.DuckDBPyConnection, rows: pa.Table, where: str) -> list[bool]:
    """Per row of ``rows``: whether the condition ``where`` (SQL over the row ``t``) holds (NULL: it does not)."""
    indexed = rows.append_column("_row", pa.array(range(rows.num_rows), type=pa.int64()))
    con.register("_oracle_rows", indexed)
    try:
        found = con.execute(f"SELECT coalesce(({where}), false) FROM _oracle_rows t ORDER BY t._row").fetchall()
    finally:
        con.unregister("_oracle_rows")
    return [bool(v) for (v,) in found]
