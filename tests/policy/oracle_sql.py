"""The policy's store SQL as it was before issue #22's statement work (main 235e974), pinned as an oracle.

Frozen: never edit it to follow ``clinseek.policy._sql``. ``test_statements_oracle.py`` runs the statements
it writes and the ones the policy writes now on real stores and requires the same rows and values: a
cheaper statement must not change a single row or value.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from clinseek.schema import ENCOUNTER_IDS, Column, Mask, Table, encounter_mask, get_table
from clinseek.store import EVENT_INDEX, indexable

if TYPE_CHECKING:
    from clinseek.policy import EpisodeKey

SUBJECT = "$1"
CUTOFF = "$2"
_PARENT = "_parent"
REPORTS_TABLE = "cxr.reports"
"""The CXR report text table an ``EpisodeKey.hide_cxr_reports`` key does not see."""


@dataclass(slots=True)
class _Query:
    """A query being assembled: its parameters and the pieces of its WHERE clause."""

    key: EpisodeKey
    op: str
    present: frozenset[str] | None
    encounters: Mapping[str, Collection[int]] | None = None
    params: list[Any] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    laterals: dict[str, str] = field(default_factory=dict)
    """Mask instants that read other tables, by SQL: each is computed once per row in a lateral join."""

    def __post_init__(self) -> None:
        if not self.params:  # a query of several tables passes one shared list
            self.params.extend([self.key.subject_id, self.key.prediction_time])

    def add(self, value: Any) -> str:
        self.params.append(value)
        return f"${len(self.params)}"

    def has(self, name: str) -> bool:
        return self.present is None or name in self.present

    def instant(self, scoped: str) -> str:
        """``scoped`` itself, or for an instant that reads other tables its lateral join's value:
        a correlated subquery repeated in every masked column's CASE costs one join per column."""
        if "select" not in scoped.lower():
            return scoped
        alias = self.laterals.setdefault(scoped, f"_instant{len(self.laterals)}")
        return f"{alias}.instant"

    def lateral_joins(self) -> str:
        return "".join(
            f" LEFT JOIN LATERAL (SELECT ({sql}) AS instant) AS {alias} ON true" for sql, alias in self.laterals.items()
        )


def quote(name: str) -> str:
    """A DuckDB-quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def known_sql(value_sql: str, op: str) -> str:
    """SQL that is true when the instant ``value_sql`` is known at the cutoff (``$2``)."""
    return f"({value_sql}) {op} {CUTOFF}"


def value_known_sql(col: Column, op: str, alias: str = "t") -> str:
    """SQL that is true when a TIMESTAMP/DATE value is known at the cutoff (a DATE ``d`` at ``d + 24 h``)."""
    ref = f"{alias}.{quote(col.name)}"
    return known_sql(f"{ref} + INTERVAL 1 DAY" if col.type == "DATE" else ref, op)


def encounter_sqls(op: str, present: Collection[str] | None) -> dict[str, str]:
    """Per owning encounter table (``ENCOUNTER_IDS``) the store holds: SQL giving its visible ids.

    An id is visible when the earliest start of that encounter among the patient's rows (``$1``)
    is known at the cutoff (``$2``): the same rule as the subquery in
    :func:`clinseek.schema.encounter_masks`.

    (Adapted to the registry in session 25, icu25: an encounter's start is SQL over its owner's row, an ICU stay's
    not before its admission's admittime; the start over each row, then the same grouping.)
    """
    scope = frozenset(present) if present is not None else None
    out: dict[str, str] = {}
    for (_, column), encounter in ENCOUNTER_IDS.items():
        owner = encounter.table
        if present is None or owner in present:
            start = scoped_expr(encounter.start("o"), scope) or "CAST(NULL AS TIMESTAMP)"
            out[owner] = (
                f"SELECT {quote(column)} FROM (SELECT o.{quote(column)}, {start} AS _start FROM {owner} o "
                f"WHERE o.subject_id = {SUBJECT} AND o.{quote(column)} IS NOT NULL) GROUP BY {quote(column)} "
                f"HAVING {known_sql('min(_start)', op)}"
            )
    return out


def visible_sql(
    table: Table,
    key: EpisodeKey,
    *,
    op: str,
    linked_only: bool,
    present: Collection[str] | None,
    encounters: Mapping[str, Collection[int]] | None = None,
    event_time: bool = False,
) -> tuple[str, list[Any]] | None:
    """See :meth:`clinseek.policy.Policy.visible_select` (``event_time``: add ``_event_time`` last)."""
    if table.visibility == "never" or (key.hide_cxr_reports and table.qualified == REPORTS_TABLE):
        return None
    if table.visibility == "dictionary":
        cols = ", ".join(f"t.{quote(c)}" for c in table.column_names)
        return f"SELECT {cols} FROM {table.qualified} t", []
    q = _Query(key, op, frozenset(present) if present is not None else None, encounters)
    select = ", ".join(_visible_column(table, c, q) for c in table.columns)  # registers the lateral instants
    if event_time and table.event_time is not None:
        select += f", {_instant(table)} AS {EVENT_TIME}"
    rows = _visible_rows(table, q, linked_only)
    if rows is None:
        return None
    return f"SELECT {select}{rows}", q.params


EVENT_TIME = "_event_time"
"""The column of a row's event time in :func:`timeline_sql`'s rows."""


def _instant(table: Table) -> str:
    """The row's event time (the registry's, parent time included) as a TIMESTAMP, over a visible select's FROM."""
    assert table.event_time is not None
    return f"CAST({table.event_time.expr} AS TIMESTAMP)"


