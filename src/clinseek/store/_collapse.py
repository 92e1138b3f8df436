"""When a row of a table with pending results is kept by the policy's collapse, as intervals of the cutoff.

A table whose mask sets :attr:`~clinseek.schema.Mask.collapse_on` (MIMIC microbiology: one row per organism x
antibiotic, all NULL while the culture is pending) shows, of a ``collapse_on`` group (NULL equal to NULL) none of
whose visible rows has its result known at the cutoff ``T``, only one row: the first by the mask's ``renumber``
column, then the table's key (NULLs last); of a group with a known row, only the known rows (a test added to a
specimen after its first results is pending from the specimen's time on: attack19). A row ``r`` of group ``g``
is therefore kept at ``T`` iff ``e_r op T`` and (``s_r op T`` or (no row before ``r`` in ``g`` has ``e op T``
and not ``s op T``, and no row of ``g`` has ``s op T``)), with ``e`` the row's event time, ``s`` its result
instant (the mask's ``known_at``; NULL: never known), ``op`` the policy's ``<`` or ``<=``.

Each term is ``x op T`` for an instant ``x`` of the group, true from one breakpoint on; so whether a row is
kept depends only on how many of the group's distinct instants ``x_0 < x_1 < ...`` are passed (for ``<``:
``T`` in ``(x_k, x_{k+1}]``; for ``<=``: ``[x_k, x_{k+1})``: the same ``k`` for both operators). A row's
kept cutoffs are a union of runs of ``k``, each written as ``(valid_from, valid_until)``: kept iff
``valid_from op T`` and not ``valid_until op T`` (``valid_until`` NULL: to the end), whatever ``op``. These
facts need no cutoff, so ingest writes them into the event index (:mod:`clinseek.store._eventindex`, layout 3):
in SQL for the groups whose rows share one event time (:func:`collapse_index_select`: nearly all of MIMIC-IV's),
in Python for the others (:func:`collapse_index_rows`).

Ties in the collapse order (the same ``renumber`` and key, which MIMIC never has) are broken by the event
time, as the policy's window breaks them, then by the store row: never by the result instant, which is in the
future of a pending row (the stored collapse would pick the shown row by when its result comes: attack18).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from ..schema import Mask, Table

Instant = dt.datetime
Interval = tuple[Instant, Instant | None]

COLLAPSE_RULE = "a group with a known row shows no pending row"
"""The rule's version, in what the store records of its kept rows and collapsed index rows (:func:`kept_rule`,
``clinseek.store._eventindex.index_definition``): a store written by an earlier rule (every pending group showed
one row) is read through the policy's windows until its next ingest."""


def collapse_mask(table: Table) -> Mask | None:
    """The one mask of ``table`` that collapses pending results, when the event index can hold its kept rows
    (:func:`kept_intervals`): exactly one such mask, its ``known_at`` an expression over the row itself (no
    subquery: it is computed at ingest with the row), and no target encounter column (the question's own
    encounter would be left out before the collapse, which the index cannot know). Else ``None``."""
    masks = [m for m in table.masks if m.collapse_on]
    if len(masks) != 1 or table.target_key or table.event_time is None:
        return None
    mask = masks[0]
    if mask.known_at is None or "select" in mask.known_at.lower():
        return None
    return mask


def kept_intervals(rows: Sequence[tuple[Instant, Instant | None]]) -> list[list[Interval]]:
    """Per row of one collapse group, the cutoffs at which the collapse keeps it, as ``(valid_from, valid_until)``
    intervals (``valid_until`` ``None``: to the end).

    ``rows``: ``(event_time, known_at)`` of the group's rows with an event time, in the collapse order (first
    kept first); ``known_at`` ``None`` when the result is never known.
    """
    breakpoints = sorted({x for row in rows for x in row if x is not None})
    out: list[list[Interval]] = [[] for _ in rows]
    start: list[Instant | None] = [None] * len(rows)
    for x in breakpoints:  # the cutoffs past exactly the instants <= x
        # no pending row before this one yet, and no row of the group known (then no pending row shows)
        first = not any(event_time <= x and known_at is not None and known_at <= x for event_time, known_at in rows)
        for i, (event_time, known_at) in enumerate(rows):
            visible = event_time <= x
            known = known_at is not None and known_at <= x
            kept = visible and (known or first)
            if visible and not known:
                first = False
            if kept and start[i] is None:
                start[i] = x
            elif not kept and (begun := start[i]) is not None:
                out[i].append((begun, x))
                start[i] = None
    for i, begun in enumerate(start):
        if begun is not None:
            out[i].append((begun, None))
    return out


