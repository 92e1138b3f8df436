"""Building a sealed episode: read what the policy lets the key see, load it, cut every link."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import duckdb
import pyarrow as pa

from ..errors import EpisodeError
from ..policy import EpisodeKey, Policy, get_policy
from ..schema import tables
from ..store import Store
from ._episode import CANDIDATE_SCHEMA, Episode
from ._source import STORE_ALIAS, StoreSnapshot, store_snapshot

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
    candidates: Mapping[str, Sequence[str]] | None = None,
    memory_limit: str = "1GB",
) -> Episode:
    """Build the sealed episode for ``key`` from a store.

    Creates a new in-memory DuckDB database, attaches the store read-only *to that builder
    only*, copies into it (``CREATE TABLE ... AS``) exactly what
    ``get_policy(key.policy).visible_select`` gives for every patient table the store holds
    (same schemas and names as the store), detaches the store, adds the store's dictionaries
    (shared read-only Arrow tables cached per store file, not copied) and the candidate lists,
    sets ``search_path`` so bare names work, and seals it: nothing attached, external access
    disabled, Python replacement scans off, configuration locked. Label-source (``never``)
    tables are absent. Cost follows the patient's own rows: every read is filtered by
    ``subject_id`` (parents of inherited times too), and the store is sorted by it.

    Args:
        store: a :class:`~clinseek.store.Store` or the path of a store file.
        key: patient, cutoff, policy version, hidden encounters, linked CXR ids.
        candidates: candidate lists by task name (``"diagnoses_ccs"`` or
            ``"diagnoses_ccs_candidates"``), loaded as
            ``candidates.<task>_candidates(candidate VARCHAR)`` in the given order.
        memory_limit: DuckDB ``memory_limit`` of the episode database (it cannot spill to disk).

    Raises:
        EpisodeError: the subject is not in ``hosp.patients``, a candidate name or value is
            invalid, or the store cannot be read.
        StoreError: the store file is missing or is not a clinseek store.
        PolicyError: ``key.policy`` is unknown.
    """
    path = Path(store.path if isinstance(store, Store) else store).resolve()
    policy = get_policy(key.policy)
    snap = store_snapshot(path)
    cands = _candidate_tables(candidates or {})
    con = duckdb.connect(":memory:", config={**_SEALED_CONFIG, "memory_limit": memory_limit})
    try:
        counts = _copy_visible(con, snap, policy, key)
        counts.update(_add_shared(con, snap.dictionaries, cands))
        _seal(con, {name.split(".")[0] for name in counts} | ({CANDIDATE_SCHEMA} if cands else set()))
    except BaseException:
        con.close()
        raise
    ordered = {n: counts[n] for n in sorted(counts, key=_registry_order) if n not in cands}
    return Episode(key, con, ordered, tuple(sorted(cands)))


def _copy_visible(
    con: duckdb.DuckDBPyConnection, snap: StoreSnapshot, policy: Policy, key: EpisodeKey
) -> dict[str, int]:
    """Copy every visible patient table into the builder; returns rows per table."""
    path = str(snap.path).replace("'", "''")
    counts: dict[str, int] = {}
    try:
        con.execute(f"ATTACH '{path}' AS {STORE_ALIAS} (READ_ONLY)")
        con.execute(f"USE {STORE_ALIAS}")
        encounters = {  # visible encounter ids, once per build, instead of a subquery per row
            owner: [r[0] for r in con.execute(sql, params).fetchall()]
            for owner, (sql, params) in policy.encounter_selects(key, present=snap.present).items()
        }
        todo = []
        for table in tables():
            if table.qualified in snap.present and table.visibility in ("event", "static"):
                query = policy.visible_select(table, key, present=snap.present, encounters=encounters)
                if query is not None:
                    todo.append((table.qualified, query))
        for schema in sorted({name.split(".")[0] for name, _ in todo}):
            con.execute(f"CREATE SCHEMA memory.{schema}")
        for name, (sql, params) in todo:
            counts[name] = con.execute(f"CREATE TABLE memory.{name} AS {sql}", params).fetchall()[0][0]
    except duckdb.Error as err:
        raise EpisodeError(
            f"{snap.path}: cannot build the episode of subject_id {key.subject_id}: {err}"
        ) from err
    finally:
        con.execute("USE memory")
        if STORE_ALIAS in {
            r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()
        }:
            con.execute(f"DETACH {STORE_ALIAS}")
    if counts.get("hosp.patients", 1) == 0:
        raise EpisodeError(f"{snap.path}: subject_id {key.subject_id} is not in hosp.patients")
    return counts


def _candidate_tables(candidates: Mapping[str, Sequence[str]]) -> dict[str, pa.Table]:
    out: dict[str, pa.Table] = {}
    for task, values in candidates.items():
        name = task if task.endswith("_candidates") else f"{task}_candidates"
        if not isinstance(task, str) or not _CANDIDATE_NAME.match(name):
            raise EpisodeError(
                f"candidate list {task!r}: expected a lower-case identifier such as 'diagnoses_ccs'"
            )
        if isinstance(values, str):
            raise EpisodeError(f"candidate list {task!r}: expected a sequence of strings, got one string")
        bad = [v for v in values if not isinstance(v, str)]
        if bad:
            raise EpisodeError(f"candidate list {task!r}: expected strings, got {bad[0]!r}")
        out[f"{CANDIDATE_SCHEMA}.{name}"] = pa.table({"candidate": pa.array(list(values), pa.string())})
    return out


def _add_shared(
    con: duckdb.DuckDBPyConnection, dictionaries: dict[str, pa.Table], cands: dict[str, pa.Table]
) -> dict[str, int]:
    """Dictionaries as views over the shared Arrow tables; candidate lists as tables. Returns row counts."""
    have = {
        r[0]
        for r in con.execute(
            "SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'memory'"
        ).fetchall()
    }
    for schema in sorted({n.split(".")[0] for n in [*dictionaries, *cands]} - have):
        con.execute(f"CREATE SCHEMA {schema}")
    for name, data in dictionaries.items():
        view = "_dict_" + name.replace(".", "_")
        con.register(view, data)
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM {view}")
    for name, data in cands.items():
        con.register("_clinseek_candidates", data)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _clinseek_candidates")
        con.unregister("_clinseek_candidates")
    return {n: d.num_rows for n, d in [*dictionaries.items(), *cands.items()]}


@lru_cache(maxsize=1)
def _registry_positions() -> dict[str, int]:
    return {t.qualified: i for i, t in enumerate(tables())}


def _registry_order(name: str) -> int:
    return _registry_positions().get(name, len(_registry_positions()))


def _seal(con: duckdb.DuckDBPyConnection, schemas: set[str]) -> None:
    """Cut every way out: search_path for bare names, then no external access, then lock."""
    order = [s for s in ("hosp", "icu", "ed", "note", "cxr", CANDIDATE_SCHEMA) if s in schemas]
    if order:
        con.execute(f"SET search_path = '{','.join(order)}'")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    attached = {r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}
    if attached != {"memory", "system", "temp"}:
        raise EpisodeError(f"episode database is not sealed: attached databases {sorted(attached)}")
