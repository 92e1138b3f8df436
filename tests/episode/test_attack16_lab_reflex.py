"""attack16: pending lab rows of a specimen include tests added after its first results (a manual differential and
smear review after an abnormal automated blood count): their presence, values masked, tells the result (the MIMIC-IV
demo). Not fixed (see the report): ``hosp.labevents`` shows every row from its specimen time.

Demo-wide (the store's rows): of 2,760 blood counts (WBC, itemid 51301), the 395 with a Bands row (51144, the
manual differential) had an abnormal WBC in 345 (87 %), the 2,365 without in 1,053 (45 %); the Bands result was
stored after the WBC result in 378 of 395 (medians 47-49 minutes later), so the manual review follows the automated count.

Case: 10002495, specimen 81358962 drawn 2141-05-22 21:23, WBC 36.8 (abnormal) stored 22:22, Bands 10 stored 22:43.
At 22:00 (nothing resulted) the episode shows 32 pending rows, among them Bands, Atypical Lymphocytes,
Metamyelocytes, Myelocytes, Platelet Smear, Poikilocytosis (the smear review).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY


def test_attack16_the_manual_differential_follows_an_abnormal_count(demo_store: Path) -> None:
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        rows = con.execute(
            "WITH w AS (SELECT specimen_id, min(storetime) AS st, bool_or(flag = 'abnormal') AS abnormal "
            "FROM hosp.labevents WHERE itemid = 51301 GROUP BY 1), b AS (SELECT specimen_id, min(storetime) AS st "
            "FROM hosp.labevents WHERE itemid = 51144 GROUP BY 1) SELECT b.specimen_id IS NOT NULL, count(*), "
            "count(*) FILTER (WHERE w.abnormal), count(*) FILTER (WHERE b.st > w.st) FROM w LEFT JOIN b USING "
            "(specimen_id) GROUP BY 1 ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    assert rows == [(False, 2365, 1053, 0), (True, 395, 345, 378)]


@pytest.mark.xfail(strict=True, reason="attack16: pending lab rows are all shown from the specimen time")
@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack16_no_test_added_after_the_first_result_shows_before_it(demo_store: Path, policy: str) -> None:
    with build_episode(demo_store, EpisodeKey(10002495, datetime(2141, 5, 22, 22, 0), policy=policy)) as ep:
        pending = ep.execute(
            "SELECT itemid FROM labevents WHERE specimen_id = 81358962 AND valuenum IS NULL ORDER BY itemid"
        ).rows
    assert pending  # the count itself was ordered: its rows may show as pending
    # measured: 32 pending rows, Bands (51144) and the other manual-review items among them
    assert (51144,) not in pending