def timeline_sql(
    table: Table,
    key: EpisodeKey,
    *,
    op: str,
    linked_only: bool,
    present: Collection[str] | None,
    encounters: Mapping[str, Collection[int]] | None,
    since: Any | None,
    until: Any | None,
) -> tuple[str, list[Any]] | None:
    """See :meth:`clinseek.policy.Policy.timeline_select`."""
    base = visible_sql(
        table, key, op=op, linked_only=linked_only, present=present, encounters=encounters, event_time=True
    )
    if base is None:
        return None
    sql, params = base
    timed = table.visibility == "event" and table.event_time is not None
    bounds = []
    for value, op in ((since, ">="), (until, "<")):
        if value is not None and timed:
            params = [*params, value]
            bounds.append(f"_v.{EVENT_TIME} {op} ${len(params)}")
    if not bounds:
        return sql, params
    return f"SELECT * FROM ({sql}) AS _v WHERE {' AND '.join(bounds)}", params


def timeline_order(table: Table) -> list[str]:
    """The total order of a table's timeline rows: event time (event tables), the table's key, then every
    other column, each ascending with NULLs last. Sorting by it gives the same rows in the same order from
    any source, whatever order it stores them in (the timeline's SQL leaves the order to the reader:
    sorting a few hundred rows in Arrow costs less than planning the ``ORDER BY``)."""
    timed = table.visibility == "event" and table.event_time is not None
    ties = [*table.key, *(c for c in table.column_names if c not in table.key)]
    return [*([EVENT_TIME] if timed else []), *ties]


def visible_inventory_sql(
    tables: Iterable[Table],
    key: EpisodeKey,
    *,
    op: str,
    linked_only: bool,
    present: Collection[str] | None,
    indexed: Collection[str] = (),
) -> tuple[str, list[Any]] | None:
    """See :meth:`clinseek.policy.Policy.visible_inventory_select`."""
    params: list[Any] = []
    scope = frozenset(present) if present is not None else None
    parts = []
    from_index: list[Table] = []
    for table in inventory_tables(tables, key, present=scope):
        if table.qualified in indexed and _from_index(table, linked_only):
            from_index.append(table)
            continue
        rows = _visible_rows(table, _Query(key, op, scope, params=params), linked_only)
        assert rows is not None  # inventory_tables kept only tables whose parent is present
        instant = "CAST(NULL AS TIMESTAMP)" if table.event_time is None else _instant(table)
        times = "CAST(NULL AS TIMESTAMP[])" if table.event_time is None else "list(_e.e ORDER BY _e.e)"
        parts.append(
            f"SELECT '{table.qualified}' AS table_name, count(*) AS n, {times} AS times "
            f"FROM (SELECT {instant} AS e{rows}) AS _e"
        )
    if from_index:
        parts.insert(0, _index_part(from_index, _Query(key, op, scope, params=params)))
    return (" UNION ALL ".join(parts), params) if parts else None


