"""The policy's statements give exactly the rows and values of the pinned pre-change statements (``oracle_sql``).

On real stores (the MIMIC-IV demo, the crafted store, a synthetic store with notes and CXR), for several
patients and cutoffs (an admission's start + 1 s, inside it, its discharge + 1 s), with and without target
encounters, under both policies (MM with linked studies): every registry table's visible rows (with and
without precomputed encounter ids), its timeline (unbounded and windowed), the inventory and the future rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from clinseek.episode import StoreReader, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY, EpisodeKey, get_policy
from clinseek.schema import Table, class_masks, get_table, tables
from duck_arrow import arrow

from . import oracle_sql
from .crafted import OTHER, STUDY_AT_T, STUDY_PAST, S, T
from .oracle_renumber import renumber


def _sorted(result: pa.Table) -> pa.Table:
    columns = [c for c in result.column_names if not pa.types.is_list(result.schema.field(c).type)]
    return result.sort_by([(c, "ascending") for c in columns]) if columns else result


def _run(
    con: duckdb.DuckDBPyConnection, statement: tuple[str, list[Any]] | None,
    shown: Callable[[pa.Table], pa.Table] | None = None,
) -> pa.Table | None:
    if statement is None:
        return None
    rows = arrow(con, statement[0], statement[1])  # planned once (tests/duck_arrow.py)
    return _sorted(shown(rows) if shown else rows)


def _once(
    con: duckdb.DuckDBPyConnection, statement: tuple[str, list[Any]] | None,
    shown: Callable[[pa.Table], pa.Table] | None, results: dict[Any, pa.Table | None] | None,
) -> pa.Table | None:
    """:func:`_run`, or its result for the same statement already run for this key (``results``)."""
    if results is None or statement is None:
        return _run(con, statement, shown)
    ran = (statement[0], repr(statement[1]), shown is not None)
    if ran not in results:
        results[ran] = _run(con, statement, shown)
    return results[ran]


def _same(
    con: duckdb.DuckDBPyConnection, what: str, new: Any, old: Any, *, extra: tuple[str, ...] = (),
    shown: Callable[[pa.Table], pa.Table] | None = None, results: dict[Any, pa.Table | None] | None = None,
) -> int:
    """Same rows and values; ``extra``: columns the new statement adds (checked elsewhere), left out; ``shown``:
    what the episode shows of the oracle's rows (its renumbered counters, :mod:`.oracle_renumber`); ``results``:
    the statements already run for this store and key, by statement text and parameters (the passes with and
    without the stored instants compare with the same oracle statements, and many tables' statements do not
    read the instants: each distinct statement runs once)."""
    got, want = _once(con, new, None, results), _once(con, old, shown, results)
    if want is None or got is None:
        assert got is None and want is None, what
        return 0
    assert got.column_names == [*want.column_names, *extra], what
    got = got.select(want.column_names)
    assert got.schema == want.schema, what
    assert got.num_rows == want.num_rows, f"{what}: {got.num_rows} rows, the oracle {want.num_rows}"
    assert got.equals(want), f"{what}: values differ from the oracle's\n{got.to_pylist()}\n{want.to_pylist()}"
    return got.num_rows


def check_keys(store: Path, keys: Iterable[EpisodeKey]) -> int:
    """:func:`check_key` of every key, with one reader and one connection of ``store`` for them all."""
    with open_store_reader(store) as reader, duckdb.connect(str(store), read_only=True, config={"threads": 1}) as con:
        return sum(check_key(reader, con, key) for key in keys)


def check_key(reader: StoreReader, con: duckdb.DuckDBPyConnection, key: EpisodeKey) -> int:
    """Compare every statement of ``key`` on the reader's store (read through ``con``) with the oracle's, with the
    store's row instants and without them (a store without the instant columns gets the latter); the number of
    rows compared."""
    policy = get_policy(key.policy)
    present = reader.present
    encounters = reader.encounters(policy, key)
    stored = reader.instants
    assert stored, f"{reader} keeps no row instants"  # every store of these tests is written by the index writer
    compared = 0
    results: dict[Any, pa.Table | None] = {}  # each distinct statement of this key runs once, in either pass
    for instants in (stored, None):
        compared += _check_key(con, key, present, encounters, instants, results)
    return compared


def _check_key(
    con: duckdb.DuckDBPyConnection, key: EpisodeKey, present: frozenset[str], encounters: dict[str, list[int]],
    instants: Any, results: dict[Any, pa.Table | None],
) -> int:
    policy = get_policy(key.policy)
    op, linked = policy.operator, policy.cxr_linked_only
    compared = 0
    numbers: dict[Any, Any] = {}
    for table in tables():
        if table.visibility == "dictionary":  # whole, whatever the key: the same statement
            assert policy.visible_select(table, key, present=present) == oracle_sql.visible_sql(
                table, key, op=op, linked_only=linked, present=present
            )
            continue
        if table.qualified not in present:
            continue

        def shown(rows: pa.Table, table: Any = table) -> pa.Table:
            return renumber(con, table, key, rows, op=op, linked_only=linked, present=present, cache=numbers)

        for enc in (None, encounters):
            what = f"{table.qualified} {key} encounters={enc is not None} instants={instants is not None}"
            new = policy.visible_select(table, key, present=present, encounters=enc, instants=instants)
            old = oracle_sql.visible_sql(table, key, op=op, linked_only=linked, present=present, encounters=enc)
            compared += _same(con, what, new, old, shown=shown, results=results)
        for since, until in ((None, None), (key.prediction_time - timedelta(days=3), key.prediction_time)):
            new = policy.timeline_select(
                table, key, present=present, encounters=encounters, since=since, until=until,
                instants=instants,
            )
            old = oracle_sql.timeline_sql(
                table, key, op=op, linked_only=linked, present=present, encounters=encounters,
                since=since, until=until,
            )
            _same(
                con, f"timeline {table.qualified} {key} since={since} instants={instants is not None}", new, old,
                shown=shown, results=results,
            )
        if instants is not None:
            continue  # the future rows do not read the instants: checked in the pass without them
        new = policy.future_select(table, key, present=present)
        old = oracle_sql.future_sql(table, key, op=op, present=present)
        _same(con, f"future {table.qualified} {key}", new, old, results=results)
    new = policy.visible_inventory_select(key, present=present, instants=instants)
    old = oracle_sql.visible_inventory_sql(tables(), key, op=op, linked_only=linked, present=present)
    # the inventory's encounter ids (a column added after the oracle) are checked against
    # Policy.encounter_selects in tests/episode/test_event_index.py
    _same(con, f"inventory {key} instants={instants is not None}", new, old, extra=("encounter_ids",), results=results)
    return compared


def keys_of(store: Path, patients: int, *, studies: bool = False) -> Iterator[EpisodeKey]:
    """Per patient (those with the most rows in the tables whose masks read other tables first): cutoffs at
    an admission's start + 1 s, midway, and its discharge + 1 s; the middle one targets that admission (and
    an ED stay where there is one), under the MM policy with the patient's first linked study and image."""
    with duckdb.connect(str(store), read_only=True) as con:
        subjects = [row[0] for row in con.execute(
            "SELECT subject_id FROM hosp.admissions GROUP BY subject_id "
            "ORDER BY (SELECT count(*) FROM hosp.emar e WHERE e.subject_id = admissions.subject_id) DESC, "
            "count(*) DESC, subject_id LIMIT $1", [patients]
        ).fetchall()]
        for subject in subjects:
            hadm, admit, disch = con.execute(
                "SELECT hadm_id, admittime, dischtime FROM hosp.admissions WHERE subject_id = $1 "
                "ORDER BY admittime DESC LIMIT 1", [subject]
            ).fetchone()
            stay = con.execute(
                "SELECT min(stay_id) FROM ed.edstays WHERE subject_id = $1", [subject]
            ).fetchone()[0] if _has(con, "ed.edstays") else None
            study, dicom = (None, None)
            if studies and _has(con, "cxr.metadata"):
                found = con.execute(
                    "SELECT study_id, dicom_id FROM cxr.metadata WHERE subject_id = $1 ORDER BY study_id LIMIT 1",
                    [subject],
                ).fetchone()
                study, dicom = found if found is not None else (None, None)
            second = timedelta(seconds=1)
            yield EpisodeKey(subject, admit + second)
            yield EpisodeKey(
                subject, admit + (disch - admit) / 2, MM_POLICY, target_hadm_id=hadm, target_stay_id=stay,
                study_ids=(study,) if study is not None else (), dicom_ids=(dicom,) if dicom is not None else (),
            )
            yield EpisodeKey(subject, disch + second, TEXT_POLICY, target_hadm_id=hadm)


