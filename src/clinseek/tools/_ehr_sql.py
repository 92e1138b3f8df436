"""``ehr.run_sql_query``: one guarded read-only query on the sealed episode."""

from __future__ import annotations

import functools

from ..errors import ToolError
from ._context import ToolContext
from ._ehr_meta import SubjectArg
from ._pin import check_subject
from ._query import run_query
from ._registry import tool
from ._render import Rows, table_result
from ._result import ToolResult
from ._sqlguard import guard_sql
from ._tables import available, resolve


@tool("ehr.run_sql_query")
def run_sql_query(ctx: ToolContext, sql_query: str, subject_id: SubjectArg = None) -> ToolResult:
    """Run one read-only SQL query (DuckDB dialect) over this patient's visible EHR tables.

    Exactly one SELECT / WITH / UNION query; everything else (DDL, DML, ATTACH, COPY, SET,
    PRAGMA, INSTALL/LOAD, file or URL readers, several statements) is refused. Tables are
    typed (numbers are numbers, times are TIMESTAMP, missing values are NULL) and can be named
    with or without their module ('labevents' or 'hosp.labevents'); candidate tables live in
    'candidates'. Dictionary tables (d_labitems, d_items, d_icd_diagnoses, ...) are there to
    join labels. The query is stopped after the SQL time limit and at most max_rows rows are
    returned; use LIMIT/OFFSET to page.

    Args:
        sql_query: the query, e.g. "SELECT charttime, valuenum FROM labevents WHERE itemid = 50912 ORDER BY charttime".
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    if not sql_query.strip():
        raise ToolError("bad_argument", "sql_query is empty")
    sql = guard_sql(
        sql_query,
        functools.partial(resolve, ctx),
        available=available(ctx),
        prediction_time=ctx.episode.key.prediction_time,
    )
    result = run_query(ctx, sql, from_model=True)
    rows = Rows(tuple(result.columns), result.rows, result.row_count, result.truncated)
    if not result.rows:
        return ToolResult(
            ok=True,
            content="The query ran and returned no rows.",
            data={"columns": list(result.columns), "rows": [], "row_count": 0},
        )
    narrow = "add WHERE conditions, or page with LIMIT/OFFSET (e.g. LIMIT 200 OFFSET 200)."
    return table_result("Query result", rows, ctx.limits, narrow=narrow)
