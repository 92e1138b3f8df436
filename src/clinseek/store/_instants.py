"""The store's row instants: every instant the policy needs of a row that reads beyond the row, kept with it.

A row's event time inherited from a parent (``hosp.diagnoses_icd`` from its admission, ``hosp.emar_detail``
from its administration's documentation), a mask instant that reads another table (an encounter id known once
the encounter starts) and a renumbered counter's number (:func:`sequence_numbers_sql`) depend on the store's
data only, never on
the question, and so does a pending result's renumbered row id (:func:`~clinseek.schema.shown_at`). Computed
for every patient at once at ingest, they are extra columns of the store table, so
the policy's statements compare stored instants with the cutoff instead of joining parents and grouping
other tables in every statement (DuckDB plans those joins each time: the cost that dominated the policy's
statements). Instants over the row alone (``coalesce(t.storetime, t.charttime)``) stay expressions: they
cost the planner nothing to speak of and storing them would copy columns of the largest tables.

The columns have the reserved prefix :data:`INSTANT_PREFIX` (no registry column has it, tested): the policy
selects the registry's columns by name, so they never reach an episode, a listing or a label read.
``clinseek_meta.row_instants(table_name, kind, instant_sql, column_name)`` records which instant each column
holds (``kind`` ``event_time`` or ``known_at``; ``instant_sql`` the registry's SQL); a reader uses a table's
columns only while ``store_info`` records :data:`ROW_INSTANTS_VERSION`, the store's row counts are those
recorded with the event index (:func:`~clinseek.store.valid_event_index`'s rule), the record matches what
this clinseek's registry asks of the table and the columns exist (:func:`valid_row_instants`); any other
store, or a table changed since, is read with the policy's joins as before (and its next ingest writes them).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import duckdb

from ..schema import Mask, Sequence, Table, get_table, shown_at, tables
from ._collapse import collapse_mask, kept_rows, kept_rule
from ._duck import META_SCHEMA

INSTANT_PREFIX = "_clinseek_"
"""The prefix of the store's own columns (row instants); no registry column starts with it."""

ROW_INSTANTS = f"{META_SCHEMA}.row_instants"
"""``(table_name VARCHAR, kind VARCHAR, instant_sql VARCHAR, column_name VARCHAR)``: what each column holds."""

ROW_INSTANTS_VERSION = "1"
"""The layout, recorded as ``store_info.row_instants_version``."""

_VERSION_KEY = "row_instants_version"
_EVENT_TIME = "event_time"
_KNOWN_AT = "known_at"
_SEQUENCE_AT = "sequence_at"
_SEQUENCE_N = "sequence_n"
_SEQUENCE_ID = "sequence_id"
_RENUMBER = "renumber"
_KEPT = "kept"
_ROW = re.compile(r"\bt\.")
_STAGING = "_clinseek_instants_"
_KEPT_LISTS = "_clinseek_kept_lists"


@dataclass(frozen=True, slots=True)
class TableInstants:
    """The stored instants of one table: the column of its event time and of each mask instant, by registry SQL.

    Attributes:
        event_time: the column holding the row's event time (:attr:`~clinseek.schema.EventTime.expr`, the
            parent's time joined by subject and key; NULL when the parent row is absent), or ``None`` when
            the event time is an expression over the row alone.
        known_at: ``{Mask.known_at SQL: column}`` for the mask instants that read other tables (each
            subquery narrowed to the row's patient, as the policy narrows it to ``$1``).
    """

    event_time: str | None
    known_at: Mapping[str, str] = field(default_factory=dict)
    sequences: Mapping[tuple[str, str], tuple[str, str, str]] = field(default_factory=dict)
    """``{(counter's owner, column naming the owner row): (event time column, number column, id column)}`` for the
    table's renumbered counters (:class:`~clinseek.schema.Sequence`): the named owner row's event time, its
    number among all the patient's owner rows by (event time, counter, id), and its id ``<subject_id>-<number>``. That number is the one an episode
    shows whatever the cutoff: every row before a visible owner row in that order has an earlier event time,
    so it is visible too (an owner has no parent, no target encounter and no linked-study filter)."""
    renumbers: Mapping[str, str] = field(default_factory=dict)
    """``{pending result's row id column (:attr:`~clinseek.schema.Mask.renumber`): column}``: the row's number among
    the patient's rows by (:func:`~clinseek.schema.shown_at`, original id) (NULL for a row never shown with its id): the number an
    episode shows whenever the row's result is known, as only rows before it in that order are shown with it."""
    kept: tuple[str, str] | None = None
    """``(from column, list column)``: when the collapse of pending results keeps the row
    (:func:`~clinseek.store._collapse.kept_rows`: kept at ``T`` iff ``from op T``, or for a row of a group of several
    event times iff an odd number of the list's bounds are ``op T``); ``None``: the policy's window decides."""

    @property
    def columns(self) -> tuple[str, ...]:
        """The reserved columns, in the order the store table has them after its registry columns."""
        event = (self.event_time,) if self.event_time else ()
        sequences = (c for names in self.sequences.values() for c in names)
        return (*event, *self.known_at.values(), *sequences, *self.renumbers.values(), *(self.kept or ()))