def _has(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    schema, table = name.split(".")
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2", [schema, table]
    ).fetchone()
    return bool(found and found[0])


def test_crafted_store_statements_match_the_oracle(crafted_store: Path) -> None:
    keys = [EpisodeKey(S, T), EpisodeKey(S, T, MM_POLICY, study_ids=(STUDY_AT_T,))]
    assert check_keys(crafted_store, keys) > 0


@pytest.mark.slow
def test_crafted_store_statements_match_the_oracle_at_more_cutoffs(crafted_store: Path) -> None:
    keys = [
        EpisodeKey(S, T, MM_POLICY, study_ids=(STUDY_PAST, STUDY_AT_T), hide_cxr_reports=True),
        EpisodeKey(S, T - timedelta(days=30)),
        EpisodeKey(S, datetime(2150, 6, 20)),
        EpisodeKey(OTHER, T),
        *keys_of(crafted_store, 1),
    ]
    assert check_keys(crafted_store, keys) > 0


@pytest.mark.slow
def test_synthetic_store_statements_match_the_oracle(synthetic_store: Path) -> None:
    keys = list(keys_of(synthetic_store, 1, studies=True))
    assert check_keys(synthetic_store, keys) > 0


@pytest.mark.slow
@pytest.mark.parametrize("patient", [0, 1])
def test_demo_store_statements_match_the_oracle(demo_store: Path, patient: int) -> None:
    # the two demo patients with the most emar rows (the tables whose masks read other tables): 6 keys, all
    # tables; a third patient added ~8 s of CI time and no statement shape the first two lack
    keys = list(keys_of(demo_store, 2))[3 * patient: 3 * patient + 3]
    assert check_keys(demo_store, keys) > 0


