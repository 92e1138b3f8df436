"""attack25: rows MIMIC-IV keeps only for hospitalizations, timed before their admission's admittime.

``hosp.services`` holds only hospitalizations (``hadm_id`` is never NULL), and ``hosp.transfers`` holds ED visits
whether the patient is admitted or sent home but every other row (eventtype ``admit``, ``transfer``) only for an
admission. A same-day surgical admission starts hours after the patient arrives: the pre-operative 'admit' row
(Discharge Lounge) and the first service (CSURG, NSURG, TSURG, ...) are timed at the arrival, up to 10.8 h before
the admittime (20 of the demo's 275 admissions, none through the ED). Shown from their own times, their hadm_id
NULL until the admission starts, they said, with no admission in the episode, that the patient would be admitted,
and for which surgery: a services row or a non-ED transfers row with a NULL hadm_id exists only then (100 %
precision). attack21 found the same for poe, pharmacy and prescriptions.

Case: 10013049 has no admission before 22675517 (SURGICAL SAME DAY ADMISSION, admittime 2114-06-20 10:15). Before
the fix, at 05:00 the episode had no admission, but a transfers row ('admit', 'Discharge Lounge', intime 02:41:44)
and a services row (curr_service 'CSURG', 02:41:44), both hadm_id NULL; at 10:00 the CVICU transfer of 09:32:58 as
well.

Fixed: a services row is known no earlier than its admission's admittime (``greatest(transfertime, admittime)``),
and so is every transfers row but an ED visit's (``greatest(intime, admittime)``).

Left as found: two ICU stays start 36 and 42 minutes before their admission's admittime (10004457, 10013049, after
surgery); ``icu.icustays`` and its charting (3 outputevents, 1 datetimeevents row in those minutes) still show from
the ICU intime.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import Episode, EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY

_EARLY = (
    "SELECT a.subject_id, a.hadm_id, a.admittime, min(r.at) FROM hosp.admissions a JOIN ({rows}) r USING (hadm_id) "
    "WHERE r.at < a.admittime GROUP BY ALL ORDER BY 1, 3"
)
_ROWS = (
    "SELECT hadm_id, transfertime AS at FROM hosp.services UNION ALL "
    "SELECT hadm_id, intime FROM hosp.transfers WHERE eventtype <> 'ED'"
)


def _store(store: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_attack25_services_and_unit_stays_are_kept_only_for_admissions(demo_store: Path) -> None:
    found = _store(
        demo_store,
        "SELECT (SELECT count(*) FILTER (WHERE hadm_id IS NULL) FROM hosp.services), "
        "(SELECT count(*) FILTER (WHERE hadm_id IS NULL) FROM hosp.transfers WHERE eventtype <> 'ED'), "
        "(SELECT count(*) FILTER (WHERE hadm_id IS NULL) FROM hosp.transfers WHERE eventtype = 'ED')",
    )
    assert found == [(0, 0, 54)]  # ED visits that end at home are kept; nothing else without an admission
    early = _store(demo_store, _EARLY.format(rows=_ROWS))
    assert len(early) == 20
    assert max(adm - first for _, _, adm, first in early) == timedelta(hours=10, minutes=45, seconds=33)


def _hospital_only_without_admission(ep: Episode) -> list[tuple]:
    """Services and non-ED transfers rows shown without their admission (hadm_id NULL): none may exist."""
    return ep.execute(
        "SELECT 'services', transfertime FROM hosp.services WHERE hadm_id IS NULL UNION ALL "
        "SELECT 'transfers', intime FROM hosp.transfers WHERE hadm_id IS NULL AND upper(eventtype) <> 'ED'",
        tables=["hosp.services", "hosp.transfers"],
        max_rows=100,
    ).rows


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack25_no_row_tells_of_an_admission_before_it_starts(
    demo_store: Path, demo_reader: StoreReader, policy: str
) -> None:
    early = _store(demo_store, _EARLY.format(rows=_ROWS))
    for subject, _hadm, admittime, first in early:
        for cutoff in (first + timedelta(seconds=1), admittime - timedelta(seconds=1)):
            with build_episode(demo_reader, EpisodeKey(subject, cutoff, policy)) as ep:
                assert _hospital_only_without_admission(ep) == [], (subject, cutoff)
                admitted = ep.execute("SELECT count(*) FROM hosp.admissions WHERE admittime >= ?", [first],
                                      tables=["hosp.admissions"]).rows
                assert admitted == [(0,)], (subject, cutoff)


def test_attack25_case_10013049_before_and_after_its_admittime(demo_reader: StoreReader) -> None:
    before = datetime(2114, 6, 20, 10, 15)  # the admittime itself: not visible under the text policy
    with build_episode(demo_reader, EpisodeKey(10013049, before)) as ep:
        for table in ("hosp.admissions", "hosp.services", "hosp.transfers"):
            assert ep.execute(f"SELECT count(*) FROM {table}", tables=[table]).rows == [(0,)], table
    with build_episode(demo_reader, EpisodeKey(10013049, before + timedelta(seconds=1))) as ep:
        services = ep.execute("SELECT hadm_id, transfertime, curr_service FROM hosp.services",
                              tables=["hosp.services"]).rows
        assert services == [(22675517, datetime(2114, 6, 20, 2, 41, 44), "CSURG")]
        units = ep.execute("SELECT hadm_id, eventtype, careunit, outtime FROM hosp.transfers ORDER BY intime",
                           tables=["hosp.transfers"]).rows
        assert units == [
            (22675517, "admit", "Discharge Lounge", datetime(2114, 6, 20, 9, 32, 58)),
            (22675517, "transfer", "Cardiac Vascular Intensive Care Unit (CVICU)", None),
        ]