RowInstants = Mapping[str, TableInstants]
"""Per qualified table name, its stored instants (tables without any are absent)."""


def _beyond_row(sql: str) -> bool:
    """Whether a registry instant reads more than the row's own columns (a subquery or the parent's time)."""
    lowered = sql.lower()
    return "select" in lowered or "parent_time" in lowered


def stored_instants(table: Table, present: Collection[str]) -> TableInstants | None:
    """The instants the store keeps for ``table`` (with column names), or ``None`` when it keeps none: a table
    whose event time and mask instants read only the row, or one whose instants read a table the store lacks
    (then the policy's own statements stay exact: an absent table makes the value never known)."""
    if not table.is_patient_table or table.visibility != "event":
        return None
    event_time = table.event_time
    stored_event = None
    if event_time is not None and (event_time.parent is not None or _beyond_row(event_time.expr)):
        if event_time.parent is not None and event_time.parent.table not in present:
            return None
        stored_event = f"{INSTANT_PREFIX}event_time"
    known: dict[str, str] = {}
    for mask in table.masks:
        sql = mask.known_at
        if sql is None or sql in known or not _beyond_row(sql):
            continue
        if _scoped_to_row(sql, present) is None:
            return None
        known[sql] = f"{INSTANT_PREFIX}known_{len(known)}"
    sequences: dict[tuple[str, str], tuple[str, str, str]] = {}
    for renumbered in table.renumbered:
        named = (renumbered.sequence.owner, renumbered.via)
        if named not in sequences and renumbered.sequence.owner in present:
            i = len(sequences)
            sequences[named] = tuple(f"{INSTANT_PREFIX}seq_{part}_{i}" for part in ("at", "n", "id"))  # type: ignore[assignment]
    ids = [m.renumber for m in table.masks if m.renumber and _per_row(table, m)]
    renumbers = {column: f"{INSTANT_PREFIX}renumber_{i}" for i, column in enumerate(ids)}
    collapse = collapse_mask(table)
    kept = None
    if collapse is not None and _per_row(table, collapse):
        kept = (f"{INSTANT_PREFIX}kept_from", f"{INSTANT_PREFIX}kept_list")
    if stored_event is None and not known and not sequences and not renumbers and kept is None:
        return None
    return TableInstants(stored_event, known, sequences, renumbers, kept)


def _per_row(table: Table, mask: Mask) -> bool:
    """Whether what a pending result's mask decides across rows (its renumbered id, its collapse) can be computed at
    ingest: the event time and the result instant read the row alone and no statement leaves out rows that are
    visible by time (no parent, target encounter or linked-study filter), so every statement's rows are the
    patient's rows whose event time is known."""
    event_time = table.event_time
    return (
        event_time is not None
        and event_time.parent is None
        and not _beyond_row(event_time.expr)
        and mask.known_at is not None
        and not _beyond_row(mask.known_at)
        and table.target_key is None
        and table.module != "cxr"
    )


def _renumber_sql(table: Table, column: str) -> tuple[str, str]:
    """``(shown, order)``: SQL over the row ``t`` true when the row is ever shown with its ``column`` id, and the
    order its number counts ((:func:`~clinseek.schema.shown_at`, original id, event time) as the policy's window, then
    the store row for rows tied on all three)."""
    mask = next(m for m in table.masks if m.renumber == column)
    assert table.event_time is not None and mask.known_at is not None
    event, known = f"({table.event_time.expr})", f"({mask.known_at})"
    return f"({event} IS NOT NULL AND {known} IS NOT NULL)", f'{shown_at(event, known)}, t."{column}", {event}, t.rowid'


