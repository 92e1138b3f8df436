"""Reading a store for episode builds: one read-only connection per (thread, store), cached dictionaries.

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
from ..store import META_SCHEMA, connect_store

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
_LOCAL = threading.local()


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError as err:
        raise StoreError(f"{path}: no such store file") from err
    return (st.st_size, st.st_mtime_ns)


def store_connection(path: Path) -> duckdb.DuckDBPyConnection:
    """This thread's read-only connection to the store at ``path`` (opened on first use).

    Raises:
        StoreError: the file is missing or cannot be opened.
    """
    stamp = _stamp(path)
    cache: dict[Path, tuple[tuple[int, int], duckdb.DuckDBPyConnection]] = getattr(_LOCAL, "cons", {})
    _LOCAL.cons = cache
    hit = cache.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    if hit is not None:
        hit[1].close()
    con = connect_store(path, read_only=True)
    cache[path] = (stamp, con)
    return con


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


def _read_snapshot(path: Path, stamp: tuple[int, int]) -> StoreSnapshot:
    con = store_connection(path)
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
    """Forget every cached store snapshot and close this thread's store connections."""
    with _LOCK:
        _SNAPSHOTS.clear()
    for _, con in getattr(_LOCAL, "cons", {}).values():
        con.close()
    _LOCAL.cons = {}
