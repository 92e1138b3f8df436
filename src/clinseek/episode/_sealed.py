"""Sealed in-memory DuckDB databases for episodes: created sealed, wiped and checked before reuse.

Creating a DuckDB database costs ~15-20 ms of CPU (it registers thousands of built-in functions),
more than everything else of a typical question. A reader's episodes therefore reuse databases:
when an episode closes, every table and view it created is dropped and the catalog is checked to
hold nothing but the empty module schemas, the reader's dictionary tables (whole, the same for
every episode of the reader, no patient data: kept so that the next episode need not copy them
again) and the view loads copy through (:class:`ArrowSlot`, empty between loads); only then does the next episode get the database. A database whose wipe or check fails is
closed instead. The seal itself (no external access, Python replacement scans off, no spilling,
configuration locked) is set once at creation and cannot be undone, so a reused database is exactly
as sealed as a new one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import duckdb
import pyarrow as pa

from ..errors import EpisodeError

_V = TypeVar("_V")

CANDIDATE_SCHEMA = "candidates"
"""Schema of the candidate tables (``candidates.<task>_candidates(candidate VARCHAR)``)."""

SCHEMAS = ("hosp", "icu", "ed", "note", "cxr", CANDIDATE_SCHEMA)
"""Every schema an episode database has (empty when the store lacks the module), in ``search_path`` order."""

DATABASES = frozenset({"memory", "system", "temp"})
"""The only databases a sealed episode database ever has (the store is never attached)."""

ONE_PATIENT_OPTIMIZERS_OFF = "late_materialization,compressed_materialization,statistics_propagation"
"""DuckDB optimizations for large inputs that cost more than they save on one patient's rows (``disabled_optimizers``
of every episode database and store reader): results are the same, only the plan differs (benchmarks/question.py:
-30 % CPU on the SQL set, top-N queries -40 %; a reader's Curated Input statements ~-7 %, docs/performance.md)."""

_SEALED_CONFIG: dict[str, str | int | bool] = {
    "threads": 1,
    # No asynchronous I/O threads: a sealed database reads no file and no network, yet DuckDB 2.0 starts 8 such
    # threads per database, and a runner at concurrency 64 holds 64 or more databases (500+ idle threads, each
    # with its allocator state: more page faults and kernel time per question; docs/performance.md, session 11).
    "async_threads": 0,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "python_enable_replacements": False,
    "temp_directory": "",  # never spill to disk: a runaway query fails with out-of-memory instead
    "disabled_optimizers": ONE_PATIENT_OPTIMIZERS_OFF,
}

_OBJECTS = (
    "SELECT database_name, schema_name, table_name, 'TABLE', false FROM duckdb_tables() "
    "UNION ALL SELECT database_name, schema_name, view_name, 'VIEW', internal FROM duckdb_views() "
    "UNION ALL SELECT database_name, schema_name, sequence_name, 'SEQUENCE', false FROM duckdb_sequences() "
    "UNION ALL SELECT database_name, '', '', 'DATABASE', false FROM duckdb_databases()"
)
"""Everything a query could name that an episode put in its database (the store's dictionaries, its tables,
its candidate lists) or that should never be there (another database): ``(database, schema, name, kind,
internal)`` rows, DuckDB's own views and databases included. :func:`leftovers` leaves those out in Python: the
statement without filters costs ~0.3 ms less than with them (DuckDB 2.0.1)."""

class TextCache(Generic[_V]):
    """Values derived from a SQL text alone (DuckDB's parse, a verdict on it), kept per thread by text.

    A parse holds no data and is tied to no database: the same text gives the same value in every episode.
    At most ``limit`` texts per thread; a full cache is emptied (the texts sent are few and repeat).
    """

    def __init__(self, limit: int, make: Callable[[duckdb.DuckDBPyConnection, str], _V]) -> None:
        self._limit = limit
        self._make = make
        self._local = threading.local()

    def get(self, con: duckdb.DuckDBPyConnection, sql: str) -> _V:
        """The value of ``sql`` (made with ``con`` on the first use in this thread).

        Raises:
            duckdb.Error: what making the value raises (nothing is kept then).
        """
        cache: dict[str, _V] | None = getattr(self._local, "values", None)
        if cache is None:
            cache = self._local.values = {}
        value = cache.get(sql)
        if value is None:
            if len(cache) >= self._limit:
                cache.clear()
            value = cache[sql] = self._make(con, sql)
        return value


def _one_statement(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.Statement:
    (statement,) = con.extract_statements(sql)
    return statement


_PARSED: TextCache[duckdb.Statement] = TextCache(128, _one_statement)


def parsed(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.Statement:
    """DuckDB's parse of the one statement ``sql`` (``extract_statements``), kept per thread by text.

    The wipe's statements (a drop per table, the catalog check) are the same few texts in every episode, and
    DuckDB 2.0.1 runs them parsed cheaper than as text (5 drops 3.2 -> 2.6 ms, the check ~0.5 ms less;
    docs/performance.md, session 10).
    """
    return _PARSED.get(con, sql)


LOAD_VIEW = "_clinseek_load"
"""The view a sealed database's loads read their Arrow table from (:class:`ArrowSlot`; empty between loads)."""

MAX_IDLE = 64
"""Wiped databases kept for reuse per reader (more are closed)."""


_EMPTY = pa.table({"empty": pa.array([], pa.int8())})
"""What the load view reads between loads: no rows (DuckDB needs a column)."""


class ArrowSlot:
    """The Arrow table a sealed database's load copies, read through the view :data:`LOAD_VIEW`.

    Registered once per database (``DuckDBPyConnection.register``), so a load is one statement,
    ``CREATE TABLE <name> AS SELECT * FROM _clinseek_load``, without a relation's bind or a register per load
    (~1-1.5 ms less per table than ``from_arrow(...).create``). DuckDB reads the slot's schema and rows at each
    statement. The slot holds the table only while that statement runs (under the episode's lock, so no query
    runs meanwhile) and nothing (:data:`_EMPTY`) before and after, also when the statement fails.
    """

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table = _EMPTY

    def __arrow_c_schema__(self) -> object:
        return self._table.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self._table.__arrow_c_stream__(requested_schema)

    @property
    def empty(self) -> bool:
        """True when the slot holds no table (between loads)."""
        return self._table is _EMPTY

    def copy(self, con: duckdb.DuckDBPyConnection, name: str, data: pa.Table) -> None:
        """Create table ``name`` (qualified) in ``con`` (the slot's database) holding ``data``.

        Raises:
            duckdb.Error: DuckDB refused the table (out of ``memory_limit``, a name already taken).
        """
        self._table = data
        try:
            con.execute(f"CREATE TABLE {_quoted(name)} AS SELECT * FROM {LOAD_VIEW}")
        finally:
            self._table = _EMPTY


def new_sealed(memory_limit: str) -> tuple[duckdb.DuckDBPyConnection, ArrowSlot]:
    """A new in-memory DuckDB database with every episode schema, sealed, and its load slot (:class:`ArrowSlot`).

    Raises:
        EpisodeError: ``memory_limit`` is not a size DuckDB accepts.
    """
    try:
        con = duckdb.connect(":memory:", config={**_SEALED_CONFIG, "memory_limit": memory_limit})
    except duckdb.Error as err:
        raise EpisodeError(f"memory_limit {memory_limit!r}: expected a size such as '1GB' ({err})") from err
    try:
        con.execute(
            "".join(f"CREATE SCHEMA {s};" for s in SCHEMAS)
            + f"SET search_path = '{','.join(SCHEMAS)}';SET enable_external_access = false;SET lock_configuration = true"
        )
        attached = {r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}
        if attached != DATABASES:
            raise EpisodeError(f"episode database is not sealed: attached databases {sorted(attached)}")
        slot = ArrowSlot()
        con.register(LOAD_VIEW, slot)
        # Nothing but the empty load view: the first read of the catalog also builds DuckDB's own views (~11 ms of
        # CPU, once per database), here rather than in the first wipe, at the end of the first episode's question.
        found = leftovers(con)
        if found != [_SLOT_ROW]:
            raise EpisodeError(f"episode database is not sealed: it holds {sorted(found)}")
    except BaseException:
        con.close()
        raise
    return con, slot


@dataclass(slots=True)
class Sealed:
    """One sealed episode database.

    Attributes:
        con: the database's connection.
        memory_limit: its DuckDB ``memory_limit`` (fixed at creation).
        slot: the Arrow slot its loads read (empty between loads; kept through wipes).
        dictionaries: qualified names of the dictionary tables it holds (copied whole by an earlier
            episode of the same reader, kept through wipes).
    """

    con: duckdb.DuckDBPyConnection
    memory_limit: str
    slot: ArrowSlot
    """Where its loads copy from (:class:`ArrowSlot`, registered as :data:`LOAD_VIEW`)."""
    dictionaries: set[str] = field(default_factory=set)
    created: set[str] = field(default_factory=set)
    """Qualified names of the tables the current episode created (its loaded tables, its candidate lists):
    :func:`wipe` drops them in one statement before its check."""


def leftovers(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str, str]]:
    """What the database holds beyond its empty schemas: ``(database, schema, name, kind)`` rows, ``kind`` one of
    ``TABLE``, ``VIEW`` (DuckDB's internal views left out), ``SEQUENCE``, ``DATABASE`` (those of
    :data:`DATABASES` left out)."""
    return [
        (str(database), str(schema), str(name), str(kind))
        for database, schema, name, kind, internal in con.execute(parsed(con, _OBJECTS)).fetchall()
        if not (internal if kind == "VIEW" else kind == "DATABASE" and database in DATABASES)
    ]


def wipe(sealed: Sealed) -> bool:
    """Drop every table and view an episode created (the kept dictionaries aside); ``True`` when the
    database then holds exactly the kept dictionary tables (reusable).

    The tables the episode recorded creating (:attr:`Sealed.created`) are dropped and the catalog is read
    (:func:`leftovers`), each a parsed statement (:func:`parsed`); anything else found is dropped too and the
    catalog read again.
    """
    con = sealed.con
    kept = {("memory", *name.split("."), "TABLE") for name in sealed.dictionaries} | {_SLOT_ROW}
    try:
        created = sorted(sealed.created - sealed.dictionaries)
        sealed.created.clear()
        if not sealed.slot.empty:
            return False
        for name in created:
            con.execute(parsed(con, f"DROP TABLE IF EXISTS {_quoted(name)}"))
        rows = leftovers(con)
        if set(rows) == kept:
            return True
        found = [r for r in rows if r not in kept]
        for database, schema, name, kind in sorted(found, key=lambda r: r[3] != "VIEW"):  # views first
            if database == "temp" and kind == "VIEW":
                con.unregister(name)  # an Arrow table registered by a load that failed half-way
            elif database == "memory" and kind in ("TABLE", "VIEW"):
                con.execute(f'DROP {kind} "{schema}"."{name}"')
        return set(leftovers(con)) == kept
    except duckdb.Error:
        return False


_SLOT_ROW = ("temp", "main", LOAD_VIEW, "VIEW")
"""The load view's row in :func:`leftovers` (kept: it reads only the empty slot between loads)."""


def _quoted(qualified: str) -> str:
    return ".".join('"' + part.replace('"', '""') + '"' for part in qualified.split(".", 1))


class SealedPool:
    """Sealed episode databases of one reader: handed out, wiped when given back, reused.

    Thread-safe. A database is given to one episode at a time; :meth:`release` wipes it, checks that
    nothing is left (:func:`leftovers`) and keeps it for the next :meth:`acquire` with the same
    ``memory_limit``, or closes it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[str, list[Sealed]] = {}
        self._live: dict[str, int] = {}
        """Databases created and not closed, by ``memory_limit`` (idle or given out)."""
        self._checked: set[str] = set()
        self._preparing = 0
        """:meth:`prepare` calls running: :meth:`close` waits for them (a process that exits right after it must find
        no thread inside DuckDB: the interpreter ending a daemon thread there aborts the process)."""
        self._prepared = threading.Condition(self._lock)
        self._closed = False
        self._claims: dict[str, int] = {}
        """Episodes built that may still take a database, by ``memory_limit`` (:meth:`claim`)."""
        self._winding_down = False

    def check(self, memory_limit: str) -> None:
        """Check that DuckDB accepts ``memory_limit`` (the first time: by creating a database with it, kept idle).

        Raises:
            EpisodeError: ``memory_limit`` is not a size DuckDB accepts.
        """
        if memory_limit not in self._checked:
            self.release(self.acquire(memory_limit))
            self._checked.add(memory_limit)

    def claim(self, memory_limit: str) -> None:
        """Count an episode built that may take a database later (its first query); :meth:`acquire` with ``claimed``
        or :meth:`unclaim` ends the claim. Only :meth:`wind_down` reads the count."""
        with self._lock:
            self._claims[memory_limit] = self._claims.get(memory_limit, 0) + 1

    def unclaim(self, memory_limit: str) -> None:
        """End the claim of an episode that closed without taking a database."""
        with self._lock:
            self._claims[memory_limit] -= 1
            surplus = self._surplus_idle()
        for sealed in surplus:
            sealed.con.close()

    def wind_down(self) -> None:
        """No episode beyond those built will come (a run's last question has started): keep only as many idle
        databases as the built episodes may still take (:meth:`claim`) and close the rest; from now on a database
        given back beyond that is closed without its wipe. Acquiring still works (a new database, as before)."""
        with self._lock:
            self._winding_down = True
            surplus = self._surplus_idle()
        for sealed in surplus:
            sealed.con.close()

    def _surplus_idle(self) -> list[Sealed]:
        """Winding down: take out of the pool (under the lock) the idle databases beyond the claims, to be closed."""
        if not self._winding_down:
            return []
        surplus = []
        for limit, kept in self._idle.items():
            while len(kept) > self._claims.get(limit, 0):
                surplus.append(kept.pop())
                self._live[limit] -= 1
        return surplus

    def acquire(self, memory_limit: str, *, claimed: bool = False) -> Sealed:
        """A sealed database with this ``memory_limit`` holding no episode's rows (a wiped one, else a new one);
        ``claimed``: it ends the caller's :meth:`claim`.

        Raises:
            EpisodeError: ``memory_limit`` is invalid.
        """
        with self._lock:
            if claimed:
                self._claims[memory_limit] -= 1
            idle = self._idle.get(memory_limit)
            if idle:
                return idle.pop()
        con, slot = new_sealed(memory_limit)
        with self._lock:
            self._live[memory_limit] = self._live.get(memory_limit, 0) + 1
        return Sealed(con, memory_limit, slot)

    def prepare(self, count: int, memory_limit: str) -> None:
        """Create databases until ``count`` (at most :data:`MAX_IDLE`) exist with ``memory_limit``, kept idle for the
        next :meth:`acquire`. Blocking; stops when the pool closes.

        A run that starts many episodes at once calls it on a thread of its own when it starts: each database costs
        ~28 ms of CPU (DuckDB's, without the GIL), paid then while its first model calls are out, not by the
        episodes' first queries.

        Raises:
            EpisodeError: ``memory_limit`` is invalid.
        """
        with self._lock:
            if self._closed:
                return
            self._preparing += 1
        try:
            self._prepare(count, memory_limit)
        finally:
            with self._lock:
                self._preparing -= 1
                self._prepared.notify_all()

    def _prepare(self, count: int, memory_limit: str) -> None:
        while True:
            with self._lock:
                if self._closed or self._live.get(memory_limit, 0) >= min(count, MAX_IDLE) or (
                        self._winding_down and len(self._idle.get(memory_limit, ())) >= self._claims.get(memory_limit, 0)):
                    return  # enough, or no episode left to take more (wind_down)
                self._live[memory_limit] = self._live.get(memory_limit, 0) + 1
            try:
                con, slot = new_sealed(memory_limit)
            except BaseException:
                with self._lock:
                    self._live[memory_limit] -= 1
                raise
            with self._lock:
                if not self._closed:
                    self._idle.setdefault(memory_limit, []).append(Sealed(con, memory_limit, slot))
                    continue
                self._live[memory_limit] -= 1
            con.close()
            return

    def release(self, sealed: Sealed) -> None:
        """Take a database back from a closed episode: wipe it and keep it, or close it (the pool is closed, or winding
        down with as many idle as claimed)."""
        if not self._closed and not self._surplus(sealed.memory_limit) and wipe(sealed):
            with self._lock:
                idle = self._idle.setdefault(sealed.memory_limit, [])
                if not self._closed and len(idle) < MAX_IDLE:
                    idle.append(sealed)
                    return
        with self._lock:
            self._live[sealed.memory_limit] -= 1
        sealed.con.close()

    def _surplus(self, memory_limit: str) -> bool:
        with self._lock:
            return self._winding_down and len(self._idle.get(memory_limit, ())) >= self._claims.get(memory_limit, 0)

    def close(self) -> None:
        """Close every idle database, once a running :meth:`prepare` has stopped (after the database it is creating,
        ~30 ms). Idempotent."""
        with self._lock:
            self._closed = True
            idle = [sealed for kept in self._idle.values() for sealed in kept]
            self._idle.clear()
            for sealed in idle:
                self._live[sealed.memory_limit] -= 1
            while self._preparing:
                self._prepared.wait()
        for sealed in idle:
            sealed.con.close()