def sequence_numbers_sql(sequence: Sequence) -> str:
    """``(_s, _via, _at, _n, _id)`` per original id of the counter's owner, every patient at once: subject, id,
    the row's event time, its number among the subject's owner rows (of its partition values,
    :attr:`~clinseek.schema.Sequence.partition`) with an event time by (event time, counter, id) (a duplicated id
    keeps its first number and the least of its partition values; in the counter's type) and the id
    ``<subject_id>[-<partition values>]-<number>``."""
    owner = get_table(sequence.owner)
    assert owner.event_time is not None and owner.event_time.parent is None
    event = _ROW.sub("o.", owner.event_time.expr)
    parts = "".join(f', o."{c}"' for c in sequence.partition)
    prefix = f", {sequence.prefix_sql('o')} AS _p" if sequence.partition else ""
    numbered = (
        f'SELECT o.subject_id AS _s, o."{sequence.id}" AS _via, ({event}) AS _at{prefix}, row_number() OVER (PARTITION '
        f'BY o.subject_id{parts} ORDER BY ({event}), o."{sequence.counter}", o."{sequence.id}") AS _n FROM '
        f"{owner.qualified} o WHERE ({event}) IS NOT NULL"
    )
    counter = owner.column(sequence.counter).type
    start = "min(_p)" if sequence.partition else "CAST(_s AS VARCHAR)"
    return (
        f"SELECT _s, _via, min(_at) AS _at, CAST(min(_n) AS {counter}) AS _n, "
        f"{start} || '-' || CAST(min(_n) AS VARCHAR) AS _id FROM ({numbered}) AS _o GROUP BY _s, _via"
    )


def _scoped_to_row(sql: str, present: Collection[str]) -> str | None:
    """``sql`` with every table it reads narrowed to the row's patient (``subject_id = t.subject_id``), as
    the policy narrows it to ``$1`` for the patient whose rows it reads; ``None`` when it reads an absent table.

    Kept per (text, tables present): the texts are the registry's, and every reader opened in the process asks
    for the same few (sqlglot's parse and regeneration, ~0.5 ms each, were ~80 ms of each reader's open)."""
    return _scoped(sql, frozenset(present))


@functools.lru_cache(maxsize=1024)
def _scoped(sql: str, present: frozenset[str]) -> str | None:
    import sqlglot
    from sqlglot import exp

    if "select" not in sql.lower():
        return sql
    tree = sqlglot.parse_one(sql, dialect="duckdb")
    for node in list(tree.find_all(exp.Table)):
        name = f"{node.db}.{node.name}"
        if name not in present:
            return None
        scope = " WHERE subject_id = t.subject_id" if get_table(name).is_patient_table else ""
        alias = node.alias or node.name
        wrapper = sqlglot.parse_one(f"SELECT * FROM (SELECT * FROM {name}{scope}) AS {alias}", dialect="duckdb")
        sub = wrapper.find(exp.Subquery)
        assert sub is not None
        node.replace(sub)
    return tree.sql(dialect="duckdb")


