"""Leakage audit by arithmetic: no visible value lets a hidden future time be computed.

At random cutoffs inside ICU stays and admissions, for every visible row of every table, every
visible number ``v`` (numeric columns and numeric text) is added to every visible date/time ``s``
of the same row in seconds, minutes, hours and days; ``s + v`` must not land on one of the
instants the cutoff hides from that patient (the end of an interval open at the cutoff — an ICU
or ED outtime, a dischtime, an infusion's or procedure's endtime, a prescription's stoptime —
and every other not-yet-known time of a visible row, such as a death or a store time).

Coincidences happen (a heart rate in minutes can land on a discharge; a round volume in hours
from a whole-hour start lands on the whole-hour grid that many MIMIC times share), so each
(table, column, unit) is compared with controls: the same column's values moved to rows far away
in time whose times lie on the same grid. A column that reconstructs hidden instants from its own
row far more often than from other rows computes the future. The same detector run on the raw rows (visible by event time, nothing masked) finds MIMIC-IV's
``procedureevents.originalamount`` (the duration in minutes: ``starttime + originalamount``
minutes is the hidden endtime, often the ICU outtime): the audit can see the leak it rules out.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from oracle import instants, raw_sql

from clinseek.episode import EpisodeKey, build_episode, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY, get_policy
from clinseek.schema import Table, tables
from clinseek.store import connect_store

UNITS_S = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}
CONTROLS = 3
"""Rotations of each column's values that give the control hit counts."""
TOLERANCE_S = 60.0
KEYS_PER_STORE = 14

Finding = tuple[str, str, str]
"""(table, numeric column, unit)."""


def _seconds(value: date | datetime) -> float:
    if not isinstance(value, datetime):
        value = datetime.combine(value, datetime.min.time())
    return (value - datetime(1970, 1, 1)).total_seconds()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            out = float(value.strip())
        except ValueError:
            return None
        return out if np.isfinite(out) else None
    return None


def raw_rows(con: Any) -> Callable[[Table, int], list[tuple[Any, ...]]]:
    """``(table, subject_id) -> `` the raw rows of :func:`oracle.raw_sql`, each query run once per table and
    subject (they do not depend on the cutoff: :func:`hidden_instants` and :func:`run_audit` read the same)."""
    cache: dict[tuple[str, int], list[tuple[Any, ...]]] = {}

    def rows(table: Table, subject_id: int) -> list[tuple[Any, ...]]:
        if (table.qualified, subject_id) not in cache:
            cache[table.qualified, subject_id] = con.execute(raw_sql(table), [subject_id]).fetchall()
        return cache[table.qualified, subject_id]

    return rows


def hidden_instants(
    con: Any, key: EpisodeKey, present: set[str], rows: Callable[[Table, int], list[tuple[Any, ...]]] | None = None
) -> np.ndarray:
    """Every instant the cutoff hides from this patient, as sorted epoch seconds.

    For each table: the rows whose event time is visible, and of those every date/time value and
    every class instant (``stored_at``, ``ends_at``, references, encounter starts) not yet known.
    ``rows``: where the raw rows come from (:func:`raw_rows`; by default ``con`` is asked).
    """
    policy = get_policy(key.policy)
    rows = rows or raw_rows(con)
    found: set[float] = set()
    for table in tables():
        if table.qualified not in present or table.visibility not in ("event", "static"):
            continue
        names = table.column_names
        for raw in rows(table, key.subject_id):
            parent, event = raw[len(names)], raw[len(names) + 1]
            if table.visibility == "event" and not (
                parent is not None and policy.sees(event, key.prediction_time)
            ):
                continue
            values = [v for c, v in zip(table.columns, raw, strict=False) if c.is_time] + list(
                raw[len(names) + 2 :]
            )
            for value in values:
                if isinstance(value, date) and not policy.sees(value, key.prediction_time):
                    found.add(_seconds(value))
                    if not isinstance(value, datetime):  # a date: the day's end is hidden too
                        found.add(_seconds(value) + 86400.0)
    return np.array(sorted(found), dtype=np.float64)


