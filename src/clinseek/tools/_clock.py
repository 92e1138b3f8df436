"""Recognising a wall-clock read in a parsed query (the ``"clock"`` refusal of the SQL guard).

The names come from the installed DuckDB's own catalog (:func:`clinseek.episode.clock_names`);
this module maps them onto sqlglot's parse tree: calls by name (``now()``, ``main.now()``,
``uuidv7()``, ``ago(...)``), the node types sqlglot turns clock calls into (``today()`` and
``current_date`` both become ``CurrentDate``), bare or quoted value names (``"current_date"``),
and one-argument ``age(x)`` (``current_date - x``).
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from ..episode import clock_names


@lru_cache(maxsize=1)
def clock_node_types() -> tuple[type[exp.Func], ...]:
    """The sqlglot node types (other than ``Anonymous``) the installed DuckDB's clock names parse to."""
    names = clock_names()
    found: set[type[exp.Func]] = set()
    texts = [f'SELECT "{n}"()' for n in names.functions] + [f"SELECT {v}" for v in names.values]
    for text in texts:
        try:
            tree = sqlglot.parse_one(text, read="duckdb")
        except SqlglotError:
            continue
        found |= {type(n) for n in tree.find_all(exp.Func) if not isinstance(n, exp.Anonymous)}
    return tuple(sorted(found, key=lambda t: t.__name__))


OTHER_ENGINES_CLOCK = frozenset({
    "getdate", "getutcdate", "sysdatetime", "sysutcdatetime", "sysdatetimeoffset",  # T-SQL
    "current_datetime",  # BigQuery
    "sysdate", "systimestamp",  # Oracle (also MySQL's SYSDATE())
    "curdate", "curtime", "utc_timestamp", "utc_date", "utc_time",  # MySQL
})
"""Other engines' names for the wall clock (functions, or Oracle's bare ``SYSDATE``), refused like DuckDB's own."""
CLOCK_TEXT = frozenset({"now", "today", "tomorrow", "yesterday"})
"""PostgreSQL's special date/time input values that read the clock (``'now'::timestamp``, ``DATE 'today'``)."""
_TEMPORAL = (exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPNTZ,
             exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.DATETIME, exp.DataType.Type.TIME)


def reads_clock(node: exp.Expr, name: str | None) -> str | None:
    """What in ``node`` reads the wall clock (a short text for the refusal), or ``None``.

    Args:
        node: any node of a parsed query.
        name: the lower-case function name of ``node`` when it is a function call.
    """
    names = clock_names()
    if isinstance(node, exp.Column) and not node.table and (
        node.name.lower() in names.values or (not node.this.quoted and node.name.lower() in OTHER_ENGINES_CLOCK)
    ):
        return node.name
    if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.this, exp.Literal) and node.this.is_string and (
        node.this.name.strip().lower() in CLOCK_TEXT and node.to.is_type(*_TEMPORAL)
    ):
        return f"'{node.this.name}' as a {node.to.sql(dialect='duckdb')}"
    if not isinstance(node, exp.Func):
        return None
    if name in OTHER_ENGINES_CLOCK:
        return f"{name}()"
    if isinstance(node, clock_node_types()) or name in names.functions or name in names.values:
        return f"{name}()"
    if name == "age" and isinstance(node, exp.Anonymous) and len(node.expressions) == 1:
        return "age() with one argument (it counts from today's date)"
    return None
