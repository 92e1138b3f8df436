"""EHR tools about the episode itself: load_ehr (pinned), table names, columns, descriptions, values."""

from __future__ import annotations

from ..errors import RegistryError, ToolError
from ..policy import get_policy
from ..schema import DictJoin, Table, describe_table, get_table
from ._context import ToolContext
from ._pin import check_subject, check_timestamp
from ._query import run_query
from ._registry import tool
from ._render import Rows, echo, table_result
from ._result import ToolResult
from ._tables import candidate_tables, ehr_tables, resolve_table
from ._views import table_view, view_read

SubjectArg = str | int | None


@tool("ehr.load_ehr")
def load_ehr(ctx: ToolContext, subject_id: SubjectArg = None, timestamp: str | None = None) -> ToolResult:
    """Show the patient's EHR as loaded for this question: every visible table with its row count.

    The episode is already loaded and fixed to one patient and one prediction time; this call
    cannot load another patient or time (such arguments are refused). Rows are visible only
    if they were recorded before the prediction time; values not yet known then are NULL.

    Args:
        subject_id: optional; must be this episode's patient if given.
        timestamp: optional 'YYYY-MM-DD HH:MM:SS'; must be this episode's prediction time if given.
    """
    check_subject(ctx, subject_id)
    check_timestamp(ctx, timestamp)
    key = ctx.episode.key
    policy = get_policy(key.policy)
    rule = "at or before" if policy.inclusive else "before"
    tables = ehr_tables(ctx)
    cands = {
        name: run_query(ctx, f"SELECT count(*) FROM {name}", tables=()).rows[0][0] for name in candidate_tables(ctx)
    }
    lines = [
        f"EHR loaded: subject_id {key.subject_id}, prediction_time {key.prediction_time.isoformat(sep=' ')} "
        f"(policy {key.policy}: rows recorded {rule} this time; later values are NULL).",
        "EHR tables (rows):",
        *(f"- {name}: {n}{_kind(name)}" for name, n in sorted(tables.items())),
    ]
    if cands:
        lines += ["Candidate tables (rows):", *(f"- {n}: {c}" for n, c in cands.items())]
    data = {
        "subject_id": key.subject_id,
        "prediction_time": key.prediction_time.isoformat(sep=" "),
        "policy": key.policy,
        "tables": tables,
        "candidate_tables": cands,
    }
    return ToolResult(ok=True, content="\n".join(lines), data=data)


def _kind(name: str) -> str:
    try:
        return " (dictionary)" if get_table(name).visibility == "dictionary" else ""
    except RegistryError:
        return ""


@tool("ehr.get_table_names")
def get_table_names(ctx: ToolContext, subject_id: SubjectArg = None) -> ToolResult:
    """List the EHR tables and the candidate tables of this episode.

    Args:
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    tables = sorted(ehr_tables(ctx))
    cands = list(candidate_tables(ctx))
    content = f"EHR tables: {', '.join(tables)}\nCandidate tables: {', '.join(cands) or 'none'}"
    return ToolResult(ok=True, content=content, data={"tables": tables, "candidate_tables": cands})


@tool("ehr.get_column_names")
def get_column_names(ctx: ToolContext, table_name: str, subject_id: SubjectArg = None) -> ToolResult:
    """List a table's columns with their types, including labels joined in from dictionaries.

    Args:
        table_name: an EHR or candidate table, e.g. 'labevents' or 'hosp.labevents'.
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    ref = resolve_table(ctx, table_name)
    if ref.table is None:
        shape = run_query(ctx, f"SELECT * FROM {ref.qualified} LIMIT 0", tables=())  # a candidate table
        cols: list[tuple[str, str]] = list(zip(shape.columns, shape.types, strict=True))
    else:
        view = table_view(ctx, ref.table)
        cols = list(zip(view.columns, view.types, strict=True))
    own = set(ref.table.column_names) if ref.table else {c for c, _ in cols}
    sql_cols = [(c, t) for c, t in cols if c in own]
    labels = [(c, t) for c, t in cols if c not in own and c != "event_time"]
    parts = [f"{c} {t}" for c, t in sql_cols]
    if ref.table and "event_time" in dict(cols):
        parts.append(
            "event_time TIMESTAMP (shown by the record tools: when the row became known; not a SQL column)"
        )
    content = f"Columns of {ref.qualified}: " + ", ".join(parts)
    if labels and ref.table is not None:
        content += "\n" + _label_note(ref.table, labels)
    return ToolResult(
        ok=True,
        content=content,
        data={
            "table": ref.qualified,
            "columns": [c for c, _ in cols],
            "types": [t for _, t in cols],
            "sql_columns": [c for c, _ in sql_cols],
            "joined_labels": [c for c, _ in labels],
        },
    )