def _hits(sums: np.ndarray, hidden: np.ndarray) -> int:
    """How many distinct hidden instants lie within :data:`TOLERANCE_S` of one of ``sums``.

    Distinct instants, not sums: rows repeating one pair (the drugs of one order) or a comb of
    consecutive ids from one time count once.
    """
    if not len(hidden) or not len(sums):
        return 0
    idx = np.searchsorted(hidden, sums)
    last = len(hidden) - 1
    right, left = np.clip(idx, 0, last), np.clip(idx - 1, 0, last)
    found = set(right[np.abs(hidden[right] - sums) <= TOLERANCE_S].tolist())
    found |= set(left[np.abs(hidden[left] - sums) <= TOLERANCE_S].tolist())
    return len(found)


def tally(
    rows: Iterable[tuple[Any, ...]],
    table: Table,
    hidden: np.ndarray,
    counts: Counter[tuple[Finding, int]],
    known: Callable[[date], bool] = lambda _: True,
) -> None:
    """Add, per (column, unit), how many hidden instants some ``s + v`` of ``rows`` hits (key ``0``)
    and how many it hits with the column's values moved between rows (keys ``1..CONTROLS``).

    ``s`` ranges over the row's dates and times that are ``known`` (raw rows hold hidden ones too).
    """
    times = [i for i, c in enumerate(table.columns) if c.is_time]
    numbers = [i for i, c in enumerate(table.columns) if not c.is_time and c.type != "BOOLEAN"]
    pairs: dict[int, list[tuple[float, float]]] = {i: [] for i in numbers}
    for row in rows:
        stamps = [_seconds(row[i]) for i in times if isinstance(row[i], date) and known(row[i])]
        if not stamps:
            continue
        for i in numbers:
            v = _number(row[i])
            if v is not None and abs(v) < 1e7:
                pairs[i] += [(s, v) for s in stamps]
    for i, found in pairs.items():
        if not found:
            continue
        s, v = np.array(found).T
        moved = [_moved(s, v, n) for n in range(1, CONTROLS + 1)]
        for unit, scale in UNITS_S.items():
            finding = (table.qualified, table.columns[i].name, unit)
            counts[(finding, 0)] += _hits(s + v * scale, hidden)
            for n, w in enumerate(moved, start=1):
                counts[(finding, n)] += _hits(s + w * scale, hidden)


