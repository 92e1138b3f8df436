"""The store's event index: every patient row's event time, one narrow table sorted by ``subject_id``.

An episode's build needs, for every patient table, how many rows the patient has before the cutoff and
when they happened (its inventory). Asked of the tables themselves that is one scan, one plan and, for a
table whose rows inherit their time from a parent, one join per table: about 45 ms of DuckDB work per
episode on the MIMIC-IV demo, whatever the patient's size. The index holds the same instants, computed
once at ingest, so the inventory is one filtered scan of one table.

``clinseek_meta.event_index(table_name, subject_id, event_time, target_id, encounter_id, valid_from,
valid_until)`` has one row per row of each *indexed* table (:func:`indexable`), and for a table whose pending
results collapse (microbiology, labs) one row per interval in which a row is kept (``valid_from``, ``valid_until``:
:mod:`clinseek.store._collapse`; NULL on every other table's rows): ``table_name`` an ``ENUM`` of the indexed tables'
names (a one-byte code: the inventory filters, groups and returns it cheaper than text),
``event_time`` the registry's event time of the row (:attr:`~clinseek.schema.EventTime.expr`, inherited
parent time included, NULL for a table without one), ``target_id`` the value of the table's
:attr:`~clinseek.schema.Table.target_key` column (the question's own encounter is hidden by it),
``encounter_id`` the row's own encounter id in an encounter table whose event time is the encounter's
start (:func:`encounter_column`: ``hadm_id`` of ``hosp.admissions``, ``stay_id`` of ``icu.icustays`` and
``ed.edstays``), so the same read gives the episode's visible encounter ids. Rows whose parent is absent
are left out (they can never be timed, so never visible). The cutoff, the target exclusion and everything else a policy decides stay in the policy
(:meth:`clinseek.policy.Policy.visible_inventory_select` reads the index); the index holds facts of the
store only, the same for every policy and question.

``clinseek_meta.event_index_tables(table_name, table_rows)`` records the tables covered and the row
count of every patient table when the index was written: a reader uses the index only while every
count still matches and ``store_info`` records a layout it reads (:data:`READ_LAYOUTS`)
(:func:`valid_event_index`; layout 2 is still read, without the tables whose pending results collapse), so a store changed by anything but
ingest, or indexed by an older clinseek, falls back to the per-table statements (and its next ingest
rewrites the index). ``clinseek_meta.event_index_definitions(table_name, definition)`` records what each covered
table's rows were computed by (:func:`index_definition`: its event time, parent join, target and encounter
columns, collapsing mask): a table whose definition in this registry differs (the policy changed when a row
becomes known), or a store written before the record existed, is read per table until the next ingest rewrites
the index, never from rows timed by an older definition.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import duckdb

from ..schema import ENCOUNTER_IDS, Table, get_table, tables
from ._collapse import COLLAPSE_RULE, collapse_index_rows, collapse_index_select, collapse_mask
from ._duck import META_SCHEMA
from ._instants import RowInstants, valid_row_instants, write_row_instants

EVENT_INDEX = f"{META_SCHEMA}.event_index"
"""The index table: ``(table_name ENUM, subject_id INTEGER, event_time TIMESTAMP, target_id BIGINT,
encounter_id BIGINT, valid_from TIMESTAMP, valid_until TIMESTAMP)``."""

EVENT_INDEX_VERSION = "3"
"""The index layout, recorded as ``store_info.event_index_version``: 2 added ``encounter_id`` and made
``table_name`` an ``ENUM``; 3 added ``valid_from`` / ``valid_until`` and the tables whose pending results
collapse (microbiology, one row per interval in which a row is kept). An index of layout 2 is still read for
its tables (the collapsing tables, microbiology and labs, then counted by their own statements: :data:`READ_LAYOUTS`); one without a layout
(version 1, VARCHAR names) is not used."""

READ_LAYOUTS = ("2", EVENT_INDEX_VERSION)
"""The layouts a reader uses; the next ingest rewrites any other than :data:`EVENT_INDEX_VERSION`."""

_VERSION_KEY = "event_index_version"

EVENT_INDEX_TABLES = f"{META_SCHEMA}.event_index_tables"
"""Row counts of the store's patient tables when the index was written; ``indexed`` marks the covered ones."""