def inventory_tables(tables: Iterable[Table], key: EpisodeKey, *, present: Collection[str] | None) -> list[Table]:
    """The tables :func:`visible_inventory_sql` covers: ``event`` and ``static`` tables present in ``present``,
    with their parent present, not hidden by the key."""
    out = []
    for table in tables:
        if (
            table.visibility not in ("event", "static")
            or (present is not None and table.qualified not in present)
            or (key.hide_cxr_reports and table.qualified == REPORTS_TABLE)
        ):
            continue
        parent = table.event_time.parent if table.event_time is not None else None
        if parent is not None and present is not None and parent.table not in present:
            continue
        out.append(table)
    return out


def _from_index(table: Table, linked_only: bool) -> bool:
    """True when the store's event index tells ``table``'s visible rows under this policy: its rows are chosen
    by the subject, the event time and the target encounter alone (no linked-study filter, no collapse)."""
    return indexable(table) and not (linked_only and table.module == "cxr")


def _index_part(tables: list[Table], q: _Query) -> str:
    """One ``(table_name, n, times)`` row per indexed table with visible rows (the caller counts the others 0):
    the rows :func:`_visible_rows` keeps, told by the index's event time and target id."""
    names = ", ".join(f"'{t.qualified}'" for t in tables)
    where = [f"i.subject_id = {SUBJECT}", f"i.table_name IN ({names})"]
    untimed = [t.qualified for t in tables if t.event_time is None]
    known = known_sql("i.event_time", q.op)
    where.append(f"(i.table_name IN ({', '.join(repr(n) for n in untimed)}) OR {known})" if untimed else known)
    for target_key in ("hadm_id", "stay_id"):
        target = q.key.target_hadm_id if target_key == "hadm_id" else q.key.target_stay_id
        owners = [t.qualified for t in tables if t.target_key == target_key]
        if target is not None and owners:
            listed = ", ".join(f"'{n}'" for n in owners)
            where.append(f"(i.table_name NOT IN ({listed}) OR i.target_id IS DISTINCT FROM {q.add(target)})")
    return (
        "SELECT i.table_name, count(*) AS n, list(i.event_time ORDER BY i.event_time) "
        f"FILTER (WHERE i.event_time IS NOT NULL) AS times FROM {EVENT_INDEX} i WHERE "
        + " AND ".join(where) + " GROUP BY i.table_name"
    )


def render_sql(sql: str, dialect: str) -> str:
    """The policy's SQL (DuckDB dialect, ``$n`` parameters) written for another SQL dialect.

    ``"duckdb"`` returns ``sql`` itself; any other name is a sqlglot dialect (``"postgres"``: ``QUALIFY``
    becomes a filtered subquery, ``list_contains`` becomes ``= ANY``, intervals are quoted, parameters
    become ``%(n)s``). A source reader of that dialect runs what this returns.
    """
    if dialect == "duckdb":
        return sql
    return sqlglot.transpile(sql, read="duckdb", write=dialect)[0]


def _visible_rows(table: Table, q: _Query, linked_only: bool) -> str | None:
    """The ``FROM ... WHERE ... [QUALIFY ...]`` part of a visible select: which rows an episode sees.

    ``None`` when the table's parent is absent (its rows cannot be timed, so none is visible).
    """
    join = _parent_join(table, q)
    if join is None:
        return None
    q.where.append(f"t.subject_id = {SUBJECT}")
    if table.event_time is not None:
        q.where.append(known_sql(table.event_time.expr, q.op))
    _exclude_target(table, q)
    if linked_only and table.module == "cxr":
        q.where.append(_linked_filter(table, q))
    qualify = [_collapse_sql(table, m, q) for m in table.masks if m.collapse_on]
    rows = f" FROM {table.qualified} t{join}{q.lateral_joins()} WHERE " + " AND ".join(q.where)
    return rows + (" QUALIFY " + " AND ".join(qualify) if qualify else "")


