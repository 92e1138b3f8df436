"""``store_info``: what a store holds (modules, tables, rows, patients, time range, provenance)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
from pydantic import BaseModel, ConfigDict

from ..errors import StoreError
from ..schema import Table, get_table, tables
from ._duck import META_SCHEMA, connect_store, finished_tables
from ._eventindex import EVENT_INDEX, event_index_current, valid_event_index


class TableInfo(BaseModel):
    """One table of a store.

    Attributes:
        table: qualified name (``hosp.labevents``).
        module: MIMIC module (also the DuckDB schema).
        rows: row count recorded when the table was completed.
        source_file: the file it was ingested from (``None`` for synthetic stores).
        source_sha256: sha256 of that file.
        registry_release: the MIMIC release whose schema the registry's entry for the table follows (e.g.
            ``MIMIC-IV 3.1``; ``clinseek synthetic`` for a synthetic store): not the version of the files
            ingested, which the store does not record (``source_file`` and ``source_sha256`` identify those).
            Stored as ``clinseek_meta.table_info.source_version``.
        built_at: when the table was completed (UTC, naive).
        time_min: earliest event time (the registry's event-time expression), MIMIC's shifted
            clock, naive; ``None`` for tables without event time or with no rows. A table whose rows
            inherit their time from a parent (``time_from``) is read from the store's event index; without a
            current one (a store indexed by an older clinseek) it is ``None``.
        time_max: latest event time, as ``time_min``.
        time_from: the parent table whose time the rows inherit (``hosp.admissions`` for
            ``hosp.diagnoses_icd``), else ``None``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: str
    module: str
    rows: int
    source_file: str | None
    source_sha256: str | None
    registry_release: str | None
    built_at: dt.datetime | None
    time_min: dt.datetime | None = None
    time_max: dt.datetime | None = None
    time_from: str | None = None


class StoreInfo(BaseModel):
    """A summary of a store (``clinseek data info``).

    Attributes:
        path: the store file.
        kind: ``ingest`` or ``synthetic``.
        clinseek_version: the clinseek version that created it.
        modules: modules with at least one table, in registry order.
        tables: every complete table, in registry order.
        patients: distinct ``subject_id`` (from ``hosp.patients`` when present, else over all
            patient tables); ``None`` when the store has no patient table.
        time_min: earliest event time over all tables (MIMIC's shifted clock, naive).
        time_max: latest event time over all tables.
        provenance: the ``clinseek_meta.store_info`` key/values (format, kind, created_at,
            source directories, seed, ...).
        event_index_current: whether the store's event index is the one this code writes (its layout, and every
            covered table timed by this registry's definition); when not, episodes count those tables per table
            (slower, same rows) until ``clinseek data ingest`` rewrites the index.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    kind: str | None
    clinseek_version: str | None
    modules: tuple[str, ...]
    tables: tuple[TableInfo, ...]
    patients: int | None
    time_min: dt.datetime | None
    time_max: dt.datetime | None
    provenance: dict[str, str]
    event_index_current: bool = True

    @property
    def rows(self) -> int:
        """Rows across all tables."""
        return sum(t.rows for t in self.tables)


def store_info(path: Path | str) -> StoreInfo:
    """Summarise the store at ``path`` (opened read-only).

    Raises:
        StoreError: the file is missing, is not a DuckDB file, or is not a clinseek store.
    """
    path = Path(path)
    con = connect_store(path, read_only=True)
    try:
        con.execute("SET python_enable_replacements = false")  # a missing table must not find a Python name
        try:
            provenance = dict(con.execute(f"SELECT key, value FROM {META_SCHEMA}.store_info").fetchall())
            rows = con.execute(
                f"SELECT table_name, module, row_count, source_file, source_sha256, source_version, built_at "
                f"FROM {META_SCHEMA}.table_info"
            ).fetchall()
        except duckdb.CatalogException as err:
            raise StoreError(f"{path}: not a clinseek store (no {META_SCHEMA} tables)") from err
        known = _registry_tables([r[0] for r in rows])
        finished = finished_tables(con)
        inherited = _inherited_ranges(con, [t for t in known.values() if t.event_time and t.event_time.parent],
                                      valid_event_index(con, finished))
        infos = tuple(_table_info(con, known[r[0]], r, inherited) for r in rows if r[0] in known)
        order = {t.qualified: i for i, t in enumerate(tables())}
        infos = tuple(sorted(infos, key=lambda i: order[i.table]))
        return StoreInfo(
            path=str(path),
            kind=provenance.get("kind"),
            clinseek_version=provenance.get("clinseek_version"),
            modules=tuple(dict.fromkeys(i.module for i in infos)),
            tables=infos,
            patients=_patients(con, [known[i.table] for i in infos]),
            time_min=min((i.time_min for i in infos if i.time_min), default=None),
            time_max=max((i.time_max for i in infos if i.time_max), default=None),
            provenance={str(k): str(v) for k, v in provenance.items()},
            event_index_current=event_index_current(con, finished),
        )
    finally:
        con.close()


def _registry_tables(names: list[str]) -> dict[str, Table]:
    out: dict[str, Table] = {}
    for name in names:
        try:
            out[name] = get_table(name)
        except Exception:  # a table this clinseek version does not know: not summarised
            continue
    return out


def _table_info(con: duckdb.DuckDBPyConnection, table: Table, row: tuple[object, ...],
                inherited: dict[str, tuple[dt.datetime | None, dt.datetime | None]]) -> TableInfo:
    name, module, count, source_file, sha, version, built_at = row
    parent = table.event_time.parent if table.event_time else None
    time_min, time_max = inherited.get(table.qualified, (None, None)) if parent else _time_range(con, table)
    return TableInfo(
        table=str(name),
        module=str(module),
        rows=int(count),  # type: ignore[call-overload]
        source_file=None if source_file is None else str(source_file),
        source_sha256=None if sha is None else str(sha),
        registry_release=None if version is None else str(version),
        built_at=built_at if isinstance(built_at, dt.datetime) else None,
        time_min=time_min,
        time_max=time_max,
        time_from=parent.table if parent else None,
    )


def _inherited_ranges(
    con: duckdb.DuckDBPyConnection, inheriting: list[Table], indexed: frozenset[str]
) -> dict[str, tuple[dt.datetime | None, dt.datetime | None]]:
    """min/max event time of the tables whose rows inherit a parent's time, from the event index (one scan; the
    tables themselves would need their parent joined): the tables it covers currently."""
    names = [t.qualified for t in inheriting if t.qualified in indexed]
    if not names:
        return {}
    found = con.execute(
        f"SELECT table_name::VARCHAR, min(event_time), max(event_time) FROM {EVENT_INDEX} "
        f"WHERE table_name::VARCHAR IN ({', '.join('?' for _ in names)}) GROUP BY ALL", names
    ).fetchall()
    return {str(name): (lo, hi) for name, lo, hi in found}


def _time_range(
    con: duckdb.DuckDBPyConnection, table: Table
) -> tuple[dt.datetime | None, dt.datetime | None]:
    """min/max of the table's own event-time expression (a table without one: none)."""
    et = table.event_time
    if et is None:
        return None, None
    expr = f"CAST({et.expr} AS TIMESTAMP)"
    lo, hi = con.execute(f"SELECT min({expr}), max({expr}) FROM {table.qualified} t").fetchall()[0]
    return lo, hi


def _patients(con: duckdb.DuckDBPyConnection, present: list[Table]) -> int | None:
    names = [t.qualified for t in present if t.is_patient_table]
    if not names:
        return None
    if "hosp.patients" in names:
        names = ["hosp.patients"]
    union = " UNION ".join(f"SELECT DISTINCT subject_id FROM {n}" for n in names)
    return int(con.execute(f"SELECT count(*) FROM ({union})").fetchall()[0][0])
