"""Rows sorted in Python as DuckDB's and Arrow's ascending sorts order them (values, then NaN, then NULL).

The one place the rows a reader fetched are put in their total order: the Curated Input timelines
(:func:`~clinseek.policy.timeline_order`), the record tools' rows tied on their ``ORDER BY``, and the rows of
every table an episode holds (:func:`in_row_order`).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..schema import Table


def ascending(value: Any) -> tuple[Any, ...]:
    """A sort key of one value as an ascending sort with NULLs last orders them: values, then NaN, then NULL."""
    if value is None:
        return (2,)
    if value != value:  # NaN
        return (1,)
    return (0, value)


def tied(a: Sequence[Any], b: Sequence[Any], columns: Sequence[int]) -> bool:
    """Whether rows ``a`` and ``b`` are equal at every index of ``columns`` as a sort compares them (two NULLs
    tie, two NaNs tie)."""
    return all(ascending(a[i]) == ascending(b[i]) for i in columns)


def sort_rows(rows: list[tuple[Any, ...]], order: list[int], leading: int) -> None:
    """Sort ``rows`` in place by the values at ``order`` (indexes into a row), each ascending as :func:`ascending`
    orders them (values, then NaN, then NULL).

    The first ``leading`` of ``order`` (e.g. a timeline's event time and key) decide the order of nearly every pair
    of rows: when none of their values is NULL or NaN, the rows are sorted by those values as they are (no key
    object per value), and only runs of rows equal on all of them are sorted again by the whole order (a stable
    sort: the same order as one sort by the whole order). Rows already in that order cost one pass (Python's sort
    of a sorted list) and the runs of ties."""
    first = order[:leading]
    if not first or not _plain(rows, first):
        rows.sort(key=lambda row: tuple([ascending(row[i]) for i in order]))
        return
    if len(first) == 1:
        at = first[0]
        rows.sort(key=lambda row: row[at])
    else:
        rows.sort(key=operator.itemgetter(*first))
    rest = order[leading:]
    if not rest:
        return
    leads = list(map(operator.itemgetter(*first), rows))
    start = 0
    for end in range(1, len(rows) + 1):
        if end == len(rows) or leads[end] != leads[start]:
            if end - start > 1:
                rows[start:end] = sorted(rows[start:end], key=lambda row: tuple([ascending(row[i]) for i in rest]))
            start = end


def _plain(rows: list[tuple[Any, ...]], columns: list[int]) -> bool:
    """Whether no row has NULL or NaN at any of ``columns`` (then the values sort as :func:`ascending` orders
    them, without a key per value)."""
    for i in columns:
        for row in rows:
            value = row[i]
            if value is None or value != value:
                return False
    return True


def in_row_order(table: Table, data: pa.Table) -> pa.Table:
    """``data`` (what an episode sees of ``table``) sorted as the episode keeps it, whatever the source: by the
    table's sort columns (subject, then time) and its key, each ascending (values, then NaN, then NULL); by
    every other column too when the table has no key or a key value is NULL.

    A query without ``ORDER BY`` (``SELECT * FROM labevents LIMIT 20``, ``GROUP BY``, ``DISTINCT``) then gives
    the same rows on an episode built from PostgreSQL as from the DuckDB store of the same data: PostgreSQL
    sends rows in its heap or index order, a DuckDB window or join in its own. Only values the episode shows
    decide the order (never a hidden one); rows equal in all of them cannot be told apart.
    """
    if data.num_rows < 2:
        return data
    present = set(data.column_names)
    names = [c for c in (*table.sort_columns, *(k for k in table.key if k not in table.sort_columns)) if c in present]
    key = [k for k in table.key if k in present]
    if not key or len(key) < len(table.key) or any(data.column(k).null_count for k in key):
        names += [c for c in data.column_names if c not in names]
    sortable = [c for c in names if not (pa.types.is_nested(data.schema.field(c).type)
                                         or pa.types.is_null(data.schema.field(c).type))]
    order = pc.sort_indices(data, sort_keys=[(c, "ascending") for c in sortable])
    if np.array_equal(order.to_numpy(), np.arange(data.num_rows)):  # most reads of a DuckDB store: no copy
        return data
    return data.take(order)
