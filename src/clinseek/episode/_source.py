"""What every episode of a store shares: which tables it holds, its dictionaries, and one reader (cached).

The cache holds only what is the same for every episode of a store (which tables it has, the
dictionary tables, which hold no patient data, and a read-only DuckDB instance with the store
attached that episode builders read from), keyed by the store file's path, size and modification
time so a rebuilt store is re-read, and by process id so a forked child opens its own reader. No
per-episode state lives here. The reader is never reachable from an episode's database: builders
run the policy's SQL on it and hand the episode the resulting rows.
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from ..errors import EpisodeError, StoreError
from ..policy import TEXT_POLICY, EpisodeKey, get_policy
from ..schema import get_table, tables
from ..store import META_SCHEMA, check_complete, damage_error, is_damage

STORE_ALIAS = "clinseek_store"
"""The name the shared reader attaches the store under (an episode's database never attaches it)."""

_DICT_KEY = EpisodeKey(0, datetime(1, 1, 1), TEXT_POLICY)  # dictionaries do not depend on the key


@dataclass(frozen=True, slots=True)
class StoreSnapshot:
    """What every episode of one store shares.

    Attributes:
        path: the store file (resolved).
        stamp: ``(size, mtime_ns)`` of the file when it was read.
        present: qualified names of the registry tables the store holds.
        dictionaries: every ``dictionary`` table of the store, whole, as Arrow (read-only).
        pid: the process that opened the reader.
        reader: a private in-memory DuckDB connection with the store attached read-only
            (:func:`open_read_only`); builders query it through :meth:`fetchall` / :meth:`to_arrow`.
        lock: guards ``reader.cursor()``.
        cursors: this thread's cursor on the reader and its parsed statements.
    """

    path: Path
    stamp: tuple[int, int]
    present: frozenset[str]
    dictionaries: dict[str, pa.Table]
    pid: int
    reader: duckdb.DuckDBPyConnection = field(repr=False, compare=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    cursors: threading.local = field(default_factory=threading.local, repr=False, compare=False)

    def fetchall(
        self, sql: str, params: list[Any] | None = None, *, reuse: bool = False
    ) -> list[tuple[Any, ...]]:
        """Run one query on the store (read-only, from any thread); all rows as tuples.

        ``reuse=True`` keeps the parsed statement for the next call with the same text on this
        thread (for the few texts every build runs: parsing them costs milliseconds).

        Raises:
            duckdb.Error: DuckDB rejected or could not run the query.
        """
        cur = self._cursor()
        if not reuse:
            return cur.execute(sql, params or None).fetchall()
        parsed: dict[str, duckdb.Statement] = self.cursors.parsed
        statement = parsed.get(sql)
        if statement is None:
            if len(parsed) >= _PARSED_PER_THREAD:
                parsed.clear()
            statement = parsed[sql] = cur.extract_statements(sql)[0]
        return cur.execute(statement, params or None).fetchall()

    def to_arrow(self, sql: str, params: list[Any] | None = None) -> pa.Table:
        """Run one query on the store (read-only, from any thread); the result as an Arrow table.

        Raises:
            duckdb.Error: DuckDB rejected or could not run the query.
        """
        return self._cursor().sql(sql, params=params or None).to_arrow_table()

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor on the reader (made once per thread, closed when the thread ends)."""
        cur: duckdb.DuckDBPyConnection | None = getattr(self.cursors, "cursor", None)
        if cur is None:
            with self.lock:  # a connection's cursor() is not safe from several threads at once
                cur = self.reader.cursor()
            cur.execute(f"USE {STORE_ALIAS}")
            self.cursors.cursor = cur
            self.cursors.parsed = {}
        return cur


_PARSED_PER_THREAD = 32
"""Parsed statements a reader thread keeps (a few count texts per policy and key shape)."""

_LOCK = threading.Lock()
_SNAPSHOTS: dict[Path, StoreSnapshot] = {}


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError as err:
        raise StoreError(f"{path}: no such store file") from err
    return (st.st_size, st.st_mtime_ns)


def store_snapshot(path: Path) -> StoreSnapshot:
    """The shared, read-only part of every episode of the store at ``path`` (read once per file version).

    Raises:
        StoreError: the file is missing or is not a clinseek store.
    """
    stamp = _stamp(path)
    with _LOCK:
        snap = _SNAPSHOTS.get(path)
        if snap is not None and snap.stamp == stamp and snap.pid == os.getpid():
            return snap
        snap = _read_snapshot(path, stamp)
        _SNAPSHOTS[path] = snap
        return snap


def open_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    """A private in-memory connection (one thread, 1 GB memory limit) with the store attached
    read-only as its default database.

    Unlike a direct connection it does not share DuckDB's per-file instance, so it works whatever
    configuration other parts of the process opened the store with.

    Raises:
        StoreError: the file cannot be attached as a DuckDB database, or is truncated.
    """
    con = duckdb.connect(":memory:", config={"threads": 1, "memory_limit": "1GB"})
    try:
        con.execute(f"ATTACH '{_quoted(path)}' AS {STORE_ALIAS} (TYPE DUCKDB, READ_ONLY)")  # never an extension's format
        con.execute(f"USE {STORE_ALIAS}")
        check_complete(con, path, STORE_ALIAS)
    except duckdb.Error as err:
        con.close()
        raise (damage_error(path, err) if is_damage(err) else StoreError(f"{path}: cannot open as a DuckDB store: {err}")) from err
    except StoreError:
        con.close()
        raise
    return con


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def _read_snapshot(path: Path, stamp: tuple[int, int]) -> StoreSnapshot:
    con = open_read_only(path)
    try:
        return _snapshot(con, path, stamp)
    except BaseException:
        con.close()
        raise


def _snapshot(con: duckdb.DuckDBPyConnection, path: Path, stamp: tuple[int, int]) -> StoreSnapshot:
    try:
        names = {r[0] for r in con.execute(f"SELECT table_name FROM {META_SCHEMA}.table_info").fetchall()}
    except duckdb.CatalogException as err:
        raise StoreError(f"{path}: not a clinseek store (no {META_SCHEMA}.table_info)") from err
    present = frozenset(t.qualified for t in tables() if t.qualified in names)
    _check_columns(con, path, present)
    policy = get_policy(TEXT_POLICY)
    dictionaries: dict[str, pa.Table] = {}
    for name in sorted(present):
        table = get_table(name)
        if table.visibility != "dictionary":
            continue
        query = policy.visible_select(table, _DICT_KEY, present=present)
        assert query is not None
        try:
            dictionaries[name] = con.sql(query[0], params=query[1] or None).to_arrow_table()
        except duckdb.Error as err:
            if is_damage(err):
                raise damage_error(path, err) from err
            raise EpisodeError(f"{path}: cannot read dictionary {name}: {err}") from err
    return StoreSnapshot(path, stamp, present, dictionaries, os.getpid(), con)


def _check_columns(con: duckdb.DuckDBPyConnection, path: Path, present: frozenset[str]) -> None:
    """Every present table has the registry's columns with the registry's types (else StoreError)."""
    found = {
        (f"{schema}.{table}", column): dtype
        for schema, table, column, dtype in con.execute(
            "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database()"
        ).fetchall()
    }
    for name in sorted(present):
        for column in get_table(name).columns:
            dtype = found.get((name, column.name))
            if dtype != column.type:
                what = "has no column" if dtype is None else f"has type {dtype} for"
                raise StoreError(
                    f"{path}: {name} {what} {column.name} (the registry gives {column.type}); "
                    "the store was not built by this clinseek version or was altered: rebuild it"
                )


def _after_fork_in_child() -> None:
    """A forked child starts with a free cache lock (another thread may have held it at the fork)
    and an empty cache; the parent's readers it inherited are kept alive for good.

    DuckDB cannot destroy in a forked child a database its parent opened (the child hangs or gets
    SIGSEGV, also at interpreter exit), so the child never drops them: each gets one extra
    reference that is never released. The child opens its own readers (``pid`` differs).
    """
    global _LOCK
    _LOCK = threading.Lock()
    for snap in _SNAPSHOTS.values():
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(snap))
    _SNAPSHOTS.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def clear_store_cache() -> None:
    """Forget every cached store snapshot (the next build re-reads the store's dictionaries)."""
    with _LOCK:
        _SNAPSHOTS.clear()
