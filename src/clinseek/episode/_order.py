"""Rows sorted in Python as DuckDB's and Arrow's ascending sorts order them (values, then NaN, then NULL).

The one place the rows a reader fetched are put in their total order: the Curated Input timelines
(:func:`~clinseek.policy.timeline_order`) and the record tools' rows tied on their ``ORDER BY``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any


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
