"""The sealed episode: one patient at one cutoff, in its own in-memory DuckDB database."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache
from types import TracebackType
from typing import Any, Protocol

import duckdb
import pyarrow as pa

from ..errors import EpisodeError, EpisodeQueryError, EpisodeTimeout
from ..policy import EpisodeKey, Policy, get_policy
from ._reader import TableInventory, TimelineRows
from ._result import QueryResult
from ._sealed import CANDIDATE_SCHEMA, TextCache
from ._watchdog import Arm, Watchdog

Loader = Callable[[duckdb.DuckDBPyConnection, str, int], None]
"""Creates one table (qualified name) with its expected row count in an episode's database."""

Timeline = Callable[[str, dt.datetime | None, dt.datetime | None], pa.Table]
"""Reads one table (qualified name) as a timeline in [since, until), through the episode's policy."""

TimelineRowsReader = Callable[[str, dt.datetime | None, dt.datetime | None], TimelineRows]
"""As :data:`Timeline`, the rows as Python tuples."""

__all__ = ["CANDIDATE_SCHEMA", "Episode", "Loader", "StoreSelect"]


class StoreSelect(Protocol):
    """Reads a table that is not loaded yet with one statement on the episode's store reader."""

    def source(self, name: str) -> tuple[str, list[Any]] | None:
        """The policy's select of table ``name`` for the episode's key (:meth:`StoreReader.visible_source`:
        ``$n`` parameters), or ``None`` where the table is read only by loading it (a dictionary)."""

    def run(
        self, sql: str, params: list[Any], max_rows: int, running: Arm
    ) -> tuple[list[tuple[Any, ...]], list[Any]]:
        """:meth:`StoreReader.select_rows` of ``sql`` on the store."""


SOURCE_TOKEN = "__clinseek_source__"
"""Where :meth:`Episode.read` puts the policy's select in a statement written for the store."""


def _checked(statements: list[duckdb.Statement]) -> duckdb.Statement | str:
    """The one statement if it is read-only, else why not."""
    if len(statements) != 1:
        return f"exactly one statement runs on an episode, got {len(statements)}"
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        return f"only read-only queries run on an episode, got a {kind.name} statement"
    return statements[0]


_READ_ONLY: TextCache[duckdb.Statement | str] = TextCache(
    256, lambda con, sql: _checked(con.extract_statements(sql))
)
"""The one read-only statement of a query, parsed by DuckDB (``extract_statements``) and run as parsed, or
:func:`_checked`'s refusal text (raised as ``EpisodeQueryError("read_only")``); a text DuckDB cannot parse raises
``duckdb.ParserException`` (not kept).

Kept per thread by text: a parse holds no data (the same text parses the same way in every episode), tools send
the same texts again and again with other parameters, and DuckDB's parser costs ~0.5 ms for a tool's query."""


def _result(shape: tuple[tuple[str, ...], tuple[str, ...]], rows: list[tuple[Any, ...]], max_rows: int) -> QueryResult:
    cut = len(rows) > max_rows
    return QueryResult(
        columns=shape[0],
        types=shape[1],
        rows=rows[:max_rows] if cut else rows,  # fetchmany gives a new list of tuples
        truncated=cut,
        row_count=None if cut else len(rows),
    )


@lru_cache(maxsize=512)
def _composed(sql: str, source: str, after: int, expected: int) -> str:
    """``sql`` with its ``?`` parameters written ``$after+1``, ... and each :data:`SOURCE_TOKEN` as ``(source)``.

    Only the parameter marks and the source token DuckDB's own tokenizer sees as such are rewritten: a ``?`` or
    the token inside a string (E-strings and doubled quotes included), a quoted identifier or a comment stays as
    written. Kept by its arguments: a tool sends the same texts with other parameters.

    Raises:
        ValueError: ``sql`` does not hold exactly ``expected`` parameter marks, or no source token.
    """
    edits: list[tuple[int, int, str]] = []
    n = after
    tokens = duckdb.tokenize(sql)
    for i, (at, kind) in enumerate(tokens):
        end = tokens[i + 1][0] if i + 1 < len(tokens) else len(sql)
        if kind == duckdb.token_type.operator:
            for j in range(at, end):
                if sql[j] == "?":
                    n += 1
                    edits.append((j, j + 1, f"${n}"))
        elif kind == duckdb.token_type.identifier and sql[at:end].rstrip() == SOURCE_TOKEN:
            edits.append((at, at + len(SOURCE_TOKEN), f"({source})"))
    if n - after != expected:
        raise ValueError(f"{n - after} '?' parameters in a statement given {expected}")
    if len(edits) == expected:
        raise ValueError(f"no {SOURCE_TOKEN} in a statement to run on the store")
    out, last = [], 0
    for start, stop, text in edits:
        out += [sql[last:start], text]
        last = stop
    return "".join([*out, sql[last:]])


