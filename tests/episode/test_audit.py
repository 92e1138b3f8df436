"""Leakage audit over SQL: for many random (patient, cutoff) pairs on real stores, every visible table.

An independent oracle recomputes, in Python, what each table must look like from the raw store
rows (the registry's event time and each column's "known at" class evaluated on the store, not
the policy's masks; the inclusivity rule from ``Policy.sees``), and the episode must match it exactly: no row too many or too few, no value
unmasked or over-masked; pending cultures collapse to one row per (specimen, test) and
``microevent_id`` / ``labevent_id`` are renumbered as the policy does (by the instant each row is shown, then id); the per-patient counters (``sequence`` columns) are
renumbered by (event time, original counter) among the visible rows of their owner. On top, invariants are checked on the episode
alone: no TIMESTAMP after the cutoff (DATE: its end), one subject_id, no label-source table,
target-encounter codes absent, no ``hadm_id`` / ``stay_id`` of an admission or stay the episode
does not hold, at most one row per (specimen, test) of a pending culture.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from oracle import instants as _instants
from oracle import raw_sql as _oracle_sql

from clinseek.episode import Episode, EpisodeKey, StoreReader, build_episode, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY, Policy, get_policy
from clinseek.schema import ENCOUNTER_IDS, Sequence, Table, get_table, tables
from clinseek.store import connect_store
from policy.crafted import S, T

PAIRS_PER_STORE = 6


def _expected(
    con: duckdb.DuckDBPyConnection, table: Table, key: EpisodeKey,
    numbered: dict[Sequence, dict[str, tuple[int, str]]] | None = None,
) -> Counter[tuple[str, ...]]:
    """``numbered``: the key's :func:`_numbers` by sequence, kept across the tables of one key (several tables name
    one owner's rows: each owner's rows are read and numbered once per key)."""
    policy = get_policy(key.policy)
    out: Counter[tuple[str, ...]] = Counter()
    linked = _linked_studies(con, key) if policy.cxr_linked_only and table.module == "cxr" else None
    kept = _visible(con, table, key, linked)
    numbered = {} if numbered is None else numbered
    for r in table.renumbered:
        if r.sequence not in numbered:
            numbered[r.sequence] = _numbers(con, r.sequence, key)
    numbers = {r.column: (r, numbered[r.sequence]) for r in table.renumbered}
    for original, known in _collapsed(table, kept, policy, key.prediction_time):
        row = dict(original)
        for column, (r, by_id) in numbers.items():  # the counters renumbered (read from the original ids)
            if r.where and not known[f"where:{column}"]:
                continue  # a row where the column names no owner row: its value as stored
            found = by_id.get(original[r.via]) if original[r.via] is not None else None
            row[column] = None if found is None else found[0 if r.part == "counter" else 1]
        out[_render(tuple(_masked(table, row, known, policy, key.prediction_time)))] += 1
    return out


def _visible(
    con: duckdb.DuckDBPyConnection, table: Table, key: EpisodeKey, linked: set[int] | None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The store rows of ``table`` an episode holds (before masks and collapses): (row, known instants) each, with
    ``"_event_time"`` added to the instants."""
    policy = get_policy(key.policy)
    names = table.column_names
    instants = [name for name, _ in _instants(table)]
    kept: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for raw in con.execute(_oracle_sql(table), [key.subject_id]).fetchall():
        row = dict(zip(names, raw[: len(names)], strict=True))
        parent_time, event_time = raw[len(names)], raw[len(names) + 1]
        known = dict(zip(instants, raw[len(names) + 2 :], strict=True))
        if table.visibility == "event" and not (
            parent_time is not None and policy.sees(event_time, key.prediction_time)
        ):
            continue
        if table.target_key and row[table.target_key] == getattr(key, f"target_{table.target_key}"):
            continue
        if linked is not None and not (row["study_id"] in linked or row.get("dicom_id") in key.dicom_ids):
            continue
        kept.append((row, {**known, "_event_time": event_time}))
    return kept


def _numbers(con: duckdb.DuckDBPyConnection, sequence: Sequence, key: EpisodeKey) -> dict[str, tuple[int, str]]:
    """Per original id of the visible rows of the counter's owner: (its number 1..n by (event time, original
    counter) among the rows of its partition values, its id ``<subject>[-<partition values>]-<number>``)."""
    rows = _visible(con, get_table(sequence.owner), key, None)
    ordered = sorted(rows, key=lambda rk: (rk[1]["_event_time"], rk[0][sequence.counter], rk[0][sequence.id]))
    out: dict[str, tuple[int, str]] = {}
    counted: Counter[tuple[Any, ...]] = Counter()
    for row, _ in ordered:
        group = tuple(row[c] for c in sequence.partition)
        counted[group] += 1
        n = counted[group]
        out[row[sequence.id]] = (n, "-".join([str(key.subject_id), *map(str, group), str(n)]))
    return out


