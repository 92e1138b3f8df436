"""Store readers: the source a sealed episode reads one patient's rows from, opened and closed by the caller.

A :class:`StoreReader` is opened once per run (or per worker process), passed to every
:func:`~clinseek.episode.build_episode`, and closed by whoever opened it (``with open_store_reader(path) as
reader: ...``). It holds only what every episode of the source shares: which tables the source
has, the dictionary tables (read once, on first use; they hold no patient data), the per-query
time-limit watchdog, and sealed episode databases ready for reuse (see :class:`SealedPool`). It
holds nothing of any one episode. Nothing about it is process-wide: two readers of the same file are
independent, and a reader is used only in the process that opened it.

Every patient row goes through the one temporal policy: the reader runs the SQL that
:class:`~clinseek.policy.Policy` generates, rendered for the source's :attr:`StoreReader.dialect`,
and hands Arrow tables with the registry's columns and types to the episode. The DuckDB-file
implementation is :class:`DuckDBStoreReader`; another source (PostgreSQL) implements
:meth:`StoreReader._arrow` and :meth:`StoreReader._tuples` for its dialect and inherits the rest.
"""

from __future__ import annotations

import functools
import os
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

import duckdb
import pyarrow as pa

from ..errors import EpisodeError, EpisodeTimeout, StoreError
from ..policy import TEXT_POLICY, EpisodeKey, Policy, get_policy, timeline_order
from ..schema import Table, get_table, tables
from ..store import (
    META_SCHEMA,
    RowInstants,
    Store,
    check_complete,
    damage_error,
    encounter_column,
    is_damage,
    is_postgres_url,
    store_file_problem,
    store_layout,
)
from ._order import in_row_order, sort_rows
from ._sealed import ONE_PATIENT_OPTIMIZERS_OFF, SealedPool
from ._watchdog import Arm, Watchdog


@dataclass(frozen=True, slots=True)
class TableInventory:
    """What an episode sees of one patient table, known at build without copying its rows.

    Attributes:
        rows: visible rows.
        times: the visible rows' event times, ascending (the registry's event time, parent times
            included; what the tools' time windows use), or ``None`` for a table without one.
    """

    rows: int
    times: pa.TimestampArray | None


@dataclass(frozen=True, slots=True)
class TimelineRows:
    """A timeline (:meth:`StoreReader.timeline`) as Python rows.

    Attributes:
        columns: column names (the registry's, then ``_event_time`` for an event table).
        rows: one tuple per row, oldest first (:func:`~clinseek.policy.timeline_order`).
    """

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


@functools.lru_cache(maxsize=64)
def _encounter_tables(names: tuple[str, ...]) -> tuple[str, ...]:
    """The tables among ``names`` (qualified) whose visible encounter ids the inventory statement gives
    (:func:`~clinseek.store.encounter_column`). From the registry alone, which never changes: kept by the names (a
    build asked it for the same few tuples again, at ~0.2 ms a time)."""
    return tuple(name for name in names if encounter_column(get_table(name)))


