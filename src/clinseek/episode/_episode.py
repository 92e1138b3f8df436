"""The sealed episode: one patient at one cutoff, in its own in-memory DuckDB database."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import duckdb

from ..errors import EpisodeError, EpisodeQueryError, EpisodeTimeout
from ..policy import EpisodeKey, Policy, get_policy
from ._result import QueryResult

Loader = Callable[[duckdb.DuckDBPyConnection, str, int], None]
"""Creates one table (qualified name) with its expected row count in an episode's database."""

CANDIDATE_SCHEMA = "candidates"
"""Schema of the candidate tables (``candidates.<task>_candidates(candidate VARCHAR)``)."""

_WORD = re.compile(r"[a-z_][a-z0-9_$]*")
_CATALOG_WORDS = frozenset(
    {"information_schema", "show", "summarize", "describe", "pragma", "sqlite_master", "query", "query_table"}
)
"""Words after which every table is loaded first: the query lists the catalog (``DESCRIBE`` alone
lists every table) or may name a table in a string built at run time (``query_table('x' || 'y')``)."""
_CATALOG_PREFIXES = ("duckdb_", "pg_", "pragma_", "sqlite_", "json_execute")


_PARSED_PER_THREAD = 256
_parse_cache = threading.local()


def _parsed(con: duckdb.DuckDBPyConnection, sql: str) -> list[duckdb.Statement]:
    """``con.extract_statements(sql)``, kept per thread by text: tools send the same SQL text again
    and again with other parameters, and DuckDB's parser costs ~0.5 ms for a tool's query."""
    cache: dict[str, list[duckdb.Statement]] | None = getattr(_parse_cache, "statements", None)
    if cache is None:
        cache = _parse_cache.statements = {}
    statements = cache.get(sql)
    if statements is None:
        if len(cache) >= _PARSED_PER_THREAD:
            cache.clear()
        statements = cache[sql] = con.extract_statements(sql)
    return statements