def _collapsed(
    table: Table, kept: list[tuple[dict[str, Any], dict[str, Any]]], policy: Policy, cutoff: datetime
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Rows whose stored result is pending: one per ``pending.collapse_on`` value (lowest id), none when a row of the
    group is resulted (a rule change, session 19: attack19's add-on tests); the others' ids renumbered 1..n by (the
    instant the row is shown: the later of its event time and its result's, original id)."""
    pending = table.pending
    if pending is None:
        return kept
    renumber = pending.renumber
    order = [c for c in (renumber, *table.key) if c]
    kept = sorted(kept, key=lambda rk: tuple(rk[0][c] for c in order))
    resulted = [i for i, (_, known) in enumerate(kept) if policy.sees(known["stored"], cutoff)]
    by_shown = sorted(resulted, key=lambda i: (max(kept[i][1]["_event_time"], kept[i][1]["stored"]), i))
    numbers = {i: n for n, i in enumerate(by_shown, 1)}
    seen = {tuple(kept[i][0][c] for c in pending.collapse_on) for i in numbers}  # groups with a resulted row
    out = []
    for i, (row, known) in enumerate(kept):
        if i in numbers:
            out.append(({**row, renumber: numbers[i]} if renumber else row, known))
            continue
        group = tuple(row[c] for c in pending.collapse_on)
        if group not in seen:
            seen.add(group)
            out.append(({**row, renumber: None} if renumber else row, known))
    return out


def _linked_studies(con: duckdb.DuckDBPyConnection, key: EpisodeKey) -> set[int]:
    studies = set(key.study_ids)
    for dicom_id in key.dicom_ids:
        studies |= {
            r[0]
            for r in con.execute(
                "SELECT study_id FROM cxr.metadata WHERE dicom_id = ?", [dicom_id]
            ).fetchall()
        }
    return studies


def _masked(
    table: Table, row: dict[str, Any], known: dict[str, Any], policy: Policy, cutoff: datetime
) -> list[Any]:
    """The row as the classes say an episode sees it (the renumbered id is already set by ``_collapsed``)."""
    out = []
    for col in table.columns:
        value = row[col.name]
        wait = {
            "stored": "stored",
            "end": "end",
            "reference": f"ref:{col.name}",
            "encounter": f"enc:{col.name}",
        }.get(col.known or "")
        renumbered = table.pending is not None and col.name == table.pending.renumber
        if col.known == "final" or (wait and not renumbered and not policy.sees(known[wait], cutoff)):
            value = None
        if col.is_time and value is not None and not policy.sees(value, cutoff):
            value = None
        out.append(value)
    return out


def _render(row: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(repr(v) for v in row)


def audit(
    store: Path, key: EpisodeKey, source: StoreReader | None = None, con: duckdb.DuckDBPyConnection | None = None
) -> int:
    """Build the episode for ``key`` and check every table against the oracle; returns rows checked.

    ``source``: build from this reader (a reader of ``store``, as a run builds its episodes, or a PostgreSQL
    database holding the same data) instead of ``store``'s path; the oracle always reads ``store``, through
    ``con`` when given (a connection of ``store`` the caller closes).
    """
    policy = get_policy(key.policy)
    checked = 0
    own = con is None
    con = connect_store(store) if con is None else con
    try:
        present = {r[0] for r in con.execute("SELECT table_name FROM clinseek_meta.table_info").fetchall()}
        with build_episode(store if source is None else source, key) as ep:
            _check_catalog(ep, present)
            _check_encounters_and_cultures(ep, present)
            numbered: dict[Sequence, dict[str, tuple[int, str]]] = {}  # this key's counters, by sequence
            for table in tables():
                if table.qualified not in present or table.visibility not in ("event", "static"):
                    continue
                got = ep.execute(f"SELECT * FROM {table.qualified}", max_rows=10**7)
                assert got.columns == table.column_names
                _check_invariants(table, got.rows, got.types, key, policy)
                assert Counter(_render(r) for r in got.rows) == _expected(con, table, key, numbered), (
                    table.qualified,
                    key,
                )
                checked += len(got.rows)
    finally:
        if own:
            con.close()
    return checked


def audit_all(store: Path, keys: list[EpisodeKey], source: StoreReader | None = None) -> int:
    """:func:`audit` of every key, the episodes built from one reader of ``store`` (or from ``source``) and the
    oracle read through one connection of it (a reader per key reopened and checked the store, ~0.4 s each)."""
    con = connect_store(store)
    try:
        if source is not None:
            return sum(audit(store, key, source, con) for key in keys)
        with open_store_reader(store) as reader:
            return sum(audit(store, key, reader, con) for key in keys)
    finally:
        con.close()


def _check_catalog(ep: Episode, present: set[str]) -> None:
    found = {
        f"{r[0]}.{r[1]}"
        for r in ep.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() UNION ALL "
            "SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal AND schema_name <> 'main'",
            max_rows=1000,
        ).rows
    }
    never = {t.qualified for t in tables() if t.visibility == "never"}
    assert not found & never
    assert found <= present | {n for n in found if n.startswith("candidates.")}
    assert {r[0] for r in ep.execute("SELECT database_name FROM duckdb_databases()").rows} == {
        "memory",
        "system",
        "temp",
    }


def _check_invariants(
    table: Table, rows: list[tuple[Any, ...]], types: tuple[str, ...], key: EpisodeKey, policy: Policy
) -> None:
    names = table.column_names
    for row in rows:
        if "subject_id" in names:
            assert row[names.index("subject_id")] == key.subject_id
        for value, type_ in zip(row, types, strict=True):
            if type_ in ("TIMESTAMP", "DATE") and value is not None:
                assert isinstance(value, date) and policy.sees(value, key.prediction_time), (
                    table.qualified,
                    value,
                )
        if table.target_key:
            target = getattr(key, f"target_{table.target_key}")
            assert target is None or row[names.index(table.target_key)] != target


def _check_encounters_and_cultures(ep: Episode, present: set[str]) -> None:
    """No visible row names an admission / stay the episode does not see; one row per pending test."""
    for table in tables():
        if table.qualified not in present or table.visibility != "event":
            continue
        for column in table.column_names:
            found = ENCOUNTER_IDS.get((table.module, column)) or ENCOUNTER_IDS.get(("*", column))
            owner = found.table if found else None
            if owner is None or owner == table.qualified or owner not in present:
                continue
            orphans = ep.execute(
                f"SELECT DISTINCT {column} FROM {table.qualified} WHERE {column} IS NOT NULL "
                f"AND {column} NOT IN (SELECT {column} FROM {owner})",
                max_rows=10,
            ).rows
            assert not orphans, (table.qualified, column, orphans)
    if "hosp.microbiologyevents" in present:
        repeated = ep.execute(
            "SELECT micro_specimen_id, count(*) FROM hosp.microbiologyevents "
            "WHERE microevent_id IS NULL GROUP BY ALL HAVING count(*) > 1",
            max_rows=10,
        ).rows
        assert not repeated, repeated


def random_keys(store: Path, n: int, seed: int) -> list[EpisodeKey]:
    """``n`` keys: a random patient, a cutoff inside one of their admissions (or at one of their lab
    times, or at a midnight), alternating policies, sometimes with a target admission and linked studies."""
    rng = random.Random(seed)
    con = connect_store(store)
    try:
        admissions = con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM hosp.admissions WHERE dischtime > admittime ORDER BY ALL"
        ).fetchall()
        has_cxr = con.execute(
            "SELECT count(*) FROM clinseek_meta.table_info WHERE table_name = 'cxr.metadata'"
        ).fetchall()[0][0]
        keys = []
        for i in range(n):
            subject_id, hadm_id, admit, disch = rng.choice(admissions)
            cutoff = admit + (disch - admit) * rng.random()
            if i % 4 == 1:
                labs = con.execute(
                    "SELECT charttime FROM hosp.labevents WHERE subject_id = ? AND charttime IS NOT NULL",
                    [subject_id],
                ).fetchall()
                cutoff = rng.choice(labs)[0] if labs else cutoff
            elif i % 4 == 2:
                cutoff = datetime.combine(cutoff.date(), datetime.min.time()) + timedelta(days=1)
            policy = (TEXT_POLICY, MM_POLICY)[i % 2]
            studies: tuple[int, ...] = ()
            if has_cxr and policy == MM_POLICY:
                found = [
                    r[0]
                    for r in con.execute(
                        "SELECT DISTINCT study_id FROM cxr.metadata WHERE subject_id = ? ORDER BY 1",
                        [subject_id],
                    ).fetchall()
                ]
                studies = tuple(rng.sample(found, min(len(found), 2)))
            target = hadm_id if i % 3 == 0 else None
            keys.append(
                EpisodeKey(
                    subject_id,
                    cutoff.replace(microsecond=0),
                    policy,
                    target_hadm_id=target,
                    study_ids=studies,
                )
            )
        return keys
    finally:
        con.close()


def test_audit_on_the_crafted_store(small_store: Path) -> None:
    con = connect_store(small_store)
    try:
        with open_store_reader(small_store) as reader:
            for policy in (TEXT_POLICY, MM_POLICY):
                for cutoff in (T, datetime(2150, 1, 3)):
                    key = EpisodeKey(S, cutoff, policy, target_hadm_id=100, study_ids=(900, 901))
                    assert audit(small_store, key, reader, con) > 0
            for key in random_keys(small_store, 3, seed=1):
                audit(small_store, key, reader, con)
    finally:
        con.close()


@pytest.mark.parametrize("store_fixture", ["demo_store", "synthetic_store"])
def test_audit_on_real_stores(request: pytest.FixtureRequest, store_fixture: str) -> None:
    try:
        store = request.getfixturevalue(store_fixture)
    except ImportError as err:  # the store builder of another package has not landed yet
        pytest.skip(f"{store_fixture} unavailable: {err}")
    checked = audit_all(store, random_keys(store, PAIRS_PER_STORE, seed=11))
    assert checked > 0