EVENT_INDEX_DEFINITIONS = f"{META_SCHEMA}.event_index_definitions"
"""``(table_name, definition)``: :func:`index_definition` of each covered table when the index was written."""


def indexable(table: Table) -> bool:
    """True for a table whose visible rows the index can tell: an ``event`` or ``static`` patient table
    outside CXR (whose rows also depend on the question's linked studies) whose rows, if some collapse while a
    result is pending (MIMIC microbiology, labs), collapse as :func:`~clinseek.store._collapse.collapse_mask` allows
    (then its index rows are the intervals in which each row is kept)."""
    return (
        table.is_patient_table
        and table.visibility in ("event", "static")
        and table.module != "cxr"
        and (not any(mask.collapse_on for mask in table.masks) or collapse_mask(table) is not None)
    )


def collapses(table: Table) -> bool:
    """True for an indexed table whose index rows carry ``valid_from`` / ``valid_until`` (pending results collapse)."""
    return any(mask.collapse_on for mask in table.masks)


def encounter_column(table: Table) -> str | None:
    """The encounter id column whose visible ids the index gives for ``table``, else ``None``.

    ``table`` must own encounters (``ENCOUNTER_IDS``: an id is visible when the earliest start of that
    encounter among the patient's rows, :meth:`~clinseek.schema.Encounter.start` over each row, is known at the
    cutoff) and its event time must be that start (the start column, or the encounter's start SQL: an ICU stay
    not before its admission's admittime), with no parent and no target encounter hidden: then the encounter's
    visible ids are exactly the ids of its visible index rows (the earliest start is known iff some row's start is).
    """
    event_time = table.event_time
    if not indexable(table) or event_time is None or event_time.parent is not None or table.target_key:
        return None
    for (_, column), encounter in ENCOUNTER_IDS.items():
        starts = (encounter.start("t"),) if encounter.known else (f"t.{encounter.column}", f't."{encounter.column}"')
        if encounter.table == table.qualified and event_time.expr in starts:
            found = next((c for c in table.columns if c.name == encounter.column), None)
            return column if found is not None and found.type == "TIMESTAMP" else None
    return None


def _timed(table: Table, present: Collection[str]) -> tuple[str, str] | None:
    """The row's event time over ``t`` and the join (with its filter) it needs; ``None`` when the parent is absent."""
    event_time = table.event_time
    instant = "CAST(NULL AS TIMESTAMP)" if event_time is None else f"CAST({event_time.expr} AS TIMESTAMP)"
    if event_time is None or event_time.parent is None:
        return instant, ""
    parent = event_time.parent
    if parent.table not in present:
        return None
    by_subject = get_table(parent.table).is_patient_table
    keys = (("subject_id",) if by_subject else ()) + parent.on
    on = " AND ".join(f't."{c}" = _parent."{c}"' for c in keys)
    join = f" JOIN ({parent.times_sql(by_subject=by_subject)}) AS _parent ON {on} WHERE _parent.parent_time IS NOT NULL"
    return instant, join


def index_definition(table: Table, present: Collection[str]) -> str | None:
    """What the index rows of ``table`` are computed by in this registry (its event time and parent join, target
    and encounter columns, the mask its rows collapse by), as text compared with the one recorded at ingest;
    ``None`` when its parent is absent."""
    timed = _timed(table, present)
    if timed is None:
        return None
    if not collapses(table):
        return repr((*timed, table.target_key, encounter_column(table), None))
    return repr((*timed, table.target_key, encounter_column(table), collapse_mask(table), COLLAPSE_RULE))