BATCH_ROWS = 100_000
"""Rows :func:`collapse_index_rows` reads from DuckDB (and index rows it holds as Python objects) at a time."""


def _group_rows(table: Table, event_time_sql: str, join: str) -> tuple[str, list[str], str]:
    """``(rows, group, order)``: SQL of ``table``'s rows with an event time as the collapse sees them
    (the store row ``_r``, ``subject_id``, the group's columns ``_g0...``, the event and result instants ``_e`` / ``_s``, the order's
    columns ``_o0...``, and ``_uniform``: whether every row of its group has the same event time), the columns naming a
    collapse group (``subject_id`` first) and the collapse order (first kept first; ties by event time, then store row)."""
    mask = collapse_mask(table)
    assert mask is not None
    on = [f't."{c}"' for c in mask.collapse_on]
    order = [f't."{c}"' for c in dict.fromkeys(c for c in (mask.renumber, *table.key) if c)]
    columns = [*(f"{c} AS _g{i}" for i, c in enumerate(on)), f"CAST({event_time_sql} AS TIMESTAMP) AS _e",
               f"CAST({mask.known_at} AS TIMESTAMP) AS _s", *(f"{c} AS _o{i}" for i, c in enumerate(order))]
    group = ["subject_id", *(f"_g{i}" for i in range(len(on)))]
    sort = ", ".join([*(f"_o{i} NULLS LAST" for i in range(len(order))), "_e", "_r"])
    window = f"OVER (PARTITION BY {', '.join(group)})"
    rows = (
        f"SELECT *, min(_e) {window} = max(_e) {window} AS _uniform FROM (SELECT t.rowid AS _r, t.subject_id, {', '.join(columns)} "
        f"FROM {table.qualified} t{join}) WHERE _e IS NOT NULL"
    )
    return rows, group, sort


def collapse_index_select(table: Table, event_time_sql: str, join: str) -> str:
    """SQL of the event index rows of ``table`` (which has a :func:`collapse_mask`) for its groups whose rows share
    one event time ``e`` (every lab specimen and microbiology culture of MIMIC-IV but a few): the others are
    :func:`collapse_index_rows`'. Same columns.

    In such a group (:func:`kept_intervals`' rule with one event time) the first row (collapse order) is kept from
    ``e`` until the group's first result ``S`` (the earliest ``s``; NULL: never), pending, and from its own result
    ``s_r`` on; every other row only from ``s_r`` on (a row after the first is pending only while the first is,
    and no pending row shows once ``S`` passed). So a row is kept from ``_kept_from`` on (NULL: never), and the
    first row also in ``[e, S)`` when its own result comes after ``S`` (or never): two index rows then. DuckDB
    computes it for every row (full MIMIC-IV has ~158M lab rows: one window pass, not a Python loop).
    """
    kept = _kept_from(table, event_time_sql, join)
    columns = (f"SELECT '{table.qualified}' AS table_name, subject_id, _e AS event_time, CAST(NULL AS BIGINT) AS target_id, "
               "CAST(NULL AS BIGINT) AS encounter_id")
    return (
        f"{columns}, _kept_from AS valid_from, CAST(NULL AS TIMESTAMP) AS valid_until FROM ({kept}) "
        f"WHERE _kept_from IS NOT NULL UNION ALL "
        f"{columns}, _e AS valid_from, _pending_until AS valid_until FROM ({kept}) WHERE _pending_until IS NOT NULL"
    )


