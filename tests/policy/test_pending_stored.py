"""What a pending result's mask decides across rows, kept by the store at ingest: the renumbered row id
(``labevent_id``, ``microevent_id``) and when the collapse of pending rows keeps each row.

The id is numbered by (the instant the row is shown, original id) (``clinseek.schema.shown_at``), so the rows shown
with an id at any cutoff are a prefix of that order: the number a row shows is the same at every cutoff, counts only
rows shown with it, and the store keeps it (``_clinseek_renumber_*``); the collapse's kept rows as the instant from
which each row is kept (``_clinseek_kept_from``; the intervals' bounds for a group of several event times,
``_clinseek_kept_list``: ``tests/policy/test_collapse_index.py``'s adversarial store). Checked on the demo against the
per-statement windows (what PostgreSQL and older stores run) at cutoffs around each sampled row's specimen and result
times, both policies (exclusive and inclusive cutoff): the same rows and values, ids dense ``1..n``, and a row keeps
its number from cutoff to cutoff.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from clinseek.episode import open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY, EpisodeKey, get_policy
from clinseek.schema import get_table

from .crafted import ts, write_store

TABLES = [("hosp.labevents", "labevent_id"), ("hosp.microbiologyevents", "microevent_id")]


def _cutoffs(con: duckdb.DuckDBPyConnection, name: str, n: int) -> Iterator[tuple[int, Any]]:
    """Per sampled row: its specimen time, a second after it, its result time and a second after it."""
    found = con.execute(
        f"SELECT subject_id, charttime, storetime FROM {name} WHERE charttime IS NOT NULL ORDER BY ALL"
    ).fetchall()
    second = timedelta(seconds=1)
    for subject, charttime, storetime in random.Random(18).sample(found, n):
        for cutoff in (charttime, charttime + second, storetime or charttime, (storetime or charttime) + second):
            yield subject, cutoff


@pytest.mark.parametrize(("name", "id_column"), TABLES)
def test_the_stored_number_is_the_windows_at_every_cutoff(demo_store: Path, name: str, id_column: str) -> None:
    table = get_table(name)
    with open_store_reader(demo_store) as reader:
        present, stored = reader.present, reader.instants
    assert stored[name].renumbers == {id_column: stored[name].renumbers[id_column]}, "the store keeps the number"
    assert stored[name].kept is not None, "the store keeps the collapse"
    windowed = {**stored, name: dataclasses.replace(stored[name], renumbers={}, kept=None)}
    at = table.column_names.index(id_column)
    numbers: dict[tuple[Any, ...], int] = {}  # a resulted row (its other values) -> its number
    checked = 0
    with duckdb.connect(str(demo_store), read_only=True) as con:
        for subject, cutoff in _cutoffs(con, name, 15):
            for version in (TEXT_POLICY, MM_POLICY):
                key = EpisodeKey(subject, cutoff, version)
                policy = get_policy(version)
                got = con.execute(*policy.visible_select(table, key, present=present, instants=stored)).fetchall()
                want = con.execute(*policy.visible_select(table, key, present=present, instants=windowed)).fetchall()
                assert sorted(map(repr, got)) == sorted(map(repr, want)), (name, key)
                ids = sorted(row[at] for row in got if row[at] is not None)
                assert ids == list(range(1, len(ids) + 1)), (name, key, ids)
                for row in got:
                    if row[at] is not None:
                        rest = row[:at] + row[at + 1:]
                        assert numbers.setdefault(rest, row[at]) == row[at], (name, key, rest)
                checked += len(ids)
    assert checked > 500


def _micro(ident: int | None, spec_type: str, stored: str) -> dict[str, Any]:
    return dict(microevent_id=ident, subject_id=1, micro_specimen_id=1, chartdate=ts("06-01 00:00").date(),
                charttime=ts("06-01 00:00"), spec_type_desc=spec_type, storetime=ts(stored),
                storedate=ts(stored).date(), test_name="Blood Culture", org_name="E. COLI")


def _lab(ident: int | None, priority: str, chart: str, stored: str) -> dict[str, Any]:
    return dict(labevent_id=ident, subject_id=1, specimen_id=1, itemid=50912, charttime=ts(chart),
                storetime=ts(stored), value="1.0", priority=priority)


@pytest.mark.parametrize("ident", [7, None])
def test_a_tie_on_the_id_is_not_broken_by_the_future_result(tmp_path: Path, ident: int | None) -> None:
    """attack18: two pending rows of one specimen tied on the id (duplicated, or NULL) and the specimen time, results
    after the cutoff: which row is shown (its visible columns) must not depend on which result comes first. Two
    stores equal up to the cutoff but for the order of the future results show the same row, stored and windowed
    (labs: a specimen with a second specimen time, so its kept intervals come from the Python path)."""
    shown: dict[tuple[str, str, str], list[list[Any]]] = {}
    for swap in (False, True):
        first, second = ("06-03 00:00", "06-05 00:00") if swap else ("06-05 00:00", "06-03 00:00")
        store = write_store(tmp_path / f"tie{swap}.duckdb", {
            "hosp.microbiologyevents": [_micro(ident, "BLOOD", first), _micro(ident, "URINE", second)],
            "hosp.labevents": [_lab(ident, "STAT", "06-01 00:00", first), _lab(ident, "ROUTINE", "06-01 00:00", second),
                               _lab(50, "STAT", "06-06 00:00", "06-07 00:00")],
        }, "tests/policy/test_pending_stored.py")
        with open_store_reader(store) as reader, duckdb.connect(str(store), read_only=True) as con:
            for name, column in (("hosp.microbiologyevents", "spec_type_desc"), ("hosp.labevents", "priority")):
                table = get_table(name)
                at = table.column_names.index(column)
                windowed = {**reader.instants, name: dataclasses.replace(reader.instants[name], renumbers={}, kept=None)}
                for version in (TEXT_POLICY, MM_POLICY):
                    key = EpisodeKey(1, ts("06-02 00:00"), version)
                    for path, instants in (("stored", reader.instants), ("window", windowed)):
                        select = get_policy(version).visible_select(table, key, present=reader.present, instants=instants)
                        got = sorted(row[at] for row in con.execute(*select).fetchall())
                        shown.setdefault((name, version, path), []).append(got)
    for (name, version, path), (one, other) in shown.items():
        assert one == other and len(one) == 1, (name, version, path, one, other)
    assert {tuple(v[0]) for k, v in shown.items() if k[0] == "hosp.labevents"} == {("STAT",)}
