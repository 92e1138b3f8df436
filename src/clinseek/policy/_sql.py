"""SQL that applies a policy to one registry table on a *store* connection.

Placeholders are DuckDB's numbered parameters: ``$1`` is always ``subject_id`` and ``$2`` always
``prediction_time``; further ones (target encounter, linked CXR ids) follow in order.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from ..schema import (
    ENCOUNTER_IDS,
    Column,
    Mask,
    Renumbered,
    Sequence,
    Table,
    encounter_mask,
    get_table,
    shown_at,
)
from ..store import EVENT_INDEX, RowInstants, TableInstants, collapses, encounter_column, indexable

if TYPE_CHECKING:
    from ._key import EpisodeKey

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
    table: Table
    encounters: Mapping[str, Collection[int]] | None = None
    params: list[Any] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    once: bool = False
    """Compute each mask condition once per row, in an inner select (:meth:`cond`); a visible select's own."""
    conds: dict[str, str] = field(default_factory=dict)
    """With ``once``: the inner select's condition columns, ``_k0`` ..., by SQL."""
    lookups: dict[_Lookup, tuple[str, bool]] = field(default_factory=dict)
    """Mask instants' lookups in other tables: ``(name, merged)``; a merged one is a column of the parent join."""
    laterals: dict[str, str] = field(default_factory=dict)
    """Mask instants that read other tables in a shape :func:`_decorrelated` does not take, by SQL: each is
    computed once per row in a lateral join."""
    stored: TableInstants | None = None
    """The table's instants the store keeps per row (:func:`clinseek.store.valid_row_instants`): read as
    columns of ``t`` instead of computed by joins."""
    linked_only: bool = False
    instants: RowInstants | None = None
    """Every table's stored instants (the renumbered counters' owners read theirs)."""
    sequences: dict[tuple[Sequence, str], str] = field(default_factory=dict)
    """The renumbering joins (:meth:`renumbered`): alias by (sequence, column of ``t`` holding the original id)."""
    sequence_joins: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.params:  # a query of several tables passes one shared list
            self.params.extend([self.key.subject_id, self.key.prediction_time])

    def add(self, value: Any) -> str:
        self.params.append(value)
        return f"${len(self.params)}"

    def has(self, name: str) -> bool:
        return self.present is None or name in self.present

    def cond(self, sql: str) -> str:
        """A mask condition as the column select reads it: with ``once``, the inner select's column computing
        it (one per distinct condition, however many columns it masks), else ``sql`` itself."""
        if not self.once:
            return sql
        return f"t.{self.conds.setdefault(sql, f'_k{len(self.conds)}')}"

    def known_instant(self, expr: str) -> str | None:
        """A registry instant (SQL over the row ``t``) as this query computes it, once per row whatever the
        number of columns it masks: each ``min``/``max`` of another table's rows by key is read from one
        grouped join (:func:`_decorrelated`), any other subquery from a lateral join.

        ``None`` when it reads a table the store does not hold (the value is never known). An instant the
        store keeps per row (:attr:`stored`) is its column.
        """
        if self.stored is not None and expr in self.stored.known_at:
            return f"t.{quote(self.stored.known_at[expr])}"
        plan = _decorrelated(expr, self.table.qualified)
        if plan is None:
            scoped = scoped_expr(expr, self.present)
            if scoped is None:
                return None
            if "select" not in scoped.lower():
                return scoped
            alias = self.laterals.setdefault(scoped, f"_lateral{len(self.laterals)}")
            return f"{alias}.instant"
        sql, lookups = plan
        if not all(self.has(lookup.table) for lookup in lookups):
            return None
        for i, lookup in enumerate(lookups):
            name, merged = self.lookups.setdefault(
                lookup, (f"_instant{len(self.lookups)}", lookup.merges_into(self.table) and self.parent_joined())
            )
            sql = sql.replace(_placeholder(i), f"{_PARENT}.{name}" if merged else f"{name}.instant")
        return sql

    def event_time(self) -> str:
        """The row's event time (the registry's expression, or the store's column of it), over ``t`` and the
        parent join."""
        assert self.table.event_time is not None
        if self.stored is not None and self.stored.event_time is not None:
            return f"t.{quote(self.stored.event_time)}"
        return self.table.event_time.expr

    def parent_joined(self) -> bool:
        """Whether the statement needs the parent join: the table inherits its time and the store does not
        keep it (a stored event time is NULL where the parent row is absent, as the inner join drops it)."""
        parent = self.table.event_time.parent if self.table.event_time is not None else None
        return parent is not None and (self.stored is None or self.stored.event_time is None)

    def merged_lookups(self) -> tuple[str, ...]:
        """The parent join's extra aggregates (``value AS name``) for the lookups merged into it."""
        return tuple(f"{lookup.value_as_t} AS {name}" for lookup, (name, merged) in self.lookups.items() if merged)

    def joins(self) -> str:
        """The grouped lookup joins not merged into the parent join, the lateral joins, then the renumbering
        joins."""
        grouped = "".join(lookup.join_sql(name) for lookup, (name, merged) in self.lookups.items() if not merged)
        return grouped + "".join(
            f" LEFT JOIN LATERAL (SELECT ({sql}) AS instant) AS {alias} ON true" for sql, alias in self.laterals.items()
        ) + "".join(self.sequence_joins)

    def renumbered(self, column: Renumbered, col: Column) -> str:
        """A ``sequence`` column as the episode shows it (:class:`~clinseek.schema.Sequence`): the renumbered
        id or counter of the owner row named by the original id in ``column.via``, from one LEFT JOIN per
        (sequence, via) of the owner's visible rows numbered ``1..n`` by (event time, original counter); NULL
        where the named row is not visible, and always when the store lacks the owner. A column renumbered only
        where ``column.where`` holds shows its stored value in the other rows."""
        sequence = column.sequence
        where = f"({column.where})" if column.where else ""
        if not self.has(sequence.owner):
            if where:  # the rows naming no owner row show their value; the others name nothing the store holds
                kept = f"CASE WHEN NOT coalesce({where}, false) THEN t.{quote(col.name)} END"
                return f"{self.cond(kept)} AS {quote(col.name)}"
            return f"CAST(NULL AS {col.type}) AS {quote(col.name)}"
        stored = self.stored.sequences.get((sequence.owner, column.via)) if self.stored is not None else None
        if stored is not None:  # the store keeps the named row's event time, number and id (cutoff-independent)
            at, number, ident = (f"t.{quote(c)}" for c in stored)
            shown = number if column.part == "counter" else ident
            if self.table.qualified == sequence.owner and column.via == sequence.id and not where:
                return f"{shown} AS {quote(col.name)}"  # the row's own number: visible with the row
            value = f"CASE WHEN {known_sql(at, self.op)} THEN {shown} END"
        else:
            alias = self.sequences.get((sequence, column.via))
            if alias is None:
                alias = self.sequences[sequence, column.via] = f"_seq{len(self.sequences)}"
                numbers = self._numbered(sequence)
                on = f"{alias}._via = t.{quote(column.via)}" + (f" AND {where}" if where else "")
                self.sequence_joins.append(f" LEFT JOIN ({numbers}) AS {alias} ON {on}")
            value = f"{alias}.{'_id' if column.part == 'id' else '_n'}"
        if where:  # only the rows where the column names an owner row are renumbered; the others show their value
            value = f"CASE WHEN coalesce({where}, false) THEN {value} ELSE t.{quote(col.name)} END"
        return f"{self.cond(value)} AS {quote(col.name)}"

    def _numbered(self, sequence: Sequence) -> str:
        """SQL: ``(_via, _n, _id)`` per visible row of the sequence's owner: its original id, its number among
        the visible rows (of its partition values) by (event time, original counter), and the id
        ``<subject_id>[-<partition values>]-<new number>`` (:func:`clinseek.store.sequence_numbers_sql`'s rule)."""
        owner = get_table(sequence.owner)
        q = _Query(
            self.key, self.op, self.present, owner, self.encounters, params=self.params,
            stored=_stored(owner, self.instants), linked_only=self.linked_only, instants=self.instants,
        )
        found = _visible_rows(owner, q, self.linked_only)
        assert found is not None and not found[1], f"{owner.qualified}: a counter's owner has no parent or collapse"
        counter = owner.column(sequence.counter)
        order = f"{_instant(q)}, t.{quote(sequence.counter)}, t.{quote(sequence.id)}"
        # the id is written from the subject, the partition values and the new number alone (MIMIC's
        # ``<subject_id>-<counter>``, ``<subject_id>-<note_type>-<note_seq>``): an id whose text does not end in its
        # counter would otherwise keep the store's counter (attack15)
        parts = ", ".join(f"t.{quote(c)}" for c in sequence.partition)
        over = f"PARTITION BY {parts} ORDER BY {order}" if parts else f"ORDER BY {order}"
        numbered = (
            f"SELECT t.{quote(sequence.id)} AS _via, CAST(row_number() OVER ({over}) AS {counter.type}) "
            f"AS _n, {sequence.prefix_sql('t')} AS _s{found[0]}"
        )
        # one row per id (a duplicated id keeps its first, as the store's numbers do): naming rows never multiply
        return (
            f"SELECT _m._via, min(_m._n) AS _n, min(_m._s) || '-' || CAST(min(_m._n) AS VARCHAR) AS _id "
            f"FROM ({numbered}) AS _m GROUP BY _m._via"
        )


