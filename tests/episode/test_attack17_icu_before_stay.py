"""attack17: ICU charting (MetaVision: icu.inputevents, ingredientevents, procedureevents, outputevents,
datetimeevents) belongs to one ICU stay, but a row timed before the stay's intime (a line placed on the floor, fluids
given in the ED or OR, documented once the patient reaches the ICU) was shown from its own time, its stay_id NULL
until the stay starts: such a row's presence told that the patient would be admitted to an ICU (every such row
belongs to a stay that has not started yet: 100 % precision).

Demo-wide (the store's rows): 259 rows of 37 of the 140 ICU stays are timed before their stay's intime, 226 of
them (36 stays) stored at or after the intime (not in the record before the stay started); of these stays, at intime
- 1 min 28 showed such a row, at intime - 30 min 10, at intime - 2 h 4 (earliest 23.8 h ahead). The other 33 rows
(4 stays) were stored before the intime: in the record from their storetime, they stay visible from it.

Case: 10026255 on the floor at 2201-07-10 00:00 (CCU stay 31248398 ended 2201-07-08 15:43; SICU stay 38229329 starts
2201-07-10 10:10:47). Before the fix the episode showed two procedureevents rows with stay_id NULL, '22 Gauge' and
'18 Gauge' (itemids 224274, 224277) started 2201-07-09 10:25 and stored at the SICU discharge 2201-07-11 13:48.

Fixed: a row of these tables timed before its ICU stay's intime is visible once it is in the record: its storetime,
or the stay's intime if earlier (``greatest(time, least(storetime, intime))``; a row inside the stay: its own time).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY

_TABLES = (("inputevents", "starttime"), ("ingredientevents", "starttime"), ("procedureevents", "starttime"),
           ("outputevents", "charttime"), ("datetimeevents", "charttime"))


def test_attack17_icu_rows_before_their_stay(demo_store: Path) -> None:
    rows = " UNION ALL ".join(f"SELECT stay_id, {time} AS e, storetime AS st FROM icu.{name}" for name, time in _TABLES)
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        found = con.execute(
            f"WITH r AS ({rows}) SELECT count(DISTINCT s.stay_id), count(*) FILTER (WHERE r.e < s.intime), "
            "count(DISTINCT s.stay_id) FILTER (WHERE r.e < s.intime), "
            "count(*) FILTER (WHERE r.e < s.intime AND r.st >= s.intime), "
            "count(DISTINCT s.stay_id) FILTER (WHERE r.e < s.intime AND r.st >= s.intime), "
            "count(DISTINCT s.stay_id) FILTER (WHERE r.e < s.intime - INTERVAL 1 MINUTE AND r.st >= s.intime), "
            "count(DISTINCT s.stay_id) FILTER (WHERE r.e < s.intime - INTERVAL 30 MINUTE AND r.st >= s.intime), "
            "count(DISTINCT s.stay_id) FILTER (WHERE r.e < s.intime - INTERVAL 2 HOUR AND r.st >= s.intime) "
            "FROM icu.icustays s LEFT JOIN r USING (stay_id)"
        ).fetchall()
    finally:
        con.close()
    assert found == [(140, 259, 37, 226, 36, 28, 10, 4)]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack17_no_icu_row_before_its_stay_starts(demo_reader: StoreReader, policy: str) -> None:
    with build_episode(demo_reader, EpisodeKey(10026255, datetime(2201, 7, 10, 0, 0), policy=policy)) as ep:
        assert ep.execute("SELECT stay_id FROM icustays").rows == [(31248398,)]
        for name, _ in _TABLES:
            # before the fix: procedureevents (NULL, 224274) and (NULL, 224277), started 2201-07-09 10:25
            assert ep.execute(f"SELECT stay_id, itemid FROM {name} WHERE stay_id IS NULL").rows == [], name
            assert ep.execute(f"SELECT count(*) FROM {name} WHERE stay_id <> 31248398").rows == [(0,)], name


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack17_the_rows_come_with_their_stay(demo_reader: StoreReader, policy: str) -> None:
    with build_episode(demo_reader, EpisodeKey(10026255, datetime(2201, 7, 10, 10, 11), policy=policy)) as ep:
        assert sorted(ep.execute("SELECT stay_id, itemid, starttime FROM procedureevents WHERE stay_id = 38229329").rows) == [
            (38229329, 224274, datetime(2201, 7, 9, 10, 25)), (38229329, 224277, datetime(2201, 7, 9, 10, 25)),
        ]
