"""attack16: how many ``emar_detail`` rows an administration has tells whether the dose was given, before the
nurse documented it (the MIMIC-IV demo).

``hosp.emar.event_txt`` ("Administered", "Not Given", ...) is masked until the administration is stored
(``storetime``), but ``hosp.emar_detail`` took its parent's ``charttime``: its rows were visible from the charted
time with their values masked, so their number and ``parent_field_ordinal`` were not. An administration given has
its main row and one row per product (``parent_field_ordinal`` 1.1, 1.2, ...); one not given has the main row
alone. In the demo, 5,233 administrations have one detail row (3,541 of them "Not Given", held or elsewhere) and
every "Administered" one has two or more. The rows are written when the administration is documented: they are now
visible from the parent's stored instant (``coalesce(storetime, charttime)``), as the values already were.

Case: 10002495 at 2141-05-28 17:00: four administrations charted at 16:00 and stored at 17:28-17:29; Warfarin was
not given (1 detail row), Captopril, Heparin and Metoprolol were (2 each). Before the fix the episode showed
``event_txt`` NULL for all four and detail counts [2, 2, 2, 1].
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY

_SUBJECT = 10002495
_CUTOFF = datetime(2141, 5, 28, 17, 0)


def _raw(store: Path) -> list[tuple]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(
            "SELECT e.medication, e.event_txt, (SELECT count(*) FROM hosp.emar_detail d WHERE d.emar_id = e.emar_id) "
            "FROM hosp.emar e WHERE e.subject_id = ? AND e.charttime = ? ORDER BY e.medication",
            [_SUBJECT, _CUTOFF - timedelta(hours=1)],
        ).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack16_detail_rows_of_an_undocumented_administration_stay_hidden(demo_store: Path, demo_reader: StoreReader, policy: str) -> None:
    assert _raw(demo_store) == [
        ("Captopril", "Administered", 2), ("Heparin", "Administered", 2),
        ("Metoprolol Tartrate", "Administered", 2), ("Warfarin", "Not Given", 1),
    ]
    with build_episode(demo_reader, EpisodeKey(_SUBJECT, _CUTOFF, policy=policy)) as ep:
        shown = ep.execute(
            "SELECT e.medication, e.event_txt, (SELECT count(*) FROM emar_detail d WHERE d.emar_id = e.emar_id) "
            "FROM emar e WHERE e.charttime = TIMESTAMP '2141-05-28 16:00' ORDER BY e.medication"
        ).rows
    # measured before the fix: the same four with event_txt None and counts 2, 2, 2, 1; since session 16 an
    # administration documented after the cutoff is not shown at all
    assert shown == []


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack16_no_detail_row_is_shown_before_its_administration_is_stored(demo_store: Path, policy: str) -> None:
    """Every demo patient with eMAR rows, one minute after each of its first administration stored more than 5
    minutes after their charttime: the episode's administrations are those documented (stored, and charted) by
    then, and its detail rows theirs (an oracle over the store's rows, not the registry; session 16)."""
    op = "<" if policy == TEXT_POLICY else "<="
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        cases = con.execute(
            "SELECT subject_id, charttime + INTERVAL 1 MINUTE FROM (SELECT subject_id, charttime, row_number() OVER "
            "(PARTITION BY subject_id ORDER BY charttime) AS k FROM hosp.emar WHERE storetime > charttime + "
            "INTERVAL 5 MINUTE) WHERE k = 1 ORDER BY 1, 2"
        ).fetchall()
        want = {
            (s, c): con.execute(
                "SELECT count(*) FROM hosp.emar_detail d WHERE d.subject_id = $s AND (SELECT min(greatest(e.storetime, "
                f"e.charttime)) FROM hosp.emar e WHERE e.emar_id = d.emar_id) {op} $c", {"s": s, "c": c}
            ).fetchone()[0]
            for s, c in cases
        }
        documented = {
            (s, c): con.execute(
                f"SELECT count(*) FROM hosp.emar WHERE subject_id = $s AND greatest(storetime, charttime) {op} $c",
                {"s": s, "c": c},
            ).fetchone()[0]
            for s, c in cases
        }
    finally:
        con.close()
    assert len(cases) > 20
    wrong: list[tuple] = []
    with open_store_reader(demo_store) as reader:  # one reader for every episode, as a run builds them
        for (subject, cutoff), n in want.items():
            with build_episode(reader, EpisodeKey(subject, cutoff, policy=policy)) as ep:
                got = ep.execute("SELECT count(*) FROM emar_detail").rows[0][0]
                administrations = ep.execute("SELECT count(*) FROM emar").rows[0][0]
            if (got, administrations) != (n, documented[subject, cutoff]):
                wrong.append((subject, cutoff, n, got, documented[subject, cutoff], administrations))
    assert not wrong, wrong[:5]
