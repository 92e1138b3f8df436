"""The read view of a table: visible rows, dictionary labels joined in, and the registry event time."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..schema import Table, get_table
from ._context import ToolContext
from ._tables import EVENT_TIME, ehr_tables

_PLAIN_COLUMN = re.compile(r"^t\.(\w+)$")


@dataclass(frozen=True, slots=True)
class View:
    """SQL for one table's rows as the tools show them.

    Attributes:
        sql: a ``SELECT`` (use as a sub-query) with the table's columns, the joined dictionary
            labels, and, for event tables, the hidden column ``_event_time``.
        columns: the columns shown to the model, in order (``event_time`` included when the
            table's time is derived rather than one of its own columns).
        types: DuckDB type of each shown column.
        timed: the table has an event time (``_event_time`` is present).
        order_by: ORDER BY clause over the view's columns (oldest first).
        tables: the episode tables the view reads (the table, its joined dictionaries, the parent of an
            inherited time): what a query over it loads.
    """

    sql: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    timed: bool
    order_by: str
    tables: frozenset[str]

    def select(self, where: str = "TRUE", *, limit: int | None = None, with_total: bool = False) -> str:
        """``SELECT <shown columns> FROM view v WHERE <where> ORDER BY <order> [LIMIT n]``.

        A ``limit`` (the row cap + 1) lets DuckDB keep only the first rows instead of sorting all;
        ``with_total`` adds a last column ``_total`` = the number of matching rows.
        """
        cols = ", ".join(f'v."{c}"' for c in self.columns) + (
            ", count(*) OVER () AS _total" if with_total else ""
        )
        tail = f" LIMIT {int(limit)}" if limit is not None else ""
        return f"SELECT {cols} FROM ({self.sql}) v WHERE {where} ORDER BY {self.order_by}{tail}"

    def count(self, where: str = "TRUE") -> str:
        """``SELECT count(*) FROM view v WHERE <where>``."""
        return f"SELECT count(*) FROM ({self.sql}) v WHERE {where}"


def table_view(ctx: ToolContext, table: Table, *, labels: bool = True) -> View:
    """The view of ``table`` in ``ctx``'s episode (labels only from dictionaries the episode has)."""
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
        select.append(f"{time_expr} AS {EVENT_TIME}")
        if not _PLAIN_COLUMN.match(time_expr):
            select.append(f"{time_expr} AS event_time")
            names.append("event_time")
            types.append("TIMESTAMP")
    sql = f"SELECT {', '.join(select)} FROM {source} t {' '.join(joins)}"
    order = [EVENT_TIME] if timed else []
    for col in (*table.sort_columns, *table.key):  # the key breaks ties: the same call, the same order
        if col != "subject_id" and f'"{col}"' not in order:
            order.append(f'"{col}"')
    return View(sql, tuple(names), tuple(types), timed, ", ".join(f"v.{c}" for c in order) or "1", frozenset(read))


def _time_source(table: Table) -> tuple[str, str | None]:
    """(FROM source aliased later as ``t``, event-time expression over ``t``) for ``table``."""
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