def _moved(s: np.ndarray, v: np.ndarray, n: int) -> np.ndarray:
    """``v`` moved to rows far away in time on the same grid (whole hour, whole minute, other): the
    ``n``-th control rotates each grid's values, in ``s`` order, by ``n / (CONTROLS + 1)`` of its rows.

    Far away, so that rows sharing a start (a line and a catheter placed together) never swap
    their durations; on the same grid, because many MIMIC times sit on the hour and many values are
    round, and whole-hour starts plus round values land on whole-hour instants whatever the row.
    """
    grid = (s % 3600 == 0).astype(int) + (s % 60 == 0).astype(int)
    out = v.copy()
    for g in np.unique(grid):
        idx = np.flatnonzero(grid == g)
        idx = idx[np.argsort(s[idx], kind="stable")]
        out[idx] = v[np.roll(idx, max(1, len(idx) * n // (CONTROLS + 1)))]
    return out


def leaks(counts: Counter[tuple[Finding, int]]) -> dict[Finding, tuple[int, int]]:
    """Findings whose own-row sums hit hidden instants far more often than their controls.

    Returns ``{finding: (hits, most control hits)}`` for hits >= 3 and > 2 x control + 3.
    """
    out = {}
    for (finding, n), hits in counts.items():
        if n != 0:
            continue
        control = max(counts[(finding, c)] for c in range(1, CONTROLS + 1))
        if hits >= 3 and hits > 2 * control + 3:
            out[finding] = (hits, control)
    return out


def audit_keys(store: Path, n: int, seed: int) -> list[EpisodeKey]:
    """``n`` keys with cutoffs inside ICU stays (two in three) or admissions, alternating policies."""
    rng = random.Random(seed)
    con = connect_store(store)
    try:
        stays = con.execute(
            "SELECT subject_id, intime, outtime FROM icu.icustays WHERE outtime > intime ORDER BY ALL"
        ).fetchall()
        admissions = con.execute(
            "SELECT subject_id, admittime, dischtime FROM hosp.admissions WHERE dischtime > admittime ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()
    keys = []
    for i in range(n):
        subject_id, start, end = rng.choice(stays if stays and i % 3 else admissions)
        cutoff = start + (end - start) * rng.uniform(0.05, 0.95)
        keys.append(
            EpisodeKey(subject_id, cutoff.replace(second=0, microsecond=0), (TEXT_POLICY, MM_POLICY)[i % 2])
        )
    return keys


def run_audit(
    store: Path, keys: list[EpisodeKey]
) -> tuple[dict[Finding, tuple[int, int]], dict[Finding, tuple[int, int]]]:
    """``(leaks in what episodes show, leaks in the raw rows visible by event time)`` over ``keys``."""
    shown: Counter[tuple[Finding, int]] = Counter()
    raw: Counter[tuple[Finding, int]] = Counter()
    con = connect_store(store)
    try:
        present = {r[0] for r in con.execute("SELECT table_name FROM clinseek_meta.table_info").fetchall()}
        rows_of = raw_rows(con)
        with open_store_reader(store) as reader:  # one reader for every episode, as a run builds them
            for key in keys:
                policy = get_policy(key.policy)
                hidden = hidden_instants(con, key, present, rows_of)
                _audit_key(reader, key, policy, present, hidden, rows_of, shown, raw)
    finally:
        con.close()
    return leaks(shown), leaks(raw)


def _audit_key(
    reader: Any, key: EpisodeKey, policy: Any, present: set[str], hidden: np.ndarray,
    rows_of: Callable[[Table, int], list[tuple[Any, ...]]],
    shown: Counter[tuple[Finding, int]], raw: Counter[tuple[Finding, int]],
) -> None:
    """Tally one key's episode rows into ``shown`` and its raw rows visible by event time into ``raw``."""
    with build_episode(reader, key) as ep:
        for table in tables():
            if table.qualified not in present or table.visibility not in ("event", "static"):
                continue
            got = ep.execute(f"SELECT * FROM {table.qualified}", max_rows=10**7)
            tally(got.rows, table, hidden, shown)
            n = len(table.columns)
            rows = [
                r[:n]
                for r in rows_of(table, key.subject_id)
                if table.visibility == "static"
                or (r[n] is not None and policy.sees(r[n + 1], key.prediction_time))
            ]
            tally(
                rows,
                table,
                hidden,
                raw,
                functools.partial(policy.sees, prediction_time=key.prediction_time),
            )


def test_the_oracle_names_every_class_instant() -> None:
    for table in tables():
        names = {n for n, _ in instants(table)}
        assert {f"ref:{c}" for c, _ in table.references} <= names
        assert {f"enc:{c.name}" for c in table.columns if c.known == "encounter"} <= names


def test_controls_separate_a_leak_from_coincidences() -> None:
    table = next(t for t in tables() if t.qualified == "icu.procedureevents")
    blank = dict.fromkeys(table.column_names)
    rows, ends = [], []
    for k in range(12):  # twelve procedures open at the cutoff; originalamount is each one's duration
        start, minutes = datetime(2150, 1, 1, 9, 0) - timedelta(minutes=37 * k), 180.0 + 53 * k
        ends.append(_seconds(start + timedelta(minutes=minutes)))
        rows.append(
            tuple({**blank, "starttime": start, "originalamount": minutes, "itemid": 225792}.values())
        )
    counts: Counter[tuple[Finding, int]] = Counter()
    tally(rows, table, np.array(sorted(ends)), counts)
    found = leaks(counts)
    assert found[("icu.procedureevents", "originalamount", "minute")][0] == 12
    assert ("icu.procedureevents", "itemid", "minute") not in found


@pytest.mark.slow
def test_no_visible_value_computes_a_hidden_time_on_the_mimic_demo(demo_store: Path) -> None:
    shown, raw = run_audit(demo_store, audit_keys(demo_store, KEYS_PER_STORE, seed=16))
    # the detector sees MIMIC's own leak in the unmasked rows: starttime + originalamount minutes
    assert ("icu.procedureevents", "originalamount", "minute") in raw, raw
    assert shown == {}, shown


def test_no_visible_value_computes_a_hidden_time_on_the_synthetic_store(synthetic_store: Path) -> None:
    shown, _ = run_audit(synthetic_store, audit_keys(synthetic_store, 8, seed=16))
    assert shown == {}, shown


def test_no_visible_value_computes_a_hidden_time_on_the_crafted_store(small_store: Path) -> None:
    from policy.crafted import S, T

    keys = [EpisodeKey(S, T, TEXT_POLICY), EpisodeKey(S, T - timedelta(hours=1), MM_POLICY)]
    shown, _ = run_audit(small_store, keys)
    assert shown == {}, shown