def event_index_select(table: Table, present: Collection[str]) -> str | None:
    """SQL giving the index rows of ``table`` for every patient; ``None`` when its parent is absent or its rows
    collapse (:func:`collapses`: written from :func:`~clinseek.store._collapse.collapse_index_select` and
    :func:`~clinseek.store._collapse.collapse_index_rows`)."""
    timed = _timed(table, present)
    if timed is None or collapses(table):
        return None
    instant, join = timed
    target = f't."{table.target_key}"' if table.target_key else "NULL"
    encounter = encounter_column(table)
    encounter_id = f't."{encounter}"' if encounter else "NULL"
    return (
        f"SELECT '{table.qualified}' AS table_name, t.subject_id, {instant} AS event_time, "
        f"CAST({target} AS BIGINT) AS target_id, CAST({encounter_id} AS BIGINT) AS encounter_id, "
        f"CAST(NULL AS TIMESTAMP) AS valid_from, CAST(NULL AS TIMESTAMP) AS valid_until FROM {table.qualified} t{join}"
    )


def write_event_index(con: duckdb.DuckDBPyConnection) -> list[str]:
    """(Re)write the event index of the store open (writable) on ``con``, in one transaction, with the
    store's row instants (:func:`~clinseek.store.write_row_instants`: the tables' instant columns).

    Covers every :func:`indexable` table the store records as finished; returns their names.

    Raises:
        duckdb.Error: the store cannot be read or written (the caller names the file).
    """
    from ._duck import finished_tables

    present = finished_tables(con)
    patient = [t for t in tables() if t.qualified in present and t.is_patient_table]
    timed = {t.qualified: (t, found) for t in patient if indexable(t) and (found := _timed(t, present)) is not None}
    parts = [select for name in timed if (select := event_index_select(get_table(name), present)) is not None]
    collapsing = [v for v in timed.values() if collapses(v[0])]
    registered: list[str] = []
    try:
        for i, (table, (instant, join)) in enumerate(collapsing):
            parts.append(collapse_index_select(table, instant, join))  # groups of one event time: in SQL
            name = f"_clinseek_collapse_rows{i}"  # the other groups' intervals, computed in Python
            con.register(name, collapse_index_rows(con, table, instant, join))
            registered.append(name)
            parts.append(f"SELECT * FROM {name}")
        definitions = [(name, index_definition(table, present)) for name, (table, _) in timed.items()]
        _write(con, present, patient, timed, parts, definitions)
    finally:
        for name in registered:
            con.unregister(name)
    return list(timed)


def _write(con: duckdb.DuckDBPyConnection, present: Collection[str], patient: list[Table],
           timed: Mapping[str, object], parts: list[str], definitions: list[tuple[str, str | None]]) -> None:
    """The index's and its records' tables from ``parts`` (selects of index rows) and ``definitions``, and the row
    instants, in one transaction."""
    counts = (
        " UNION ALL ".join(f"SELECT '{t.qualified}' AS table_name, count(*) AS table_rows FROM {t.qualified}" for t in patient)
        or "SELECT NULL::VARCHAR AS table_name, NULL::BIGINT AS table_rows WHERE false"
    )
    rows = " UNION ALL BY NAME ".join(parts) or (
        "SELECT NULL::VARCHAR AS table_name, NULL::INTEGER AS subject_id, NULL::TIMESTAMP AS event_time, "
        "NULL::BIGINT AS target_id, NULL::BIGINT AS encounter_id, NULL::TIMESTAMP AS valid_from, "
        "NULL::TIMESTAMP AS valid_until WHERE false"
    )
    covered = ", ".join(f"'{name}'" for name in timed) or "NULL"
    name_type = f"ENUM({covered})" if timed else "VARCHAR"  # names in registry order: the codes sort as the registry
    con.execute("BEGIN TRANSACTION")
    try:
        write_row_instants(con, present)  # the same counts below vouch for both
        con.execute(
            f"CREATE OR REPLACE TABLE {EVENT_INDEX} AS SELECT CAST(table_name AS {name_type}) AS table_name, "
            f"CAST(subject_id AS INTEGER) AS subject_id, event_time, target_id, encounter_id, valid_from, valid_until "
            f"FROM ({rows}) ORDER BY subject_id, table_name, event_time"
        )
        con.execute(
            f"CREATE OR REPLACE TABLE {EVENT_INDEX_TABLES} AS SELECT table_name, table_rows, "
            f"table_name IN ({covered}) AS indexed FROM ({counts})"
        )
        con.execute(f"CREATE OR REPLACE TABLE {EVENT_INDEX_DEFINITIONS} (table_name VARCHAR, definition VARCHAR)")
        if definitions:
            con.executemany(f"INSERT INTO {EVENT_INDEX_DEFINITIONS} VALUES (?, ?)", definitions)
        con.execute(f"INSERT OR REPLACE INTO {META_SCHEMA}.store_info VALUES (?, ?)", [_VERSION_KEY, EVENT_INDEX_VERSION])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def valid_event_index(con: duckdb.DuckDBPyConnection, present: Collection[str]) -> frozenset[str]:
    """The tables whose inventory a reader may take from the index: the covered ones whose recorded
    :func:`index_definition` is this registry's, while the store records a layout it reads (:data:`READ_LAYOUTS`;
    with layout 2, not the collapsing tables) and the row count of every patient table of the store is still the
    one recorded when the index was written (else none).

    Raises:
        duckdb.Error: the store cannot be read (not a missing index: that gives an empty set).
    """
    return store_layout(con, present)[0]


