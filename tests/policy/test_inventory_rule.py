"""The inventory (``Policy.visible_inventory_select``, read by ``StoreReader.survey``) counts exactly the rows a
visible select gives, and lists exactly their event times, for every table.

The inventory renders the collapse of pending microbiology results in another SQL shape than the visible
select's ``QUALIFY`` (a first row per pending group, no window); both come from the one rule of the policy.
Checked on a store whose pending results are adversarial (ids out of time order, NULL ids and group keys,
duplicate ids, resulted and pending rows of one group, results known only by their date), on the crafted
and synthetic stores and on two demo patients at cutoffs inside their cultures' pending windows.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from clinseek.episode import open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY, EpisodeKey, get_policy
from clinseek.schema import get_table
from duck_arrow import arrow

from .crafted import OPEN, ROWS, STUDY_AT_T, S, T, d, ts, write_store
from .test_statements_oracle import keys_of


def _micro(microevent_id: int | None, spec: int | None, test: int | None, chart: str, stored: str | None,
           *, storedate: str | None = None) -> dict[str, Any]:
    return dict(
        microevent_id=microevent_id, subject_id=S, hadm_id=OPEN, micro_specimen_id=spec,
        chartdate=d(chart[:5]), charttime=ts(chart), spec_type_desc="BLOOD CULTURE", test_itemid=test,
        test_name="Blood Culture", storetime=ts(stored) if stored else None,
        storedate=d(storedate) if storedate else (d(stored[:5]) if stored else None),
        org_name="E. COLI", ab_name="CEFTRIAXONE", interpretation="R",
    )


PENDING = [
    # one specimen and test: resulted at 06-09 (known at T), then three rows pending at T, ids out of time order
    _micro(10, 10, 7, "06-08 08:00", "06-09 08:00"),
    _micro(30, 10, 7, "06-08 09:00", "06-11 08:00"),
    _micro(20, 10, 7, "06-08 11:00", "06-11 08:00"),
    _micro(25, 10, 7, "06-08 10:00", "06-11 09:00"),
    # a NULL test, then a NULL id (ordered last) beside an id, and a NULL specimen and test
    _micro(31, 11, None, "06-09 07:00", "06-12 08:00"),
    _micro(32, 11, None, "06-09 06:00", "06-12 08:00"),
    _micro(None, 12, 8, "06-09 05:00", "06-12 08:00"),
    _micro(40, 12, 8, "06-09 08:00", "06-12 08:00"),
    _micro(41, None, None, "06-09 03:00", "06-12 08:00"),
    _micro(42, None, None, "06-09 04:00", "06-12 08:00"),
    # the same id twice among resulted rows (both stay), and results known only by their date
    _micro(50, 13, 9, "06-07 08:00", "06-08 08:00"),
    _micro(50, 13, 9, "06-07 09:00", "06-08 09:00"),
    _micro(60, 14, 9, "06-09 01:00", None, storedate="06-09"),
    _micro(61, 14, 9, "06-09 02:00", None, storedate="06-09"),
    _micro(62, 14, 9, "06-09 00:30", None, storedate="06-10"),
]


def _derived(
    con: duckdb.DuckDBPyConnection, key: EpisodeKey, name: str, present: frozenset[str], instants: Any = None
) -> tuple[int, Any]:
    """Rows and ascending event times of the table's visible select (``timeline_select``, unbounded)."""
    query = get_policy(key.policy).timeline_select(get_table(name), key, present=present, instants=instants)
    assert query is not None
    data = arrow(con, query[0], query[1])  # planned once (tests/duck_arrow.py)
    times = sorted(data.column("_event_time").to_pylist()) if "_event_time" in data.column_names else None
    return data.num_rows, times


def _check(store: Path, keys: list[EpisodeKey], only: str | None = None) -> int:
    """Every key's inventory (of ``only``, else of every table) equals what its visible selects give, with the
    store's row instants and without them (both the inventory and the selects); the visible rows compared."""
    seen = 0
    with open_store_reader(store) as reader, duckdb.connect(str(store), read_only=True) as con:
        stored = reader.instants
        assert stored, f"{store} keeps no row instants"
        for key in keys:
            for instants in (stored, {}):
                reader.instants = instants
                inventory, _ = reader.survey(get_policy(key.policy), key)
                for name, found in inventory.items():
                    if only is not None and name != only:
                        continue
                    rows, times = _derived(con, key, name, reader.present)
                    assert _derived(con, key, name, reader.present, stored) == (rows, times), (name, key)
                    assert found.rows == rows, (name, key, bool(instants))
                    if rows:  # no times for no rows
                        assert (None if found.times is None else found.times.to_pylist()) == times, (name, key)
                    seen += found.rows
    return seen


def test_pending_results_are_counted_as_the_visible_select_keeps_them(tmp_path: Path) -> None:
    rows = {**ROWS, "hosp.microbiologyevents": [*ROWS["hosp.microbiologyevents"], *PENDING]}
    store = write_store(tmp_path / "pending.duckdb", rows, "tests/policy/test_inventory_rule.py")
    keys = [EpisodeKey(S, cutoff) for cutoff in (ts("06-09 06:30"), T, ts("06-11 08:00"), T + timedelta(days=5))]
    keys.append(EpisodeKey(S, T, MM_POLICY))  # inclusive: a result stored at T is known
    assert _check(store, keys, "hosp.microbiologyevents") > 0
    with open_store_reader(store) as reader:  # the collapse did happen: fewer rows than the patient has at T
        micro = reader.survey(get_policy(TEXT_POLICY), EpisodeKey(S, T))[0]["hosp.microbiologyevents"].rows
    assert 0 < micro < sum(1 for r in rows["hosp.microbiologyevents"] if r["subject_id"] == S)


def test_crafted_and_synthetic_inventories_are_the_visible_selects(crafted_store: Path, synthetic_store: Path) -> None:
    crafted = [EpisodeKey(S, T), EpisodeKey(S, T, MM_POLICY, study_ids=(STUDY_AT_T,))]
    assert _check(crafted_store, crafted) > 0
    # the patient's admission midway, MM policy, that admission and an ED stay the target, a linked study
    assert _check(synthetic_store, list(keys_of(synthetic_store, 1, studies=True))[1:2]) > 0


@pytest.mark.slow
def test_demo_inventories_are_the_visible_selects_while_cultures_are_pending(demo_store: Path) -> None:
    with duckdb.connect(str(demo_store), read_only=True) as con:
        # the patient with the most cultures resulted a day or more after they were drawn, and the next one:
        # the cutoff midway through the first such culture
        found = con.execute(
            "SELECT subject_id, min(charttime + (storetime - charttime) / 2) FROM hosp.microbiologyevents "
            "WHERE storetime > charttime + INTERVAL 1 DAY GROUP BY subject_id ORDER BY count(*) DESC, subject_id LIMIT 2"
        ).fetchall()
    keys = [EpisodeKey(found[0][0], found[0][1]), EpisodeKey(found[1][0], found[1][1], MM_POLICY)]
    assert _check(demo_store, keys) > 0
