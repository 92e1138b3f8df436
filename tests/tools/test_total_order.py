"""The record tools' rows in one total order, whatever path read the table and whatever order a store holds them in.

Rows tied on a table's ``ORDER BY`` (event time, sort columns, registry key) are common: a key that repeats
(``hosp.prescriptions``) or none at all (``icu.chartevents``, ``datetimeevents``, ``ingredientevents``,
``outputevents``, ``ed.medrecon``, ``ed.pyxis``). Two crafted stores hold the same rows in opposite physical
orders; every record tool, at several row caps that cut a run of ties, must give the same outcome on an episode
that reads the store (one statement) and on one that loaded the table, on both stores, and the rows shown under a
cap must be the first rows shown without one.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _tool_cases import tool_outcome

from clinseek.episode import Episode, EpisodeKey, build_episode, open_store_reader
from clinseek.policy import TEXT_POLICY
from clinseek.tools import Limits, ToolContext
from policy.crafted import ED_OPEN, ICU_OPEN, OPEN, ROWS, S, T, write_store

TIE = T - dt.timedelta(minutes=30)
"""The one event time of every tied row (after each table's other visible rows of the crafted store)."""

N = 12
NAN = float("nan")


def _tied(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    """:data:`N` rows per table at :data:`TIE`, other values drawn from small pools: some rows differ in one
    column only, some are equal in every column, NULLs and NaNs among them."""
    stored = TIE + dt.timedelta(minutes=5)

    def pick(*values: Any) -> Any:
        return rng.choice(values)

    icu = dict(subject_id=S, hadm_id=OPEN, stay_id=ICU_OPEN)
    ed = dict(subject_id=S, stay_id=ED_OPEN)
    make = {
        "hosp.prescriptions": lambda: dict(
            subject_id=S, hadm_id=OPEN, pharmacy_id=7, starttime=TIE, drug_type="MAIN", drug=pick("A", "B"),
            route=pick("IV", "PO", None), dose_val_rx=pick("1", "2", None), doses_per_24_hrs=pick(1.0, NAN, None)),
        "icu.chartevents": lambda: dict(
            **icu, charttime=TIE, storetime=stored, itemid=pick(220045, 220046), value=pick("1", "2", None),
            valuenum=pick(1.0, 2.0, NAN, None), valueuom=pick("bpm", None)),
        "icu.datetimeevents": lambda: dict(
            **icu, charttime=TIE, storetime=stored, itemid=pick(225754, 225755),
            value=pick(TIE - dt.timedelta(hours=1), TIE - dt.timedelta(hours=2), None), valueuom="Date and Time"),
        "icu.ingredientevents": lambda: dict(
            **icu, starttime=TIE, endtime=TIE + dt.timedelta(minutes=10), storetime=stored, itemid=220490,
            amount=pick(1.0, 2.0, NAN), orderid=pick(1, 2), statusdescription=pick("FinishedRunning", None)),
        "icu.outputevents": lambda: dict(
            **icu, charttime=TIE, storetime=stored, itemid=pick(226559, 226560), value=pick(30.0, 40.0, NAN, None),
            valueuom="ml"),
        "ed.medrecon": lambda: dict(**ed, charttime=TIE, name=pick("Metformin", "Aspirin", None), gsn=pick("1", "2")),
        "ed.pyxis": lambda: dict(**ed, charttime=TIE, med_rn=pick(1, 2), name=pick("Acetaminophen", "Ibuprofen"),
                                 gsn_rn=pick(1, None)),
    }
    tied = {name: [row() for _ in range(N)] for name, row in make.items()}
    # the prescriptions' pharmacy order, entered before they start (a prescription is shown once both passed)
    tied["hosp.pharmacy"] = [dict(subject_id=S, hadm_id=OPEN, pharmacy_id=7, starttime=TIE, medication="A",
                                  entertime=TIE - dt.timedelta(minutes=10))]
    return tied


TABLES = ("hosp.prescriptions", "icu.chartevents", "icu.datetimeevents", "icu.ingredientevents",
          "icu.outputevents", "ed.medrecon", "ed.pyxis")
CAPS = (1, 2, 3, 5, 8)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The crafted store with :func:`_tied`'s rows, twice: the rows in one order, then reversed."""
    tied = _tied(random.Random(22))
    out = []
    for i in range(2):
        rows = {name: list(found) for name, found in ROWS.items()}
        for name, extra in tied.items():
            both = [*rows.get(name, []), *extra]
            rows[name] = both[::-1] if i else both
        path = tmp_path_factory.mktemp("ties") / f"ties{i}.duckdb"
        out.append(write_store(path, rows, "tests/tools/test_total_order.py"))
    return out[0], out[1]


@pytest.fixture(scope="module")
def episodes(stores: tuple[Path, Path]) -> Iterator[list[Episode]]:
    """Per store: an episode that never loads a table, one with every table of :data:`TABLES` loaded."""
    with open_store_reader(stores[0]) as a, open_store_reader(stores[1]) as b:
        eps = [build_episode(r, EpisodeKey(S, T, TEXT_POLICY)) for r in (a, a, b, b)]
        try:
            for warm in (eps[1], eps[3]):
                warm.execute("SELECT 1", tables=TABLES)
            yield eps
        finally:
            for ep in eps:
                ep.close()


def _calls(table: str) -> list[tuple[str, dict[str, str]]]:
    bare = table.split(".")[1]
    return [
        ("ehr.get_records_by_time", {"table_name": bare, "start_time": "2150-01-01", "end_time": "2151-01-01"}),
        ("ehr.get_latest_records", {"table_name": bare}),
        ("ehr.get_records_by_keyword", {"table_name": bare, "keyword": str(S)}),  # subject_id: every row
        ("ehr.get_records_by_value", {"table_name": bare, "column_name": "subject_id", "value": str(S)}),
    ]


@pytest.mark.parametrize("table", TABLES)
def test_rows_tied_on_the_order_are_cut_and_shown_alike_on_every_path(episodes: list[Episode], table: str) -> None:
    """Every record tool, every cap: the store read and the loaded copy of both stores give the same text and data
    (NaN compared by its text), and the rows under a cap are the first rows of the uncapped result."""
    for name, args in _calls(table):
        whole = tool_outcome(ToolContext(episodes[0], Limits(max_rows=100)), name, args)
        assert whole[0] is True, (name, args, whole)
        assert len(whole[2]["rows"]) >= N, (name, args)  # the tied rows are all there
        for cap in CAPS:
            got = [repr(tool_outcome(ToolContext(ep, Limits(max_rows=cap)), name, args)) for ep in episodes]
            assert len(set(got)) == 1, (name, args, cap)
            rows = tool_outcome(ToolContext(episodes[2], Limits(max_rows=cap)), name, args)[2]["rows"]
            assert repr(rows) == repr(whole[2]["rows"][:cap]), (name, args, cap)
    assert not {"icu.chartevents", "hosp.prescriptions"} & _loaded(episodes[0])


def test_the_order_is_the_same_on_every_thread(episodes: list[Episode]) -> None:
    """The same calls from 4 threads at once (each reads the store on its own cursor): the same outcomes."""
    calls = [(name, args) for table in TABLES for name, args in _calls(table)]

    def run(_: int) -> list[str]:
        return [repr(tool_outcome(ToolContext(episodes[2], Limits(max_rows=3)), n, a)) for n, a in calls]

    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(run, range(8)))
    assert all(out == outs[0] for out in outs)
    assert outs[0] == [repr(tool_outcome(ToolContext(episodes[1], Limits(max_rows=3)), n, a)) for n, a in calls]


def _loaded(ep: Episode) -> set[str]:
    rows = ep.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables()", tables=(), max_rows=1000).rows
    return {r[0] for r in rows}
