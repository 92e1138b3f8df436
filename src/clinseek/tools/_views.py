"""The read view of a table: visible rows, dictionary labels joined in, and the registry event time.

A view's statements are flat: ``SELECT <columns> FROM <table> t LEFT JOIN <dictionary> d0 ... WHERE ...``,
each shown column and the event time written as its expression over the table and its joins, not a
sub-query that lists every column again (DuckDB binds and plans each extra projection: about 0.5-1 ms
per record-tool call on a 20-column table). Callers write their conditions with :meth:`View.col` and
:attr:`View.time`, never with the shown names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..policy import EVENT_TIME
from ..schema import Table, get_table
from ._context import ToolContext
from ._query import run_query, run_read
from ._tables import ehr_tables

if TYPE_CHECKING:
    from ..episode import QueryResult


@dataclass(frozen=True, slots=True)
class View:
    """SQL for one table's rows as the tools show them.

    Attributes:
        source: the ``FROM`` clause: the table aliased ``t`` (a derived table adding ``parent_time`` when
            the event time is inherited from a parent row) and its dictionary joins ``d0``, ``d1``, ...
        columns: the columns shown to the model, in order (``event_time`` included when the
            table's time is derived rather than one of its own columns).
        exprs: the SQL expression of each shown column over ``source`` (same order as ``columns``).
        types: DuckDB type of each shown column.
        time: the event time's SQL expression over ``source`` (``None``: the table has no event time),
            the registry's instant (parent times included) that the policy decided visibility by.
        order: the ``ORDER BY`` expressions (oldest first; the table's sort columns and key break ties), each
            one of :attr:`exprs`. Not a total order (a key may repeat or be absent, e.g. ``icu.chartevents``):
            rows tied on it are put in the order of every other shown column (:meth:`select`'s ``total``,
            :attr:`ranks`).
        tables: the episode tables the view reads (the table, its joined dictionaries, the parent of an
            inherited time): what a query over it loads.
        table: the registry table viewed (``None``: a view that is always read from the episode's database).
        labels: whether the dictionary labels are joined in.
    """

    source: str
    columns: tuple[str, ...]
    exprs: tuple[str, ...]
    types: tuple[str, ...]
    time: str | None
    order: tuple[str, ...]
    tables: frozenset[str]
    table: Table | None = None
    labels: bool = True

    @property
    def timed(self) -> bool:
        """The table has an event time (:attr:`time` is set)."""
        return self.time is not None

    def col(self, name: str) -> str:
        """The SQL expression of shown column ``name`` (exactly as in :attr:`columns`).

        Raises:
            ValueError: ``name`` is not a shown column.
        """
        return self.exprs[self.columns.index(name)]

    @property
    def ranks(self) -> tuple[list[int], list[int]]:
        """(indexes of :attr:`order` among the shown columns, indexes of the other shown columns): the total order
        of the rows shown, as :func:`~clinseek.episode.sort_rows` takes it."""
        first = [self.exprs.index(e) for e in self.order]
        return first, [i for i in range(len(self.exprs)) if i not in first]

    def select(
        self, where: str = "TRUE", *, limit: int | None = None, with_total: bool = False, total: bool = False
    ) -> str:
        """``SELECT <shown columns> FROM <source> WHERE <where> ORDER BY <order> [LIMIT n]``.

        ``where`` is written over :meth:`col` and :attr:`time`. A ``limit`` (the row cap + 1) lets DuckDB
        keep only the first rows instead of sorting all; ``with_total`` adds a last column ``_total`` = the
        number of matching rows. ``total``: every other shown column after :attr:`order` (a total order of the
        rows shown: what a limit cutting a run of rows tied on :attr:`order` needs; it costs DuckDB ~0.3-1 ms
        more than :attr:`order` alone).
        """
        cols = ", ".join(f'{e} AS "{c}"' for c, e in zip(self.columns, self.exprs, strict=True)) + (
            ", count(*) OVER () AS _total" if with_total else ""
        )
        order = [*self.order, *(e for e in self.exprs if e not in self.order)] if total else self.order
        tail = f" LIMIT {int(limit)}" if limit is not None else ""
        return f"SELECT {cols} FROM {self.source} WHERE {where} ORDER BY {', '.join(order) or '1'}{tail}"

    def count(self, where: str = "TRUE") -> str:
        """``SELECT count(*) FROM <source> WHERE <where>``."""
        return f"SELECT count(*) FROM {self.source} WHERE {where}"

    def values(self, name: str) -> str:
        """Distinct non-NULL values of shown column ``name``: ``value``, ``rows`` (rows holding it) and ``_total``
        (how many distinct values), most frequent first, then by value."""
        e = self.col(name)
        return (
            f'SELECT {e} AS value, count(*) AS "rows", count(*) OVER () AS _total FROM {self.source} '
            f"WHERE {e} IS NOT NULL GROUP BY {e} ORDER BY count(*) DESC, {e}"
        )


def table_view(ctx: ToolContext, table: Table, *, labels: bool = True, source: str | None = None) -> View:
    """The view of ``table`` in ``ctx``'s episode (labels only from dictionaries the episode has).

    ``source``: the ``FROM`` item of the table's visible rows with their event time as ``_event_time`` (what
    :meth:`~clinseek.episode.Episode.read` gives a statement run on the store) instead of the table itself; an
    inherited event time is then that column (the parent is not read).
    """
    names = list(table.column_names)
    exprs = [f't."{c}"' for c in names]
    types = [c.type for c in table.columns]
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
            names.append(label if label not in names else f"{dtable.name}_{label}")
            exprs.append(f'd{i}."{label}"')
            types.append(dtable.column(label).type)
    base, time = _time_source(table)
    # an event time that reads other tables (a parent, an admission's admittime): the store's select gives it as
    # a column; over the loaded table, those tables are loaded first
    reads = table.event_time.reads - {table.qualified} if time is not None and table.event_time is not None else set()
    if source is not None:
        base = source
        if reads:
            time = f't."{EVENT_TIME}"'
    else:
        read |= reads
    if time is not None and time not in exprs:  # a derived time is shown as a column of its own
        names.append("event_time")
        exprs.append(time)
        types.append("TIMESTAMP")
    order = [time] if time is not None else []
    for col in (*table.sort_columns, *table.key):  # the key breaks ties: the same call, the same order
        if col != "subject_id" and f't."{col}"' not in order:
            order.append(f't."{col}"')
    return View(
        " ".join([f"{base} t", *joins]), tuple(names), tuple(exprs), tuple(types), time, tuple(order), frozenset(read),
        table, labels,
    )


def view_read(
    ctx: ToolContext, view: View, statement: Callable[[View], str], params: Sequence[Any] | None = None, *,
    max_rows: int | None = None,
) -> QueryResult:
    """``statement`` of ``view`` run on the episode (:func:`~clinseek.tools._query.run_read`): over the loaded table,
    or, while it is not loaded, as one statement on the store over :func:`table_view`'s view of the policy's select
    (the same rows, columns, order and values)."""
    table = view.table
    if table is None:
        return run_query(ctx, statement(view), params, tables=view.tables, max_rows=max_rows)

    def write(source: str | None) -> str:
        return statement(view if source is None else table_view(ctx, table, labels=view.labels, source=source))

    return run_read(ctx, table.qualified, write, params, tables=view.tables, max_rows=max_rows)


def _time_source(table: Table) -> tuple[str, str | None]:
    """(``FROM`` source aliased ``t`` by the caller, event-time expression over ``t``) for ``table``.

    A plain column's time is written ``t."column"`` (the shown column's own expression).
    """
    et = table.event_time
    if table.visibility != "event" or et is None:
        return table.qualified, None
    expr = et.expr
    if expr.startswith("t.") and expr[2:].isidentifier():
        expr = f't."{expr[2:]}"'
    if et.parent is None:
        return table.qualified, expr
    parent = et.parent
    on = " AND ".join(f't."{k}" = c."{k}"' for k in parent.on)
    inner = (
        f"(SELECT c.*, (SELECT min({parent.time}) FROM {parent.table} t WHERE {on}) AS parent_time "
        f"FROM {table.qualified} c)"
    )
    return inner, expr
