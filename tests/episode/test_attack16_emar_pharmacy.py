"""attack16: ``hosp.emar.pharmacy_id`` of an administration not yet documented told whether the dose was given (the
MIMIC-IV demo).

``event_txt`` is masked until the administration is stored; ``pharmacy_id`` was shown once the pharmacy order it
names was visible. But MIMIC fills it in with the documentation: of the demo's administrations stored after their
charttime, 3,194 of the 3,972 with no pharmacy_id were not given (or held), against 95 of the 16,353 with one.
It now also waits for the administration's stored instant (``coalesce(storetime, charttime)``).

Case: 10002495 at 2141-05-28 17:00: Captopril and Heparin (charted 16:00, stored 17:28, given) showed pharmacy ids
31984825 and 81844727 while event_txt was NULL; Warfarin (not given) showed NULL.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack16_pharmacy_id_waits_for_the_documentation(demo_reader: StoreReader, policy: str) -> None:
    sql = ("SELECT medication, event_txt, pharmacy_id FROM emar WHERE charttime = TIMESTAMP '2141-05-28 16:00' "
           "ORDER BY medication")
    with build_episode(demo_reader, EpisodeKey(10002495, datetime(2141, 5, 28, 17, 0), policy=policy)) as ep:
        before = ep.execute(sql).rows
    with build_episode(demo_reader, EpisodeKey(10002495, datetime(2141, 5, 28, 17, 30), policy=policy)) as ep:
        after = ep.execute(sql).rows
    # stored 17:28-17:29: not in the record at 17:00 (session 16). Measured at attack16, before its fixes: the four
    # rows with event_txt NULL, pharmacy_id 31984825, 81844727 for the given doses, NULL for Warfarin (not given)
    assert before == []
    assert after == [("Captopril", "Administered", 31984825), ("Heparin", "Administered", 81844727),
                     # its pharmacy order 7130670 starts at 18:00: named from then on
                     ("Metoprolol Tartrate", "Administered", None), ("Warfarin", "Not Given", None)]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack16_no_pharmacy_id_of_an_undocumented_administration(demo_store: Path, policy: str) -> None:
    """Every demo patient, one minute after its first administration stored more than 5 minutes after its charttime:
    no visible administration whose event_txt is still hidden shows a pharmacy_id (an oracle over the store)."""
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        cases = con.execute(
            "SELECT subject_id, charttime + INTERVAL 1 MINUTE FROM (SELECT subject_id, charttime, row_number() OVER "
            "(PARTITION BY subject_id ORDER BY charttime) AS k FROM hosp.emar WHERE storetime > charttime + "
            "INTERVAL 5 MINUTE AND event_txt IS NOT NULL) WHERE k = 1 ORDER BY 1, 2"
        ).fetchall()
    finally:
        con.close()
    assert len(cases) > 20
    shown = []
    with open_store_reader(demo_store) as reader:  # one reader for every episode, as a run builds them
        for subject, cutoff in cases:
            with build_episode(reader, EpisodeKey(subject, cutoff, policy=policy)) as ep:
                n = ep.execute("SELECT count(*) FROM emar WHERE event_txt IS NULL AND storetime IS NULL "
                               "AND pharmacy_id IS NOT NULL").rows[0][0]
            if n:
                shown.append((subject, cutoff, n))
    assert shown == []