def _instants_select(
    table: Table, instants: TableInstants, present: Collection[str], kept: tuple[str, str] | None
) -> str:
    """``SELECT`` of ``table``'s registry columns and its stored instants for every row, in store order (``kept``:
    :func:`~clinseek.store._collapse.kept_rows`' select and the name its lists are registered as)."""
    cols = [f't."{c.name}"' for c in table.columns]
    join = ""
    event_time = table.event_time
    if event_time is not None and event_time.parent is not None:
        parent = event_time.parent
        by_subject = get_table(parent.table).is_patient_table
        keys = (("subject_id",) if by_subject else ()) + parent.on
        on = " AND ".join(f't."{c}" = _parent."{c}"' for c in keys)
        join = f" LEFT JOIN ({parent.times_sql(by_subject=by_subject)}) AS _parent ON {on}"
    if instants.event_time is not None:
        assert event_time is not None
        value = f"({event_time.expr})"
        if event_time.parent is not None:  # a row whose parent is absent is never timed (the policy's inner join)
            value = f"CASE WHEN _parent.parent_time IS NOT NULL THEN {value} END"
        cols.append(f'{value} AS "{instants.event_time}"')
    for sql, column in instants.known_at.items():
        scoped = _scoped_to_row(sql, present)
        assert scoped is not None
        cols.append(f'({scoped}) AS "{column}"')
    for i, ((owner, via), (at, number, ident)) in enumerate(instants.sequences.items()):
        sequence = next(r.sequence for r in table.renumbered if (r.sequence.owner, r.via) == (owner, via))
        alias = f"_seq{i}"
        where = _naming_rows(table, owner, via)
        join += (
            f" LEFT JOIN ({sequence_numbers_sql(sequence)}) AS {alias} "
            f'ON {alias}._s = t.subject_id AND {alias}._via = t."{via}"' + (f" AND ({where})" if where else "")
        )
        cols += [f'{alias}._at AS "{at}"', f'{alias}._n AS "{number}"', f'{alias}._id AS "{ident}"']
    for column, stored in instants.renumbers.items():
        shown, order = _renumber_sql(table, column)
        number = f"row_number() OVER (PARTITION BY t.subject_id, {shown} ORDER BY {order})"
        cols.append(f'CASE WHEN {shown} THEN CAST({number} AS {table.column(column).type}) END AS "{stored}"')
    if instants.kept is not None:
        assert kept is not None
        select, lists = kept
        join += f" LEFT JOIN ({select}) AS _kept ON _kept._r = t.rowid"
        join += f" LEFT JOIN {lists} AS _kept_list ON _kept_list._r = t.rowid"
        cols += [f'_kept._kept_from AS "{instants.kept[0]}"',
                 f'coalesce(_kept_list._kept_list, _kept._kept_bounds) AS "{instants.kept[1]}"']
    return f"SELECT {', '.join(cols)} FROM {table.qualified} t{join} ORDER BY t.rowid"


def write_row_instants(con: duckdb.DuckDBPyConnection, present: Collection[str]) -> list[str]:
    """Rewrite every table of ``present`` that keeps instants with its instant columns, and record them.

    Runs inside the caller's transaction (the event index's writer: one transaction for both, so the row
    counts recorded with the index vouch for both). Each table is rewritten from its registry columns (so
    stale instant columns of an earlier layout go), rows in the same order. Returns the tables rewritten.

    Raises:
        duckdb.Error: the store cannot be read or written.
    """
    con.execute(
        f"CREATE OR REPLACE TABLE {ROW_INSTANTS} (table_name VARCHAR, kind VARCHAR, instant_sql VARCHAR, "
        "column_name VARCHAR)"
    )
    written = []
    for table in tables():
        if table.qualified not in present:
            continue
        instants = stored_instants(table, present)
        if instants is None:
            continue
        staging = f'{table.module}."{_STAGING}{table.name}"'
        kept = None
        if instants.kept is not None:
            select, lists = kept_rows(con, table)
            con.register(_KEPT_LISTS, lists)
            kept = (select, _KEPT_LISTS)
        try:
            con.execute(f"CREATE OR REPLACE TABLE {staging} AS {_instants_select(table, instants, present, kept)}")
        finally:
            if kept is not None:
                con.unregister(_KEPT_LISTS)
        con.execute(f"DROP TABLE {table.qualified}")
        con.execute(f'ALTER TABLE {staging} RENAME TO "{table.name}"')
        rows = [(table.qualified, kind, sql, column) for kind, sql, column in _records(table, instants)]
        con.executemany(f"INSERT INTO {ROW_INSTANTS} VALUES (?, ?, ?, ?)", rows)
        written.append(table.qualified)
    con.execute(f"INSERT OR REPLACE INTO {META_SCHEMA}.store_info VALUES (?, ?)", [_VERSION_KEY, ROW_INSTANTS_VERSION])
    return written


