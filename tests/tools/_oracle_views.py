"""The record tools' views as they were before the flat statements (main 06acd73), pinned for
test_flat_views.py: every table read through a sub-query that lists every column again and names
the event time ``v._event_time``. Only the interface is today's (:class:`clinseek.tools._views.View`:
``source``, ``exprs``, ``time``, ``order``), so the tools can run on either; the SQL is the old one.
"""

from __future__ import annotations

import re

from clinseek.schema import Table, get_table
from clinseek.tools import ToolContext
from clinseek.tools._tables import ehr_tables
from clinseek.tools._views import View

_PLAIN_COLUMN = re.compile(r"^t\.(\w+)$")


def oracle_view(ctx: ToolContext, table: Table, *, labels: bool = True) -> View:
    """The pinned sub-query view of ``table`` (same arguments as ``table_view``)."""
    names = list(table.column_names)
    types = [c.type for c in table.columns]
    select = [f't."{c}"' for c in names]
    joins: list[str] = []
    read = {table.qualified}
    present = ehr_tables(ctx)
    for i, dj in enumerate(table.dict_joins if labels else ()):
        if dj.table not in present:
            continue
        dtable = get_table(dj.table)
        on = " AND ".join(f'd{i}."{k}" = t."{c}"' for c, k in zip(dj.columns, dj.keys, strict=True))
        joins.append(f"LEFT JOIN {dj.table} d{i} ON {on}")
        read.add(dj.table)
        for label in dj.labels:
            shown = label if label not in names else f"{dtable.name}_{label}"
            select.append(f'd{i}."{label}" AS "{shown}"')
            names.append(shown)
            types.append(dtable.column(label).type)
    source, time_expr = _time_source(table)
    if table.visibility == "event" and table.event_time is not None and table.event_time.parent is not None:
        read.add(table.event_time.parent.table)
    timed = time_expr is not None
    if time_expr is not None:
        select.append(f"{time_expr} AS _event_time")
        if not _PLAIN_COLUMN.match(time_expr):
            select.append(f"{time_expr} AS event_time")
            names.append("event_time")
            types.append("TIMESTAMP")
    sql = f"SELECT {', '.join(select)} FROM {source} t {' '.join(joins)}"
    shown_time = None if time_expr is None else _PLAIN_COLUMN.match(time_expr)
    # the event time as the shown column it is (View.order names shown columns only; the same values)
    order = [] if time_expr is None else [f'"{shown_time.group(1)}"' if shown_time else '"event_time"']
    for col in (*table.sort_columns, *table.key):
        if col != "subject_id" and f'"{col}"' not in order:
            order.append(f'"{col}"')
    return View(
        f"({sql}) v",
        tuple(names),
        tuple(f'v."{c}"' for c in names),
        tuple(types),
        "v._event_time" if timed else None,
        tuple(f"v.{c}" for c in order),
        frozenset(read),
    )


def _time_source(table: Table) -> tuple[str, str | None]:
    et = table.event_time
    if table.visibility != "event" or et is None:
        return table.qualified, None
    if et.parent is None:
        return table.qualified, et.expr
    parent = et.parent
    on = " AND ".join(f't."{k}" = c."{k}"' for k in parent.on)
    inner = (
        f"(SELECT c.*, (SELECT min({parent.time}) FROM {parent.table} t WHERE {on}) AS parent_time "
        f"FROM {table.qualified} c)"
    )
    return inner, et.expr
