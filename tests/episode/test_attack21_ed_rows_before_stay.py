"""attack21 (fixed in session 21): ED rows charted before their ED stay's intime tell that an ED visit is coming.

``ed.vitalsign`` and ``ed.pyxis`` take their own ``charttime`` as event time, their ``stay_id`` masked until the
stay's intime. Six demo rows of three ED stays are charted before the intime (up to 34 min): 10004235's four pyxis
rows at 2196-02-24 11:41 of stay 38926302 (intime 12:15), 10012853's vital signs at 2175-04-05 06:05 of stay 36185653
(intime 06:22), 10022281's at 2125-06-16 20:31 of stay 39346340 (20:32). At a cutoff between the two, such a row with
its stay_id NULL says that the patient is arriving in the ED (the ICU charting tables had the same tell: attack17 fixed
it with ``greatest(time, least(storetime, intime))``; these tables have no storetime). No benchmark cutoff falls in
these windows (the ED tasks ask at intime + 1 s). Fixed: such a row is shown from its stay's intime (an inherited
parent time ``greatest(charttime, intime)``, ``clinseek.schema._ed``), for vitalsign, medrecon and pyxis.
"""

from __future__ import annotations

from datetime import datetime

from clinseek.episode import EpisodeKey, StoreReader, build_episode


def test_attack21_no_ed_row_before_its_stay_starts(demo_reader: StoreReader) -> None:
    with build_episode(demo_reader, EpisodeKey(10004235, datetime(2196, 2, 24, 12, 0))) as ep:
        assert ep.execute("SELECT count(*) FROM edstays WHERE intime >= TIMESTAMP '2196-02-24'").rows == [(0,)]
        # showed four rows charted 11:41 with stay_id NULL (stay 38926302 starts at 12:15)
        assert ep.execute("SELECT count(*) FROM pyxis WHERE charttime >= TIMESTAMP '2196-02-24'").rows == [(0,)]


def test_attack21_the_rows_show_from_the_intime_with_their_own_charttime(demo_reader: StoreReader) -> None:
    with build_episode(demo_reader, EpisodeKey(10004235, datetime(2196, 2, 24, 12, 16))) as ep:  # after the intime (strict <)
        rows = ep.execute("SELECT stay_id, charttime FROM pyxis WHERE charttime >= TIMESTAMP '2196-02-24' "
                          "ORDER BY charttime").rows
    assert rows and {r[0] for r in rows} == {38926302} and min(r[1] for r in rows) == datetime(2196, 2, 24, 11, 41)