def _kept_from(table: Table, event_time_sql: str, join: str) -> str:
    """SQL ``(_r, subject_id, _e, _kept_from, _pending_until)`` per row of a group of one event time
    (:func:`collapse_index_select`'s rule): the row is kept from ``_kept_from`` on (NULL: never), and, when
    ``_pending_until`` is not NULL, in ``[_e, _pending_until)`` too (the first row, pending, until the group's first
    result, when that is not its own)."""
    rows, group, sort = _group_rows(table, event_time_sql, join)
    first = f"row_number() OVER (PARTITION BY {', '.join(group)} ORDER BY {sort}) = 1"
    group_known = f"min(_s) OVER (PARTITION BY {', '.join(group)})"  # the group's first result (NULL: never)
    return (  # greatest() skips a NULL: a row never known and never first is never kept
        "SELECT _r, subject_id, _e, "
        "CASE WHEN _first AND (_known IS NULL OR _s = _known) THEN _e WHEN _s IS NOT NULL THEN greatest(_e, _s) END "
        "AS _kept_from, "
        "CASE WHEN _first AND _known IS NOT NULL AND _known > _e AND (_s IS NULL OR _s > _known) THEN _known END "
        "AS _pending_until "
        f"FROM (SELECT _r, subject_id, _e, _s, {first} AS _first, {group_known} AS _known FROM ({rows}) WHERE _uniform)"
    )


def kept_rule(table: Table) -> str:
    """The rule :func:`kept_rows` computes, as text for the store's record of it: the rows as the collapse sees them,
    the groups and the order (a changed registry definition changes it)."""
    assert table.event_time is not None
    rows, group, sort = _group_rows(table, table.event_time.expr, "")
    return f"{rows} GROUP BY {', '.join(group)} ORDER BY {sort}; {COLLAPSE_RULE}"


def kept_rows(con: duckdb.DuckDBPyConnection, table: Table) -> tuple[str, pa.Table]:
    """When the collapse keeps each store row of ``table`` (which has a :func:`collapse_mask` and an event time over
    the row alone), for the store's row instants (:mod:`clinseek.store._instants`): ``(sql, lists)``.

    ``sql``: ``(_r, _kept_from, _kept_bounds)`` per row (``_r`` its ``rowid``) of a group of one event time: kept at
    ``T`` iff ``_kept_from op T`` (NULL: never) or an odd number of ``_kept_bounds`` are (``[e, S]``: the first row,
    pending until its group's first result; else NULL). ``lists``: ``(_r, _kept_list)`` per row of the other groups
    that is ever kept: the bounds of its :func:`kept_intervals` in order, ``[from, until, from, ...]`` (the last
    interval's open end left out), so the row is kept at ``T`` iff an odd number of them are ``op T``.
    """
    assert table.event_time is not None and table.event_time.parent is None
    event_time = table.event_time.expr
    rows, group, sort = _group_rows(table, event_time, "")
    by_group = ", ".join(f"{c} NULLS FIRST" for c in group)
    width = len(group)
    found = con.execute(
        f"SELECT {', '.join(group)}, _r, _e, _s FROM ({rows}) WHERE NOT _uniform ORDER BY {by_group}, {sort}"
    ).fetchall()  # the rows of groups of several event times: a few in MIMIC-IV
    ids: list[int] = []
    lists: list[list[Instant]] = []
    for _, members in itertools.groupby(found, key=lambda row: row[:width]):
        rows_of_group = list(members)
        intervals = kept_intervals([(row[width + 1], row[width + 2]) for row in rows_of_group])
        for row, kept in zip(rows_of_group, intervals, strict=True):
            if kept:
                ids.append(row[width])
                lists.append([x for interval in kept for x in interval if x is not None])
    table_of_lists = pa.table({
        "_r": pa.array(ids, pa.int64()), "_kept_list": pa.array(lists, pa.list_(pa.timestamp("us"))),
    })
    bounds = "CASE WHEN _pending_until IS NOT NULL THEN [_e, _pending_until] END"
    return f"SELECT _r, _kept_from, {bounds} AS _kept_bounds FROM ({_kept_from(table, event_time, '')})", table_of_lists