def _join_sql(join: DictJoin) -> str:
    if join.columns == join.keys:
        return f"JOIN {join.table} USING ({', '.join(join.columns)})"
    on = " AND ".join(f"t.{c} = d.{k}" for c, k in zip(join.columns, join.keys, strict=True))
    return f"JOIN {join.table} d ON {on}"


def _label_note(table: Table, labels: list[tuple[str, str]]) -> str:
    """How the dictionary labels shown by the record tools are joined in SQL."""
    joins = "; ".join(_join_sql(j) for j in table.dict_joins) or "a JOIN on its dictionary table"
    names = ", ".join(f"{c} {t}" for c, t in labels)
    return (
        f"Dictionary labels joined in by the record tools (not columns of {table.qualified}; in "
        f"ehr.run_sql_query add {joins}): {names}"
    )


@tool("ehr.get_table_description")
def get_table_description(ctx: ToolContext, table_name: str) -> ToolResult:
    """Describe a table: what it holds, when its rows become visible, hidden columns, and every column.

    Args:
        table_name: an EHR or candidate table, e.g. 'labevents' or 'hosp.labevents'.
    """
    ref = resolve_table(ctx, table_name)
    if ref.table is None:
        text = (
            f"Table: {ref.qualified} (candidate list)\nThe answer options for this question's task; "
            "final answers must be chosen from it.\nColumns:\n- candidate VARCHAR: one answer option."
        )
    else:
        text = describe_table(ref.table)
    return ToolResult(ok=True, content=text, data={"table": ref.qualified})


@tool("ehr.get_unique_values")
def get_unique_values(
    ctx: ToolContext, table_name: str, column_name: str, subject_id: SubjectArg = None
) -> ToolResult:
    """Distinct non-NULL values of one column with how many rows hold each (most frequent first).

    Lists every value when there are at most max_unique_values (50 by default); otherwise the
    most frequent ones, and says how many distinct values exist.

    Args:
        table_name: an EHR table, e.g. 'labevents'.
        column_name: a column of that table (dictionary labels such as 'label' included).
        subject_id: optional; must be this episode's patient if given.
    """
    check_subject(ctx, subject_id)
    ref = resolve_table(ctx, table_name, candidates=False)
    assert ref.table is not None
    view = table_view(ctx, ref.table)
    column = column_named(view.columns, column_name, ref.qualified)
    result = view_read(ctx, view, lambda v: v.values(column), max_rows=ctx.limits.max_unique_values)
    total = result.rows[0][-1] if result.rows else 0
    rows = Rows(("value", "rows"), [r[:2] for r in result.rows], total, result.truncated, unit="value")
    narrow = "filter with ehr.get_records_by_keyword or ehr.run_sql_query (WHERE ... LIKE, GROUP BY, LIMIT/OFFSET)."
    return table_result(f"{ref.qualified}.{column}", rows, ctx.limits, narrow=narrow)


def column_named(columns: tuple[str, ...], name: str, table: str) -> str:
    for col in columns:
        if col.lower() == name.strip().strip('"').lower():
            return col
    raise ToolError("unknown_column", f"{table} has no column {echo(name)}; columns: {', '.join(columns)}")
