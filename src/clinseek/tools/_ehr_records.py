"""EHR record tools: rows by time window, counts by time, latest rows, keyword and value search."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import numpy as np

from ..episode import sort_rows, tied
from ..errors import ToolError
from ._context import ToolContext
from ._ehr_meta import SubjectArg, column_named
from ._pin import check_subject
from ._query import run_query
from ._registry import tool
from ._render import Rows, echo, table_result
from ._result import ToolResult
from ._tables import TableRef, ehr_tables, resolve_table
from ._timewin import parse_window
from ._views import View, table_view, view_read

_NARROW_TIME = (
    "ask for a shorter window (start_time/end_time) or use ehr.run_sql_query with WHERE and LIMIT/OFFSET."
)
_INTEGER_TYPES = frozenset({"INTEGER", "BIGINT", "SMALLINT"})
_NARROW_SQL = "filter further, or use ehr.run_sql_query with WHERE and LIMIT/OFFSET."


def _ehr_view(ctx: ToolContext, table_name: str, *, timed: bool = False) -> tuple[TableRef, View]:
    ref = resolve_table(ctx, table_name, candidates=False)
    assert ref.table is not None
    view = table_view(ctx, ref.table)
    if timed and not view.timed:
        raise ToolError(
            "no_time",
            f"{ref.qualified} rows have no event time ({ref.table.visibility} table); use "
            "ehr.get_records_by_value, ehr.get_records_by_keyword or ehr.run_sql_query",
        )
    return ref, view


def _rows(
    ctx: ToolContext,
    title: str,
    view: View,
    where: Callable[[View], str],
    params: list[Any],
    narrow: str,
    *,
    costly_filter: bool = False,
) -> ToolResult:
    """The first ``max_rows`` rows matching ``where`` in the view's total order, and how many match.

    DuckDB orders by :attr:`View.order` (cheap to plan; not total) and keeps ``max_rows + 1`` rows; rows tied on
    it are then sorted by every shown column here (:func:`~clinseek.episode.sort_rows`). Only when the row cap
    cuts a run of such ties (the last row kept and the first dropped tie) does the statement run again with the
    total order in SQL, so that the same rows are kept whatever order the source holds them in (the store or a
    loaded copy).
    """
    cap = ctx.limits.max_rows
    first, rest = view.ranks

    def read(total: bool) -> list[tuple[Any, ...]]:
        def statement(v: View) -> str:
            return v.select(where(v), limit=cap + 1, with_total=costly_filter, total=total)

        return view_read(ctx, view, statement, params, max_rows=cap + 1).rows

    found = read(False)
    if len(found) > cap > 0 and tied(found[cap - 1], found[cap], first):
        found = read(True)
    cut = len(found) > cap
    total = found[0][-1] if costly_filter and found else len(found)  # costly: a window counted the matches
    shown = [r[:-1] for r in found[:cap]] if costly_filter else found[:cap]
    sort_rows(shown, [*first, *rest], len(first))
    if cut and not costly_filter:  # count them all (cheaper than a window when the filter is cheap)
        total = view_read(ctx, view, lambda v: v.count(where(v)), params).rows[0][0]
    return table_result(title, Rows(view.columns, shown, total, cut), ctx.limits, narrow=narrow)


@tool("ehr.get_records_by_time")
def get_records_by_time(
    ctx: ToolContext, table_name: str, start_time: str, end_time: str, subject_id: SubjectArg = None
) -> ToolResult:
    """Rows of one table whose event time lies in [start_time, end_time), oldest first.

    The window includes start_time and excludes end_time. A date alone ('2150-03-01') as
    start_time means that day's 00:00; as end_time it includes that whole day. The event time
    is the table's documented time (e.g. labevents.charttime, diagnoses_icd: the admission's
    discharge time). Dictionary labels (lab and item names, ICD titles) are joined in.

    Args:
        table_name: an EHR table, e.g. 'labevents' or 'hosp.labevents'.
        start_time: window start, 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS' (inclusive).
        end_time: window end, 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS' (exclusive; a date includes that day).
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    start, end = parse_window(start_time, end_time)
    ref, view = _ehr_view(ctx, table_name, timed=True)
    title = f"{ref.qualified} [{_fmt(start)}, {_fmt(end)})"
    return _rows(ctx, title, view, lambda v: f"{v.time} >= ? AND {v.time} < ?", [start, end], _NARROW_TIME)


def _fmt(when: dt.datetime) -> str:
    """``YYYY-MM-DD`` at midnight, else ``YYYY-MM-DD HH:MM:SS``."""
    return when.date().isoformat() if when.time() == dt.time() else when.isoformat(sep=" ")