class Episode:
    """A sealed snapshot of one patient's record as it stood at ``key.prediction_time``.

    Built by :func:`build_episode`. It is an in-memory DuckDB database holding only the rows and
    values the key's policy makes visible (see :class:`clinseek.policy.Policy`), in schemas named
    after MIMIC modules (``hosp.labevents``; bare names work too), plus the store's dictionaries
    and the candidate tables. It has no path back to the store: nothing is attached, external
    access (files, network, extensions) is disabled, Python replacement scans are off and the
    configuration is locked. Only single read-only queries run on it.

    Tables are loaded on first use: before a query runs, every not-yet-loaded table whose name
    (bare, as a word, case-insensitive) appears anywhere in its text is loaded by the builder's
    loader (which reads the store through the policy, never through this database); a query
    that reads the catalog (``information_schema``, ``duckdb_*()``, ``pg_*``, ``SHOW``,
    ``DESCRIBE``, ``SUMMARIZE``, ``PRAGMA``) or can name a table in a string built at run time
    (``query``, ``query_table``, ``json_execute_serialized_sql``) loads every table first, and a
    query that fails on an unknown table while tables are still unloaded loads them all and runs
    once more. A table is therefore complete whenever a query can see it, and
    :meth:`table_counts` (counted at build) always matches it.

    Thread-safe: queries from several threads are serialised on the episode's connection.
    """

    def __init__(
        self,
        key: EpisodeKey,
        con: duckdb.DuckDBPyConnection,
        counts: dict[str, int],
        candidates: tuple[str, ...],
        *,
        loader: Loader | None = None,
    ) -> None:
        self._key = key
        self._con = con
        self._counts = dict(counts)
        self._candidates = candidates
        self._loader = loader
        self._pending = set(counts) if loader is not None else set()
        self._lock = threading.Lock()
        self._irq_lock = threading.Lock()
        self._running = False
        self._closed = False
        names = [*counts, *candidates]
        self._by_name = {n: n for n in names}
        bare: dict[str, list[str]] = {}
        for name in names:
            bare.setdefault(name.split(".", 1)[1], []).append(name)
        self._by_name.update({b: q[0] for b, q in bare.items() if len(q) == 1})

    @property
    def key(self) -> EpisodeKey:
        """The key the episode is pinned to (patient, cutoff, policy, hidden encounters, CXR links)."""
        return self._key

    @property
    def policy(self) -> Policy:
        """The policy the episode was built under."""
        return get_policy(self._key.policy)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._closed

    def execute(
        self,
        sql: str,
        params: Sequence[Any] | None = None,
        *,
        max_rows: int = 200,
        timeout_s: float = 10.0,
    ) -> QueryResult:
        """Run one read-only query on the sealed database.

        Args:
            sql: exactly one SELECT / WITH / VALUES / DESCRIBE / SHOW query (DuckDB dialect).
            params: positional ``?`` (or ``$n``) parameters.
            max_rows: at most this many rows are returned; one more is fetched to set ``truncated``.
            timeout_s: wall-clock limit in seconds; a timer interrupts the query when it passes.

        Raises:
            EpisodeTimeout: the query ran past ``timeout_s`` and was interrupted.
            EpisodeQueryError: ``kind="read_only"``: not exactly one read-only query.
            EpisodeError: the episode is closed.
            duckdb.Error: DuckDB rejected the query (syntax, unknown table, refused file access, ...).
        """
        with self._lock:
            if self._closed:
                raise EpisodeError("the episode is closed")
            statement = self._read_only_statement(sql)
            self._load_named(sql)
            try:
                rows, desc = self._run(statement, params, max_rows, timeout_s)
            except duckdb.CatalogException as err:
                if not self._pending or "Table with name" not in str(err):
                    raise
                self._load(set(self._pending))  # a name the word scan could not see: load all, run again
                rows, desc = self._run(statement, params, max_rows, timeout_s)
        cut = len(rows) > max_rows
        return QueryResult(
            columns=tuple(d[0] for d in desc),
            types=tuple(str(d[1]) for d in desc),
            rows=[tuple(r) for r in rows[:max_rows]],
            truncated=cut,
            row_count=None if cut else len(rows),
        )

    def _run(
        self, statement: duckdb.Statement, params: Sequence[Any] | None, max_rows: int, timeout_s: float
    ) -> tuple[list[tuple[Any, ...]], list[Any]]:
        """Rows (at most ``max_rows + 1``) and description of one query, under the timer."""
        timer = threading.Timer(timeout_s, self._interrupt)
        timer.daemon = True
        with self._irq_lock:
            self._running = True
        timer.start()
        try:
            cur = self._con.execute(statement, list(params) if params is not None else None)
            rows = cur.fetchmany(max_rows + 1)
            desc = cur.description or []
            cur.abort()  # drop the unread rest: the connection is free for the next load/query
        except duckdb.InterruptException:
            raise EpisodeTimeout(timeout_s) from None
        finally:
            with self._irq_lock:
                self._running = False
            timer.cancel()
        return rows, desc

    def _read_only_statement(self, sql: str) -> duckdb.Statement:
        """The one read-only statement of ``sql``, parsed (and run as parsed: one parse per query)."""
        statements = _parsed(self._con, sql)
        if len(statements) != 1:
            raise EpisodeQueryError(
                "read_only", f"exactly one statement runs on an episode, got {len(statements)}"
            )
        kind = statements[0].type
        if kind != duckdb.StatementType.SELECT:
            raise EpisodeQueryError(
                "read_only", f"only read-only queries run on an episode, got a {kind.name} statement"
            )
        return statements[0]

    def _load_named(self, sql: str) -> None:
        """Load the pending tables ``sql`` names (all of them if it reads the catalog)."""
        if not self._pending or self._loader is None:
            return
        words = set(_WORD.findall(sql.lower()))
        if words & _CATALOG_WORDS or any(w.startswith(_CATALOG_PREFIXES) for w in words):
            self._load(set(self._pending))
        else:
            self._load({name for name in self._pending if name.split(".", 1)[1] in words})

    def _load(self, names: set[str]) -> None:
        assert self._loader is not None
        for name in sorted(names):
            self._loader(self._con, name, self._counts[name])
            self._pending.discard(name)

    def _interrupt(self) -> None:
        with self._irq_lock:
            if self._running:
                self._con.interrupt()

    def table_counts(self) -> dict[str, int]:
        """Rows per visible table (qualified name), dictionaries included, candidate tables not."""
        return dict(self._counts)

    def qualify(self, name: str) -> str | None:
        """The qualified name of a visible or candidate table given qualified or bare; ``None`` if absent."""
        return self._by_name.get(name.strip().lower())

    def has_table(self, name: str) -> bool:
        """True when the (qualified or bare) table exists in this episode (candidate tables included)."""
        return self.qualify(name) is not None

    def candidate_tables(self) -> tuple[str, ...]:
        """Qualified names of the candidate tables (``candidates.<task>_candidates``), sorted."""
        return self._candidates

    def close(self) -> None:
        """Interrupt any running query and free the database. Idempotent."""
        self._closed = True
        self._interrupt()
        with self._lock:
            self._con.close()
            self._loader = None  # the loader holds the store's reader: a closed episode keeps no file open
            self._pending.clear()

    def __enter__(self) -> Episode:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        k = self._key
        state = "closed" if self._closed else f"{len(self._counts)} tables"
        return f"Episode(subject_id={k.subject_id}, prediction_time={k.prediction_time}, policy={k.policy!r}, {state})"