def future_sql(
    table: Table, key: EpisodeKey, *, op: str, present: Collection[str] | None
) -> tuple[str, list[Any]] | None:
    """See :meth:`clinseek.policy.Policy.future_select`."""
    if table.visibility == "dictionary" or not table.is_patient_table:
        return None
    q = _Query(key, op, frozenset(present) if present is not None else None)
    cols = ", ".join(f"t.{quote(c)}" for c in table.column_names)
    q.where.append(f"t.subject_id = {SUBJECT}")
    join = ""
    if table.visibility == "event" and table.event_time is not None:
        parent_join = _parent_join(table, q, inner=False)
        if parent_join is None:
            return None
        join = parent_join
        hidden = [f"NOT coalesce({known_sql(table.event_time.expr, op)}, false)"]
        if table.event_time.parent is not None:
            hidden.append(f"{_PARENT}.parent_time IS NULL")
        target = _target_value(table, key)
        if target is not None:
            hidden.append(f"t.{quote(table.target_key or '')} = {q.add(target)}")
        q.where.append("(" + " OR ".join(hidden) + ")")
    else:
        q.params = q.params[:1]  # static and label-source tables: the patient's rows whole, no cutoff
    return _assemble(table, cols, join, q), q.params


def _assemble(table: Table, select: str, join: str, q: _Query) -> str:
    order = ", ".join(f"t.{quote(c)}" for c in table.sort_columns)
    sql = f"SELECT {select} FROM {table.qualified} t{join} WHERE " + " AND ".join(q.where)
    return sql + (f" ORDER BY {order}" if order else "")


def _parent_join(table: Table, q: _Query, *, inner: bool = True) -> str | None:
    """The join that brings in ``parent_time``; ``""`` without a parent; ``None`` if the parent is absent."""
    if table.event_time is None or table.event_time.parent is None:
        return ""
    parent = table.event_time.parent
    if not q.has(parent.table):
        return None
    scope = f" WHERE t.subject_id = {SUBJECT}" if get_table(parent.table).is_patient_table else ""
    sub = parent.times_sql(where=scope)
    on = " AND ".join(f"t.{quote(c)} = {_PARENT}.{quote(c)}" for c in parent.on)
    if inner:
        q.where.append(f"{_PARENT}.parent_time IS NOT NULL")
    return f" {'JOIN' if inner else 'LEFT JOIN'} ({sub}) AS {_PARENT} ON {on}"


def _target_value(table: Table, key: EpisodeKey) -> int | None:
    if table.target_key == "hadm_id":
        return key.target_hadm_id
    if table.target_key == "stay_id":
        return key.target_stay_id
    return None


def _exclude_target(table: Table, q: _Query) -> None:
    target = _target_value(table, q.key)
    if target is not None:
        q.where.append(f"t.{quote(table.target_key or '')} IS DISTINCT FROM {q.add(target)}")


def _linked_filter(table: Table, q: _Query) -> str:
    """Only the question's linked CXR studies / images exist (MM policy)."""
    studies = f"CAST({q.add(list(q.key.study_ids))} AS INTEGER[])"
    dicoms = f"CAST({q.add(list(q.key.dicom_ids))} AS VARCHAR[])"
    names = set(table.column_names)
    terms = []
    if "study_id" in names:
        terms.append(f"list_contains({studies}, t.study_id)")
    if "dicom_id" in names:
        terms.append(f"list_contains({dicoms}, t.dicom_id)")
    elif "study_id" in names and q.has("cxr.metadata"):
        terms.append(
            f"t.study_id IN (SELECT m.study_id FROM cxr.metadata m WHERE m.subject_id = {SUBJECT} "
            f"AND list_contains({dicoms}, m.dicom_id))"
        )
    return "(" + " OR ".join(terms or ["false"]) + ")"


def _mask_known(mask: Mask, q: _Query) -> str:
    """SQL that is true when ``mask``'s values are known (never NULL: an unknown instant is false)."""
    scoped = None if mask.known_at is None else scoped_expr(mask.known_at, q.present)
    return "false" if scoped is None else f"coalesce({known_sql(q.instant(scoped), q.op)}, false)"


