"""seqguard15: a store-wide guard for dense counters whose gaps would count hidden rows (the MIMIC-IV demo).

A per-patient (per-admission, per-stay, per-specimen) counter that is not in event-time order leaks: an episode
shows the rows known at the cutoff, so a gap between two visible values (or a visible minimum above the counter's
start) is the number of rows of the group charted after the cutoff (``hosp.emar.emar_seq`` follows storetime:
up to 230 hidden administrations of one patient counted at one cutoff; ``hosp.poe.poe_seq`` follows entry order:
up to 52 orders). The guard finds the counters itself (no fixed list): every integer column, and every text id
written ``<subject>-<n>``, that is unique and (nearly: the demo keeps ~87% of a patient's orders) dense within the
groups of a group key, and for each builds episodes at the cutoffs where the most hidden rows sit below a visible
value (both policies). Shown values pass when they are dense from the counter's start, or when no hidden row of
the store lies below the highest shown value of the group. Ids built from a counter must agree with the counter
in the same row, and every table carrying an id must agree with the table that owns it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import tables
from clinseek.store import connect_store, valid_row_instants

_GROUPS = ("subject_id", "hadm_id", "stay_id", "micro_specimen_id", "specimen_id")
_INT = {"INTEGER", "SMALLINT", "BIGINT", "TINYINT", "HUGEINT"}
_ID = "'^[0-9]+-[0-9]+$'"
_PROBES = 2  # worst cutoffs probed per counter (distinct groups)


@dataclass(frozen=True)
class Counter:
    table: str  # qualified
    column: str
    group: str  # group key column (for a "<subject>-<n>" id: subject_id, the id's prefix)
    text_id: bool
    start: int | None  # the value every group starts at in the store, when they all do
    probes: tuple[tuple[int, int, datetime, int], ...]  # (subject, group value, cutoff, hidden rows counted)

    @property
    def label(self) -> str:
        return f"{self.table}.{self.column}/{self.group}"

    def value_sql(self, alias: str = "t") -> str:
        c = f"{alias}.{self.column}"
        return f"CAST(split_part({c}, '-', 2) AS BIGINT)" if self.text_id else c


def _patient_tables() -> list[str]:
    return [t.qualified for t in tables() if t.is_patient_table and t.event_time is not None]


def _worst_cutoffs(values: np.ndarray, times: np.ndarray) -> list[tuple[int, float]]:
    """(hidden values below the highest visible value, last visible instant) at each cutoff that counts any."""
    order = np.lexsort((values, times))
    v, t = values[order], times[order]
    ranked = np.sort(v)
    top = np.maximum.accumulate(v)
    ends = np.nonzero(np.r_[t[1:] != t[:-1], True])[0]  # the last row of each block of equal instants
    counted = np.searchsorted(ranked, top[ends], side="left") - ends
    return [(int(n), float(t[k])) for n, k in zip(counted, ends, strict=True) if n > 0]


def _detect(store: Path) -> list[Counter]:
    con = connect_store(store)
    try:
        held = {f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()}
        present = {t.qualified for t in tables() if t.qualified in held}
        instants = valid_row_instants(con, present, counts_hold=True)
        found: list[Counter] = []
        scope: dict[tuple[str, str], tuple[float, int]] = {}  # (table, column): (share of repeats, index in found)
        for table in tables():
            if not table.is_patient_table or table.qualified not in present or table.event_time is None:
                continue
            stored = instants.get(table.qualified)
            if stored is not None and stored.event_time is not None:
                event = f't."{stored.event_time}"'
            elif table.event_time.parent is None:
                event = table.event_time.expr
            else:
                raise AssertionError(f"{table.qualified}: no stored event time")
            schema, name = table.qualified.split(".")
            cols = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND "
                                    "table_name = ? AND column_name NOT LIKE '\\_clinseek%' ESCAPE '\\'",
                                    [schema, name]).fetchall())
            for column, ty in cols.items():
                text_id = False
                if ty == "VARCHAR":
                    total, ids = con.execute(f"SELECT count({column}), count(*) FILTER (WHERE regexp_matches("
                                             f"{column}, {_ID})) FROM {table.qualified}").fetchall()[0]
                    if not total or ids != total:
                        continue
                    text_id = True
                elif ty not in _INT:
                    continue
                for group in _GROUPS:
                    if group not in cols or group == column or (text_id and group != "subject_id"):
                        continue
                    probe = Counter(table.qualified, column, group, text_id, None, ())
                    value = probe.value_sql()
                    gsql = f"CAST(split_part(t.{column}, '-', 1) AS BIGINT)" if text_id else f"t.{group}"
                    # a counter of rows (or of tests, of medications: a few rows each): a flag or a category repeats
                    rows = con.execute(
                        f"SELECT {gsql}, {value}, min(epoch({event})), any_value(t.subject_id), count(*) "
                        f"FROM {table.qualified} t WHERE {gsql} IS NOT NULL AND {value} IS NOT NULL GROUP BY ALL"
                    ).fetchall()
                    by_group: dict[int, list[tuple[int, float | None, int]]] = {}
                    repeats = 0
                    for g, v, t, subject, n in rows:
                        by_group.setdefault(g, []).append((v, t, subject))
                        repeats += n > 1
                    multi = [vs for vs in by_group.values() if len(vs) >= 3]
                    if len(multi) < 3 or (repeats > len(rows) // 2 and table.qualified not in _CARRIED_BY_PARENT):
                        continue
                    fills = sorted(len(vs) / (max(x[0] for x in vs) - min(x[0] for x in vs) + 1) for vs in multi)
                    if fills[len(fills) // 2] < 0.8 or max(len(vs) for vs in multi) < 5:
                        continue
                    starts = {min(x[0] for x in vs) for vs in by_group.values()}
                    worst: list[tuple[int, int, int, datetime]] = []
                    for g, vs in by_group.items():
                        timed = [x for x in vs if x[1] is not None]
                        if len(timed) < 2:
                            continue
                        cuts = _worst_cutoffs(np.array([x[0] for x in timed], dtype=np.int64),
                                              np.array([x[1] for x in timed], dtype=float))
                        if cuts:
                            n, at = max(cuts)
                            cutoff = datetime(1970, 1, 1) + timedelta(seconds=at) + timedelta(seconds=1)
                            worst.append((n, timed[0][2], g, cutoff))
                    worst.sort(key=lambda w: (-w[0], w[1], w[2]))
                    share = repeats / len(rows)
                    if (prior := scope.get((table.qualified, column))) is not None and prior[0] <= share:
                        continue  # the group where the values repeat least is the counter's scope (the coarsest)
                    scope[table.qualified, column] = (share, len(found))
                    found.append(Counter(table.qualified, column, group, text_id,
                                         next(iter(starts)) if len(starts) == 1 else None,
                                         tuple((s, g, c, n) for n, s, g, c in worst[:_PROBES])))
        keep = {i for _, i in scope.values()}
        return [c for i, c in enumerate(found) if i in keep]
    finally:
        con.close()


# detail tables whose counter column repeats over the rows of one parent row (one administration, one order)
_CARRIED_BY_PARENT = {"hosp.emar_detail", "hosp.poe_detail"}


@pytest.fixture(scope="module")
def counters(demo_store: Path) -> list[Counter]:
    return _detect(demo_store)


def test_the_detector_finds_the_known_counters(counters: list[Counter]) -> None:
    """The guard is not vacuous: the counters known in MIMIC-IV are found, the flags and global ids are not."""
    labels = {c.label for c in counters}
    for known in ("hosp.emar.emar_seq/subject_id", "hosp.emar.emar_id/subject_id", "hosp.poe.poe_seq/subject_id",
                  "hosp.poe.poe_id/subject_id", "hosp.diagnoses_icd.seq_num/hadm_id",
                  "hosp.procedures_icd.seq_num/hadm_id", "hosp.microbiologyevents.test_seq/micro_specimen_id",
                  "ed.pyxis.med_rn/stay_id", "ed.diagnosis.seq_num/stay_id",
                  "hosp.omr.seq_num/subject_id"):
        assert known in labels, known
    assert not {lab for lab in labels if lab.split("/")[0].rsplit(".", 1)[1] in
                ("isopenbag", "drg_severity", "hadm_id", "stay_id", "transfer_id", "orderid", "linkorderid")}
    assert any(c.probes for c in counters), "some counter must be out of event-time order in the demo"


def _cases() -> Iterator[object]:
    for table in _patient_tables():
        for policy in (TEXT_POLICY, MM_POLICY):
            yield pytest.param(table, policy, id=f"{table}-{policy}")


def _counted(store: Path, counter: Counter, group: int, shown: set[int]) -> int:
    """Hidden rows of the store's group the shown values count (below the highest; below the lowest only when
    every group starts at one known value)."""
    if not shown:
        return 0
    con = connect_store(store)
    try:
        gsql = f"CAST(split_part(t.{counter.column}, '-', 1) AS BIGINT)" if counter.text_id else f"t.{counter.group}"
        lo = min(shown) if counter.start is None else counter.start
        values = {v for (v,) in con.execute(
            f"SELECT DISTINCT {counter.value_sql()} FROM {counter.table} t WHERE {gsql} = ? "
            f"AND {counter.value_sql()} BETWEEN ? AND ?", [group, lo, max(shown)]).fetchall()}
    finally:
        con.close()
    return len(values - shown)


@pytest.mark.parametrize(("table", "policy"), list(_cases()))
def test_shown_counters_do_not_count_hidden_rows(demo_store: Path, demo_reader: StoreReader, counters: list[Counter],
                                                 table: str, policy: str) -> None:
    leaks: dict[str, list[tuple[int, str, int]]] = {}
    mine = [c for c in counters if c.table == table]
    shown: dict[tuple[str, int, datetime], set[int]] = {}
    for subject, cutoff in sorted({(s, c) for k in mine for s, _, c, _ in k.probes}):
        with build_episode(demo_reader, EpisodeKey(subject, cutoff, policy=policy)) as ep:  # one per probe
            for counter in mine:
                gsql = f"CAST(split_part(t.{counter.column}, '-', 1) AS BIGINT)" if counter.text_id \
                    else f"t.{counter.group}"
                for s, group, c, _ in counter.probes:
                    if (s, c) == (subject, cutoff):
                        rows = ep.execute(  # one row: execute cuts results at max_rows
                            f"SELECT coalesce(list(DISTINCT {counter.value_sql()}), []) FROM {table} t "
                            f"WHERE {gsql} = {group} AND t.{counter.column} IS NOT NULL").rows
                        shown[counter.label, group, cutoff] = set(rows[0][0])
    for counter in mine:
        for subject, group, cutoff, _ in counter.probes:
            values = shown[counter.label, group, cutoff]
            first = counter.start if counter.start is not None else min(values, default=0)
            dense = values == set(range(first, first + len(values)))
            if not dense and (n := _counted(demo_store, counter, group, values)):
                leaks.setdefault(counter.label, []).append((subject, cutoff.isoformat(), n))
    assert leaks == {}, "hidden rows counted by the gaps (subject, cutoff, hidden rows): " + repr(leaks)


# ids built from a counter: (table, id column, counter column in the same row)
_SAME_ROW = [
    ("hosp.emar", "emar_id", "emar_seq"),
    ("hosp.emar_detail", "emar_id", "emar_seq"),
    ("hosp.poe", "poe_id", "poe_seq"),
    ("hosp.poe_detail", "poe_id", "poe_seq"),
    ("hosp.prescriptions", "poe_id", "poe_seq"),
]
# A carrier row joined through the id to its owner row must pair the same two rows as in the store (renumbered or
# not): (carrier, its id column, owner, owner's id column, carrier columns, owner columns), none of them a counter.
_JOINS = [
    ("hosp.poe_detail", "poe_id", "hosp.poe", "poe_id", ("field_name", "field_value"),
     ("ordertime", "order_type", "order_subtype")),
    ("hosp.prescriptions", "poe_id", "hosp.poe", "poe_id", ("pharmacy_id", "starttime", "drug"),
     ("ordertime", "order_type", "order_subtype")),
    ("hosp.pharmacy", "poe_id", "hosp.poe", "poe_id", ("pharmacy_id", "medication"),
     ("ordertime", "order_type", "order_subtype")),
    ("hosp.emar", "poe_id", "hosp.poe", "poe_id", ("charttime", "medication", "event_txt", "pharmacy_id"),
     ("ordertime", "order_type", "order_subtype")),
    ("hosp.emar_detail", "emar_id", "hosp.emar", "emar_id",
     ("parent_field_ordinal", "administration_type", "dose_given", "product_code", "pharmacy_id"),
     ("charttime", "medication", "event_txt")),
    ("hosp.poe", "discontinue_of_poe_id", "hosp.poe", "poe_id", ("ordertime", "order_type"),
     ("ordertime", "order_type", "order_subtype")),
    ("hosp.poe", "discontinued_by_poe_id", "hosp.poe", "poe_id", ("ordertime", "order_type"),
     ("ordertime", "order_type", "order_subtype")),
]


def _pairs(carrier: str, cid: str, owner: str, oid: str, cc: tuple[str, ...], oc: tuple[str, ...],
           subject: int) -> str:
    cols = ", ".join([f"c.{c}" for c in cc] + [f"o.{c}" for c in oc])
    return (f"SELECT coalesce(list(({cols})), []) FROM {carrier} c JOIN {owner} o ON c.{cid} = o.{oid} "
            f"WHERE c.subject_id = {subject}")


def _unmatched(shown: set[tuple[object, ...]], stored: set[tuple[object, ...]]) -> int:
    """Shown pairs that are no stored pair (a value the policy hides, NULL, matches any)."""
    by_first: dict[tuple[int, object], list[tuple[object, ...]]] = {}
    for row in stored:
        for i, v in enumerate(row):
            by_first.setdefault((i, v), []).append(row)
    n = 0
    for row in shown - stored:
        known = [(i, v) for i, v in enumerate(row) if v is not None]
        candidates = by_first.get(known[0], []) if known else list(stored)
        n += not any(all(v == other[i] for i, v in known) for other in candidates)
    return n


_CARRIED = [  # every id a carrier shows is an id its owner shows
    ("hosp.emar_detail", "emar_id", "hosp.emar", "emar_id"),
    ("hosp.poe_detail", "poe_id", "hosp.poe", "poe_id"),
    ("hosp.prescriptions", "poe_id", "hosp.poe", "poe_id"),
    ("hosp.pharmacy", "poe_id", "hosp.poe", "poe_id"),
    ("hosp.emar", "poe_id", "hosp.poe", "poe_id"),
    ("hosp.poe", "discontinue_of_poe_id", "hosp.poe", "poe_id"),
    ("hosp.poe", "discontinued_by_poe_id", "hosp.poe", "poe_id"),
]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_ids_built_from_a_counter_agree_everywhere(demo_store: Path, demo_reader: StoreReader, counters: list[Counter],
                                                   policy: str) -> None:
    # the worst cutoff of each (emar's, poe's): where a renumbering has the most hidden rows to step over
    probes = sorted({k.probes[0][::2] for k in counters if k.table in ("hosp.emar", "hosp.poe") and k.probes})
    assert probes
    wrong: dict[str, list[tuple[int, str, int]]] = {}
    for subject, cutoff in probes:
        with build_episode(demo_reader, EpisodeKey(subject, cutoff, policy=policy)) as ep:
            checks = {
                f"{t}.{i}~{s}": f"SELECT count(*) FROM {t} WHERE {i} IS NOT NULL AND ({s} IS NULL OR "
                                f"{i} <> CAST(subject_id AS VARCHAR) || '-' || CAST({s} AS VARCHAR))"
                for t, i, s in _SAME_ROW
            }
            for carrier, column, owner, key in _CARRIED:
                checks[f"{carrier}.{column}~{owner}"] = (
                    f"SELECT count(DISTINCT c.{column}) FROM {carrier} c WHERE c.{column} IS NOT NULL AND c.{column} "
                    f"NOT IN (SELECT o.{key} FROM {owner} o WHERE o.{key} IS NOT NULL) AND split_part(c.{column}, "
                    f"'-', 1) = '{subject}'")
            counts = {name: ep.execute(sql).rows[0][0] for name, sql in checks.items()}
            joined = {j: [tuple(x.values()) if isinstance(x, dict) else tuple(x) for x in
                          ep.execute(_pairs(*j, subject)).rows[0][0]] for j in _JOINS}
        con = connect_store(demo_store)
        try:
            for j, shown in joined.items():
                stored = {tuple(x.values()) if isinstance(x, dict) else tuple(x)
                          for x in con.execute(_pairs(*j, subject)).fetchall()[0][0]}
                if n := _unmatched(set(shown), stored):
                    counts[f"{j[0]}.{j[1]}->{j[2]}"] = n
        finally:
            con.close()
        if any(counts.values()):
            con = connect_store(demo_store)  # an id of an order the store lacks altogether names nothing
            try:
                for carrier, column, owner, key in _CARRIED:
                    name = f"{carrier}.{column}~{owner}"
                    if counts.get(name):
                        with build_episode(demo_reader, EpisodeKey(subject, cutoff, policy=policy)) as ep:
                            ids = ep.execute(
                                f"SELECT coalesce(list(DISTINCT c.{column}), []) FROM {carrier} c WHERE c.{column} "
                                f"NOT IN (SELECT o.{key} FROM {owner} o WHERE o.{key} IS NOT NULL)").rows[0][0]
                        counts[name] = con.execute(f"SELECT count(*) FROM {owner} WHERE list_contains(?, {key})",
                                                   [ids]).fetchall()[0][0]
            finally:
                con.close()
        for name, n in counts.items():
            if n:
                wrong.setdefault(name, []).append((subject, cutoff.isoformat(), n))
    assert wrong == {}, "rows whose id disagrees (subject, cutoff, rows): " + repr(wrong)