@tool("ehr.get_event_counts_by_time")
def get_event_counts_by_time(
    ctx: ToolContext, start_time: str, end_time: str, subject_id: SubjectArg = None
) -> ToolResult:
    """How many rows each EHR table has with event time in [start_time, end_time).

    Same window rule as ehr.get_records_by_time (start inclusive, end exclusive, a date-only
    end includes that day). Tables without an event time (patients, dictionaries) are skipped.

    Args:
        start_time: window start, 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS' (inclusive).
        end_time: window end, 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS' (exclusive; a date includes that day).
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    start, end = parse_window(start_time, end_time)
    counts = {name: _between(times, start, end) for name, times in event_times(ctx).items()}
    busy = {k: v for k, v in sorted(counts.items()) if v}
    lines = [f"Events in [{_fmt(start)}, {_fmt(end)}):", *(f"- {k}: {v}" for k, v in busy.items())]
    empty = [k for k, v in sorted(counts.items()) if not v]
    if empty:
        lines.append(f"No events: {', '.join(empty)}")
    if start >= ctx.episode.key.prediction_time:
        lines.append("(The window starts at or after the prediction time: nothing there is visible.)")
    data = {"start_time": _fmt(start), "end_time": _fmt(end), "counts": dict(sorted(counts.items()))}
    return ToolResult(ok=True, content="\n".join(lines), data=data)


def event_times(ctx: ToolContext) -> dict[str, np.ndarray]:
    """Sorted event times (``datetime64[us]``) of every visible row, per timed EHR table (empty tables included).

    From the episode's inventory (:meth:`~clinseek.episode.Episode.event_times`): no table is loaded.
    """
    out: dict[str, np.ndarray] = {}
    for name in sorted(ehr_tables(ctx)):
        times = ctx.episode.event_times(name)
        if times is not None:
            out[name] = times.to_numpy(zero_copy_only=False)
    return out


def _between(times: np.ndarray, start: dt.datetime, end: dt.datetime) -> int:
    """How many of the sorted ``times`` lie in [start, end)."""
    lo, hi = np.searchsorted(times, [np.datetime64(start, "us"), np.datetime64(end, "us")])
    return max(int(hi) - int(lo), 0)


@tool("ehr.get_latest_records")
def get_latest_records(ctx: ToolContext, table_name: str, subject_id: SubjectArg = None) -> ToolResult:
    """The rows of one table that share its latest event time (the most recent entries).

    Args:
        table_name: an EHR table, e.g. 'labevents' or 'hosp.labevents'.
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    ref, view = _ehr_view(ctx, table_name, timed=True)
    times = ctx.episode.event_times(ref.qualified)
    latest = times[len(times) - 1].as_py() if times is not None and len(times) else None
    return _rows(ctx, f"{ref.qualified} latest", view, lambda v: f"{v.time} = ?", [latest], _NARROW_SQL)


@tool("ehr.get_records_by_keyword")
def get_records_by_keyword(
    ctx: ToolContext, table_name: str, keyword: str, subject_id: SubjectArg = None
) -> ToolResult:
    """Rows of one table where any text column (dictionary labels included) contains keyword.

    A keyword made of digits also searches integer columns (itemid, hadm_id, ...). Times and
    decimal numbers are not searched (use the time and value tools). The match is
    literal and case-insensitive (no regular expressions: '(' or '+' match themselves). Rows
    are oldest first. Works on dictionary tables too (e.g. d_labitems).

    Args:
        table_name: an EHR table, e.g. 'labevents', 'prescriptions' or 'd_labitems'.
        keyword: the text to look for, e.g. 'creatinine'.
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    if not keyword.strip():
        raise ToolError("bad_argument", "keyword is empty")
    ref, view = _ehr_view(ctx, table_name)
    needle = keyword.strip().lower()
    # an integer's text is digits and '-': integer columns can only match such keywords
    types = {"VARCHAR", *(_INTEGER_TYPES if set(needle) <= set("0123456789-") else ())}
    searched = [c for c, t in zip(view.columns, view.types, strict=True) if t in types]
    if not searched:
        return _rows(ctx, f"{ref.qualified} containing {echo(keyword)}", view, lambda v: "FALSE", [], _NARROW_SQL)

    def where(v: View) -> str:
        haystack = ", ".join(
            v.col(c) if t == "VARCHAR" else f"CAST({v.col(c)} AS VARCHAR)"
            for c, t in zip(v.columns, v.types, strict=True)
            if c in searched
        )
        return f"strpos(lower(concat_ws(chr(31), {haystack})), ?) > 0"

    title = f"{ref.qualified} containing {echo(keyword)}"
    return _rows(ctx, title, view, where, [needle], _NARROW_SQL, costly_filter=True)


@tool("ehr.get_records_by_value")
def get_records_by_value(
    ctx: ToolContext, table_name: str, column_name: str, value: str, subject_id: SubjectArg = None
) -> ToolResult:
    """Rows of one table whose column equals value exactly (typed: numbers and times compare as such).

    Text compares after trimming spaces, case-sensitively. Rows are oldest first.

    Args:
        table_name: an EHR table, e.g. 'labevents'.
        column_name: the column to compare, e.g. 'itemid' or 'label'.
        value: the value, e.g. '50912', 'Creatinine' or '2150-03-01 08:00:00'.
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    ref, view = _ehr_view(ctx, table_name)
    column = column_named(view.columns, column_name, ref.qualified)
    type_ = view.types[view.columns.index(column)]
    if type_ == "VARCHAR":
        param: Any = value.strip()

        def where(v: View) -> str:
            return f"trim({v.col(column)}) = ?"
    else:
        cast = run_query(ctx, f"SELECT TRY_CAST(? AS {type_})", [value.strip()], tables=()).rows[0][0]
        if cast is None:
            raise ToolError(
                "bad_argument", f"value {echo(value)} is not a {type_} (the type of {ref.qualified}.{column})"
            )
        param = cast

        def where(v: View) -> str:
            return f"{v.col(column)} = ?"
    return _rows(
        ctx, f"{ref.qualified} where {column} = {echo(value.strip())}", view, where, [param], _NARROW_SQL
    )
