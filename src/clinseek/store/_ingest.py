"""``ingest``: build a store from MIMIC-IV, -ED, -Note and -CXR files, table by table, resumably."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..errors import IngestError, StoreError, is_interrupt
from ..schema import MODULES
from ._csvload import explain_csv_error, insert_csv, order_sql
from ._cxr_reports import insert_reports
from ._duck import META_SCHEMA, StoreLimits, connect_store, init_store, record_table, table_ddl
from ._existing import existing_file
from ._ingest_report import IngestReport, TableIngest
from ._progress import TableProgress
from ._sources import SourceTable, resolve_sources

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
    limits: StoreLimits | None = None,
    progress: bool = True,
) -> IngestReport:
    """Ingest MIMIC files into the store ``out`` (one DuckDB file), typed and sorted.

    Every registry table whose file is found is read with DuckDB's CSV reader (``.csv.gz``
    or ``.csv``, every column declared with its registry type, no sniffing), cast, sorted by
    ``subject_id`` then event time, written to a staging table and renamed in one transaction,
    then recorded in ``clinseek_meta.table_info``. A table already recorded is skipped (the
    run is resumable); a table that fails leaves nothing behind. Memory stays under
    ``limits.memory_limit``; DuckDB spills to ``limits.temp_directory``.

    Args:
        out: the store file (created with its parent directory when missing).
        mimic_iv: a MIMIC-IV 3.1 (or demo 2.2) directory holding ``hosp/`` and ``icu/``.
        ed: a MIMIC-IV-ED 2.2 directory holding ``ed/`` (or the files directly).
        note: a MIMIC-IV-Note 2.2 directory holding ``note/`` (or the files directly).
        cxr: a MIMIC-CXR-JPG 2.0.0 directory with ``mimic-cxr-2.0.0-*.csv(.gz)``; report text
            from ``files/pNN/p<subject>/s<study>.txt`` or ``mimic-cxr-reports.zip`` when present.
        limits: DuckDB memory, threads and spill directory.
        progress: show a per-table progress bar on stderr.

    Returns:
        Per table: rows, source file, sha256, seconds, skipped or ingested; plus the optional
        tables whose files were absent.

    Raises:
        IngestError: no source given; a directory with no MIMIC files of its modules; a missing
            required table; a missing column; an unparsable value or a truncated file (names
            the file, the column and the first offending line).
        KeyboardInterrupt: Ctrl-C, also while DuckDB runs a statement (the table in progress is
            rolled back; rerunning resumes).
        StoreError: ``out`` exists and is not an ingest store or an empty DuckDB file (a
            synthetic store, another DuckDB database, a text file: left untouched), or a table
            in it was built from a different source file.
    """
    sources = {
        name: Path(path)
        for name, path in (("mimic_iv", mimic_iv), ("ed", ed), ("note", note), ("cxr", cxr))
        if path is not None
    }
    if not sources:
        raise IngestError(
            out, "nothing to ingest: give at least one of --mimic-iv, --ed, --note, --cxr (mimic_iv=... in Python)"
        )
    plan, absent = resolve_sources(sources)  # validates every file and header; writes nothing
    _check_out(out)
    started = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    limits = limits or StoreLimits()
    con = connect_store(out, read_only=False, limits=limits)
    try:
        _prepare(con, out, sources)
        recorded = _recorded_tables(con)
        with TableProgress(progress) as bar:
            entries = tuple(_ingest_table(con, st, recorded.get(st.table.qualified), bar) for st in plan)
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
        store=str(out), tables=entries, absent_tables=tuple(absent), seconds=time.perf_counter() - started
    )


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


def _prepare(con: duckdb.DuckDBPyConnection, out: Path, sources: dict[str, Path]) -> None:
    """Create schemas and metadata; refuse stores of another kind; keep the first creation time."""
    con.execute("SET python_enable_replacements = false")  # a missing table must not find a Python name
    existing: dict[str, str] = {}
    try:
        existing = dict(con.execute(f"SELECT key, value FROM {META_SCHEMA}.store_info").fetchall())
    except duckdb.CatalogException:
        pass
    if existing.get("kind", "ingest") != "ingest":
        raise StoreError(f"{out}: is a {existing['kind']} store; ingest into a new --out file")
    info = {f"source.{name}": str(path.resolve()) for name, path in sources.items()}
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
    con: duckdb.DuckDBPyConnection, st: SourceTable, recorded: _Recorded | None, bar: TableProgress
) -> TableIngest:
    name = st.table.qualified
    if recorded is not None:
        return _skip(st, recorded, bar)
    started = time.perf_counter()
    rows, sha = bar.run(con, name, lambda: _load_table(con, st))
    return TableIngest(
        table=name,
        status="ingested",
        rows=rows,
        source_file=str(st.path),
        source_sha256=sha,
        seconds=time.perf_counter() - started,
        ignored_columns=st.match.ignored if st.match else (),
        absent_optional_columns=st.match.absent_optional if st.match else (),
    )


def _skip(st: SourceTable, recorded: _Recorded, bar: TableProgress) -> TableIngest:
    if st.match is not None and recorded.source_sha256:
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


def _load_table(con: duckdb.DuckDBPyConnection, st: SourceTable) -> tuple[int, str]:
    """Load one table in a single transaction: staging table, typed sorted insert, rename, record."""
    table = st.table
    staging = f'{table.module}."{_STAGING}{table.name}"'
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        sha_future = pool.submit(file_sha256, st.path) if st.match is not None else None
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(table_ddl(table, name=staging))
            if st.match is not None:
                rows = insert_csv(con, staging, table, st.path, st.match)
                sha = sha_future.result() if sha_future else ""
            else:
                rows, sha = _insert_sorted_reports(con, staging, st)
            con.execute(f"DROP TABLE IF EXISTS {table.qualified}")
            con.execute(f'ALTER TABLE {staging} RENAME TO "{table.name}"')
            record_table(con, table, row_count=rows, source_file=str(st.path), source_sha256=sha)
            con.execute("COMMIT")
        except BaseException as err:
            _rollback(con)
            if is_interrupt(err):
                raise KeyboardInterrupt from None
            if isinstance(err, duckdb.Error) and st.match is not None:
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
