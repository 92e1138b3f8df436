"""The typed result of a query on an episode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class QueryResult:
    """Rows of one query on a sealed episode.

    Attributes:
        columns: column names, in result order.
        types: DuckDB type names of the columns (e.g. ``"TIMESTAMP"``, ``"DOUBLE"``, ``"VARCHAR"``).
        rows: at most ``max_rows`` rows as Python values (TIMESTAMP -> naive ``datetime``,
            DATE -> ``date``, NULL -> ``None``).
        truncated: more rows existed than ``max_rows`` (one extra row was fetched to know).
        row_count: the total number of rows when known without extra work (the result was not
            truncated), else ``None``.
    """

    columns: tuple[str, ...]
    types: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    truncated: bool
    row_count: int | None
