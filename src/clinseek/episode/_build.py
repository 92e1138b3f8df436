"""Building a sealed episode: read the inventory through the policy; take a sealed database and load tables on first use."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeAlias

import duckdb
import pyarrow as pa

from ..errors import EpisodeError
from ..policy import EpisodeKey, Policy, get_policy
from ..schema import DictJoin, Table, get_table, tables
from ..store import Store, table_ddl
from ._episode import CANDIDATE_SCHEMA, Episode
from ._order import in_row_order
from ._reader import StoreReader, TableInventory, TimelineRows, open_store_reader
from ._sealed import ArrowSlot, Sealed
from ._watchdog import Arm

_CANDIDATE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")

DEFAULT_MEMORY_LIMIT = "1GB"
"""DuckDB ``memory_limit`` of an episode database unless the build asks for another."""


def build_episode(
    store: StoreReader | Store | Path | str,
    key: EpisodeKey,
    *,
    candidates: Mapping[str, CandidateSource] | None = None,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    queries: bool = True,
) -> Episode:
    """Build the sealed episode for ``key``.

    Reads the key's table inventory (rows and event times of every patient table it may see) and its
    visible encounter ids through the policy in one statement
    (:meth:`~clinseek.policy.Policy.visible_inventory_select`). The episode's first query takes an
    empty sealed in-memory DuckDB database from the reader (a new one, or one a closed episode gave
    back, wiped and checked empty; see :mod:`clinseek.episode._sealed`) and adds the candidate lists
    (``candidates.<task>_candidates``); what reads only the store (the inventory, timelines, the record
    tools' reads of tables not loaded) takes none. The database is sealed: nothing attached (the store never is),
    external access disabled, Python replacement scans off, configuration locked, ``search_path``
    set so bare names work. Label-source (``never``) tables are absent.

    Each table's rows are loaded when a query that reads it first runs (see :class:`Episode`):
    exactly what ``get_policy(key.policy).visible_select`` gives on the store for that table (same
    schema and name as the store), copied as Arrow from the reader; the dictionaries are views over
    the reader's read-only Arrow tables. Cost follows the patient's own rows and the tables an agent
    reads: every read is filtered by ``subject_id`` (parents of inherited times too), and the store is
    sorted by it.

    Args:
        store: an open :class:`~clinseek.episode.StoreReader` (:func:`~clinseek.episode.open_store_reader`;
            the caller closes it after its episodes), or a store (file path): the episode then opens a
            reader of its own and closes it with itself (each such build reads the store's catalog again).
        key: patient, cutoff, policy version, hidden encounters, linked CXR ids.
        candidates: candidate tables by task name (``"diagnoses_ccs"`` or
            ``"diagnoses_ccs_candidates"``), loaded as ``candidates.<task>_candidates``: a list of
            names becomes ``(candidate VARCHAR)`` in the given order; an Arrow table keeps its dictionary
            columns after the check of :func:`check_candidate_table` (no patient data).
        memory_limit: DuckDB ``memory_limit`` of the episode database (it cannot spill to disk).
        queries: ``False``: an episode for its inventory and timelines only (what Curated Input reads): no
            sealed database is taken (none to wipe at close); :meth:`Episode.execute` raises
            :class:`EpisodeError`. Everything else reads the same.

    Raises:
        EpisodeError: the subject is not in ``hosp.patients``, a candidate name or value or
            ``memory_limit`` is invalid, candidates are given with ``queries=False``, a candidate table has a column that could hold patient data,
            or the store cannot be read.
        StoreError: the store file is missing, is not a clinseek store, or is truncated or damaged
            (also raised later, by a query whose table load reads a damaged block); the reader is closed
            or belongs to another process.
        PolicyError: ``key.policy`` is unknown.
    """
    if isinstance(store, StoreReader):
        return _build(store, key, candidates or {}, memory_limit, owned=False, queries=queries)
    reader = open_store_reader(store)
    try:
        return _build(reader, key, candidates or {}, memory_limit, owned=True, queries=queries)
    except BaseException:
        reader.close()
        raise


def _build(
    reader: StoreReader,
    key: EpisodeKey,
    candidates: Mapping[str, CandidateSource],
    memory_limit: str,
    *,
    owned: bool,
    queries: bool,
) -> Episode:
    reader.check_open()
    policy = get_policy(key.policy)
    if candidates and not queries:
        raise EpisodeError("candidate tables live in the episode's database: build_episode(..., queries=False) takes none")
    cands = _candidate_tables(candidates)
    inventory, encounters = reader.survey(policy, key)
    if "hosp.patients" in inventory and inventory["hosp.patients"].rows == 0:
        raise EpisodeError(f"{reader.location}: subject_id {key.subject_id} is not in hosp.patients")
    inventory.update({name: TableInventory(rows, None) for name, rows in reader.dictionary_rows().items()})
    ordered = {n: inventory[n] for n in sorted(inventory, key=_registry_order)}
    if not queries:
        reads = _Timelines(reader, policy, key, encounters)

        def done(_: duckdb.DuckDBPyConnection | None) -> None:
            if owned:
                reader.close()

        return Episode(key, None, ordered, (), loader=_no_load, timeline=reads.timeline,
                       timeline_rows=reads.timeline_rows, watchdog=reader.watchdog, on_close=done)
    pool = reader.sealed
    pool.check(memory_limit)
    loader = _Loader(reader, policy, key, encounters)
    claimed = [True]  # the pool counts this episode as a taker until its first take() or its close

    def take() -> tuple[duckdb.DuckDBPyConnection, Collection[str]]:
        """The episode's sealed database with its candidate lists, on its first query (:class:`Episode`)."""
        reader.check_open()  # a closed reader's pool would create a database only to close it at once
        was, claimed[0] = claimed[0], False
        sealed = pool.acquire(memory_limit, claimed=was)
        try:
            _add_candidates(sealed, cands, where=reader.location)
            sealed.created.update(cands)
        except BaseException:
            pool.release(sealed)
            raise
        loader.sealed = sealed
        return sealed.con, sealed.dictionaries

    def give_back(_: duckdb.DuckDBPyConnection | None) -> None:
        if claimed[0]:
            claimed[0] = False
            pool.unclaim(memory_limit)
        if loader.sealed is not None:
            pool.release(loader.sealed)
            loader.sealed = None
        if owned:
            reader.close()

    pool.claim(memory_limit)
    return Episode(
        key, None, ordered, tuple(sorted(cands)), loader=loader.load, timeline=loader.timeline,
        timeline_rows=loader.timeline_rows, watchdog=reader.watchdog, on_close=give_back, connect=take,
        direct=loader if reader.composes else None,
    )


def _no_load(_: duckdb.DuckDBPyConnection, name: str, __: int) -> None:
    raise EpisodeError(f"cannot load {name}: the episode was built without a database (queries=False)")


class _Timelines:
    """Reads an episode's tables as timelines through its reader and policy (see :meth:`Episode.timeline`)."""

    def __init__(self, reader: StoreReader, policy: Policy, key: EpisodeKey, encounters: dict[str, list[int]]) -> None:
        self.reader = reader
        self.policy = policy
        self.key = key
        self.encounters = encounters
        """The key's visible encounter ids by owning table (read at build with the inventory: :meth:`StoreReader.survey`)."""

    def timeline(self, name: str, since: dt.datetime | None, until: dt.datetime | None) -> pa.Table:
        """``name`` as a timeline in [since, until) (:meth:`StoreReader.timeline`), with its dictionary labels."""
        data = self.reader.timeline(
            self.policy, self.key, name, encounters=self.encounters, since=since, until=until
        )
        return _with_labels(self.reader, get_table(name), data)

    def timeline_rows(self, name: str, since: dt.datetime | None, until: dt.datetime | None) -> TimelineRows:
        """:meth:`timeline` as Python rows (:meth:`StoreReader.timeline_rows`), the labels appended to each row
        (looked up in Python: :meth:`StoreReader.dictionary_lookup`)."""
        data = self.reader.timeline_rows(
            self.policy, self.key, name, encounters=self.encounters, since=since, until=until
        )
        columns, rows = data.columns, data.rows
        plan = _label_plan(name, columns, self.reader.present) if rows else ()
        if not plan:
            return data
        found: list[list[Any]] = []
        for join, labels in plan:
            at = [columns.index(c) for c in join.columns]
            keys = [tuple([row[i] for i in at]) for row in rows]
            for label in labels:
                lookup = self.reader.dictionary_lookup(join.table, join.keys, label)
                found.append([lookup.get(k) for k in keys])
        names = tuple(label for _, labels in plan for label in labels)
        return TimelineRows((*columns, *names), [(*row, *extra) for row, extra in zip(rows, zip(*found, strict=True), strict=True)])


class _Loader(_Timelines):
    """Loads one table of an episode into its sealed database, on first use (calls are serialised), and
    reads tables as timelines for it."""

    sealed: Sealed | None = None
    """The episode's database once its first query took it (its slot, the dictionaries it holds, the patient tables
    loaded into it: dropped when it is wiped for reuse); ``None`` before and after."""

    def source(self, name: str) -> tuple[str, list[Any]] | None:
        """The policy's select of patient table ``name`` for the key (:meth:`StoreReader.visible_source`); ``None``
        for a dictionary (read by loading it: it stays in the database for reuse)."""
        if get_table(name).visibility == "dictionary":
            return None
        return self.reader.visible_source(self.policy, self.key, name, encounters=self.encounters)

    def run(
        self, sql: str, params: list[Any], max_rows: int, running: Arm
    ) -> tuple[list[tuple[Any, ...]], list[Any]]:
        """One statement composed around :meth:`source` selects, on the store (:meth:`StoreReader.select_rows`)."""
        return self.reader.select_rows(
            sql, params, max_rows=max_rows, what=f"read the rows of subject_id {self.key.subject_id}", running=running
        )

    def load(self, con: duckdb.DuckDBPyConnection, name: str, expected_rows: int) -> None:
        """Create ``name`` in ``con``: a dictionary (whole), or the visible rows of a patient table.

        Raises:
            EpisodeError: the store cannot be read, it no longer gives the rows counted at build,
                or the rows do not fit in the episode database (``memory_limit``).
            StoreError: the reader is closed, belongs to another process, or the store is damaged.
        """
        table = get_table(name)
        sealed = self.sealed
        assert sealed is not None and sealed.con is con  # Episode._load runs after Episode._open took it
        if table.visibility == "dictionary":
            _copy(con, sealed.slot, name, self.reader.dictionary(name), what=f"the dictionary {name}",
                  where=self.reader.location)
            sealed.dictionaries.add(name)
            return
        sealed.created.add(name)  # before the load: a load that fails half-way leaves nothing behind either
        if expected_rows == 0:
            # nothing visible: the registry's columns and types (what a load gives; tests/episode/
            # test_lazy.py checks both), without a read of the store (a third of a typical episode's tables)
            con.execute(table_ddl(table))
            return
        data = self.reader.rows(self.policy, self.key, name, encounters=self.encounters)
        if data.num_rows != expected_rows:
            raise EpisodeError(
                f"{self.reader.location}: {name} of subject_id {self.key.subject_id} has {data.num_rows} "
                f"visible rows, {expected_rows} when the episode was built (was the store changed?)"
            )
        _copy(con, sealed.slot, name, in_row_order(table, data), what=f"{name} of subject_id {self.key.subject_id}",
              where=self.reader.location)


@dataclass(frozen=True, slots=True)
class _Label:
    """One dictionary label a table's rows lack: its name, the row's key columns and the dictionary's index."""

    name: str
    columns: tuple[str, ...]
    index: Mapping[tuple[Any, ...], int]
    values: pa.Array

    def of(self, keys: Iterable[tuple[Any, ...]]) -> pa.Array:
        """The label of each row's key values (NULL where the code is not listed)."""
        return self.values.take(pa.array([self.index.get(key) for key in keys], pa.int64()))


def _labels(reader: StoreReader, table: Table, columns: Sequence[str], rows: int) -> list[_Label]:
    """The labels of ``table``'s dictionary joins that ``columns`` (of ``rows`` rows) lack, in order (``label``
    of ``d_labitems``, ``long_title`` of an ICD dictionary)."""
    if not rows:
        return []
    out = []
    for join, labels in _label_plan(table.qualified, tuple(columns), reader.present):
        index = reader.dictionary_index(join.table, join.keys)
        dictionary = reader.dictionary(join.table)
        out += [_Label(label, join.columns, index, dictionary.column(label)) for label in labels]
    return out


@lru_cache(maxsize=512)
def _label_plan(name: str, columns: tuple[str, ...], present: frozenset[str]) -> tuple[tuple[DictJoin, tuple[str, ...]], ...]:
    """The dictionary joins of table ``name`` whose labels rows with ``columns`` lack (dictionaries in
    ``present`` only), each with those labels: a label is neither a column of the table nor of the rows, nor
    given by an earlier join. From the registry alone (no data)."""
    table = get_table(name)
    own, have = set(table.column_names), set(columns)
    out = []
    for join in table.dict_joins:
        if join.table not in present:
            continue
        labels = tuple(label for label in join.labels if label not in own and label not in have)
        if labels:
            have.update(labels)
            out.append((join, labels))
    return tuple(out)


def _with_labels(reader: StoreReader, table: Table, data: pa.Table) -> pa.Table:
    """``data`` (rows of ``table``) with the labels of its dictionary joins that are not its own columns
    (``label`` of ``d_labitems``, ``long_title`` of an ICD dictionary; NULL where the code is not listed)."""
    for label in _labels(reader, table, data.column_names, data.num_rows):
        data = data.append_column(label.name, label.of(zip(*(data.column(c).to_pylist() for c in label.columns), strict=True)))
    return data


def _copy(
    con: duckdb.DuckDBPyConnection, slot: ArrowSlot, name: str, data: pa.Table, *, what: str, where: str
) -> None:
    """Create table ``name`` in ``con`` holding ``data``, through the database's Arrow slot (one statement; the
    slot is empty again afterwards, whatever happened: :class:`~clinseek.episode._sealed.ArrowSlot`).

    Raises:
        EpisodeError: the rows do not fit in the episode database (its ``memory_limit``): the episode
            failed, not the query that named the table.
    """
    try:
        slot.copy(con, name, data)
    except duckdb.Error as err:
        raise EpisodeError(
            f"{where}: cannot load {what} ({data.num_rows} rows) into the episode database (its memory_limit?): {err}"
        ) from err


CandidateSource: TypeAlias = Sequence[str] | pa.Table
"""One candidate table: a list of answer names, or an Arrow table with a string ``candidate`` column and
dictionary columns (codes and titles; see :func:`check_candidate_table`)."""

_PATIENT_KEY = re.compile(r"_id$")
"""Ids of patients, encounters and records (``subject_id``, ``hadm_id``, ``note_id``, ...); dictionary codes
(``itemid``, ``icd_code``) do not end in ``_id``."""
_ALLOWED_TYPES = (pa.types.is_string, pa.types.is_large_string, pa.types.is_integer, pa.types.is_floating,
                  pa.types.is_boolean)


def check_candidate_table(name: str, data: pa.Table) -> None:
    """Refuse a candidate table that could carry patient data into a sealed episode.

    A candidate table is a vocabulary: a string ``candidate`` column (the answer names) and, optionally,
    dictionary columns such as ``icd_code``, ``icd_version``, ``long_title``, ``itemid``, ``fluid``.
    Column names must be lower-case identifiers; no column may be an id of a patient, an encounter or a
    record (any name ending in ``_id``: ``subject_id``, ``hadm_id``, ``stay_id``, ``note_id``, ...), and every
    column must be text, a number or a boolean (times and dates are events of someone, never vocabulary).

    Raises:
        EpisodeError: naming the table and the column at fault.
    """
    if "candidate" not in data.column_names:
        raise EpisodeError(f"candidate table {name!r}: no 'candidate' column (columns: {', '.join(data.column_names)})")
    for field in data.schema:
        if not _CANDIDATE_NAME.match(field.name):
            raise EpisodeError(f"candidate table {name!r}: column {field.name!r} is not a lower-case identifier")
        if _PATIENT_KEY.search(field.name):
            raise EpisodeError(f"candidate table {name!r}: column {field.name!r} names a patient, encounter or "
                               "record id; candidate tables hold vocabulary only")
        if not any(check(field.type) for check in _ALLOWED_TYPES):
            raise EpisodeError(f"candidate table {name!r}: column {field.name!r} has type {field.type}; candidate "
                               "tables hold text, numbers and booleans only (no times or dates)")
    if not (pa.types.is_string(data.schema.field("candidate").type)
            or pa.types.is_large_string(data.schema.field("candidate").type)):
        raise EpisodeError(f"candidate table {name!r}: column 'candidate' must be text")


def _candidate_tables(candidates: Mapping[str, CandidateSource]) -> dict[str, pa.Table]:
    out: dict[str, pa.Table] = {}
    for task, values in candidates.items():
        name = task if task.endswith("_candidates") else f"{task}_candidates"
        if not isinstance(task, str) or not _CANDIDATE_NAME.match(name):
            raise EpisodeError(
                f"candidate list {task!r}: expected a lower-case identifier such as 'diagnoses_ccs'"
            )
        if isinstance(values, pa.Table):
            check_candidate_table(name, values)
            out[f"{CANDIDATE_SCHEMA}.{name}"] = values
            continue
        if isinstance(values, str):
            raise EpisodeError(f"candidate list {task!r}: expected a sequence of strings, got one string")
        bad = [v for v in values if not isinstance(v, str)]
        if bad:
            raise EpisodeError(f"candidate list {task!r}: expected strings, got {bad[0]!r}")
        out[f"{CANDIDATE_SCHEMA}.{name}"] = pa.table({"candidate": pa.array(list(values), pa.string())})
    return out


def _add_candidates(sealed: Sealed, cands: dict[str, pa.Table], *, where: str) -> None:
    """Copy the candidate lists into the episode's database (its first query: a list too big for its ``memory_limit``
    is the episode's :class:`EpisodeError`, an infrastructure error, never the query's ``duckdb.Error``)."""
    for name, data in cands.items():
        _copy(sealed.con, sealed.slot, name, data, what=f"the candidate table {name}", where=where)


@lru_cache(maxsize=1)
def _registry_positions() -> dict[str, int]:
    return {t.qualified: i for i, t in enumerate(tables())}


def _registry_order(name: str) -> int:
    return _registry_positions().get(name, len(_registry_positions()))
