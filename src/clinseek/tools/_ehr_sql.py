"""``ehr.run_sql_query``: one guarded read-only query on the sealed episode."""

from __future__ import annotations

import dataclasses
import functools
import re

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from ..errors import ToolError
from ..schema import tables
from ._context import ToolContext
from ._ehr_meta import SubjectArg
from ._pin import check_subject
from ._query import run_query
from ._registry import tool
from ._render import Rows, render_rows
from ._result import ToolResult
from ._sqlcache import guard_verdict
from ._sqlguard import GuardedQuery
from ._sqlhints import hint_for, hint_for_sql, without_guess

_REJECTED = (duckdb.BinderException, duckdb.ParserException, duckdb.CatalogException)
"""DuckDB errors raised before a query runs: such a query is read once more as SQLite."""


@tool("ehr.run_sql_query")
def run_sql_query(ctx: ToolContext, sql_query: str, subject_id: SubjectArg = None) -> ToolResult:
    """Run one read-only SQL query over this patient's visible EHR tables.

    Dialect: DuckDB. SQLite as models write it also runs (datetime(x, 'start of year', '-1 year'),
    date(), julianday(), strftime('%Y-%m', x) and '%J', ifnull, group_concat, iif, integer
    division, a bare column beside an aggregate): a query that is not valid DuckDB is read as
    SQLite, translated, and its result starts with one line saying so. Valid DuckDB keeps DuckDB's
    meaning: LIKE is case-sensitive (ILIKE ignores case), 7 / 2 = 3.5, NULLs sort last, and text
    takes single quotes ("x" is a column). Time: 'now' is the
    prediction time (SQLite's datetime('now') means it); every table holds only what was known
    before it. The episode holds this one patient only: questions about other patients
    (percentiles or counts among patients) cannot be answered here.

    Exactly one SELECT / WITH / UNION query; everything else (DDL, DML, ATTACH, COPY, SET,
    PRAGMA, INSTALL/LOAD, file or URL readers, several statements) is refused. Tables are
    typed (numbers are numbers, times are TIMESTAMP, missing values are NULL) and can be named
    with or without their module ('labevents' or 'hosp.labevents'); candidate tables live in
    'candidates'. Dictionary tables (d_labitems, d_items, d_icd_diagnoses, ...) are there to
    join labels. The query is stopped after the SQL time limit and at most max_rows rows are
    returned; use LIMIT/OFFSET to page. In the result, a time on the same date as the row above
    shows only its time of day.

    Args:
        sql_query: the query, e.g. "SELECT charttime, valuenum FROM labevents WHERE itemid = 50912 ORDER BY charttime".
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    if not sql_query.strip():
        raise ToolError("bad_argument", "sql_query is empty")
    episode = ctx.episode
    verdict = guard_verdict(sql_query, episode.key.prediction_time, episode.signature)
    query = verdict.checked()
    try:
        result = run_query(ctx, query.sql, tables=query.tables, from_model=True)
    except ToolError as err:
        if verdict.note is not None or not isinstance(err.__cause__, _REJECTED):
            raise _explained(err, verdict.note, sql_query) from None
        retry = guard_verdict(sql_query, episode.key.prediction_time, episode.signature, sqlite=True)
        if retry.query is None or retry.note is None or retry.query.sql == query.sql:
            raise _explained(err, verdict.note, sql_query) from None
        try:  # DuckDB rejected it before running: read it as SQLite once
            result = run_query(ctx, retry.query.sql, tables=retry.query.tables, from_model=True)
        except ToolError:
            # DuckDB's complaint about what was written
            raise _explained(err, verdict.note, sql_query) from None
        verdict, query = retry, retry.query
    if verdict.names and len(verdict.names) == len(result.columns):  # SQLite's names of a translated query
        result = dataclasses.replace(result, columns=tuple(n or c for n, c in zip(verdict.names, result.columns,
                                                                                    strict=True)))
    if not result.rows:
        extra = {"dialect": "sqlite"} if verdict.note is not None else {}
        return ToolResult(
            ok=True,
            content=(verdict.note + "\n" if verdict.note is not None else "") + "The query ran and returned no rows."
            + _like_hint(ctx, query),
            data={"columns": list(result.columns), "types": list(result.types), "rows": [], "row_count": 0, **extra},
        )
    total = result.row_count if result.row_count is not None else _count_rows(ctx, query)
    rows = Rows(result.columns, result.rows, total, result.truncated)
    text, cut = render_rows(None, rows, ctx.limits, narrow=functools.partial(_next_page, ctx, query.sql))
    data = {"columns": list(result.columns), "rows": [list(r) for r in result.rows], "row_count": total,
            "types": list(result.types)}
    if verdict.note is not None:  # read as SQLite: the result says so first
        data["dialect"] = "sqlite"
        text = f"{verdict.note}\n{text}"
    return ToolResult(ok=True, content=text, data=data, truncated=cut)


def _like_hint(ctx: ToolContext, query: GuardedQuery) -> str:
    """For a query that returned no rows: a second line when it would return rows with ``ILIKE`` in place of its
    ``LIKE`` on patterns with letters (DuckDB's ``LIKE`` is case-sensitive, SQLite's is not, and models often
    write SQLite), found by running that variant once (at most one row, under the same time limit); else ``""``."""
    variant = _ilike_variant(query.sql)
    if variant is None:
        return ""
    try:
        probe = run_query(ctx, f"SELECT 1 FROM ({variant}) AS _ilike LIMIT 1", max_rows=1, tables=query.tables,
                          from_model=True)
    except ToolError:
        return ""
    if not probe.rows:
        return ""
    return ("\nNote: LIKE is case-sensitive here (DuckDB; SQLite's is not): with ILIKE in place of LIKE this query "
            "returns rows.")


@functools.lru_cache(maxsize=256)
def _ilike_variant(sql: str) -> str | None:
    """``sql`` (the guard's, already checked) with every ``x LIKE 'pattern'`` whose pattern has a letter, outside a
    ``NOT``, turned into ``ILIKE``; ``None`` when there is none."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except (SqlglotError, RecursionError):
        return None
    likes = [like for like in tree.find_all(exp.Like)
             if not isinstance(like.parent, exp.Not) and isinstance(like.expression, exp.Literal)
             and like.expression.is_string and any(c.isalpha() for c in like.expression.this)]
    for like in likes:
        like.replace(exp.ILike(this=like.this.copy(), expression=like.expression.copy()))
    return tree.sql(dialect="duckdb") if likes else None


def _count_rows(ctx: ToolContext, query: GuardedQuery) -> int | None:
    """How many rows the query gives in all (it was cut at the row cap); ``None`` when counting fails or times out."""
    try:
        counted = run_query(
            ctx, f"SELECT count(*) FROM ({query.sql}) AS _counted", max_rows=1, tables=query.tables, from_model=True
        )
    except ToolError:
        return None
    return int(counted.rows[0][0]) if counted.rows else None


@functools.lru_cache(maxsize=256)
def _paging(sql: str) -> tuple[int | None, int | str]:
    """The outer query's literal ``LIMIT`` (``None``: none) and ``OFFSET`` (0: none; its SQL text if not a literal).

    Kept by text (a pure function of it): a truncated result's notice needs it on every call.
    """
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except SqlglotError:
        return None, 0
    limit_node, offset_node = tree.args.get("limit"), tree.args.get("offset")
    limit = _literal(limit_node.expression) if isinstance(limit_node, exp.Limit) else None
    offset: int | str = 0
    if isinstance(offset_node, exp.Offset):
        value = _literal(offset_node.expression)
        offset = value if value is not None else offset_node.expression.sql(dialect="duckdb")
    return (limit if isinstance(limit, int) else None), offset


def _literal(node: exp.Expr | None) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return int(node.this)
        except ValueError:
            return None
    return None


def _next_page(ctx: ToolContext, sql: str, shown: int) -> str:
    """Exactly how to ask for the rows after the ``shown`` ones: the next OFFSET, and the LIMIT left."""
    limit, offset = _paging(sql)
    start = offset + shown if isinstance(offset, int) else f"{offset} + {shown}"
    size = ctx.limits.max_rows if limit is None else limit - shown
    return f"add WHERE conditions, or page with LIMIT/OFFSET: the next rows are LIMIT {size} OFFSET {start}."


_MISSING_COLUMN = re.compile(r'Referenced column "([^"]+)" not found')
_MISSING_TABLE = re.compile(r'Referenced table "([^"]+)" not found')


def _lacking_column(message: str, sql: str) -> str:
    """For DuckDB's ``Referenced table "X" not found`` where X is a registry table and the query writes ``X.col``
    for a column X lacks (DuckDB says so of a qualified column it cannot bind in a subquery): that column, and
    X's columns; "" otherwise."""
    found = _MISSING_TABLE.search(message)
    if found is None:
        return ""
    name = found.group(1).lower()
    table = next((t for t in tables() if name in (t.name, t.qualified)), None)
    if table is None:
        return ""
    have = {c.lower() for c in table.column_names}
    written = re.findall(rf'(?<![\w."]){re.escape(found.group(1))}\s*\.\s*"?(\w+)"?', sql, re.IGNORECASE)
    lacking = [c for c in dict.fromkeys(written) if c.lower() not in have]
    if not lacking:
        return ""
    return (f"{found.group(1)}.{lacking[0]} is not a column of {table.qualified}, which DuckDB reports as the table "
            f"not found; its columns: {', '.join(table.column_names)}")


def _explained(err: ToolError, note: str | None, sql: str) -> ToolError:
    """``err`` with the DuckDB form of any SQLite construct it names, what a translation changed, for a
    column not found that the query wrote in double quotes, that text takes single quotes, and for a table
    "not found" that the query reads, the column it lacks (:func:`_lacking_column`)."""
    message = without_guess(err.message, sql)  # "Did you mean isnan?" for T-SQL's ISNULL misleads
    if note is not None:
        message = f"{note.removeprefix('Note: ').rstrip('.')}; DuckDB then failed: {message}"
    hint = "; ".join(h for h in (hint_for(err.message, message=True), hint_for_sql(sql)) if h)
    missing = _MISSING_COLUMN.search(err.message)
    if missing is not None and f'"{missing.group(1)}"' in sql:
        text = missing.group(1).replace("'", "''")
        quotes = f"\"{missing.group(1)}\" names a column; text takes single quotes: '{text}'"
        hint = f"{hint}; {quotes}" if hint else quotes
    lacking = _lacking_column(err.message, sql)
    if lacking:
        hint = f"{hint}; {lacking}" if hint else lacking
    return ToolError(err.kind, f"{message} (DuckDB: {hint})" if hint else message)