def store_layout(con: duckdb.DuckDBPyConnection, present: Collection[str]) -> tuple[frozenset[str], RowInstants]:
    """What a reader may take from the store's derived data: the tables of :func:`valid_event_index`, and
    the stored row instants (:func:`~clinseek.store.valid_row_instants`), both only while every patient
    table's row count is the one recorded when they were written (one count of the tables for both).

    Raises:
        duckdb.Error: the store cannot be read (not a missing index: that gives nothing).
    """
    try:
        con.execute(f"SELECT 1 FROM {EVENT_INDEX} LIMIT 0").fetchall()
        version = con.execute(f"SELECT value FROM {META_SCHEMA}.store_info WHERE key = ?", [_VERSION_KEY]).fetchall()
        recorded = con.execute(f"SELECT table_name, table_rows, indexed FROM {EVENT_INDEX_TABLES}").fetchall()
    except duckdb.CatalogException:
        return frozenset(), {}
    try:
        defined = dict(con.execute(f"SELECT table_name, definition FROM {EVENT_INDEX_DEFINITIONS}").fetchall())
    except duckdb.CatalogException:  # written before the definitions were recorded: no table's rows can be vouched for
        defined = {}
    patient = sorted(name for name in present if get_table(name).is_patient_table)
    if not patient or {name for name, _, _ in recorded} != set(patient):
        return frozenset(), {}
    counts = " UNION ALL ".join(f"SELECT '{name}', count(*) FROM {name}" for name in patient)
    now = dict(con.execute(counts).fetchall())
    if any(now.get(name) != rows for name, rows, _ in recorded):
        return frozenset(), {}
    instants = valid_row_instants(con, present, counts_hold=True)
    layout = version[0][0] if version else None
    if layout not in READ_LAYOUTS:
        return frozenset(), instants  # an older index layout: read per table until the next ingest rewrites it
    return frozenset(
        name for name, _, indexed in recorded
        if indexed and indexable(table := get_table(name)) and (layout == EVENT_INDEX_VERSION or not collapses(table))
        and defined.get(name) == index_definition(table, present)
    ), instants


def event_index_current(con: duckdb.DuckDBPyConnection, present: Collection[str]) -> bool:
    """True when the store's index is the one an ingest by this code would write: this layout, the row counts it
    recorded, and every table it would cover recorded with this registry's :func:`index_definition`.

    Raises:
        duckdb.Error: the store cannot be read.
    """
    want = {t.qualified for t in tables()
            if t.qualified in present and indexable(t) and index_definition(t, present) is not None}
    return event_index_layout(con) == EVENT_INDEX_VERSION and valid_event_index(con, present) == want


def event_index_layout(con: duckdb.DuckDBPyConnection) -> str | None:
    """The layout of the store's event index (``store_info.event_index_version``); ``None`` without one.

    Raises:
        duckdb.Error: the store cannot be read (not a missing record: that gives ``None``).
    """
    try:
        found = con.execute(f"SELECT value FROM {META_SCHEMA}.store_info WHERE key = ?", [_VERSION_KEY]).fetchall()
    except duckdb.CatalogException:
        return None
    return str(found[0][0]) if found else None
