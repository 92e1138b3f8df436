"""The one place that opens store files with DuckDB, and the store's DDL and metadata tables."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .._version import __version__
from ..errors import StoreError
from ..schema import MODULES, Table, get_table, tables
from ._damage import check_complete, damage_error, is_damage

META_SCHEMA = "clinseek_meta"
"""Schema holding the store's provenance: ``store_info`` (key/value) and ``table_info`` (one row per table)."""

STORE_FORMAT = "1"

INGEST_MEMORY_LIMIT = "1.5GB"
"""Default DuckDB ``memory_limit`` for building a store.

The ingest's sort spills beyond it; peak RSS stays ~0.15 GB above it (1.63 GB for 20 million
``labevents`` rows). 1.5 GB rather than 1 GB spills less of a large table: ~3 % faster at 20
million rows (``benchmarks/ingest.py``), still under the 2 GB target of issue 2.
"""


@dataclass(frozen=True, slots=True)
class StoreLimits:
    """Resource limits for DuckDB while building a store.

    Attributes:
        memory_limit: DuckDB ``memory_limit`` (e.g. ``"1GB"``; default :data:`INGEST_MEMORY_LIMIT`);
            DuckDB spills beyond it.
        threads: worker threads (``None`` = DuckDB's default, the number of cores).
        temp_directory: where DuckDB spills; default ``<store>.tmp`` beside the store.
    """

    memory_limit: str = INGEST_MEMORY_LIMIT
    threads: int | None = None
    temp_directory: Path | None = None


def connect_store(
    path: Path, *, read_only: bool = True, limits: StoreLimits | None = None
) -> duckdb.DuckDBPyConnection:
    """Open a store file.

    Args:
        path: the DuckDB file.
        read_only: open read-only (the default; episodes and tools never write).
        limits: memory/thread/spill limits (used when building).

    Raises:
        StoreError: the file does not exist (read-only), cannot be opened by DuckDB, or is shorter
            than its DuckDB header says (a truncated copy).
    """
    if read_only and not path.exists():
        raise StoreError(store_file_problem(path))
    _refuse_other_formats(path)
    # DuckDB shares one instance per file within a process and refuses a second open with a
    # different configuration, so read-only opens use the default configuration everywhere.
    config: dict[str, str | bool | int | float | list[str]] = {}
    if not read_only:
        limits = limits or StoreLimits()
        config["memory_limit"] = limits.memory_limit
        if limits.threads:
            config["threads"] = limits.threads
        _check_limits(limits)
        temp = limits.temp_directory or path.with_name(path.name + ".tmp")
        config["temp_directory"] = str(temp)
    try:
        if read_only:
            con = duckdb.connect(str(path), read_only=True, config=config)
        else:
            con = _open_for_writing(path, config)
    except duckdb.Error as err:
        raise (damage_error(path, err) if is_damage(err) else StoreError(f"{path}: cannot open as a DuckDB store: {err}")) from err
    try:
        check_complete(con, path, con.execute("SELECT current_database()").fetchall()[0][0])
    except BaseException:
        con.close()
        raise
    # a missing table must be an error, never a Python variable of the same name in the caller
    con.execute("SET python_enable_replacements = false")
    if not read_only:
        _keep_freed_blocks(con)
    return con


ROW_GROUP_SIZE = 8192
"""Rows per row group of the tables a store is written with (DuckDB's default: 122,880).

Every policy statement reads one patient's rows, and the store's tables are sorted by patient
(:func:`~clinseek.store.order_sql`): DuckDB skips a row group whose zone maps exclude the patient, and scans
(filters) a whole one otherwise. With 8,192-row groups a patient's select scans one or two small groups
instead of up to 122,880 rows: on the demo store the whole agent question -2 ms CPU p50 (-4 %), a
``labevents`` load -0.5 ms (docs/performance.md, session 12). A store written before keeps its row groups
(read the same way, only slower) until it is ingested again; the tables a resumed ingest writes get the small
groups.
"""

STORE_ALIAS = "clinseek_store_rw"
"""The name a store opened for writing is attached under (and made the default database with ``USE``)."""


def _open_for_writing(path: Path, config: dict[str, str | bool | int | float | list[str]]) -> duckdb.DuckDBPyConnection:
    """A connection whose default database is the store file, attached with :data:`ROW_GROUP_SIZE` (an option only
    ``ATTACH`` takes), so that every table the build writes gets small row groups.

    Raises:
        duckdb.Error: DuckDB cannot open the file.
    """
    con = duckdb.connect(":memory:", config=config)
    try:
        quoted = str(path).replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS {STORE_ALIAS} (TYPE DUCKDB, ROW_GROUP_SIZE {ROW_GROUP_SIZE})")
        con.execute(f"USE {STORE_ALIAS}")
    except BaseException:
        con.close()
        raise
    return con