OTHER_INSTANTS = [
    # another table's rows by key, with a condition of their own (a grouped join with that WHERE)
    "(SELECT max(d.ordertime) FROM hosp.poe d WHERE d.poe_id = t.discontinued_by_poe_id AND d.order_type <> 'X')",
    # two keys, one of another table
    "(SELECT min(a.admittime) FROM hosp.admissions a WHERE a.hadm_id = t.hadm_id AND a.subject_id = t.subject_id)",
    # a subquery inside a CASE, as the note detail tables' addendum instant was before notes16
    "CASE WHEN t.order_type = 'ADT orders' THEN (SELECT min(d.ordertime) FROM hosp.poe d WHERE d.poe_id = "
    "t.poe_id) ELSE TIMESTAMP '-infinity' END",
    # a key of another name
    "(SELECT min(a.admittime) FROM hosp.admissions a WHERE a.hadm_id = t.poe_seq)",
    # shapes the grouped join does not take: kept as a subquery (uncorrelated, an expression key, keys of
    # another type, an aggregate other than min/max, an unqualified column)
    "(SELECT min(a.admittime) FROM hosp.admissions a)",
    "(SELECT min(d.ordertime) FROM hosp.poe d WHERE lower(d.poe_id) = lower(t.discontinued_by_poe_id))",
    "(SELECT min(a.admittime) FROM hosp.admissions a WHERE a.hospital_expire_flag = t.poe_seq)",
    "(SELECT min(d.ordertime) + to_days(CAST(count(*) AS INTEGER)) FROM hosp.poe d WHERE d.poe_id = t.poe_id)",
    "(SELECT min(ordertime) FROM hosp.poe d WHERE d.poe_id = t.discontinued_by_poe_id)",
]


def _poe_naming_by_reference(instant: str) -> Table:
    """``hosp.poe`` as it was before its counters were renumbered (session 15): ``discontinued_by_poe_id`` a
    ``reference`` column known at ``instant``, the other counter columns plain ``event`` ones."""
    poe = get_table("hosp.poe")
    columns = tuple(
        replace(c, known="reference" if c.name == "discontinued_by_poe_id" else "event") if c.known == "sequence" else c
        for c in poe.columns
    )
    bare = replace(poe, columns=columns, renumbered=(), references=(("discontinued_by_poe_id", instant),), masks=())
    return replace(bare, masks=class_masks(bare))


@pytest.mark.parametrize("instant", OTHER_INSTANTS)
def test_other_mask_instants_match_the_oracle(crafted_store: Path, instant: str) -> None:
    """Registry masks whose instants read other tables in other shapes: the same rows and values as the oracle's
    correlated subqueries (with or without precomputed encounter ids, both policies)."""
    table = _poe_naming_by_reference(instant)
    with open_store_reader(crafted_store) as reader:
        present, stored = reader.present, reader.instants
    with duckdb.connect(str(crafted_store), read_only=True, config={"threads": 1}) as con:
        for key in (EpisodeKey(S, T), EpisodeKey(S, T, MM_POLICY), EpisodeKey(S, datetime(2150, 6, 20))):
            policy = get_policy(key.policy)
            old = oracle_sql.visible_sql(
                table, key, op=policy.operator, linked_only=policy.cxr_linked_only, present=present
            )
            for instants in (None, stored):  # the registry's other instants stored, this one computed
                new = policy.visible_select(table, key, present=present, instants=instants)
                _same(con, f"{instant} {key}", new, old)
