"""attack21: pharmacy and prescriptions, like provider orders (test_attack21_poe_before_admission.py), are kept only
for hospitalizations (hadm_id never NULL: 0 of 15,306 and 18,087 demo rows), so a row shown before its admission's
admittime, its hadm_id masked to NULL, told that an admission was coming.

One Heparin order of 10004235 (pharmacy_id 92842282, poe 10004235-516) belongs to admission 22187210 (DIRECT EMER.,
admittime 2196-06-20 21:11) but started 2196-06-14 09:00 (entered 06:17:25), inside the previous admission 25970245
(2196-06-14 08:30 to 06-19 14:54). Before the fix it was shown from 06-14 09:00 with its hadm_id NULL, the only such
pharmacy or prescription row of the demo: at the Readmission_30day question of 25970245 (2196-06-19 14:54:01, label
yes; also Readmission_60day) the NULL said that another admission was coming (1 question of 260, 100 % precision).

Fixed as poe: a pharmacy order (and its prescriptions) is known no earlier than its admission's admittime.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY


def test_attack21_pharmacy_rows_before_their_admission(demo_store: Path) -> None:
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        found = con.execute(
            "SELECT p.subject_id, p.pharmacy_id, p.hadm_id, p.medication, a.admittime FROM hosp.pharmacy p "
            "JOIN hosp.admissions a USING (hadm_id) WHERE greatest(p.starttime, p.entertime) < a.admittime"
        ).fetchall()
        nulls = con.execute(
            "SELECT (SELECT count(*) FROM hosp.pharmacy WHERE hadm_id IS NULL), "
            "(SELECT count(*) FROM hosp.prescriptions WHERE hadm_id IS NULL)"
        ).fetchall()
    finally:
        con.close()
    assert found == [(10004235, 92842282, 22187210, "Heparin", datetime(2196, 6, 20, 21, 11))]
    assert nulls == [(0, 0)]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack21_a_readmission_question_shows_no_order_of_the_readmission(demo_reader: StoreReader, policy: str) -> None:
    with build_episode(demo_reader, EpisodeKey(10004235, datetime(2196, 6, 19, 14, 54, 1), policy=policy)) as ep:
        assert ep.execute("SELECT max(dischtime) FROM admissions").rows == [(datetime(2196, 6, 19, 14, 54),)]
        for table in ("pharmacy", "prescriptions", "poe"):
            # before the fix: pharmacy and prescriptions showed Heparin started 2196-06-14 09:00, hadm_id NULL
            assert ep.execute(f"SELECT count(*) FROM {table} WHERE hadm_id IS NULL").rows == [(0,)], table
    with build_episode(demo_reader, EpisodeKey(10004235, datetime(2196, 6, 20, 21, 12), policy=policy)) as ep:
        assert ep.execute("SELECT hadm_id, medication, starttime FROM pharmacy WHERE pharmacy_id = 92842282").rows == [
            (22187210, "Heparin", datetime(2196, 6, 14, 9, 0)),
        ]
        assert ep.execute("SELECT hadm_id, drug FROM prescriptions WHERE pharmacy_id = 92842282").rows == [
            (22187210, "Heparin"),
        ]
