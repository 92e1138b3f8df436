"""Building a sealed episode: count what the policy lets the key see, seal, load tables on first use."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TypeAlias, TypeVar

import duckdb
import pyarrow as pa

from ..errors import EpisodeError
from ..policy import EpisodeKey, Policy, get_policy
from ..schema import get_table, tables
from ..store import Store, damage_error, is_damage, table_ddl
from ._episode import CANDIDATE_SCHEMA, Episode
from ._source import StoreSnapshot, store_snapshot

_T = TypeVar("_T")

_CANDIDATE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")

_SEALED_CONFIG: dict[str, str | int | bool] = {
    "threads": 1,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "python_enable_replacements": False,
    "temp_directory": "",  # never spill to disk: a runaway query fails with out-of-memory instead
}


def build_episode(
    store: Store | Path | str,
    key: EpisodeKey,
    *,
    candidates: Mapping[str, CandidateSource] | None = None,
    memory_limit: str = "1GB",
) -> Episode:
    """Build the sealed episode for ``key`` from a store.

    Creates a new in-memory DuckDB database holding the schemas of the tables the key may see
    and the candidate lists (``candidates.<task>_candidates``), sets ``search_path`` so bare
    names work, and seals it: nothing attached (the store never is), external access disabled,
    Python replacement scans off, configuration locked. Label-source (``never``) tables are
    absent. The table inventory (rows per visible table) is counted at build time, in one
    statement on the store's shared read-only reader
    (:meth:`~clinseek.policy.Policy.visible_counts_select`).

    Each table's rows are loaded into the sealed database when a query first names it (see
    :class:`Episode`): exactly what ``get_policy(key.policy).visible_select`` gives on the
    store for that table (same schema and name as the store), copied as Arrow from the reader;
    the dictionaries are views over the store's shared read-only Arrow tables. Cost follows the
    patient's own rows and the tables an agent reads: every read is filtered by ``subject_id``
    (parents of inherited times too), and the store is sorted by it.

    Args:
        store: a :class:`~clinseek.store.Store` or the path of a store file.
        key: patient, cutoff, policy version, hidden encounters, linked CXR ids.
        candidates: candidate tables by task name (``"diagnoses_ccs"`` or
            ``"diagnoses_ccs_candidates"``), loaded as ``candidates.<task>_candidates``: a list of
            names becomes ``(candidate VARCHAR)`` in the given order; an Arrow table keeps its dictionary
            columns after the check of :func:`check_candidate_table` (no patient data).
        memory_limit: DuckDB ``memory_limit`` of the episode database (it cannot spill to disk).

    Raises:
        EpisodeError: the subject is not in ``hosp.patients``, a candidate name or value or
            ``memory_limit`` is invalid, a candidate table has a column that could hold patient data,
            or the store cannot be read.
        StoreError: the store file is missing, is not a clinseek store, or is truncated or damaged
            (also raised later, by a query whose table load reads a damaged block).
        PolicyError: ``key.policy`` is unknown.
    """
    path = Path(store.path if isinstance(store, Store) else store).resolve()
    policy = get_policy(key.policy)
    snap = store_snapshot(path)
    cands = _candidate_tables(candidates or {})
    counts = _read(snap, key, lambda: _visible_counts(snap, policy, key))
    if counts.get("hosp.patients", 1) == 0:
        raise EpisodeError(f"{snap.path}: subject_id {key.subject_id} is not in hosp.patients")
    counts.update({name: data.num_rows for name, data in snap.dictionaries.items()})
    schemas = {name.split(".")[0] for name in counts} | ({CANDIDATE_SCHEMA} if cands else set())
    try:
        con = duckdb.connect(":memory:", config={**_SEALED_CONFIG, "memory_limit": memory_limit})
    except duckdb.Error as err:
        raise EpisodeError(f"memory_limit {memory_limit!r}: expected a size such as '1GB' ({err})") from err
    try:
        con.execute("".join(f"CREATE SCHEMA {schema};" for schema in sorted(schemas)))
        _add_candidates(con, cands)
        _seal(con, schemas)
    except BaseException:
        con.close()
        raise
    ordered = {n: counts[n] for n in sorted(counts, key=_registry_order)}
    return Episode(key, con, ordered, tuple(sorted(cands)), loader=_Loader(snap, policy, key).load)


def _read(
    snap: StoreSnapshot, key: EpisodeKey, read: Callable[[], _T], what: str = "build the episode"
) -> _T:
    try:
        return read()
    except duckdb.Error as err:
        if is_damage(err):  # the file, not this episode: one StoreError naming it
            raise damage_error(snap.path, err) from err
        raise EpisodeError(f"{snap.path}: cannot {what} of subject_id {key.subject_id}: {err}") from err


def _encounters(snap: StoreSnapshot, policy: Policy, key: EpisodeKey) -> dict[str, list[int]]:
    """Visible encounter ids by owning table (one statement; read once per episode)."""
    selects = policy.encounter_selects(key, present=snap.present)
    if not selects:
        return {}
    union = " UNION ALL ".join(
        f"SELECT '{owner}' AS owner, * FROM ({sql})" for owner, (sql, _) in selects.items()
    )
    out: dict[str, list[int]] = {owner: [] for owner in selects}
    for owner, encounter_id in snap.fetchall(union, next(iter(selects.values()))[1], reuse=True):
        out[owner].append(encounter_id)
    return out


def _visible_counts(snap: StoreSnapshot, policy: Policy, key: EpisodeKey) -> dict[str, int]:
    query = policy.visible_counts_select(key, present=snap.present)
    return {} if query is None else {name: n for name, n in snap.fetchall(*query, reuse=True)}


class _Loader:
    """Loads one table of an episode into its sealed database, on first use (calls are serialised)."""

    def __init__(self, snap: StoreSnapshot, policy: Policy, key: EpisodeKey) -> None:
        self.snap = snap
        self.policy = policy
        self.key = key
        self._encounters: dict[str, list[int]] | None = None

    def load(self, con: duckdb.DuckDBPyConnection, name: str, expected_rows: int) -> None:
        """Create ``name`` in ``con``: a dictionary view, or the visible rows of a patient table.

        Raises:
            EpisodeError: the store cannot be read, it no longer gives the rows counted at build,
                or the rows do not fit in the episode database (``memory_limit``).
        """
        # built before a fork: read through this process's own reader (never drop the parent's, see _source)
        snap = self.snap if self.snap.pid == os.getpid() else store_snapshot(self.snap.path)
        data = snap.dictionaries.get(name)
        if data is not None:
            view = "_dict_" + name.replace(".", "_")
            con.register(view, data)
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM {view}")
            return
        if expected_rows == 0:
            # nothing visible: the registry's columns and types (what a load gives; tests/episode/
            # test_lazy.py checks both), without a read of the store (a third of a typical episode's tables)
            con.execute(table_ddl(get_table(name)))
            return
        if self._encounters is None:  # read once, on the first table load with rows
            self._encounters = _read(
                snap, self.key, lambda: _encounters(snap, self.policy, self.key), f"load {name}"
            )
        query = self.policy.visible_select(
            get_table(name), self.key, present=self.snap.present, encounters=self._encounters
        )
        assert query is not None, name  # only tables the counts statement listed are loaded
        data = _read(snap, self.key, lambda: snap.to_arrow(*query), f"load {name}")
        if data.num_rows != expected_rows:
            raise EpisodeError(
                f"{snap.path}: {name} of subject_id {self.key.subject_id} has {data.num_rows} "
                f"visible rows, {expected_rows} when the episode was built (was the store changed?)"
            )
        try:
            con.from_arrow(data).create(name)  # an unnamed Arrow scan: nothing left in the catalog
        except duckdb.Error as err:  # e.g. out of memory: the episode failed, not the query that named it
            raise EpisodeError(
                f"{snap.path}: cannot load {name} of subject_id {self.key.subject_id} ({data.num_rows} rows) "
                f"into the episode database (its memory_limit?): {err}"
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


def _add_candidates(con: duckdb.DuckDBPyConnection, cands: dict[str, pa.Table]) -> None:
    for name, data in cands.items():
        con.register("_clinseek_candidates", data)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _clinseek_candidates")
        con.unregister("_clinseek_candidates")


@lru_cache(maxsize=1)
def _registry_positions() -> dict[str, int]:
    return {t.qualified: i for i, t in enumerate(tables())}


def _registry_order(name: str) -> int:
    return _registry_positions().get(name, len(_registry_positions()))


def _seal(con: duckdb.DuckDBPyConnection, schemas: set[str]) -> None:
    """Cut every way out: search_path for bare names, then no external access, then lock."""
    order = [s for s in ("hosp", "icu", "ed", "note", "cxr", CANDIDATE_SCHEMA) if s in schemas]
    path = f"SET search_path = '{','.join(order)}';" if order else ""
    con.execute(f"{path}SET enable_external_access = false;SET lock_configuration = true")
    attached = {r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}
    if attached != {"memory", "system", "temp"}:
        raise EpisodeError(f"episode database is not sealed: attached databases {sorted(attached)}")