def _records(table: Table, instants: TableInstants) -> set[tuple[str, str, str]]:
    """``(kind, instant_sql, column)`` per stored instant of ``table``."""
    out = {(_KNOWN_AT, sql, column) for sql, column in instants.known_at.items()}
    for (owner, via), (at, number, ident) in instants.sequences.items():
        sequence = next(r.sequence for r in table.renumbered if (r.sequence.owner, r.via) == (owner, via))
        where = _naming_rows(table, owner, via)
        numbers = f"{sequence_numbers_sql(sequence)} ON {via}" + (f" WHERE {where}" if where else "")
        out |= {(_SEQUENCE_AT, numbers, at), (_SEQUENCE_N, numbers, number), (_SEQUENCE_ID, numbers, ident)}
    for column, stored in instants.renumbers.items():
        shown, order = _renumber_sql(table, column)
        out.add((_RENUMBER, f"{order} WHERE {shown} BY subject_id", stored))
    if instants.kept is not None:
        rule = kept_rule(table)
        out |= {(_KEPT, f"from: {rule}", instants.kept[0]), (_KEPT, f"list: {rule}", instants.kept[1])}
    if instants.event_time is not None:
        assert table.event_time is not None
        out.add((_EVENT_TIME, _event_time_record(table), instants.event_time))
    return out


def _naming_rows(table: Table, owner: str, via: str) -> str:
    """The condition under which ``table``'s column ``via`` names a row of ``owner``
    (:attr:`~clinseek.schema.Renumbered.where`, one per (owner, via): checked by the registry); ``""``: every row."""
    return next(r.where for r in table.renumbered if (r.sequence.owner, r.via) == (owner, via))


def _event_time_record(table: Table) -> str:
    """The stored event time's record: the registry's expression, and for an inherited time (``parent_time``)
    the parent's table, key and expression too (a changed parent time leaves ``expr`` as it was: attack15)."""
    assert table.event_time is not None
    parent = table.event_time.parent
    if parent is None:
        return table.event_time.expr
    return f"{table.event_time.expr} FROM {parent.table} ON {', '.join(parent.on)}: {parent.time}"


def valid_row_instants(con: duckdb.DuckDBPyConnection, present: Collection[str], *, counts_hold: bool) -> RowInstants:
    """The stored instants a reader may use, by table: those recorded by this layout
    (:data:`ROW_INSTANTS_VERSION`) whose record is what this registry asks of the table and whose columns
    exist, while ``counts_hold`` (the store's row counts are those recorded when the instants were written:
    :func:`~clinseek.store.valid_event_index`'s check). Empty for any other store.

    Raises:
        duckdb.Error: the store cannot be read (not a missing record: that gives an empty mapping).
    """
    if not counts_hold:
        return {}
    try:
        version = con.execute(f"SELECT value FROM {META_SCHEMA}.store_info WHERE key = ?", [_VERSION_KEY]).fetchall()
        if version != [(ROW_INSTANTS_VERSION,)]:
            return {}
        recorded = con.execute(f"SELECT table_name, kind, instant_sql, column_name FROM {ROW_INSTANTS}").fetchall()
    except duckdb.CatalogException:
        return {}
    by_table: dict[str, set[tuple[str, str, str]]] = {}
    for name, kind, sql, column in recorded:
        by_table.setdefault(name, set()).add((kind, sql, column))
    columns = {
        (f"{schema}.{name}", column)
        for schema, name, column in con.execute(
            "SELECT schema_name, table_name, column_name FROM duckdb_columns() "
            "WHERE database_name = current_database() AND starts_with(column_name, ?)", [INSTANT_PREFIX]
        ).fetchall()
    }
    out: dict[str, TableInstants] = {}
    for name in sorted(present):
        instants = stored_instants(get_table(name), present)
        if instants is None:
            continue
        wanted = _records(get_table(name), instants)
        if by_table.get(name) == wanted and all((name, column) in columns for _, _, column in wanted):
            out[name] = instants
    return out


def row_instants_current(con: duckdb.DuckDBPyConnection, present: Collection[str]) -> bool:
    """True when every table that keeps instants has them recorded as this registry asks (what an ingest by this
    code would write), the row counts aside (the event index's check). An ingest rewrites them otherwise: a
    changed definition (a parent's time, attack15) can leave the event index current and the instants stale.

    Raises:
        duckdb.Error: the store cannot be read.
    """
    want = {name for name in present if stored_instants(get_table(name), present) is not None}
    return set(valid_row_instants(con, present, counts_hold=True)) == want