def _collapse_sql(table: Table, mask: Mask, q: _Query) -> str:
    """QUALIFY term: rows whose mask holds collapse to one per ``mask.collapse_on`` (the lowest id), and to none
    when a row of the group is known.

    A change of the rule, not of a statement (session 19, attack19: a test added to a specimen after its first
    results was shown as the specimen's pending row): written here from the rule, not from the policy's SQL."""
    known = _mask_known(mask, q)
    parts = ", ".join(f"t.{quote(c)}" for c in mask.collapse_on)
    order = ", ".join(f"t.{quote(c)}" for c in (mask.renumber, *table.key) if c)
    first = f"row_number() OVER (PARTITION BY {parts} ORDER BY {order}) = 1"
    return f"({known} OR ({first} AND NOT bool_or({known}) OVER (PARTITION BY {parts})))"


def _renumbered(table: Table, mask: Mask, col: Column, q: _Query) -> str:
    """A row id NULL while ``mask`` holds, else dense ``1..n`` over the known rows by (the instant it is shown: the
    later of the event time and the mask's instant, id).

    A change of the rule, not of a statement (session 18: the id order before; the new order makes a row's number
    the same at every cutoff, so the store keeps it): written here from the rule, not from the policy's SQL."""
    known = _mask_known(mask, q)
    ref = f"t.{quote(col.name)}"
    assert table.event_time is not None and mask.known_at is not None
    shown = f"greatest({table.event_time.expr}, {q.instant(scoped_expr(mask.known_at, q.present) or 'NULL')})"
    number = f"CAST(row_number() OVER (PARTITION BY {known} ORDER BY {shown}, {ref}) AS {col.type})"
    return f"CASE WHEN {known} THEN {number} END AS {quote(col.name)}"


def _visible_column(table: Table, col: Column, q: _Query) -> str:
    """The column as an episode sees it: the value, or NULL while it is not yet known."""
    conds: list[str] = []
    for mask in table.masks:
        if mask.renumber == col.name:
            return _renumbered(table, mask, col, q)
        if col.name not in mask.columns:
            continue
        listed = _encounter_listed(table, mask, col, q)
        if listed is not None:
            conds.append(listed)
            continue
        scoped = None if mask.known_at is None else scoped_expr(mask.known_at, q.present)
        if scoped is None:
            return f"CAST(NULL AS {col.type}) AS {quote(col.name)}"
        conds.append(known_sql(q.instant(scoped), q.op))
    if col.is_time:
        conds.append(value_known_sql(col, q.op))
    ref = f"t.{quote(col.name)}"
    if not conds:
        return ref
    unique = list(dict.fromkeys(conds))
    return f"CASE WHEN {' AND '.join(unique)} THEN {ref} END AS {quote(col.name)}"


def _encounter_listed(table: Table, mask: Mask, col: Column, q: _Query) -> str | None:
    """The encounter-id mask as ``t.col IN (precomputed visible ids)``; ``None``: not one, or no ids given."""
    if q.encounters is None:
        return None
    found = encounter_mask(table.module, col.name)
    if found is None or found[1] != mask or found[0] not in q.encounters:
        return None
    listed = ", ".join(str(int(i)) for i in sorted(q.encounters[found[0]]))
    return f"t.{quote(col.name)} IN ({listed})" if listed else "false"


@lru_cache(maxsize=256)
def scoped_expr(expr: str, present: frozenset[str] | None) -> str | None:
    """``expr`` with every table it reads narrowed to this patient's rows.

    Returns ``None`` when it reads a table the store does not hold (the value can then never be
    shown to be known, so the column stays NULL).
    """
    if "select" not in expr.lower():
        return expr
    tree = sqlglot.parse_one(expr, dialect="duckdb")
    for node in list(tree.find_all(exp.Table)):
        name = f"{node.db}.{node.name}"
        if present is not None and name not in present:
            return None
        scope = f" WHERE subject_id = {SUBJECT}" if get_table(name).is_patient_table else ""
        alias = node.alias or node.name
        wrapper = sqlglot.parse_one(
            f"SELECT * FROM (SELECT * FROM {name}{scope}) AS {alias}", dialect="duckdb"
        )
        sub = wrapper.find(exp.Subquery)
        assert sub is not None
        node.replace(sub)
    return tree.sql(dialect="duckdb")