class Episode:
    """A sealed snapshot of one patient's record as it stood at ``key.prediction_time``.

    Built by :func:`build_episode`. It is an in-memory DuckDB database holding only the rows and
    values the key's policy makes visible (see :class:`clinseek.policy.Policy`), in schemas named
    after MIMIC modules (``hosp.labevents``; bare names work too), plus the store's dictionaries
    and the candidate tables. It has no path back to the store: nothing is attached, external
    access (files, network, extensions) is disabled, Python replacement scans are off and the
    configuration is locked. Only single read-only queries run on it.

    Its table inventory (rows and event times of every visible table) is read at build, in one
    statement; the database is taken from the reader by the first query, and a table's rows are copied in
    when a query that reads it first runs. The caller says
    which tables a query reads (``execute(..., tables=...)``; ``ehr.run_sql_query`` passes the tables
    its SQL guard found in the parse tree); a query whose tables the caller does not name loads every
    table first. A table is therefore complete whenever a query can see it, and :meth:`table_counts`
    always matches it.

    An episode built with ``queries=False`` (Curated Input: it reads only the inventory and timelines) has
    no database: :meth:`execute` raises, everything else works the same.

    Thread-safe: queries from several threads are serialised on the episode's connection.
    """

    def __init__(
        self,
        key: EpisodeKey,
        con: duckdb.DuckDBPyConnection | None,
        inventory: Mapping[str, TableInventory],
        candidates: tuple[str, ...],
        *,
        loader: Loader,
        timeline: Timeline,
        timeline_rows: TimelineRowsReader,
        watchdog: Watchdog,
        on_close: Callable[[duckdb.DuckDBPyConnection | None], None],
        direct: StoreSelect | None = None,
        connect: Callable[[], tuple[duckdb.DuckDBPyConnection, Collection[str]]] | None = None,
    ) -> None:
        self._key = key
        self._con: duckdb.DuckDBPyConnection | None = con
        self._connect = connect
        """Takes the episode's database on its first query, when ``con`` is ``None``: the connection and the tables it
        already holds (the reader's dictionaries kept through wipes). An episode whose tools read only the store (its
        inventory, timelines, record tools on tables not loaded) never takes one."""
        self._inventory = dict(inventory)
        self._counts = {name: inv.rows for name, inv in self._inventory.items()}
        self._candidates = candidates
        self._loader: Loader | None = loader
        self._timeline: Timeline | None = timeline
        self._timeline_rows: TimelineRowsReader | None = timeline_rows
        self._on_close: Callable[[duckdb.DuckDBPyConnection | None], None] | None = on_close
        self._pending = set(self._counts)
        self._ready: set[str] = set()
        """Table names as callers gave them (``tables`` of :meth:`execute`) whose tables are loaded: a query naming only
        these needs no look-up (the tables a model's SQL reads come as the same names call after call)."""
        self._direct = direct
        self._target: Callable[[], None] | None = None
        """What :meth:`_interrupt` interrupts while a statement runs on the store (:meth:`read`), else the database."""
        self._shapes: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        """Result column names and types by SQL text (queries without parameters): the same text reads the same
        complete tables every time, so its result has the same shape (DuckDB's description costs a call per query)."""
        self._lock = threading.Lock()
        self._irq_lock = threading.Lock()
        self._watch = watchdog.watch(self._interrupt)
        self._closed = False
        names = [*self._counts, *candidates]
        self._by_name = {n: n for n in names}
        bare: dict[str, list[str]] = {}
        for name in names:
            bare.setdefault(name.split(".", 1)[1], []).append(name)
        self._by_name.update({b: q[0] for b, q in bare.items() if len(q) == 1})
        self.signature = (frozenset(self._counts), candidates)
        """What the SQL guard's verdict on a text depends on besides the text and the cutoff: the episode's
        table names and candidate tables (the same for every episode with the same tables)."""

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
        tables: Collection[str] | None = None,
        max_rows: int = 200,
        timeout_s: float = 10.0,
    ) -> QueryResult:
        """Run one read-only query on the sealed database.

        Args:
            sql: exactly one SELECT / WITH / VALUES / DESCRIBE / SHOW query (DuckDB dialect).
            params: positional ``?`` (or ``$n``) parameters.
            tables: the tables the query reads (qualified or bare names of this episode); those not
                loaded yet are loaded first. ``None``: every table is loaded first (for a query whose
                tables the caller cannot name: the catalog, ``DESCRIBE``, a table named in a string).
            max_rows: at most this many rows are returned; one more is fetched to set ``truncated``.
            timeout_s: wall-clock limit in seconds; the reader's watchdog interrupts the query when it passes.

        Raises:
            EpisodeTimeout: the query ran past ``timeout_s`` and was interrupted.
            EpisodeQueryError: ``kind="read_only"``: not exactly one read-only query.
            EpisodeError: the episode is closed, or a table could not be loaded.
            duckdb.Error: DuckDB rejected the query (syntax, unknown table, refused file access, ...).
        """
        with self._lock:
            con = self._open()
            return self._execute(con, sql, params, tables, max_rows, timeout_s)

    def read(
        self,
        name: str,
        statement: Callable[[str | None], str],
        params: Sequence[Any] | None = None,
        *,
        tables: Collection[str],
        max_rows: int = 200,
        timeout_s: float = 10.0,
    ) -> QueryResult:
        """Run one read-only query over a table's visible rows, without loading the table when it is not loaded yet.

        ``statement(source)`` writes the query (``?`` parameters). ``statement(None)``: over the episode's
        database, as :meth:`execute` runs it (the table by its name). While the table is not loaded and the
        store reader composes (:attr:`StoreReader.composes`), the query runs on the store instead, as ONE
        statement: ``statement(source)``, ``source`` being the ``FROM`` item to read the table through: the
        policy's select of it for this episode's key (:meth:`StoreReader.visible_source`: the rows and values
        a load would copy, and the event time as ``_event_time`` last), so the query sees nothing a load would
        not. Its other tables must be dictionaries (the store's: the same rows). Same time limit and row cap.

        Args:
            name: the table the query reads rows of (qualified or bare).
            statement: writes the query for a source (see above).
            params: positional ``?`` parameters.
            tables: the tables ``statement(None)`` reads (loaded first when not yet, as :meth:`execute`'s).
            max_rows, timeout_s: as :meth:`execute`'s.

        Raises:
            As :meth:`execute`.
        """
        qualified = self.qualify(name)
        with self._lock:
            if self._closed:
                raise EpisodeError("the episode is closed")
            direct = self._direct
            found = direct.source(qualified) if direct is not None and qualified in self._pending else None
            if found is None or direct is None:
                return self._execute(self._open(), statement(None), params, tables, max_rows, timeout_s)
            source_sql, source_params = found
            tool = list(params) if params is not None else []
            sql = _composed(statement(SOURCE_TOKEN), source_sql, len(source_params), len(tool))
            watch = self._watch

            def running(interrupt: Callable[[], None]) -> Callable[[], bool]:
                with self._irq_lock:  # as in _run: an interrupt meant for an earlier query cannot reach this one
                    self._target = interrupt
                    watch.start(timeout_s)
                return watch.passed

            try:
                rows, desc = direct.run(sql, [*source_params, *tool], max_rows, running)
            except EpisodeTimeout:
                raise EpisodeTimeout(timeout_s) from None
            finally:
                watch.stop()
                with self._irq_lock:
                    self._target = None
        return _result((tuple([d[0] for d in desc]), tuple([str(d[1]) for d in desc])), rows, max_rows)

    def _open(self) -> duckdb.DuckDBPyConnection:
        """The episode's database (the lock held).

        Raises:
            EpisodeError: the episode is closed, or has no database.
        """
        if self._closed:
            raise EpisodeError("the episode is closed")
        if self._con is None:
            if self._connect is None:
                raise EpisodeError("this episode has no database to query: it was built for timelines only "
                                   "(build_episode(..., queries=False))")
            con, loaded = self._connect()
            self._connect = None
            self._pending.difference_update(loaded)
            self._con = con
        return self._con

    def _execute(
        self,
        con: duckdb.DuckDBPyConnection,
        sql: str,
        params: Sequence[Any] | None,
        tables: Collection[str] | None,
        max_rows: int,
        timeout_s: float,
    ) -> QueryResult:
        """:meth:`execute` with the lock held: the statement (DuckDB's kept parse), the tables it reads loaded, then
        at most ``max_rows + 1`` rows under the time limit (one frame: a warm query's fixed cost)."""
        statement = _READ_ONLY.get(con, sql)
        if isinstance(statement, str):
            raise EpisodeQueryError("read_only", statement)
        if self._closed:  # closed while the first query took the database: nothing ran that close could interrupt
            raise EpisodeError("the episode is closed")
        if self._pending and (tables is None or not self._ready.issuperset(tables)):
            names = self._pending if tables is None else self._named(tables)
            if names:
                self._load(names)
            if tables is not None:
                self._ready.update(tables)  # each is loaded now, or not a table of the episode (never loaded)
        shape = self._shapes.get(sql) if params is None else None
        watch = self._watch
        with self._irq_lock:  # an interrupt meant for the query before this one cannot reach this one
            if self._closed:  # close's interrupt came before the statement (lost): do not start it
                raise EpisodeError("the episode is closed")
            watch.start(timeout_s)
        try:
            if watch.passed():  # an interrupt before the statement starts is lost (the watchdog repeats it)
                raise EpisodeTimeout(timeout_s)
            cur = con.execute(statement, list(params) if params is not None else None)
            rows = cur.fetchmany(max_rows + 1)
            if shape is None:  # the same text without parameters has the same result shape (see _shapes)
                desc = cur.description or []
                shape = (tuple([d[0] for d in desc]), tuple([str(d[1]) for d in desc]))
                if params is None:
                    self._shapes[sql] = shape
            if len(rows) > max_rows:
                cur.abort()  # drop the unread rest: the connection is free for the next load/query (fewer rows: none left)
        except duckdb.InterruptException:
            raise EpisodeTimeout(timeout_s) from None
        finally:
            watch.stop()
        return _result(shape, rows, max_rows)

    def _named(self, tables: Collection[str]) -> set[str]:
        found = set()
        for name in tables:
            qualified = self._by_name.get(name.strip().lower())
            if qualified is not None and qualified in self._pending:
                found.add(qualified)
        return found

    def _load(self, names: Collection[str]) -> None:
        assert self._loader is not None and self._con is not None
        for name in sorted(names):
            self._loader(self._con, name, self._counts[name])
            self._pending.discard(name)

    def _interrupt(self, query: int | None = None) -> None:
        """Interrupt the running query (only when it is query number ``query`` of :class:`Watch`, when given)."""
        with self._irq_lock:
            watch = self._watch
            if watch.running and (query is None or watch.query == query):
                con = self._con  # one read: close clears it under this lock too
                if self._target is not None:
                    self._target()
                elif con is not None:
                    con.interrupt()

    def table_counts(self) -> dict[str, int]:
        """Rows per visible table (qualified name), dictionaries included, candidate tables not."""
        return dict(self._counts)

    def event_times(self, name: str) -> pa.TimestampArray | None:
        """The event times of a visible table's rows, ascending (``None``: the table has no event time).

        The registry's event time (parent times included), the instant the policy decided the row's
        visibility by and the tools' time windows use; read with the inventory at build.
        """
        found = self._inventory.get(self.qualify(name) or "")
        return None if found is None else found.times

    def timeline(
        self, name: str, *, since: dt.datetime | None = None, until: dt.datetime | None = None
    ) -> pa.Table:
        """A visible table's rows with event time in [``since``, ``until``) (``None``: unbounded), oldest first,
        with their event time and dictionary labels.

        The policy's :meth:`~clinseek.policy.Policy.timeline_select` for this episode's key, read through its
        store reader (the table is not loaded into the episode database): the rows of :meth:`execute`'s table
        whose ``_event_time`` (as in :meth:`event_times`) lies in the window, plus the labels its
        dictionary joins add. Curated Input reads the most recent part of a record this way.

        Raises:
            EpisodeError: the episode is closed, or the table is not one of its visible tables.
            StoreError: the store cannot be read.
        """
        qualified = self._visible(name)
        with self._lock:
            if self._closed or self._timeline is None:
                raise EpisodeError("the episode is closed")
            read = self._timeline
        return read(qualified, since, until)

    def timeline_rows(
        self, name: str, *, since: dt.datetime | None = None, until: dt.datetime | None = None
    ) -> TimelineRows:
        """:meth:`timeline` as Python rows: the same columns (labels included), rows and order, each value as
        Arrow's ``to_pylist`` gives it. What a caller that formats the rows as text reads (Curated Input).

        Raises:
            EpisodeError: the episode is closed, or the table is not one of its visible tables.
            StoreError: the store cannot be read.
        """
        qualified = self._visible(name)
        with self._lock:
            if self._closed or self._timeline_rows is None:
                raise EpisodeError("the episode is closed")
            read = self._timeline_rows
        return read(qualified, since, until)

    def _visible(self, name: str) -> str:
        qualified = self.qualify(name)
        if qualified is None or qualified not in self._counts:
            raise EpisodeError(f"no visible table {name!r} in this episode")
        return qualified

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
        """Interrupt any running query and free the database (back to its reader for reuse). Idempotent."""
        self._closed = True
        self._interrupt()
        with self._lock:
            with self._irq_lock:  # the watchdog's interrupt never reaches a database given back
                con, self._con = self._con, None
            self._connect = None
            on_close, self._on_close = self._on_close, None
            self._loader = self._timeline = self._timeline_rows = self._direct = None  # they hold the store's reader: a closed episode keeps nothing of it
            self._pending.clear()
            self._ready.clear()
            self._shapes.clear()
        if on_close is not None:
            on_close(con)

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
