"""``ingest``: build a store from MIMIC-IV, -ED, -Note and -CXR files, table by table, resumably."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import functools
import hashlib
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from ..errors import IngestError, StoreError, is_interrupt
from ..schema import MODULES, tables
from ._csvload import explain_csv_error, insert_csv, order_sql
from ._cxr_reports import insert_reports
from ._duck import (
    META_SCHEMA,
    StoreLimits,
    connect_store,
    finished_tables,
    init_store,
    record_table,
    table_ddl,
)
from ._eventindex import event_index_current, write_event_index
from ._existing import existing_file
from ._ingest_report import IngestReport, TableIngest
from ._instants import row_instants_current
from ._pgingest import (
    PgPlan,
    PgSourceTable,
    check_same_source,
    count_rows,
    insert_postgres,
    open_source,
    resolve_postgres,
)
from ._progress import TableProgress
from ._sources import SOURCE_MODULES, SourceTable, resolve_sources

if TYPE_CHECKING:
    import psycopg

_STAGING = "_clinseek_staging_"


@dataclass(frozen=True, slots=True)
class _Recorded:
    rows: int
    source_file: str
    source_sha256: str


def ingest(
    out: Path,
    *,
    mimic_iv: Path | None = None,
    ed: Path | None = None,
    note: Path | None = None,
    cxr: Path | None = None,
    postgres: str | None = None,
    limits: StoreLimits | None = None,
    progress: bool = True,
) -> IngestReport:
    """Ingest MIMIC files, or a mimic-code PostgreSQL database, into the store ``out`` (one DuckDB file).

    Every registry table whose file is found is read with DuckDB's CSV reader (``.csv.gz``
    or ``.csv``, every column declared with its registry type, no sniffing), cast, sorted by
    ``subject_id`` then event time, written to a staging table and renamed in one transaction,
    then recorded in ``clinseek_meta.table_info``. A table already recorded is skipped (the
    run is resumable); a table that fails leaves nothing behind. Memory stays under
    ``limits.memory_limit``; DuckDB spills to ``limits.temp_directory``.

    With ``postgres``, every module whose schema the database holds (:data:`~clinseek.store.PG_SCHEMAS`)
    and whose files are not given is read from it instead: each table's columns are lined up with the
    registry's as a CSV header is, its rows stream out of the server (``COPY ... TO STDOUT``) as Arrow
    batches into the same typed, sorted insert, and the store records the relation and the sha256 of
    the streamed rows as its source (the URL without its password). hosp and icu must be there unless
    ``mimic_iv`` is given; ed, note and cxr are read when their schema exists.

    Args:
        out: the store file (created with its parent directory when missing).
        mimic_iv: a MIMIC-IV 3.1 (or demo 2.2) directory holding ``hosp/`` and ``icu/``.
        ed: a MIMIC-IV-ED 2.2 directory holding ``ed/`` (or the files directly).
        note: a MIMIC-IV-Note 2.2 directory holding ``note/`` (or the files directly).
        cxr: a MIMIC-CXR-JPG 2.0.0 directory with ``mimic-cxr-2.0.0-*.csv(.gz)``; report text
            from ``files/pNN/p<subject>/s<study>.txt`` or ``mimic-cxr-reports.zip`` when present.
        postgres: a ``postgresql://user:password@host:port/database`` URL of a mimic-code build (a
            read-only role suffices).
        limits: DuckDB memory, threads and spill directory.
        progress: show a per-table progress bar on stderr.

    Returns:
        Per table: rows, source file, sha256, seconds, skipped or ingested; plus the optional
        tables whose files (or relations) were absent, and the optional modules the database lacks.

    Raises:
        IngestError: no source given; a directory with no MIMIC files of its modules; a missing
            required table; a missing column; an unparsable value or a truncated file (names
            the file, the column and the first offending line); for ``postgres``: no MIMIC schema,
            a required module, table or column missing, a value that does not convert (names the
            relation, the column and the value).
        KeyboardInterrupt: Ctrl-C, also while DuckDB runs a statement (the table in progress is
            rolled back; rerunning resumes).
        StoreError: ``out`` exists and is not an ingest store or an empty DuckDB file (a
            synthetic store, another DuckDB database, a text file: left untouched), or a table
            in it was built from a different source file; for ``postgres``: the server cannot be
            reached, refuses the login, the role lacks a grant, or the connection is lost.
        MissingExtraError: ``postgres`` is given and psycopg is not installed (``clinseek[postgres]``).
    """
    sources = {
        name: Path(path)
        for name, path in (("mimic_iv", mimic_iv), ("ed", ed), ("note", note), ("cxr", cxr))
        if path is not None
    }
    if not sources and postgres is None:
        raise IngestError(
            out, "nothing to ingest: give at least one of --mimic-iv, --ed, --note, --cxr, --postgres "
            "(mimic_iv=... in Python)"
        )
    plan, absent = resolve_sources(sources) if sources else ([], [])  # validates every file and header; writes nothing
    with ExitStack() as stack:
        pg: psycopg.Connection[Any] | None = None
        pg_plan: PgPlan | None = None
        if postgres is not None:
            pg = stack.enter_context(open_source(postgres))
            taken = frozenset(m for name in sources for m in SOURCE_MODULES[name])
            pg_plan = resolve_postgres(postgres, pg, skip_modules=taken)
            absent = sorted([*absent, *pg_plan.absent], key=_registry_position)
        entries_plan: list[SourceTable | PgSourceTable] = sorted(
            [*plan, *(pg_plan.tables if pg_plan else ())], key=lambda st: _registry_position(st.table.qualified))
        _check_out(out)
        started = time.perf_counter()
        out.parent.mkdir(parents=True, exist_ok=True)
        limits = limits or StoreLimits()
        con = connect_store(out, read_only=False, limits=limits)
        info = {f"source.{name}": str(path.resolve()) for name, path in sources.items()}
        if pg_plan is not None:
            info.update(pg_plan.provenance)
        try:
            _prepare(con, out, info)
            recorded = _recorded_tables(con)
            with TableProgress(progress) as bar:
                entries = tuple(
                    _ingest_table(con, st, recorded.get(st.table.qualified), bar, _PgReader(postgres, pg))
                    for st in entries_plan
                )
            if (
                any(e.status == "ingested" for e in entries)
                or not event_index_current(con, finished_tables(con))  # an older layout or definition: rewritten here
                or not row_instants_current(con, finished_tables(con))
            ):
                write_event_index(con)  # every patient row's event time, for the episodes' inventory
            _set_info(con, "last_ingest_at", _now().isoformat(timespec="seconds"))
            con.execute("CHECKPOINT")
        except (duckdb.Error, RuntimeError) as err:
            if is_interrupt(err):
                raise KeyboardInterrupt from None
            raise
        finally:
            con.close()
            _remove_empty_temp(out, limits)
    return IngestReport(
        store=str(out), tables=entries, absent_tables=tuple(absent), seconds=time.perf_counter() - started,
        absent_modules=pg_plan.absent_modules if pg_plan else (),
    )


@dataclass(frozen=True, slots=True)
class _PgReader:
    """The source connection of ``--postgres`` (both ``None`` without it)."""

    url: str | None
    con: psycopg.Connection[Any] | None


@functools.lru_cache(maxsize=1)
def _registry_positions() -> dict[str, int]:
    return {t.qualified: i for i, t in enumerate(tables())}


def _registry_position(name: str) -> int:
    return _registry_positions()[name]


def _check_out(out: Path) -> None:
    """Refuse to write into anything but nothing, an empty DuckDB file, or an ingest store (to resume)."""
    found = existing_file(out)
    if found.kind not in ("absent", "empty", "ingest"):
        raise StoreError(
            f"{out}: is {found.what}; ingest only creates a new store or resumes an ingest store, "
            "and leaves this file untouched: give a new --out file"
        )


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _prepare(con: duckdb.DuckDBPyConnection, out: Path, info: dict[str, str]) -> None:
    """Create schemas and metadata; refuse stores of another kind; keep the first creation time."""
    con.execute("SET python_enable_replacements = false")  # a missing table must not find a Python name
    existing: dict[str, str] = {}
    try:
        existing = dict(con.execute(f"SELECT key, value FROM {META_SCHEMA}.store_info").fetchall())
    except duckdb.CatalogException:
        pass
    if existing.get("kind", "ingest") != "ingest":
        raise StoreError(f"{out}: is a {existing['kind']} store; ingest into a new --out file")
    info = dict(info)
    if "created_at" in existing:
        info["created_at"] = existing["created_at"]
    init_store(con, kind="ingest", sources=info)
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = false")
    for module in MODULES:  # a staging table can only survive a crash of an older build; drop it
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND starts_with(table_name, ?)",
            [module, _STAGING],
        ).fetchall():
            con.execute(f'DROP TABLE {module}."{name}"')


def _set_info(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute(f"INSERT OR REPLACE INTO {META_SCHEMA}.store_info VALUES (?, ?)", [key, value])


def _recorded_tables(con: duckdb.DuckDBPyConnection) -> dict[str, _Recorded]:
    rows = con.execute(
        f"SELECT table_name, row_count, source_file, source_sha256 FROM {META_SCHEMA}.table_info"
    ).fetchall()
    return {name: _Recorded(int(n), str(src or ""), str(sha or "")) for name, n, src, sha in rows}


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, hex."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _ingest_table(
    con: duckdb.DuckDBPyConnection,
    st: SourceTable | PgSourceTable,
    recorded: _Recorded | None,
    bar: TableProgress,
    pg: _PgReader,
) -> TableIngest:
    name = st.table.qualified
    if recorded is not None:
        return _skip(st, recorded, bar, pg)
    started = time.perf_counter()
    rows, sha = bar.run(con, name, lambda: _load_table(con, st, pg))
    match = st.match
    return TableIngest(
        table=name,
        status="ingested",
        rows=rows,
        source_file=st.location if isinstance(st, PgSourceTable) else str(st.path),
        source_sha256=sha,
        seconds=time.perf_counter() - started,
        ignored_columns=match.ignored if match else (),
        absent_optional_columns=match.absent_optional if match else (),
    )


def _skip(st: SourceTable | PgSourceTable, recorded: _Recorded, bar: TableProgress, pg: _PgReader) -> TableIngest:
    if isinstance(st, PgSourceTable):
        assert pg.con is not None and pg.url is not None
        check_same_source(recorded.rows, st, count_rows(pg.con, pg.url, st))
    elif st.match is not None and recorded.source_sha256:
        sha = file_sha256(st.path)
        if sha != recorded.source_sha256:
            raise StoreError(
                f"{st.table.qualified} in this store was built from {recorded.source_file} "
                f"(sha256 {recorded.source_sha256[:12]}…), but {st.path} differs (sha256 {sha[:12]}…); "
                "ingest into a new --out file"
            )
    bar.skipped(st.table.qualified, recorded.rows)
    return TableIngest(
        table=st.table.qualified,
        status="skipped",
        rows=recorded.rows,
        source_file=recorded.source_file,
        source_sha256=recorded.source_sha256,
        seconds=0.0,
    )


def _load_table(con: duckdb.DuckDBPyConnection, st: SourceTable | PgSourceTable, pg: _PgReader) -> tuple[int, str]:
    """Load one table in a single transaction: staging table, typed sorted insert, rename, record."""
    table = st.table
    staging = f'{table.module}."{_STAGING}{table.name}"'
    source = st.location if isinstance(st, PgSourceTable) else str(st.path)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        csv = isinstance(st, SourceTable) and st.match is not None
        sha_future = pool.submit(file_sha256, st.path) if isinstance(st, SourceTable) and csv else None
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(table_ddl(table, name=staging))
            if isinstance(st, PgSourceTable):
                assert pg.con is not None and pg.url is not None
                rows, sha = insert_postgres(con, staging, st, pg.con, pg.url)
            elif st.match is not None:
                rows = insert_csv(con, staging, table, st.path, st.match)
                sha = sha_future.result() if sha_future else ""
            else:
                rows, sha = _insert_sorted_reports(con, staging, st)
            con.execute(f"DROP TABLE IF EXISTS {table.qualified}")
            con.execute(f'ALTER TABLE {staging} RENAME TO "{table.name}"')
            record_table(con, table, row_count=rows, source_file=source, source_sha256=sha)
            con.execute("COMMIT")
        except BaseException as err:
            _rollback(con)
            if is_interrupt(err):
                raise KeyboardInterrupt from None
            if isinstance(err, duckdb.Error) and isinstance(st, SourceTable) and st.match is not None:
                raise explain_csv_error(con, st.path, st.match, err) from err
            raise
    return rows, sha


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("ROLLBACK")
    except duckdb.TransactionException:
        pass  # the failure ended the transaction already (e.g. at COMMIT)


def _insert_sorted_reports(con: duckdb.DuckDBPyConnection, staging: str, st: SourceTable) -> tuple[int, str]:
    table = st.table
    raw = f'{table.module}."{_STAGING}raw_{table.name}"'
    con.execute(table_ddl(table, name=raw))
    rows, sha = insert_reports(con, raw, st.path)
    con.execute(f"INSERT INTO {staging} SELECT * FROM {raw} ORDER BY {order_sql(table)}")
    con.execute(f"DROP TABLE {raw}")
    return rows, sha


def _remove_empty_temp(out: Path, limits: StoreLimits) -> None:
    if limits.temp_directory is not None:
        return  # the caller's directory
    try:
        temp = out.with_name(out.name + ".tmp")
        temp.rmdir()
    except OSError:
        pass  # absent, or DuckDB left files there (not ours to delete)
