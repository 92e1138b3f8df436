"""Running SQL on the episode: the time limit and the row cap from Limits, errors made structured."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from ..errors import EpisodeQueryError, EpisodeTimeout, ToolError
from ._context import ToolContext

if TYPE_CHECKING:
    from ..episode import QueryResult


def run_query(
    ctx: ToolContext,
    sql: str,
    params: Sequence[Any] | None = None,
    *,
    tables: Collection[str] | None,
    max_rows: int | None = None,
    from_model: bool = False,
) -> QueryResult:
    """Run ``sql`` on the episode under ``ctx.limits`` (timeout, ``max_rows`` default cap).

    Args:
        ctx: the tool context.
        sql: one query over the episode's tables.
        params: positional ``?`` parameters.
        tables: the episode tables the query reads (loaded first when not yet); ``None`` loads every table.
        max_rows: row cap (default ``ctx.limits.max_rows``); one more row is fetched to detect a cut.
        from_model: the SQL was written by the model; DuckDB errors then become
            ``ToolError("sql_error")`` instead of propagating as infrastructure errors.

    Raises:
        ToolError: ``"timeout"`` when the query ran past ``sql_timeout_s`` (it is interrupted);
            ``"sql_error"`` (or the episode's ``"read_only"``) for a failing model-written query; the
            DuckDB exception is its ``__cause__`` (``duckdb.BinderException``: rejected before running).
    """
    limit = ctx.limits.max_rows if max_rows is None else max_rows
    return _guarded(
        ctx, lambda: ctx.episode.execute(sql, params, tables=tables, max_rows=limit, timeout_s=ctx.limits.sql_timeout_s),
        from_model=from_model,
    )


def run_read(
    ctx: ToolContext,
    name: str,
    statement: Callable[[str | None], str],
    params: Sequence[Any] | None = None,
    *,
    tables: Collection[str],
    max_rows: int | None = None,
) -> QueryResult:
    """Run a tool's query over table ``name``'s visible rows under ``ctx.limits``, without loading the table when
    it is not loaded yet (:meth:`~clinseek.episode.Episode.read`: ``statement(source)`` writes the query for
    ``source``, ``None`` being the episode's database).

    Raises:
        ToolError: ``"timeout"`` when the query ran past ``sql_timeout_s`` (it is interrupted).
    """
    limit = ctx.limits.max_rows if max_rows is None else max_rows
    return _guarded(
        ctx, lambda: ctx.episode.read(name, statement, params, tables=tables, max_rows=limit,
                                      timeout_s=ctx.limits.sql_timeout_s),
        from_model=False,
    )


def _guarded(ctx: ToolContext, run: Callable[[], QueryResult], *, from_model: bool) -> QueryResult:
    """``run()``, its time-outs (and a model's failing SQL) as :class:`ToolError`."""
    try:
        return run()
    except (EpisodeTimeout, duckdb.InterruptException):
        raise ToolError(
            "timeout",
            f"the query ran longer than {ctx.limits.sql_timeout_s:g} s and was stopped; "
            "narrow it (a time window, fewer joins, LIMIT)",
        ) from None
    except EpisodeQueryError as err:
        if not from_model:
            raise
        raise ToolError(err.kind, _first_line(err.message)) from None
    except duckdb.Error as err:
        if not from_model:
            raise
        raise ToolError("sql_error", _first_line(str(err))) from err  # DuckDB's text names its kind


_HINTS = ("Candidate bindings:", "Candidate tables:", "Did you mean")
"""How DuckDB's hint lines start (the closest column or table names of the episode), kept after the first line."""


def _first_line(message: str) -> str:
    """DuckDB's first line and its hints (``Candidate bindings: "valuenum", "value"``), on one line, at most 500
    characters; not the echo of the query (``LINE 1: ...`` and its caret)."""
    lines = [line.strip() for line in message.strip().splitlines()]
    if not lines or not lines[0]:
        return "query failed"
    hints = [line.replace(": : ", ": ") for line in lines[1:] if line.startswith(_HINTS)]
    return " ".join([lines[0], *hints])[:500]
