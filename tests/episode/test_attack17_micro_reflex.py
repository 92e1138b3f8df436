"""attack17: a pending blood culture's specimen shows an 'Aerobic/Anaerobic Bottle Gram Stain' test row only when a
bottle has flagged positive (the lab adds the Gram stain of a positive bottle to the specimen, back-dated to the
specimen time): while the culture and the stain are pending, the stain row's presence (its test_name shown, its
result masked) tells that the culture will grow an organism.

Demo-wide (the store's rows): of 491 specimens with a 'Blood Culture, Routine' test, the 23 with a Bottle Gram Stain
row all grew an organism (23 of 23, 100 %), the 468 without grew one in 9 (1.9 %); every one of the 23 stains was
stored more than 12 h after the specimen time (earliest 13.5 h, median 18 h), so for at least 12 h after every such
specimen the pending stain row is the only sign.

Case: 10004235, specimen 139903 drawn 2196-02-24 12:40 (E. coli, culture stored 2196-02-27 09:09; Anaerobic Bottle
Gram Stain stored 2196-02-25 03:56, Aerobic 20:21). At 2196-02-25 03:00 nothing of it is resulted, and before the
fix the episode showed three pending rows: 'Blood Culture, Routine', 'Anaerobic Bottle Gram Stain', 'Aerobic Bottle
Gram Stain' (test_seq 1, 2, 3).

Fixed like the pending labs (labpend16): while a microbiology row's result is pending, the specimen keeps one row
(``Pending(("micro_specimen_id",), ...)``), its test (``test_itemid``, ``test_name``, ``test_seq``) NULL with the
result, so neither which nor how many tests are pending shows.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY


def test_attack17_a_bottle_gram_stain_row_follows_a_positive_bottle(demo_store: Path) -> None:
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        rows = con.execute(
            "WITH s AS (SELECT micro_specimen_id, min(coalesce(charttime, chartdate + INTERVAL 1 DAY)) AS ct, "
            "min(storetime) FILTER (WHERE test_name LIKE '%Bottle Gram Stain') AS st_gs, "
            "bool_or(org_name IS NOT NULL AND test_name = 'Blood Culture, Routine') AS pos, "
            "bool_or(test_name LIKE '%Bottle Gram Stain') AS has_gs FROM hosp.microbiologyevents "
            "GROUP BY 1 HAVING bool_or(test_name = 'Blood Culture, Routine')) "
            "SELECT has_gs, count(*), count(*) FILTER (WHERE pos), count(*) FILTER (WHERE st_gs > ct + INTERVAL 12 HOUR) "
            "FROM s GROUP BY 1 ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    assert rows == [(False, 468, 9, 0), (True, 23, 23, 23)]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack17_no_pending_culture_names_its_tests(demo_reader: StoreReader, policy: str) -> None:
    with build_episode(demo_reader, EpisodeKey(10004235, datetime(2196, 2, 25, 3, 0), policy=policy)) as ep:
        rows = ep.execute(
            "SELECT microevent_id, spec_type_desc, test_seq, test_itemid, test_name, storetime, org_name "
            "FROM microbiologyevents WHERE micro_specimen_id = 139903"
        ).rows
        named = ep.execute("SELECT count(*) FROM microbiologyevents WHERE test_name LIKE '%Bottle Gram Stain'").rows
    # before the fix: three rows, 'Blood Culture, Routine' and both Bottle Gram Stains (test_seq 1, 2, 3)
    assert [tuple(r) for r in rows] == [(None, "BLOOD CULTURE", None, None, None, None, None)]
    assert named == [(0,)]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack17_test_seq_never_counts_the_pending_tests(demo_reader: StoreReader, policy: str) -> None:
    """The attack's residual: ``test_seq`` numbers all of a specimen's tests, so among the resulted rows a number above
    the others' tells how many are still pending (at 2196-02-25 04:00 specimen 139903's Anaerobic Bottle Gram Stain,
    test 2, is resulted while the culture (1) and the Aerobic stain (3) pend: test 2 alone would say that one more
    test than the pending row shows may be pending). ``test_seq`` is never shown (class ``final``)."""
    with build_episode(demo_reader, EpisodeKey(10004235, datetime(2196, 2, 25, 4, 0), policy=policy)) as ep:
        rows = ep.execute("SELECT test_name, test_seq FROM microbiologyevents WHERE micro_specimen_id = 139903 "
                          "ORDER BY test_name NULLS LAST").rows
        shown = ep.execute("SELECT count(test_seq) FROM microbiologyevents").rows
        timeline = ep.timeline("microbiologyevents").column("test_seq").null_count
        total = ep.table_counts()["hosp.microbiologyevents"]
    # a specimen with a resulted test shows no pending row (session 19, attack19): the culture's row is not shown
    assert [tuple(r) for r in rows] == [("Anaerobic Bottle Gram Stain", None)]
    assert shown == [(0,)] and timeline == total