@dataclass(frozen=True, slots=True)
class _Lookup:
    """A correlated scalar subquery of a mask instant, ``(SELECT min|max(value) FROM table alias WHERE
    alias.k = t.c [AND ...] [AND conditions on alias alone])``, read as one grouped LEFT JOIN: the groups
    of the patient's rows of ``table`` by ``k`` (same rows and same ``=`` as the subquery, and keys of the
    row's column type, so at most one group per row); no group gives NULL as the subquery over no rows."""

    table: str
    alias: str
    pairs: tuple[tuple[str, str], ...]
    """``(column of table, column of the row)`` pairs the subquery equates."""
    where: str
    """Its other conditions (over ``alias``); ``""`` for none."""
    value: str
    """The aggregate over ``alias``."""
    value_as_t: str
    """The aggregate over ``t`` (the alias of the parent join's table)."""

    def merges_into(self, table: Table) -> bool:
        """Whether it groups ``table``'s parent by the parent's key, with no other condition: then it is one
        more aggregate of the parent join (which is scoped to the same patient's rows)."""
        parent = table.event_time.parent if table.event_time is not None else None
        return (
            parent is not None
            and parent.table == self.table
            and not self.where
            and sorted(self.pairs) == sorted((c, c) for c in parent.on)
        )

    def join_sql(self, name: str) -> str:
        keys = [f"{self.alias}.{quote(inner)}" for inner, _ in self.pairs]
        where = [f"{self.alias}.subject_id = {SUBJECT}"] if get_table(self.table).is_patient_table else []
        where += [self.where] if self.where else []
        select = "".join(f"{k} AS _k{i}, " for i, k in enumerate(keys))
        on = " AND ".join(f"{name}._k{i} = t.{quote(outer)}" for i, (_, outer) in enumerate(self.pairs))
        return (
            f" LEFT JOIN (SELECT {select}{self.value} AS instant FROM {self.table} {self.alias}"
            + (" WHERE " + " AND ".join(where) if where else "")
            + f" GROUP BY {', '.join(keys)}) AS {name} ON {on}"
        )