def store_file_problem(path: Path) -> str | None:
    """What is wrong with ``path`` as an existing store file, as one error line; ``None`` when it is a file.

    The one check every command taking a store makes: a missing path is "no such store file"; a folder is
    "is a directory", and a folder of MIMIC files (one holding ``hosp/``, ``icu/``, ``ed/`` or ``note/``, or
    such a module folder itself, with CSV files) says so and gives the ``clinseek data ingest`` command that makes a store of it.
    """
    if path.is_file():
        return None
    if not path.is_dir():
        return f"{path}: no such store file"
    from ._sources import SOURCE_MODULES

    for source, mods in SOURCE_MODULES.items():
        base = path.parent if path.name in mods else path
        if source != "cxr" and any(_holds_csv(base / mod) for mod in mods):
            return (f"{path}: is a folder of MIMIC files, not a clinseek store (one DuckDB file); ingest it first: "
                    f"clinseek data ingest --{source.replace('_', '-')} {base} --out mimic.duckdb")
    return f"{path}: is a directory; a clinseek store is one DuckDB file"


def _holds_csv(folder: Path) -> bool:
    return folder.is_dir() and any(p.name.endswith((".csv", ".csv.gz")) for p in folder.iterdir())


_DUCKDB_MAGIC = (8, b"DUCK")
"""Where a DuckDB database file says what it is: bytes 8-11 of its first block."""


def _refuse_other_formats(path: Path) -> None:
    """Refuse an existing, non-empty file that is not a DuckDB database.

    DuckDB would otherwise try to open it through an extension (a SQLite file makes it download
    ``sqlite_scanner``) or fail with a message about its own internals.
    """
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except FileNotFoundError:
        return  # a new store
    except IsADirectoryError as err:
        raise StoreError(store_file_problem(path)) from err
    except OSError as err:
        raise StoreError(f"{path}: cannot read the store file: {err}") from err
    offset, magic = _DUCKDB_MAGIC
    if head and head[offset : offset + len(magic)] != magic:
        what = "is a SQLite database" if head.startswith(b"SQLite format 3") else "is not a DuckDB database"
        raise StoreError(f"{path}: {what}; a clinseek store is a DuckDB file")


def _keep_freed_blocks(con: duckdb.DuckDBPyConnection) -> None:
    """Let DuckDB's block allocator keep freed blocks up to the memory limit (not return them to the OS).

    A build allocates and frees buffer blocks all the time (CSV buffers, sort runs, row
    groups); returning them and faulting them back in cost ~3 % of the CPU of a 20-million-row
    ``labevents`` ingest (``benchmarks/ingest.py``). Peak RSS is unchanged: the kept blocks are
    blocks the memory limit allowed anyway, and the process gets them back when the
    connection closes.
    """
    try:
        (limit,) = con.execute("SELECT current_setting('memory_limit')").fetchall()[0]
        con.execute(f"SET block_allocator_memory = '{limit}'")
    except duckdb.Error:
        pass  # a speed-up only: a platform without it builds the same store


_MIN_MEMORY_BYTES = 64 * 1024 * 1024
"""The smallest build memory limit accepted (DuckDB needs a few MB to run a statement at all)."""


def _check_limits(limits: StoreLimits) -> None:
    """Refuse a memory limit or thread count DuckDB cannot parse, or a memory limit too small to build.

    Raises:
        StoreError: naming the limit and what was expected (before any file is created).
    """
    if limits.threads is not None and limits.threads < 1:
        raise StoreError(f"threads {limits.threads}: expected at least 1")
    if limits.memory_limit.strip().startswith("-"):
        raise StoreError(f"memory limit {limits.memory_limit!r}: expected a positive size such as '1.5GB'")
    try:
        probe = duckdb.connect(":memory:", config={"memory_limit": limits.memory_limit})
    except duckdb.Error as err:
        raise StoreError(
            f"memory limit {limits.memory_limit!r}: expected a size such as '1.5GB' ({str(err).splitlines()[0]})"
        ) from err
    try:
        (shown,) = probe.execute("SELECT current_setting('memory_limit')").fetchall()[0]
        limit_bytes = _size_bytes(str(shown))
    except duckdb.Error:
        limit_bytes = 0  # the limit cannot even run this query
    finally:
        probe.close()
    if limit_bytes is not None and limit_bytes < _MIN_MEMORY_BYTES:
        raise StoreError(f"memory limit {limits.memory_limit!r}: too small to build a store (at least 64MB)")