def collapse_index_rows(
    con: duckdb.DuckDBPyConnection, table: Table, event_time_sql: str, join: str, *, batch_rows: int = BATCH_ROWS
) -> pa.Table:
    """The event index rows of ``table`` (which has a :func:`collapse_mask`) for its groups whose rows do not all
    share one event time (the others: :func:`collapse_index_select`): one per interval in which a row is kept,
    ``(table_name, subject_id, event_time, target_id, encounter_id, valid_from, valid_until)``.

    ``event_time_sql`` / ``join``: the row's event time over ``t`` and the join it needs (as the index's other
    tables compute it; rows whose parent is absent are left out by the join). The rows are read ``batch_rows`` at
    a time (a group split between two batches is joined first) and the index rows are turned into Arrow every
    ``batch_rows``.

    Raises:
        ValueError: ``batch_rows`` is not positive.
    """
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be positive, got {batch_rows}")
    rows, group, sort = _group_rows(table, event_time_sql, join)
    by_group = ", ".join(f"{c} NULLS FIRST" for c in group)
    result = con.execute(f"SELECT {', '.join(group)}, _e, _s FROM ({rows}) WHERE NOT _uniform ORDER BY {by_group}, {sort}")
    out = _IndexRows(table.qualified)
    for subject_id, members in _groups(result, len(group), batch_rows):
        for (event_time, _), intervals in zip(members, kept_intervals(members), strict=True):
            for valid_from, valid_until in intervals:
                out.add(subject_id, event_time, valid_from, valid_until)
        if out.held >= batch_rows:
            out.flush()
    return out.table()


def _groups(
    result: duckdb.DuckDBPyConnection, width: int, batch_rows: int
) -> Iterator[tuple[int, list[tuple[Instant, Instant | None]]]]:
    """``(subject_id, [(event_time, known_at), ...])`` per collapse group of ``result``'s rows (sorted by the
    group's first ``width`` columns), read ``batch_rows`` at a time."""
    key: tuple[Any, ...] | None = None
    members: list[tuple[Instant, Instant | None]] = []
    while batch := result.fetchmany(batch_rows):
        for row in batch:
            group = row[:width]
            if group != key:
                if key is not None:
                    yield key[0], members
                key, members = group, []
            members.append((row[width], row[width + 1]))
    if key is not None:
        yield key[0], members


class _IndexRows:
    """Index rows of one table, held as Python values until :meth:`flush` turns them into an Arrow table."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._chunks: list[pa.Table] = []
        self._columns: tuple[list[Any], ...] = ([], [], [], [])

    @property
    def held(self) -> int:
        """Index rows held as Python values."""
        return len(self._columns[0])

    def add(self, subject_id: int, event_time: Instant, valid_from: Instant, valid_until: Instant | None) -> None:
        for column, value in zip(self._columns, (subject_id, event_time, valid_from, valid_until), strict=True):
            column.append(value)

    def flush(self) -> None:
        subjects, event_times, starts, ends = self._columns
        n = len(subjects)
        data: dict[str, Any] = {
            "table_name": pa.array([self._name] * n, pa.string()),
            "subject_id": pa.array(subjects, pa.int32()),
            "event_time": pa.array(event_times, pa.timestamp("us")),
            "target_id": pa.nulls(n, pa.int64()),
            "encounter_id": pa.nulls(n, pa.int64()),
            "valid_from": pa.array(starts, pa.timestamp("us")),
            "valid_until": pa.array(ends, pa.timestamp("us")),
        }
        self._chunks.append(pa.table(data))
        self._columns = ([], [], [], [])

    def table(self) -> pa.Table:
        """Every index row added, in order (one chunk per flush)."""
        if self.held or not self._chunks:
            self.flush()
        return pa.concat_tables(self._chunks)