def _placeholder(i: int) -> str:
    return f"_lookup{i}_.instant"


@lru_cache(maxsize=256)
def _decorrelated(expr: str, table: str) -> tuple[str, tuple[_Lookup, ...]] | None:
    """``expr`` (a registry instant over the row ``t`` of ``table``) with each of its subqueries replaced by
    the placeholder of its :class:`_Lookup` (:func:`_placeholder`, numbered in order); ``None`` when one
    is not of that shape (the caller then keeps the subquery)."""
    if "select" not in expr.lower():
        return expr, ()
    tree = sqlglot.parse_one(expr, dialect="duckdb")
    lookups: list[_Lookup] = []
    for sub in list(tree.find_all(exp.Subquery)):
        lookup = _lookup(sub, get_table(table))
        if lookup is None:
            return None
        placeholder = exp.column("instant", table=f"_lookup{len(lookups)}_")
        tree = placeholder if sub is tree else tree
        sub.replace(placeholder)
        lookups.append(lookup)
    if tree.find(exp.Select) is not None:  # IN (SELECT ...), EXISTS (SELECT ...), ...
        return None
    return tree.sql(dialect="duckdb"), tuple(lookups)


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return [*_conjuncts(node.left), *_conjuncts(node.right)]
    return [node]


def _lookup(sub: exp.Subquery, outer: Table) -> _Lookup | None:
    select = sub.this
    if not isinstance(select, exp.Select) or select.find(exp.Subquery) is not None:
        return None
    extra = ("joins", "group", "having", "order", "limit", "offset", "distinct", "with", "qualify", "laterals")
    if any(select.args.get(k) for k in extra) or len(select.expressions) != 1:
        return None
    value = select.expressions[0]
    source = select.args["from_"].this if select.args.get("from_") is not None else None
    if not isinstance(value, (exp.Min, exp.Max)) or not isinstance(source, exp.Table) or not source.db:
        return None
    alias, name = source.alias_or_name, f"{source.db}.{source.name}"
    if alias == "t" or any(c.table != alias for c in value.find_all(exp.Column)):
        return None
    inner_types = {c.name: c.type for c in get_table(name).columns}
    outer_types = {c.name: c.type for c in outer.columns}
    pairs: list[tuple[str, str]] = []
    where: list[str] = []
    condition = select.args.get("where")
    for term in _conjuncts(condition.this) if condition is not None else []:
        owners = {c.table for c in term.find_all(exp.Column)}
        if owners <= {alias}:
            where.append(term.sql(dialect="duckdb"))
            continue
        if not (isinstance(term, exp.EQ) and isinstance(term.this, exp.Column) and isinstance(term.expression, exp.Column)):
            return None
        sides = {term.this.table: term.this.name, term.expression.table: term.expression.name}
        if set(sides) != {alias, "t"}:
            return None
        inner, row = sides[alias], sides["t"]
        if inner not in inner_types or inner_types[inner] != outer_types.get(row):
            return None  # another type could make several groups equal one row's value
        pairs.append((inner, row))
    if not pairs:
        return None
    as_t = value.copy()
    for column in as_t.find_all(exp.Column):
        column.set("table", exp.to_identifier("t"))
    return _Lookup(
        name, alias, tuple(pairs), " AND ".join(where), value.sql(dialect="duckdb"), as_t.sql(dialect="duckdb")
    )


