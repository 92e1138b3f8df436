"""attack21: MIMIC-IV keeps provider orders (hosp.poe, and with them poe_detail) only for hospitalizations:
``poe.hadm_id`` is never NULL (0 of the demo's 45,154 orders), so the orders an ED physician places for a patient
who goes home are not in the data. The orders placed in the ED of a patient who is later admitted are, timed
before the admission's admittime (2,281 orders of 183 of the demo's 275 admissions, up to 19.4 h before, median
2.3 h), and were shown from their ordertime, their hadm_id NULL until the admission starts: during an ED stay,
any poe row ordered since the ED arrival said that the patient would be admitted (100 % precision).

Measured on the demo (every ED stay still open at the cutoff with no admission started): at ED intime + 1 h, 94 of
170 stays that lead to an admission showed such an order, 0 of 49 that do not; at intime + 2 h, 100 of 149 and 0
of 46 (the base rate of admission is 77 %). ED_Hospitalization's question is asked at intime + 1 s (1 of 171
admitted stays already showed one there: an order placed before the ED arrival), every decision task's cutoff
inside an ED stay saw it. Other tables kept for ED stays that end at home as well (labevents 20 of 46 vs 110 of
149 at intime + 2 h, microbiology 5 vs 61, ed.pyxis 6 vs 66, emar 7 vs 38) carry a clinical signal, not this one.

Case: 10001217's first admission 24597018 (admittime 2157-11-18 22:56) follows ED stay 39866888 (arrival
17:38). Before the fix, at 2157-11-18 18:38 the episode had no admission but four poe rows ordered at 18:09:14
(Lab, Lab, Radiology 'General Xray', General Care 'Other'), hadm_id NULL; at ED stay 39300221 (2157-11-29
19:28, discharged home) one hour in, no order of that stay exists. Order 10001217-177 ('ADT orders', its
poe_detail 'Admit to' = 'Surgery', 'Admit category' = 'Place in observation') was shown at 2157-12-18 13:46:10,
before admission 27703517's admittime 16:58 (DIRECT EMER.): the admission and where to, three hours early.

Fixed: a poe row is known no earlier than its admission's admittime (``greatest(ordertime, admittime)``), and
its details with it (poe_detail's inherited time).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY


def test_attack21_poe_is_kept_only_for_admissions(demo_store: Path) -> None:
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        found = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE p.hadm_id IS NULL), "
            "count(*) FILTER (WHERE p.ordertime < a.admittime), "
            "count(DISTINCT p.hadm_id) FILTER (WHERE p.ordertime < a.admittime), "
            "max(a.admittime - p.ordertime) FILTER (WHERE p.ordertime < a.admittime) "
            "FROM hosp.poe p LEFT JOIN hosp.admissions a USING (hadm_id)"
        ).fetchall()
    finally:
        con.close()
    assert found == [(45154, 0, 2281, 183, timedelta(hours=19, minutes=26, seconds=17))]


def _ed_stays(store: Path, after: timedelta) -> list[tuple[int, datetime, datetime, bool]]:
    """ED stays still open at intime + ``after`` with no admission started: (subject, ED intime, cutoff, admitted)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(
            "SELECT e.subject_id, e.intime, e.intime + $after, e.hadm_id IS NOT NULL FROM ed.edstays e "
            "LEFT JOIN hosp.admissions a USING (hadm_id) "
            "WHERE e.outtime > e.intime + $after AND (a.admittime IS NULL OR a.admittime >= e.intime + $after) "
            "ORDER BY e.subject_id, e.intime",
            {"after": after},
        ).fetchall()
    finally:
        con.close()


def test_attack21_no_ed_order_tells_of_the_admission(demo_store: Path, demo_reader: StoreReader) -> None:
    stays = _ed_stays(demo_store, timedelta(hours=1))
    assert (len(stays), sum(1 for s in stays if s[3])) == (219, 170)
    flagged = {True: 0, False: 0}
    for subject, intime, cutoff, admitted in stays:  # the module's reader for every episode, as a run builds them
        # the inventory only (what Curated Input reads): the event times of the visible orders
        with build_episode(demo_reader, EpisodeKey(subject, cutoff), queries=False) as ep:
            times = ep.event_times("hosp.poe")
        if times is not None and any(t >= intime for t in times.to_pylist()):
            flagged[admitted] += 1
    # before the fix: {True: 94, False: 0} (94 of 170 admitted stays, none of the 49 others)
    assert flagged == {True: 0, False: 0}


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack21_ed_orders_wait_for_the_admission(demo_reader: StoreReader, policy: str) -> None:
    with build_episode(demo_reader, EpisodeKey(10001217, datetime(2157, 11, 18, 18, 38), policy=policy)) as ep:
        assert ep.execute("SELECT count(*) FROM admissions").rows == [(0,)]
        # before the fix: four rows ordered 2157-11-18 18:09:14, hadm_id NULL (Lab, Lab, Radiology, General Care)
        assert ep.execute("SELECT poe_id, hadm_id, ordertime, order_type FROM poe").rows == []
    with build_episode(demo_reader, EpisodeKey(10001217, datetime(2157, 11, 18, 22, 57), policy=policy)) as ep:
        shown = ep.execute("SELECT poe_id, hadm_id, ordertime, order_type FROM poe ORDER BY poe_seq").rows
        assert shown[:4] == [
            ("10001217-1", 24597018, datetime(2157, 11, 18, 18, 9, 14), "Lab"),
            ("10001217-2", 24597018, datetime(2157, 11, 18, 18, 9, 14), "Lab"),
            ("10001217-3", 24597018, datetime(2157, 11, 18, 18, 9, 14), "Radiology"),
            ("10001217-4", 24597018, datetime(2157, 11, 18, 18, 9, 14), "General Care"),
        ]
        assert len(shown) == 8  # the eight orders placed in the ED, up to 22:10


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack21_admit_order_details_wait_for_the_admission(demo_reader: StoreReader, policy: str) -> None:
    counts = []
    for cutoff in (datetime(2157, 12, 18, 13, 46), datetime(2157, 12, 18, 14, 0)):
        with build_episode(demo_reader, EpisodeKey(10001217, cutoff, policy=policy)) as ep:
            # before the fix at 14:00: ADT orders 'Admit' at 13:46:10, hadm_id NULL
            assert ep.execute("SELECT count(*) FROM poe WHERE ordertime >= TIMESTAMP '2157-12-18'").rows == [(0,)]
            counts.append(ep.execute("SELECT count(*) FROM poe_detail").rows[0][0])
    # before the fix: two more at 14:00, 'Admit to' = 'Surgery' and 'Admit category' = 'Place in observation'
    assert counts[1] == counts[0]
    with build_episode(demo_reader, EpisodeKey(10001217, datetime(2157, 12, 18, 16, 59), policy=policy)) as ep:
        assert sorted(ep.execute(
            "SELECT d.field_name, d.field_value FROM poe_detail d JOIN poe p USING (poe_id) "
            "WHERE p.ordertime = TIMESTAMP '2157-12-18 13:46:10'"
        ).rows) == [("Admit category", "Place in observation"), ("Admit to", "Surgery")]