_UNITS = {"bytes": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}


def _size_bytes(shown: str) -> int | None:
    """Bytes of a size as DuckDB shows a setting (``'286.1 MiB'``, ``'0 bytes'``); ``None`` if another form."""
    match = re.fullmatch(r"\s*([\d.]+)\s*([A-Za-z]+)\s*", shown)
    if match is None or match[2] not in _UNITS:
        return None
    return int(float(match[1]) * _UNITS[match[2]])


def table_ddl(table: Table, *, name: str | None = None) -> str:
    """``CREATE TABLE`` for a registry table (quoted column names, registry types)."""
    cols = ", ".join(f'"{c.name}" {c.type}' for c in table.columns)
    return f"CREATE TABLE {name or table.qualified} ({cols})"


def init_store(con: duckdb.DuckDBPyConnection, *, kind: str, sources: dict[str, str] | None = None) -> None:
    """Create the module schemas and the metadata tables, and record what built the store.

    Args:
        con: a writable connection.
        kind: ``"ingest"`` or ``"synthetic"``.
        sources: extra key/values for ``store_info`` (source versions, seed, ...).
    """
    for module in (*MODULES, META_SCHEMA):
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {module}")
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {META_SCHEMA}.store_info (key VARCHAR PRIMARY KEY, value VARCHAR)"
    )
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {META_SCHEMA}.table_info (table_name VARCHAR PRIMARY KEY, module VARCHAR, "
        "row_count BIGINT, source_file VARCHAR, source_sha256 VARCHAR, source_version VARCHAR, built_at TIMESTAMP)"
    )
    info = {"format": STORE_FORMAT, "kind": kind, "clinseek_version": __version__, **(sources or {})}
    info.setdefault("created_at", dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat(timespec="seconds"))
    for key, value in info.items():
        con.execute(f"INSERT OR REPLACE INTO {META_SCHEMA}.store_info VALUES (?, ?)", [key, value])


def record_table(
    con: duckdb.DuckDBPyConnection,
    table: Table,
    *,
    row_count: int,
    source_file: str | None = None,
    source_sha256: str | None = None,
    source_version: str | None = None,
) -> None:
    """Record that ``table`` is complete in the store (the marker resumable ingest checks)."""
    con.execute(
        f"INSERT OR REPLACE INTO {META_SCHEMA}.table_info VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            table.qualified,
            table.module,
            row_count,
            source_file,
            source_sha256,
            source_version or table.source,
            dt.datetime.now(dt.UTC).replace(tzinfo=None),
        ],
    )


def finished_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Qualified names of the tables recorded as complete."""
    try:
        rows = con.execute(f"SELECT table_name FROM {META_SCHEMA}.table_info").fetchall()
    except duckdb.CatalogException:
        return set()
    return {r[0] for r in rows}


class Store:
    """A built clinseek store, opened read-only.

    Tables live in DuckDB schemas named after MIMIC modules (``hosp.labevents``); the registry
    (:mod:`clinseek.schema`) describes them. A store may hold any subset of the registry
    (modules or tables that were absent at ingest are simply not there).

    Raises:
        StoreError: the file is missing or is not a clinseek store.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        con = connect_store(self.path, read_only=True)
        try:
            self._info = dict(con.execute(f"SELECT key, value FROM {META_SCHEMA}.store_info").fetchall())
            self._tables = {
                r[0]: int(r[1])
                for r in con.execute(f"SELECT table_name, row_count FROM {META_SCHEMA}.table_info").fetchall()
            }
        except duckdb.CatalogException as err:
            raise StoreError(f"{self.path}: not a clinseek store (no {META_SCHEMA} tables)") from err
        finally:
            con.close()

    @property
    def info(self) -> dict[str, str]:
        """The ``store_info`` key/values (kind, format, clinseek_version, created_at, sources...)."""
        return dict(self._info)

    @property
    def row_counts(self) -> dict[str, int]:
        """Row count per qualified table name, for the tables present."""
        return dict(self._tables)

    def has_table(self, name: str) -> bool:
        """True when the (qualified or bare) table is in this store."""
        try:
            return get_table(name).qualified in self._tables
        except Exception:
            return False

    def present_tables(self) -> tuple[Table, ...]:
        """Registry tables present in this store, in registry order."""
        return tuple(t for t in tables() if t.qualified in self._tables)

    def connect(self) -> duckdb.DuckDBPyConnection:
        """A new read-only connection (one per thread; DuckDB connections are not shared)."""
        return connect_store(self.path, read_only=True)


def open_store(path: Path | str) -> Store:
    """Open a built store read-only. See :class:`Store`."""
    return Store(path)