def quote(name: str) -> str:
    """A DuckDB-quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def known_sql(value_sql: str, op: str) -> str:
    """SQL that is true when the instant ``value_sql`` is known at the cutoff (``$2``)."""
    return f"({value_sql}) {op} {CUTOFF}"


def value_known_sql(col: Column, op: str, alias: str = "t") -> str:
    """SQL that is true when a TIMESTAMP/DATE value is known at the cutoff (a DATE ``d`` at ``d + 24 h``)."""
    return known_sql(_value_instant(col, alias), op)


def encounter_sqls(op: str, present: Collection[str] | None) -> dict[str, str]:
    """Per owning encounter table (``ENCOUNTER_IDS``) the store holds: SQL giving its visible ids.

    An id is visible when the earliest start of that encounter among the patient's rows (``$1``)
    is known at the cutoff (``$2``): the same rule as the subquery in
    :func:`clinseek.schema.encounter_masks` (:meth:`~clinseek.schema.Encounter.start`: an ICU stay not before
    its admission's admittime, the tables it reads narrowed to the patient). An owner whose start reads a table the
    store does not hold gives no id (its start is never known).
    """
    scope = frozenset(present) if present is not None else None
    out: dict[str, str] = {}
    for (_, column), encounter in ENCOUNTER_IDS.items():
        owner = encounter.table
        if present is None or owner in present:
            start = scoped_expr(encounter.start("t"), scope) or "CAST(NULL AS TIMESTAMP)"
            out[owner] = (
                f"SELECT _s.id AS {quote(column)} FROM (SELECT t.{quote(column)} AS id, {start} AS at FROM {owner} t "
                f"WHERE t.subject_id = {SUBJECT} AND t.{quote(column)} IS NOT NULL) AS _s GROUP BY _s.id "
                f"HAVING {known_sql('min(_s.at)', op)}"
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
    instants: RowInstants | None = None,
) -> tuple[str, list[Any]] | None:
    """See :meth:`clinseek.policy.Policy.visible_select` (``event_time``: add ``_event_time`` last)."""
    found = _visible(
        table, key, op=op, linked_only=linked_only, present=present, encounters=encounters, event_time=event_time,
        instants=instants,
    )
    return None if found is None else (found[0], found[1])


def _visible(
    table: Table,
    key: EpisodeKey,
    *,
    op: str,
    linked_only: bool,
    present: Collection[str] | None,
    encounters: Mapping[str, Collection[int]] | None,
    event_time: bool,
    instants: RowInstants | None,
    since: Any | None = None,
    until: Any | None = None,
) -> tuple[str, list[Any], bool] | None:
    """:func:`visible_sql`, and with ``since`` / ``until`` the rows whose event time is in [since, until) when the
    statement can leave the others out in its ``WHERE`` (the last item ``True``): a table whose rows no window
    reads across (no collapse of pending results, no renumbered id), so leaving rows out changes no other row."""
    if table.visibility == "never" or (key.hide_cxr_reports and table.qualified == REPORTS_TABLE):
        return None
    if table.visibility == "dictionary":
        cols = ", ".join(f"t.{quote(c)}" for c in table.column_names)
        return f"SELECT {cols} FROM {table.qualified} t", [], False
    q = _Query(
        key, op, frozenset(present) if present is not None else None, table, encounters, once=True,
        stored=_stored(table, instants), linked_only=linked_only, instants=instants,
    )
    select = ", ".join(_visible_column(table, c, q) for c in table.columns)  # registers conditions and joins
    bounded = (since is not None or until is not None) and _windowless(table, q.stored) and table.event_time is not None
    rows = _visible_rows(table, q, linked_only, window=(since, until) if bounded else (None, None))
    if rows is None:
        return None
    where, collapses = rows
    qualify = _qualify(collapses)
    timed = event_time and table.event_time is not None
    if not q.conds:
        sql = f"SELECT {select}{f', {_instant(q)} AS {EVENT_TIME}' if timed else ''}{where}{qualify}"
        return sql, q.params, bounded
    # the conditions (and the event time, which may read the parent join) computed once per row, below
    inner = "t.*" + "".join(f", {sql} AS {name}" for sql, name in q.conds.items())
    if timed:
        inner += f", {_instant(q)} AS {EVENT_TIME}"
        select += f", t.{EVENT_TIME}"
    return f"SELECT {select} FROM (SELECT {inner}{where}) AS t{qualify}", q.params, bounded


def _windowless(table: Table, stored: TableInstants | None) -> bool:
    """Whether no window of the visible select reads across rows (no collapse of pending results, no renumbered
    id, unless the store keeps them per row): then each row's visibility and values depend on that row alone."""
    renumbers = stored.renumbers if stored is not None else {}
    kept = stored is not None and stored.kept is not None
    return not any((mask.collapse_on and not kept) or (mask.renumber and mask.renumber not in renumbers)
                   for mask in table.masks)


EVENT_TIME = "_event_time"
"""The column of a row's event time in :func:`timeline_sql`'s rows."""


def _instant(q: _Query) -> str:
    """The row's event time (the registry's, parent time included) as a TIMESTAMP, over a visible select's FROM."""
    return f"CAST({q.event_time()} AS TIMESTAMP)"


def _stored(table: Table, instants: RowInstants | None) -> TableInstants | None:
    return instants.get(table.qualified) if instants else None


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
    instants: RowInstants | None = None,
) -> tuple[str, list[Any]] | None:
    """See :meth:`clinseek.policy.Policy.timeline_select`."""
    timed = table.visibility == "event" and table.event_time is not None
    base = _visible(
        table, key, op=op, linked_only=linked_only, present=present, encounters=encounters, event_time=True,
        instants=instants, since=since if timed else None, until=until if timed else None,
    )
    if base is None:
        return None
    sql, params, bounded = base
    bounds = []
    for value, op in ((since, ">="), (until, "<")):
        if value is not None and timed and not bounded:
            params = [*params, value]
            bounds.append(f"_v.{EVENT_TIME} {op} ${len(params)}")
    if not bounds:
        return sql, params
    # a window reads across rows: the policy chooses the visible rows first, the time window then keeps some
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
    instants: RowInstants | None = None,
) -> tuple[str, list[Any]] | None:
    """See :meth:`clinseek.policy.Policy.visible_inventory_select`."""
    params: list[Any] = [key.subject_id, key.prediction_time]
    scope = frozenset(present) if present is not None else None
    parts = []
    from_index: list[Table] = []
    for table in inventory_tables(tables, key, present=scope):
        if table.qualified in indexed and _from_index(table, linked_only):
            from_index.append(table)
            continue
        q = _Query(key, op, scope, table, params=params, stored=_stored(table, instants))
        parts_of_rows = _visible_rows(table, q, linked_only)
        assert parts_of_rows is not None  # inventory_tables kept only tables whose parent is present
        rows, collapses = parts_of_rows
        instant = "CAST(NULL AS TIMESTAMP)" if table.event_time is None else _instant(q)
        times = "CAST(NULL AS TIMESTAMP[])" if table.event_time is None else "list(_e.e ORDER BY _e.e)"
        if len(collapses) == 1:  # the kept rows' count and times without a window over every row
            parts.append(
                f"SELECT '{table.qualified}' AS table_name, count(*) AS n, {times} AS times, "
                f"CAST(NULL AS BIGINT[]) AS encounter_ids FROM ({collapses[0].kept(f'{instant} AS e', rows, 'e')}) AS _e"
            )
            continue
        rows += _qualify(collapses)
        select = f"{instant} AS e"
        ids = "CAST(NULL AS BIGINT[])"
        column = encounter_column(table)  # an encounter table: the ids of its visible rows, as the index gives them
        if column:
            select += f", t.{quote(column)} AS id"
            ids = "CAST(list(_e.id ORDER BY _e.id) FILTER (WHERE _e.id IS NOT NULL) AS BIGINT[])"
        parts.append(
            f"SELECT '{table.qualified}' AS table_name, count(*) AS n, {times} AS times, {ids} AS encounter_ids "
            f"FROM (SELECT {select}{rows}) AS _e"
        )
    if from_index:
        parts.insert(0, _index_part(from_index, _Query(key, op, scope, from_index[0], params=params)))
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
    by the subject, the event time, the target encounter and the collapse of pending results alone (no
    linked-study filter)."""
    return indexable(table) and not (linked_only and table.module == "cxr")


def _index_part(tables: list[Table], q: _Query) -> str:
    """One ``(table_name, n, times, encounter_ids)`` row per indexed table with visible rows (the caller counts
    the others 0): the rows :func:`_visible_rows` keeps, told by the index's event time and target id, and
    for an encounter table (:func:`~clinseek.store.encounter_column`) the ids of those rows: the encounters
    whose start is known, as :func:`encounter_sqls` gives them.

    A table whose pending results collapse (:func:`~clinseek.store.collapses`) has one index row per interval
    in which a row is kept (``valid_from``, ``valid_until``; NULL on every other table's rows): such a row
    counts while ``valid_from`` is known and ``valid_until`` is not."""
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
    if any(collapses(t) for t in tables):
        where.append(f"(i.valid_from IS NULL OR {known_sql('i.valid_from', q.op)})")
        where.append(f"(i.valid_until IS NULL OR NOT {known_sql('i.valid_until', q.op)})")
    # the names are an ENUM in the index (a one-byte code); filtered, grouped and returned as text
    return (
        "SELECT CAST(i.table_name AS VARCHAR) AS table_name, count(*) AS n, list(i.event_time ORDER BY i.event_time) "
        "FILTER (WHERE i.event_time IS NOT NULL) AS times, list(i.encounter_id) FILTER (WHERE i.encounter_id IS NOT NULL) "
        f"AS encounter_ids FROM {EVENT_INDEX} i WHERE " + " AND ".join(where) + " GROUP BY i.table_name"
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


def _visible_rows(
    table: Table, q: _Query, linked_only: bool, *, window: tuple[Any | None, Any | None] = (None, None)
) -> tuple[str, list[_Collapse]] | None:
    """Which rows an episode sees: the ``FROM ... WHERE ...`` part of a visible select, and the collapses of
    pending results applied to the rows it gives (:class:`_Collapse`; :func:`_qualify` as SQL).

    ``window``: ``(since, until)``, also keep only the rows whose event time is in [since, until) (``None``: no
    bound); only for a table whose rows no window reads across (:func:`_windowless`).

    ``None`` when the table's parent is absent (its rows cannot be timed, so none is visible).
    """
    parent = table.event_time.parent if table.event_time is not None else None
    if parent is not None and not q.has(parent.table):
        return None
    kept = q.stored.kept if q.stored is not None else None
    if kept is not None:  # the store keeps when the collapse keeps each row: a condition on the row alone
        q.where.append(_kept_sql(kept, q.op))
    collapses = [_collapse(table, m, q) for m in table.masks if m.collapse_on and kept is None]  # registers joins
    join = _parent_join(table, q)
    assert join is not None
    q.where.append(f"t.subject_id = {SUBJECT}")
    if table.event_time is not None:
        q.where.append(known_sql(q.event_time(), q.op))
    _exclude_target(table, q)
    if linked_only and table.module == "cxr":
        q.where.append(_linked_filter(table, q))
    for value, bound in zip(window, (">=", "<"), strict=True):
        if value is not None:
            q.where.append(f"{_instant(q)} {bound} {q.add(value)}")
    rows = f" FROM {table.qualified} t{join}{q.joins()} WHERE " + " AND ".join(q.where)
    return rows, collapses


def _kept_sql(kept: tuple[str, str], op: str) -> str:
    """True for a row the collapse of pending results keeps at the cutoff, from the store's columns
    (:attr:`~clinseek.store.TableInstants.kept`)."""
    start, bounds = (f"t.{quote(c)}" for c in kept)
    passed = f"len(list_filter({bounds}, lambda x: {known_sql('x', op)}))"
    return f"(coalesce({known_sql(start, op)}, false) OR coalesce({passed} % 2 = 1, false))"


def _qualify(collapses: list[_Collapse]) -> str:
    """The ``QUALIFY`` clause keeping the rows every collapse keeps (``""`` for none)."""
    return " QUALIFY " + " AND ".join(c.qualify() for c in collapses) if collapses else ""


def future_sql(
    table: Table, key: EpisodeKey, *, op: str, present: Collection[str] | None
) -> tuple[str, list[Any]] | None:
    """See :meth:`clinseek.policy.Policy.future_select`."""
    if table.visibility == "dictionary" or not table.is_patient_table:
        return None
    q = _Query(key, op, frozenset(present) if present is not None else None, table)
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
    """The join that brings in ``parent_time``; ``""`` without a parent or with the event time stored
    (:meth:`_Query.parent_joined`); ``None`` if the parent is absent."""
    if table.event_time is None or table.event_time.parent is None:
        return ""
    parent = table.event_time.parent
    if not q.has(parent.table):
        return None
    if not q.parent_joined():
        return ""
    scope = f" WHERE t.subject_id = {SUBJECT}" if get_table(parent.table).is_patient_table else ""
    sub = parent.times_sql(where=scope, also=q.merged_lookups())
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
    instant = None if mask.known_at is None else q.known_instant(mask.known_at)
    return "false" if instant is None else q.cond(f"coalesce({known_sql(instant, q.op)}, false)")


@dataclass(frozen=True, slots=True)
class _Collapse:
    """The collapse of pending results (:attr:`~clinseek.schema.Mask.collapse_on`), defined once: every row whose
    mask does not hold (``known``) stays; of a group of rows with one value of ``on`` (NULL equal to NULL) none
    of which is known yet, one shows, the first by ``order`` (ascending, NULLs last; the renumbered id, then the
    table's key); a group with a known row shows no pending row. A test the lab adds to a specimen after its
    first results (an add-on, a reflex) is pending from the specimen's time on: were it shown beside the known
    rows, its row would tell of an order or a result after the cutoff (attack19). :meth:`qualify` and
    :meth:`kept` are two SQL shapes of this one rule (a visible select needs the chosen rows' values; an
    inventory only their count and event times).

    All three are SQL over the row ``t`` of the visible select's ``FROM ... WHERE ...``; ``known`` is
    never NULL.
    """

    known: str
    on: tuple[str, ...]
    order: tuple[str, ...]

    def qualify(self) -> str:
        """A ``QUALIFY`` term true for the rows kept: in the rows sorted by ``on``, ``known`` (known rows first)
        and ``order``, a pending row is kept when it is its group's first row: the first row of all (``lag`` of
        ``known``, never NULL, is NULL there) or one whose ``on`` differs from the row before (NULL-safe, as a
        partition groups NULLs). A group's first row is pending only when none of its rows is known. One window
        over one order, which DuckDB runs several times cheaper than a partition by ``on`` (a hash partition per
        group)."""
        window = f"OVER (ORDER BY {', '.join([*self.on, f'{self.known} DESC', *self.order])})"
        firsts = " OR ".join([f"lag({self.known}) {window} IS NULL", *(f"lag({k}) {window} IS DISTINCT FROM {k}" for k in self.on)])
        return f"({self.known} OR {firsts})"

    def kept(self, select: str, rows: str, value: str) -> str:
        """A select of one column, ``value`` (a column of ``select``), per kept row of ``SELECT select rows``
        (``rows``: the visible select's ``FROM ... WHERE ...``), without a window: the rows whose mask does
        not hold, then the first row (by :attr:`order`) of each group by :attr:`on` none of whose rows is known."""
        columns = [select, f"{self.known} AS _known"]
        columns += [f"{c} AS _on{i}" for i, c in enumerate(self.on)]
        columns += [f"{c} AS _by{i}" for i, c in enumerate(self.order)]
        first = ", ".join(f"_x._by{i}" for i in range(len(self.order)))
        groups = ", ".join(f"_x._on{i}" for i in range(len(self.on)))
        return (
            f"WITH _x AS MATERIALIZED (SELECT {', '.join(columns)}{rows}) "
            f"SELECT _x.{value} FROM _x WHERE _x._known UNION ALL "
            f"SELECT (list(_x.{value} ORDER BY {first}))[1] AS {value} FROM _x GROUP BY {groups} HAVING NOT bool_or(_x._known)"
        )


def _collapse(table: Table, mask: Mask, q: _Query) -> _Collapse:
    """``mask``'s collapse of pending results in ``table`` as query ``q`` computes its condition."""
    ids = tuple(dict.fromkeys(f"t.{quote(c)}" for c in (mask.renumber, *table.key) if c))
    # ties on the ids (MIMIC has none): the event time, as the store's kept rows (never the result: a pending row's
    # result is in the future)
    event_time = (q.cond(q.event_time()),) if table.event_time is not None else ()
    return _Collapse(_mask_known(mask, q), tuple(f"t.{quote(c)}" for c in mask.collapse_on), ids + event_time)


def _renumbered(mask: Mask, col: Column, q: _Query) -> str:
    """A row id NULL while ``mask`` holds, else dense ``1..n`` over the known rows by
    (:func:`~clinseek.schema.shown_at`, id): the store's number (:attr:`~clinseek.store.TableInstants.renumbers`,
    the same at every cutoff), or one window over the statement's rows."""
    known = _mask_known(mask, q)
    stored = q.stored.renumbers.get(col.name) if q.stored is not None else None
    if stored is not None:
        number = f"t.{quote(stored)}"
    else:
        instant = None if mask.known_at is None else q.known_instant(mask.known_at)
        if instant is None:
            return f"CAST(NULL AS {col.type}) AS {quote(col.name)}"
        at = q.cond(shown_at(f"({q.event_time()})", f"({instant})"))  # computed where the instant's joins are
        order = f"{at}, t.{quote(col.name)}, {q.cond(q.event_time())}"  # ties on the id: the event time (attack18)
        number = f"CAST(row_number() OVER (PARTITION BY {known} ORDER BY {order}) AS {col.type})"
    return f"CASE WHEN {known} THEN {number} END AS {quote(col.name)}"


def _visible_column(table: Table, col: Column, q: _Query) -> str:
    """The column as an episode sees it: the value, or NULL while it is not yet known.

    A condition that the row's own visibility implies (its instant is the row's event time, which the
    WHERE clause already requires known) is left out: the row is there only when it holds.
    """
    for renumbered in table.renumbered:
        if renumbered.column == col.name:
            return q.renumbered(renumbered, col)
    conds: list[str] = []
    for mask in table.masks:
        if mask.renumber == col.name:
            return _renumbered(mask, col, q)
        if col.name not in mask.columns:
            continue
        listed = _encounter_listed(table, mask, col, q)
        if listed is not None:
            conds.append(listed)
            continue
        instant = None if mask.known_at is None else q.known_instant(mask.known_at)
        if instant is None:
            return f"CAST(NULL AS {col.type}) AS {quote(col.name)}"
        if not _is_event_time(table, instant):  # NULL or false: the CASE takes neither (one condition per mask)
            conds.append(q.cond(f"coalesce({known_sql(instant, q.op)}, false)"))
    if col.is_time and not _is_event_time(table, _value_instant(col)):
        conds.append(value_known_sql(col, q.op))
    ref = f"t.{quote(col.name)}"
    if not conds:
        return ref
    unique = list(dict.fromkeys(conds))
    return f"CASE WHEN {' AND '.join(unique)} THEN {ref} END AS {quote(col.name)}"


def _value_instant(col: Column, alias: str = "t") -> str:
    """The instant a TIMESTAMP/DATE value is known at (a DATE ``d`` at ``d + 24 h``)."""
    ref = f"{alias}.{quote(col.name)}"
    return f"{ref} + INTERVAL 1 DAY" if col.type == "DATE" else ref


def _is_event_time(table: Table, instant: str) -> bool:
    """Whether ``instant`` is the same SQL expression as ``table``'s event time (parsed, parentheses and
    identifier quoting aside): then every visible row already has it known."""
    return table.event_time is not None and _canonical(instant) == _canonical(table.event_time.expr)


@lru_cache(maxsize=1024)
def _canonical(sql: str) -> str:
    tree = sqlglot.parse_one(sql, dialect="duckdb")
    bare = tree.transform(lambda node: node.this if isinstance(node, exp.Paren) else node)
    text: str = bare.sql(dialect="duckdb", identify=True)
    return text


def _encounter_listed(table: Table, mask: Mask, col: Column, q: _Query) -> str | None:
    """The encounter-id mask as ``t.col IN (precomputed visible ids)``; ``None``: not one, no ids given, or the
    store keeps the mask's instant per row (:attr:`_Query.stored`: one comparison with the cutoff, which DuckDB
    plans cheaper than the list, turned into a join once it is longer than a few ids)."""
    if q.encounters is None or (q.stored is not None and mask.known_at in q.stored.known_at):
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
