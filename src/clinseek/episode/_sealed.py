"""Sealed in-memory DuckDB databases for episodes: created sealed, wiped and checked before reuse.

Creating a DuckDB database costs ~15-20 ms of CPU (it registers thousands of built-in functions),
more than everything else of a typical question. A reader's episodes therefore reuse databases:
when an episode closes, every table and view it created is dropped and the catalog is checked to
hold nothing but the empty module schemas and the reader's dictionary tables (whole, the same for
every episode of the reader, no patient data: kept so that the next episode need not copy them
again); only then does the next episode get the database. A database whose wipe or check fails is
closed instead. The seal itself (no external access, Python replacement scans off, no spilling,
configuration locked) is set once at creation and cannot be undone, so a reused database is exactly
as sealed as a new one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import duckdb

from ..errors import EpisodeError

CANDIDATE_SCHEMA = "candidates"
"""Schema of the candidate tables (``candidates.<task>_candidates(candidate VARCHAR)``)."""

SCHEMAS = ("hosp", "icu", "ed", "note", "cxr", CANDIDATE_SCHEMA)
"""Every schema an episode database has (empty when the store lacks the module), in ``search_path`` order."""

DATABASES = frozenset({"memory", "system", "temp"})
"""The only databases a sealed episode database ever has (the store is never attached)."""

_SEALED_CONFIG: dict[str, str | int | bool] = {
    "threads": 1,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "python_enable_replacements": False,
    "temp_directory": "",  # never spill to disk: a runaway query fails with out-of-memory instead
    # Optimizations for large inputs cost more than they save on one patient's rows (benchmarks/question.py:
    # -30 % CPU on the SQL set; top-N queries -40 %): results are the same, only the plan differs.
    "disabled_optimizers": "late_materialization,compressed_materialization,statistics_propagation",
}

_OBJECTS = (
    "SELECT database_name, schema_name, table_name, 'TABLE' FROM duckdb_tables() "
    "UNION ALL SELECT database_name, schema_name, view_name, 'VIEW' FROM duckdb_views() WHERE NOT internal "
    "UNION ALL SELECT database_name, schema_name, sequence_name, 'SEQUENCE' FROM duckdb_sequences() "
    "UNION ALL SELECT database_name, '', '', 'DATABASE' FROM duckdb_databases() "
    f"WHERE database_name NOT IN ({', '.join(repr(d) for d in sorted(DATABASES))})"
)
"""Everything a query could name that an episode put in its database (the store's dictionaries, its tables,
its candidate lists) or that should never be there (another database)."""

MAX_IDLE = 64
"""Wiped databases kept for reuse per reader (more are closed)."""


def new_sealed(memory_limit: str) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB database with every episode schema, sealed.

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
    except BaseException:
        con.close()
        raise
    return con


@dataclass(slots=True)
class Sealed:
    """One sealed episode database.

    Attributes:
        con: the database's connection.
        memory_limit: its DuckDB ``memory_limit`` (fixed at creation).
        dictionaries: qualified names of the dictionary tables it holds (copied whole by an earlier
            episode of the same reader, kept through wipes).
    """

    con: duckdb.DuckDBPyConnection
    memory_limit: str
    dictionaries: set[str] = field(default_factory=set)
    created: set[str] = field(default_factory=set)
    """Qualified names of the tables the current episode created (its loaded tables, its candidate lists):
    :func:`wipe` drops them in one statement before its check."""


def leftovers(con: duckdb.DuckDBPyConnection, *, after: str = "") -> list[tuple[str, str, str, str]]:
    """What the database holds beyond its empty schemas: ``(database, schema, name, kind)`` rows.

    ``after``: statements (each ending in ``;``) to run first, in the same call (one round trip).
    """
    return [(str(a), str(b), str(c), str(d)) for a, b, c, d in con.execute(after + _OBJECTS).fetchall()]


def wipe(sealed: Sealed) -> bool:
    """Drop every table and view an episode created (the kept dictionaries aside); ``True`` when the
    database then holds exactly the kept dictionary tables (reusable).

    The tables the episode recorded creating (:attr:`Sealed.created`) are dropped and the catalog is read
    (:func:`leftovers`) in one call; anything else found is dropped too and the catalog read again.
    """
    con = sealed.con
    kept = {("memory", *name.split("."), "TABLE") for name in sealed.dictionaries}
    try:
        created = sorted(sealed.created - sealed.dictionaries)
        sealed.created.clear()
        rows = leftovers(con, after="".join(f"DROP TABLE IF EXISTS {_quoted(name)};" for name in created))
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
        self._closed = False

    def acquire(self, memory_limit: str) -> Sealed:
        """A sealed database with this ``memory_limit`` holding no episode's rows (a wiped one, else a new one).

        Raises:
            EpisodeError: ``memory_limit`` is invalid.
        """
        with self._lock:
            idle = self._idle.get(memory_limit)
            if idle:
                return idle.pop()
        return Sealed(new_sealed(memory_limit), memory_limit)

    def release(self, sealed: Sealed) -> None:
        """Take a database back from a closed episode: wipe it and keep it, or close it."""
        if not self._closed and wipe(sealed):
            with self._lock:
                idle = self._idle.setdefault(sealed.memory_limit, [])
                if not self._closed and len(idle) < MAX_IDLE:
                    idle.append(sealed)
                    return
        sealed.con.close()

    def close(self) -> None:
        """Close every idle database. Idempotent."""
        with self._lock:
            self._closed = True
            idle = [sealed for kept in self._idle.values() for sealed in kept]
            self._idle.clear()
        for sealed in idle:
            sealed.con.close()
