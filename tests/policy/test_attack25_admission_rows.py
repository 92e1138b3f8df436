"""attack25: rows MIMIC-IV keeps only for hospitalizations, timed before their admission's admittime.

``hosp.services`` holds only hospitalizations (``hadm_id`` is never NULL), ``hosp.transfers`` holds ED visits
whether the patient is admitted or sent home but every other row (eventtype ``admit``, ``transfer``) only for an
admission, and every ``icu`` row names an admission. A same-day surgical admission starts hours after the patient
arrives: the pre-operative 'admit' row (Discharge Lounge) and the first service (CSURG, NSURG, TSURG, ...) are
timed at the arrival, up to 10.8 h before the admittime (20 of the demo's 275 admissions, none through the ED).
Shown from their own times, their hadm_id NULL until the admission starts, they said, with no admission in the
episode, that the patient would be admitted, and for which surgery: such a row with a NULL hadm_id exists only
then (100 % precision). attack21 found the same for poe, pharmacy and prescriptions.

Case: 10013049 has no admission before 22675517 (admittime 2114-06-20 10:15). Before the fix, at 05:00 the episode
had no admission, but a transfers row ('admit', 'Discharge Lounge', intime 02:41:44) and a services row
(curr_service 'CSURG', 02:41:44), both hadm_id NULL; at 10:00 the CVICU transfer of 09:32:58 as well.

Fixed: a services row is known no earlier than its admission's admittime (``greatest(transfertime, admittime)``),
and so is every transfers row but an ED visit's (``greatest(intime, admittime)``) and an ICU chart row (its attack17
time, and not before the admittime: no demo row, the crafted holes store's infusion stored before its ICU stay).

Left: ``icu.icustays`` itself. Two of these patients reach the ICU from the OR before the admittime (10004457 36
min, 10013049 42 min): the stay shows from its intime, hadm_id NULL. Bounding it by the admittime too breaks the
store's event index, which gives the visible ICU stay ids only while the stay's event time is its intime
(``clinseek.store.encounter_column``, tests/episode/test_event_index.py); it needs the ICU stay's encounter start
to become that expression as well. :data:`STAYS_BEFORE_ADMISSION` pins the two stays.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from clinseek.bench import render_text_timeline
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
STAYS_BEFORE_ADMISSION = [(10004457, 23251352), (10013049, 22675517)]
"""ICU stays that start before their admission's admittime (left as found, see the module's docstring)."""
_ICU = ("icu.inputevents", "icu.ingredientevents", "icu.outputevents", "icu.datetimeevents",
        "icu.procedureevents")


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
    icu = " UNION ALL ".join(f"SELECT count(*) FILTER (WHERE hadm_id IS NULL) FROM {t}" for t in _ICU)
    assert _store(demo_store, icu) == [(0,)] * len(_ICU)
    stays = _store(demo_store, _EARLY.format(rows="SELECT hadm_id, intime AS at FROM icu.icustays"))
    assert [(s, h) for s, h, _, _ in stays] == STAYS_BEFORE_ADMISSION
    early = _store(demo_store, _EARLY.format(rows=_ROWS))
    assert len(early) == 20
    assert max(adm - first for _, _, adm, first in early) == timedelta(hours=10, minutes=45, seconds=33)


def _hospital_only_without_admission(ep: Episode) -> list[tuple]:
    """Rows of a table kept only for hospitalizations shown without their admission (hadm_id NULL): none may exist."""
    icu = " UNION ALL ".join(f"SELECT '{t}', NULL FROM {t} WHERE hadm_id IS NULL" for t in _ICU)
    return ep.execute(
        "SELECT 'services', transfertime FROM hosp.services WHERE hadm_id IS NULL UNION ALL "
        "SELECT 'transfers', intime FROM hosp.transfers WHERE hadm_id IS NULL AND upper(eventtype) <> 'ED' "
        f"UNION ALL {icu}",
        tables=["hosp.services", "hosp.transfers", *_ICU],
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
    with build_episode(demo_reader, EpisodeKey(10013049, before), queries=False) as ep:  # what Curated Input reads
        text = render_text_timeline(ep).text
    assert "CSURG" not in text and "Discharge Lounge" not in text and "## Transfers" not in text, text[:600]
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