class StoreReader(ABC):
    """A read-only source of sealed episodes: one patient's rows at a time, through the temporal policy.

    Open one with :func:`open_store_reader` (a clinseek DuckDB store file), pass it to every
    :func:`~clinseek.episode.build_episode` of a run (any number of threads at once), close it when the
    run ends (``with open_store_reader(path) as reader:``). Episodes built from it must be closed before it.
    It may be used only in the process that opened it: a forked child opens its own.

    Attributes:
        dialect: the SQL dialect of the source (the policy's SQL is rendered for it).
    """

    dialect: ClassVar[str] = "duckdb"

    def __init__(
        self,
        location: str,
        present: frozenset[str],
        indexed: frozenset[str] = frozenset(),
        instants: RowInstants | None = None,
    ) -> None:
        self._location = location
        self._present = present
        self.indexed = indexed
        """Tables whose inventory the source's event index gives (:func:`~clinseek.store.valid_event_index`)."""
        self.instants: RowInstants = dict(instants or {})
        """The row instants the source keeps per table (:func:`~clinseek.store.valid_row_instants`), passed to
        every policy statement on it (none: the policy's joins)."""
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._dictionaries: dict[str, pa.Table] = {}
        self._dictionary_rows: dict[str, int] | None = None
        self._indexes: dict[tuple[str, tuple[str, ...]], dict[tuple[Any, ...], int]] = {}
        self._lookups: dict[tuple[str, tuple[str, ...], str], dict[tuple[Any, ...], Any]] = {}
        self._closed = False
        self.watchdog = Watchdog()
        """Interrupts queries of this reader's episodes that run past their time limit (one thread)."""
        self.sealed = SealedPool()
        """Sealed episode databases of this reader's episodes, wiped and reused (see :class:`SealedPool`)."""

    @property
    def location(self) -> str:
        """The source as named in messages (a store file's path)."""
        return self._location

    @property
    def present(self) -> frozenset[str]:
        """Qualified names of the registry tables the source holds."""
        return self._present

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._closed

    def check_open(self) -> None:
        """Raise unless the reader may be used here and now.

        Raises:
            StoreError: the reader is closed, or was opened in another process (a forked child).
        """
        if self._closed:
            raise StoreError(f"{self._location}: the store reader is closed")
        if os.getpid() != self._pid:
            raise StoreError(
                f"{self._location}: this store reader was opened in process {self._pid}; "
                "a forked process must open its own (clinseek.episode.open_store_reader)"
            )

    def dictionary(self, name: str) -> pa.Table:
        """A whole dictionary table (``hosp.d_labitems``, ...), read on first use and kept (no patient data).

        Raises:
            EpisodeError: ``name`` is not a dictionary table of the source, or it cannot be read.
            StoreError: the reader is closed, or the source is damaged.
        """
        self.check_open()
        with self._lock:
            found = self._dictionaries.get(name)
        if found is not None:
            return found
        table = get_table(name)
        if table.visibility != "dictionary" or name not in self._present:
            raise EpisodeError(f"{self._location}: {name} is not a dictionary table of this store")
        query = get_policy(TEXT_POLICY).visible_select(table, _DICT_KEY, present=self._present)
        assert query is not None
        data = in_row_order(table, self._arrow(*query, what=f"read dictionary {name}"))
        with self._lock:
            return self._dictionaries.setdefault(name, data)

    def dictionary_index(self, name: str, keys: tuple[str, ...]) -> dict[tuple[Any, ...], int]:
        """Row of each key of a dictionary table (``keys`` columns' values -> row number in :meth:`dictionary`).

        Built on first use and kept (the first row wins for a repeated key, as a ``LEFT JOIN`` would
        repeat it: dictionary keys are unique in MIMIC-IV).

        Raises:
            EpisodeError: ``name`` is not a dictionary table of the source, or it cannot be read.
            StoreError: the reader is closed, or the source is damaged.
        """
        data = self.dictionary(name)
        with self._lock:
            found = self._indexes.get((name, keys))
        if found is not None:
            return found
        index: dict[tuple[Any, ...], int] = {}
        for row, key in enumerate(zip(*(data.column(k).to_pylist() for k in keys), strict=True)):
            index.setdefault(key, row)
        with self._lock:
            return self._indexes.setdefault((name, keys), index)

    def dictionary_lookup(self, name: str, keys: tuple[str, ...], label: str) -> Mapping[tuple[Any, ...], Any]:
        """One column of a dictionary table by key: ``keys`` columns' values -> the ``label`` column's value of
        the row :meth:`dictionary_index` gives (as Arrow's ``to_pylist`` gives it); a key not listed is absent.

        Built on first use and kept; what a reader that labels Python rows uses (Curated Input's timelines).

        Raises:
            EpisodeError: ``name`` is not a dictionary table of the source, or it cannot be read.
            KeyError: ``label`` is not a column of the dictionary.
            StoreError: the reader is closed, or the source is damaged.
        """
        index = self.dictionary_index(name, keys)
        with self._lock:
            found = self._lookups.get((name, keys, label))
        if found is not None:
            return found
        values = self.dictionary(name).column(label).to_pylist()
        lookup = {key: values[row] for key, row in index.items()}
        with self._lock:
            return self._lookups.setdefault((name, keys, label), lookup)

    def dictionary_rows(self) -> dict[str, int]:
        """Rows of every dictionary table of the source, in registry order (counted once per reader).

        Raises:
            EpisodeError: the source cannot run the query.
            StoreError: the reader is closed, or the source is damaged.
        """
        self.check_open()
        if self._dictionary_rows is None:
            names = [t for t in tables() if t.visibility == "dictionary" and t.qualified in self._present]
            parts = []
            for table in names:
                query = get_policy(TEXT_POLICY).visible_select(table, _DICT_KEY, present=self._present)
                assert query is not None and not query[1]
                parts.append(f"SELECT '{table.qualified}' AS table_name, count(*) AS n FROM ({query[0]}) AS _d")
            found = dict(self._tuples(" UNION ALL ".join(parts), [], what="count the dictionaries")) if parts else {}
            self._dictionary_rows = {t.qualified: int(found[t.qualified]) for t in names}
        return dict(self._dictionary_rows)

    def inventory(self, policy: Policy, key: EpisodeKey) -> dict[str, TableInventory]:
        """Rows and event times the key may see of every patient table, in registry order (one statement).

        Raises:
            EpisodeError: the source cannot run the query.
            StoreError: the reader is closed, or the source is damaged.
        """
        return self.survey(policy, key)[0]

    def survey(self, policy: Policy, key: EpisodeKey) -> tuple[dict[str, TableInventory], dict[str, list[int]]]:
        """:meth:`inventory`, and the visible encounter ids (ascending) of every encounter table whose ids the
        inventory statement gives (:func:`~clinseek.store.encounter_column`; as :meth:`encounters` gives them):
        the one statement of :meth:`~clinseek.policy.Policy.visible_inventory_select`, what a build reads.

        Raises:
            EpisodeError: the source cannot run the query.
            StoreError: the reader is closed, or the source is damaged.
        """
        covered = policy.inventory_tables(key, present=self._present)
        query = policy.visible_inventory_select(
            key, present=self._present, indexed=self.indexed, instants=self.instants
        )
        if query is None:
            return {}, {}
        data = self._arrow(*query, what=f"count the rows of subject_id {key.subject_id}")
        names = data.column("table_name").to_pylist()
        counts = data.column("n").to_pylist()
        times = data.column("times")
        found: dict[str, TableInventory] = {}
        ids: dict[str, set[int]] = {name: set() for name in _encounter_tables(covered)}
        for i, (name, n, listed) in enumerate(zip(names, counts, data.column("encounter_ids").to_pylist(), strict=True)):
            found[name] = TableInventory(int(n), None if not times[i].is_valid else times[i].values)
            if listed and name in ids:
                ids[name].update(int(encounter_id) for encounter_id in listed)
        empty = TableInventory(0, None)  # a table of the event index without visible rows has no row
        return {name: found.get(name, empty) for name in covered}, {name: sorted(v) for name, v in ids.items()}

    def encounters(self, policy: Policy, key: EpisodeKey) -> dict[str, list[int]]:
        """Visible encounter ids by owning table (the statements of
        :meth:`~clinseek.policy.Policy.encounter_selects`, run as one), for :meth:`rows`; a build takes them
        from :meth:`survey` instead.

        Raises:
            EpisodeError: the source cannot run the query.
            StoreError: the reader is closed, or the source is damaged.
        """
        selects = policy.encounter_selects(key, present=self._present)
        if not selects:
            return {}
        union = " UNION ALL ".join(
            f"SELECT '{owner}' AS owner, * FROM ({sql}) AS _ids" for owner, (sql, _) in selects.items()
        )
        out: dict[str, list[int]] = {owner: [] for owner in selects}
        params = next(iter(selects.values()))[1]
        for owner, encounter_id in self._tuples(union, params, what=f"read the encounters of subject_id {key.subject_id}"):
            out[owner].append(int(encounter_id))
        return out

    def rows(
        self,
        policy: Policy,
        key: EpisodeKey,
        name: str,
        *,
        encounters: Mapping[str, Collection[int]] | None = None,
    ) -> pa.Table:
        """What the key may see of one patient table: the policy's :meth:`~clinseek.policy.Policy.visible_select`.

        Raises:
            EpisodeError: the table is never visible to the key, or the source cannot run the query.
            StoreError: the reader is closed, or the source is damaged.
        """
        query = policy.visible_select(
            get_table(name), key, present=self._present, encounters=encounters, instants=self.instants
        )
        if query is None:
            raise EpisodeError(f"{self._location}: {name} is not visible to this episode")
        return self._arrow(*query, what=f"load {name} of subject_id {key.subject_id}")

    def timeline(
        self,
        policy: Policy,
        key: EpisodeKey,
        name: str,
        *,
        encounters: Mapping[str, Collection[int]] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> pa.Table:
        """One table as a timeline: the policy's :meth:`~clinseek.policy.Policy.timeline_select` (visible rows
        with event time in [``since``, ``until``), with ``_event_time``), sorted by
        :func:`~clinseek.policy.timeline_order` (oldest first).

        Raises:
            EpisodeError: the table is never visible to the key, or the source cannot run the query.
            StoreError: the reader is closed, or the source is damaged.
        """
        table = get_table(name)
        query = self._timeline_query(policy, key, table, encounters, since, until)
        data = self._arrow(*query, what=f"read {name} of subject_id {key.subject_id}")
        return data.sort_by([(c, "ascending") for c in timeline_order(table)]) if data.num_rows > 1 else data

    def timeline_rows(
        self,
        policy: Policy,
        key: EpisodeKey,
        name: str,
        *,
        encounters: Mapping[str, Collection[int]] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> TimelineRows:
        """:meth:`timeline` as Python rows: the same rows in the same order, each value as Arrow's ``to_pylist``
        gives it (``datetime``, ``date``, ``int``, ``float``, ``str``, ``bool``, ``None``). For a reader that
        formats the rows as text (Curated Input), without building Arrow columns first.

        Raises:
            EpisodeError: the table is never visible to the key, or the source cannot run the query.
            StoreError: the reader is closed, or the source is damaged.
        """
        data = self.timeline(policy, key, name, encounters=encounters, since=since, until=until)
        return TimelineRows(tuple(data.column_names), list(zip(*(c.to_pylist() for c in data.columns), strict=True)))

    def _timeline_query(
        self,
        policy: Policy,
        key: EpisodeKey,
        table: Table,
        encounters: Mapping[str, Collection[int]] | None,
        since: datetime | None,
        until: datetime | None,
    ) -> tuple[str, list[Any]]:
        """The policy's timeline select of ``table`` for ``key`` (SQL, parameters).

        Raises:
            EpisodeError: the table is never visible to the key.
        """
        query = policy.timeline_select(
            table, key, present=self._present, encounters=encounters, since=since, until=until,
            instants=self.instants,
        )
        if query is None:
            raise EpisodeError(f"{self._location}: {table.qualified} is not visible to this episode")
        return query

    composes: ClassVar[bool] = False
    """Whether :meth:`select_rows` runs a statement composed around a policy select on this source (the
    record tools' reads of a table not loaded yet); where not, an episode loads the table and reads its copy."""

    def visible_source(
        self, policy: Policy, key: EpisodeKey, name: str, *, encounters: Mapping[str, Collection[int]] | None = None
    ) -> tuple[str, list[Any]]:
        """The policy's select of what ``key`` sees of table ``name``, ``_event_time`` last for an event table (the
        unbounded :meth:`~clinseek.policy.Policy.timeline_select`: :meth:`rows`' rows and columns, and the event
        time the policy decided each row's visibility by), as ``(sql, params)`` in the DuckDB dialect with ``$n``
        parameters: the ``FROM`` item a composed statement (:meth:`select_rows`) reads the table through.

        Raises:
            EpisodeError: the table is never visible to the key.
        """
        return self._timeline_query(policy, key, get_table(name), encounters, None, None)

    def select_rows(
        self, sql: str, params: list[Any], *, max_rows: int, what: str, running: Arm
    ) -> tuple[list[tuple[Any, ...]], list[Any]]:
        """Run one statement composed around :meth:`visible_source` selects on the source: at most ``max_rows + 1``
        rows and the result's description (DB-API ``(name, type, ...)`` tuples). Only where :attr:`composes`.

        ``running`` is called with a function that interrupts the statement, right before it starts (the
        caller's time limit arms it); the statement does not start when the limit it returns has passed.

        Raises:
            EpisodeTimeout: the statement was interrupted.
            EpisodeError: the source cannot run the statement (or does not compose: :attr:`composes` is false).
            StoreError: the reader is closed, or the source is damaged.
        """
        raise EpisodeError(f"{self._location}: this source reads tables only by loading them")

    @abstractmethod
    def _arrow(self, sql: str, params: list[Any], *, what: str) -> pa.Table:
        """Run one policy query (DuckDB dialect, ``$n`` parameters) on the source; the rows as Arrow.

        Implementations render ``sql`` for their dialect (:func:`~clinseek.policy.render_sql`) and
        turn the source's errors into :class:`EpisodeError` (``what`` failed) or :class:`StoreError`.
        """

    @abstractmethod
    def _tuples(self, sql: str, params: list[Any], *, what: str) -> list[tuple[Any, ...]]:
        """As :meth:`_arrow`, the rows as tuples."""

    @abstractmethod
    def _release(self) -> None:
        """Free the source's own resources (connections)."""

    def close(self) -> None:
        """Free the sealed databases, stop the watchdog and release the source. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if os.getpid() != self._pid:
            return  # a forked child never frees what its parent opened
        self.sealed.close()
        self.watchdog.close()
        with self._lock:
            self._dictionaries.clear()
            self._indexes.clear()
            self._lookups.clear()
        self._release()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._location!r}{', closed' if self._closed else ''})"


_DICT_KEY = EpisodeKey(0, datetime(1, 1, 1))  # dictionaries do not depend on the key

_PARSED_PER_THREAD = 64
"""Parsed policy statements a reader thread keeps (the inventory and table texts of a few key shapes)."""

STORE_ALIAS = "clinseek_store"
"""The name the DuckDB reader attaches the store under (an episode's database never attaches it)."""


class DuckDBStoreReader(StoreReader):
    """A clinseek DuckDB store file, read-only, through one private in-memory DuckDB connection.

    The store is attached read-only to a private in-memory connection (one thread, 1 GB memory
    limit), so it works whatever configuration other parts of the process opened the file with;
    each thread reads through its own cursor. The file stays open until :meth:`close`.
    """

    dialect: ClassVar[str] = "duckdb"

    def __init__(self, path: Path) -> None:
        # Arrow from a parsed statement's result (``execute(statement).to_arrow_table()``): DuckDB warns that
        # it copies the rows once more, which costs less than ``sql()``'s second planning of the statement.
        warnings.filterwarnings("ignore", message="Arrow output on a DB-API result", category=UserWarning,
                                module=__name__)
        self._path = path
        self._con = _attach(path)
        self._cursors = threading.local()
        self._all_cursors: list[duckdb.DuckDBPyConnection] = []
        self._cursor_lock = threading.Lock()
        try:
            present = _present_tables(self._con, path)
            indexed, instants = store_layout(self._con, present)
        except duckdb.Error as err:
            self._con.close()
            raise (damage_error(path, err) if is_damage(err) else StoreError(f"{path}: cannot read: {err}")) from err
        except BaseException:
            self._con.close()
            raise
        super().__init__(str(path), present, indexed, instants)

    @property
    def path(self) -> Path:
        """The store file (resolved)."""
        return self._path

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        self.check_open()
        cur: duckdb.DuckDBPyConnection | None = getattr(self._cursors, "cursor", None)
        if cur is None:
            with self._cursor_lock:  # a connection's cursor() is not safe from several threads at once
                self.check_open()
                cur = self._con.cursor()
                self._all_cursors.append(cur)
            cur.execute(f"USE {STORE_ALIAS}")
            self._cursors.cursor = cur
            self._cursors.parsed = {}
        return cur

    def _statement(self, cur: duckdb.DuckDBPyConnection, sql: str) -> duckdb.Statement:
        """DuckDB's parse of ``sql``, kept per thread by text (the policy sends the same few texts again)."""
        parsed: dict[str, duckdb.Statement] = self._cursors.parsed
        statement = parsed.get(sql)
        if statement is None:
            if len(parsed) >= _PARSED_PER_THREAD:
                parsed.clear()
            statement = parsed[sql] = cur.extract_statements(sql)[0]
        return statement

    def _run(self, sql: str, params: list[Any], what: str, fetch: Any) -> Any:
        try:
            cur = self._cursor()
            return fetch(cur.execute(self._statement(cur, sql), params or None))
        except duckdb.Error as err:
            if is_damage(err):  # the file, not this episode: one StoreError naming it
                raise damage_error(self._path, err) from err
            raise EpisodeError(f"{self._path}: cannot {what}: {err}") from err

    def _arrow(self, sql: str, params: list[Any], *, what: str) -> pa.Table:
        return self._run(sql, params, what, lambda result: result.to_arrow_table())

    def _tuples(self, sql: str, params: list[Any], *, what: str) -> list[tuple[Any, ...]]:
        return self._run(sql, params, what, lambda result: result.fetchall())  # type: ignore[no-any-return]

    composes: ClassVar[bool] = True

    def select_rows(
        self, sql: str, params: list[Any], *, max_rows: int, what: str, running: Arm
    ) -> tuple[list[tuple[Any, ...]], list[Any]]:
        """:meth:`StoreReader.select_rows` on this thread's cursor (DuckDB's parse kept per thread by text)."""
        try:
            cur = self._cursor()
            statement = self._statement(cur, sql)
            passed = running(cur.interrupt)
            if passed():  # an interrupt before the statement starts is lost: do not start it
                raise EpisodeTimeout(0)
            result = cur.execute(statement, params or None)
            rows = result.fetchmany(max_rows + 1)
            desc = result.description or []
            result.abort()  # drop the unread rest
            return rows, desc
        except duckdb.InterruptException:
            raise EpisodeTimeout(0) from None
        except duckdb.Error as err:
            if is_damage(err):
                raise damage_error(self._path, err) from err
            raise EpisodeError(f"{self._path}: cannot {what}: {err}") from err

    def timeline_rows(
        self,
        policy: Policy,
        key: EpisodeKey,
        name: str,
        *,
        encounters: Mapping[str, Collection[int]] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> TimelineRows:
        """:meth:`StoreReader.timeline_rows` straight from DuckDB's rows (no Arrow result: its conversion costs
        about a statement more), sorted in Python by :func:`~clinseek.policy.timeline_order` as Arrow sorts.

        Raises:
            EpisodeError: the table is never visible to the key, or the source cannot run the query.
            StoreError: the reader is closed, or the source is damaged.
        """
        table = get_table(name)
        query = self._timeline_query(policy, key, table, encounters, since, until)
        columns, rows = self._run(
            *query, f"read {name} of subject_id {key.subject_id}",
            lambda result: (tuple(d[0] for d in result.description), result.fetchall()),
        )
        if len(rows) > 1:
            sort_rows(rows, [columns.index(c) for c in timeline_order(table)], 1 + len(table.key))
        return TimelineRows(columns, rows)

    def _release(self) -> None:
        with self._cursor_lock:
            for cur in self._all_cursors:
                cur.close()
            self._all_cursors.clear()
            self._con.close()


def open_store_reader(store: Store | Path | str) -> StoreReader:
    """Open a clinseek store for building episodes: the caller passes it to builds and closes it.

    ``store`` is a clinseek DuckDB store file (:class:`DuckDBStoreReader`), or a
    ``postgresql://user:password@host:port/db`` URL of a mimic-code PostgreSQL database
    (:class:`~clinseek.episode.PostgresStoreReader`). Checks that the file is a complete clinseek store
    whose tables have the registry's columns and types (a database: that it answers and holds the
    required tables, columns and grants). Use as a context manager: ``with open_store_reader(path) as reader:
    build_episode(reader, key)``.

    Raises:
        StoreError: the file is missing, is not a clinseek store, is truncated, or its tables do not
            match the registry; the database cannot be reached or lacks a table, column or grant.
        MissingExtraError: a PostgreSQL URL without the ``postgres`` extra installed.
    """
    if is_postgres_url(store):
        from ._pgreader import PostgresStoreReader

        return PostgresStoreReader(str(store))
    path = Path(store.path if isinstance(store, Store) else store).resolve()
    problem = store_file_problem(path)
    if problem:
        raise StoreError(problem)
    return DuckDBStoreReader(path)


def _attach(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:", config={"threads": 1, "memory_limit": "1GB",
                                             "disabled_optimizers": ONE_PATIENT_OPTIMIZERS_OFF})
    try:
        quoted = str(path).replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS {STORE_ALIAS} (TYPE DUCKDB, READ_ONLY)")  # never an extension's format
        con.execute(f"USE {STORE_ALIAS}")
        check_complete(con, path, STORE_ALIAS)
    except duckdb.Error as err:
        con.close()
        raise (damage_error(path, err) if is_damage(err) else StoreError(f"{path}: cannot open as a DuckDB store: {err}")) from err
    except StoreError:
        con.close()
        raise
    return con


def _present_tables(con: duckdb.DuckDBPyConnection, path: Path) -> frozenset[str]:
    """Registry tables the store holds, after checking their columns and types against the registry."""
    try:
        names = {r[0] for r in con.execute(f"SELECT table_name FROM {META_SCHEMA}.table_info").fetchall()}
    except duckdb.CatalogException as err:
        raise StoreError(f"{path}: not a clinseek store (no {META_SCHEMA}.table_info)") from err
    except duckdb.Error as err:
        raise (damage_error(path, err) if is_damage(err) else StoreError(f"{path}: cannot read: {err}")) from err
    present = frozenset(t.qualified for t in tables() if t.qualified in names)
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
    return present


