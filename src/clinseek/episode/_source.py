"""What every episode of a store shares: which tables it holds, and its dictionaries (cached).

The cache holds only what is the same for every episode of a store (which tables it has, and the
dictionary tables, which hold no patient data), keyed by the store file's path, size and
modification time so a rebuilt store is re-read. No per-episode state lives here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from ..errors import EpisodeError, StoreError
from ..policy import TEXT_POLICY, EpisodeKey, get_policy
from ..schema import get_table, tables
from ..store import META_SCHEMA

STORE_ALIAS = "clinseek_store"
"""The name a builder connection attaches the store under (detached before an episode is sealed)."""

_DICT_KEY = EpisodeKey(0, datetime(1, 1, 1), TEXT_POLICY)  # dictionaries do not depend on the key


@dataclass(frozen=True, slots=True)
class StoreSnapshot:
    """What every episode of one store shares.

    Attributes:
        path: the store file (resolved).
        stamp: ``(size, mtime_ns)`` of the file when it was read.
        present: qualified names of the registry tables the store holds.
        dictionaries: every ``dictionary`` table of the store, whole, as Arrow (read-only).
    """

    path: Path
    stamp: tuple[int, int]
    present: frozenset[str]
    dictionaries: dict[str, pa.Table]


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
        if snap is not None and snap.stamp == stamp:
            return snap
        snap = _read_snapshot(path, stamp)
        _SNAPSHOTS[path] = snap
        return snap


def open_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    """A private in-memory connection with the store attached read-only as its default database.

    Unlike a direct connection it does not share DuckDB's per-file instance, so it works whatever
    configuration other parts of the process opened the store with.

    Raises:
        StoreError: the file cannot be attached as a DuckDB database.
    """
    con = duckdb.connect(":memory:", config={"threads": 1})
    try:
        con.execute(f"ATTACH '{_quoted(path)}' AS {STORE_ALIAS} (READ_ONLY)")
        con.execute(f"USE {STORE_ALIAS}")
    except duckdb.Error as err:
        con.close()
        raise StoreError(f"{path}: cannot open as a DuckDB store: {err}") from err
    return con


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def _read_snapshot(path: Path, stamp: tuple[int, int]) -> StoreSnapshot:
    con = open_read_only(path)
    try:
        return _snapshot(con, path, stamp)
    finally:
        con.close()


def _snapshot(con: duckdb.DuckDBPyConnection, path: Path, stamp: tuple[int, int]) -> StoreSnapshot:
    try:
        names = {r[0] for r in con.execute(f"SELECT table_name FROM {META_SCHEMA}.table_info").fetchall()}
    except duckdb.CatalogException as err:
        raise StoreError(f"{path}: not a clinseek store (no {META_SCHEMA}.table_info)") from err
    present = frozenset(t.qualified for t in tables() if t.qualified in names)
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
            raise EpisodeError(f"{path}: cannot read dictionary {name}: {err}") from err
    return StoreSnapshot(path, stamp, present, dictionaries)


def clear_store_cache() -> None:
    """Forget every cached store snapshot (the next build re-reads the store's dictionaries)."""
    with _LOCK:
        _SNAPSHOTS.clear()
