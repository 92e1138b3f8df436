"""A second crafted store: the four leakage holes an adversarial tester found, one row each.

Subject ``S`` (1) at ``T`` = 2150-06-10 12:00 has a past admission (``PAST``), one that starts
after ``T`` (``FUTURE``, 17:00) and one that starts exactly at ``T`` (``AT_T``); an ICU stay
after ``T`` and one before; an ED stay whose ``intime`` is after ``T``; rows charted before ``T``
that name the future encounters; a pending culture with three organism x antibiotic rows between
two resulted ones; ICU values charted before ``T`` but stored after it.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from policy.crafted import write_store

S = 1
T = datetime(2150, 6, 10, 12, 0, 0)
PAST, FUTURE, AT_T = 10, 11, 12
ICU_PAST, ICU_FUTURE = 301, 300
ED_PAST, ED_FUTURE = 500, 501
PENDING_SPECIMEN, RESULTED_SPECIMEN, LATE_SPECIMEN = 7, 6, 8


def ts(text: str) -> datetime:
    """``"06-10 11:00"`` -> 2150-06-10 11:00."""
    return datetime.fromisoformat(f"2150-{text}")


def _micro(microevent_id: int, specimen: int, stored: str, org: str | None, ab: str | None) -> dict[str, Any]:
    return dict(
        microevent_id=microevent_id,
        subject_id=S,
        hadm_id=PAST,
        micro_specimen_id=specimen,
        charttime=ts("06-09 10:00") if specimen != PENDING_SPECIMEN else ts("06-10 09:00"),
        spec_type_desc="BLOOD CULTURE",
        storetime=ts(stored),
        test_itemid=90,
        test_name="Blood Culture",
        org_name=org,
        ab_name=ab,
        interpretation="S" if ab else None,
    )


ROWS: dict[str, list[dict[str, Any]]] = {
    "hosp.patients": [dict(subject_id=S, gender="F", anchor_age=70, anchor_year=2150)],
    "hosp.admissions": [
        dict(subject_id=S, hadm_id=PAST, admittime=ts("06-01 08:00"), dischtime=ts("06-05 10:00")),
        dict(subject_id=S, hadm_id=FUTURE, admittime=ts("06-10 17:00"), dischtime=ts("06-15 10:00")),
        dict(subject_id=S, hadm_id=AT_T, admittime=T, dischtime=ts("06-20 10:00")),
    ],
    "hosp.transfers": [
        dict(
            subject_id=S,
            hadm_id=PAST,
            transfer_id=1,
            eventtype="admit",
            intime=ts("06-01 08:00"),
            outtime=ts("06-05 10:00"),
        ),
        dict(
            subject_id=S,
            hadm_id=FUTURE,
            transfer_id=2,
            eventtype="ED",
            intime=ts("06-10 08:00"),
            outtime=ts("06-10 17:00"),
        ),
        dict(subject_id=S, hadm_id=None, transfer_id=3, eventtype="ED", intime=ts("06-10 09:00"), outtime=T),
    ],
    "hosp.labevents": [
        dict(
            labevent_id=1,
            subject_id=S,
            hadm_id=FUTURE,
            itemid=50912,
            charttime=ts("06-10 09:00"),
            storetime=ts("06-10 10:00"),
            valuenum=1.0,
        ),
        dict(
            labevent_id=2,
            subject_id=S,
            hadm_id=AT_T,
            itemid=50912,
            charttime=ts("06-10 09:30"),
            storetime=ts("06-10 10:00"),
            valuenum=1.1,
        ),
        dict(
            labevent_id=3,
            subject_id=S,
            hadm_id=PAST,
            itemid=50912,
            charttime=ts("06-02 09:00"),
            storetime=ts("06-02 10:00"),
            valuenum=0.9,
        ),
    ],
    "hosp.poe": [
        dict(poe_id="1-1", poe_seq=1, subject_id=S, hadm_id=FUTURE, ordertime=ts("06-10 09:00")),
    ],
    "hosp.microbiologyevents": [
        _micro(100, RESULTED_SPECIMEN, "06-09 20:00", "E. COLI", "AMPICILLIN"),
        _micro(101, RESULTED_SPECIMEN, "06-09 20:00", "E. COLI", "CEFTRIAXONE"),
        _micro(102, PENDING_SPECIMEN, "06-11 09:00", "S. AUREUS", "OXACILLIN"),
        _micro(103, PENDING_SPECIMEN, "06-11 09:00", "S. AUREUS", "VANCOMYCIN"),
        _micro(104, PENDING_SPECIMEN, "06-11 09:00", "S. AUREUS", "CLINDAMYCIN"),
        _micro(105, LATE_SPECIMEN, "06-09 21:00", None, None),
    ],
    "icu.icustays": [
        dict(
            subject_id=S, hadm_id=PAST, stay_id=ICU_PAST, intime=ts("06-02 08:00"), outtime=ts("06-04 08:00")
        ),
        dict(
            subject_id=S,
            hadm_id=FUTURE,
            stay_id=ICU_FUTURE,
            intime=ts("06-10 14:00"),
            outtime=ts("06-12 08:00"),
        ),
    ],
    "icu.inputevents": [
        dict(
            subject_id=S,
            hadm_id=FUTURE,
            stay_id=ICU_FUTURE,
            starttime=ts("06-10 10:00"),
            endtime=ts("06-10 16:00"),
            storetime=ts("06-10 10:05"),
            itemid=221906,
            rate=0.1,
            originalrate=0.1,
            orderid=1,
            amount=2.0,
        ),
        dict(
            subject_id=S,
            hadm_id=PAST,
            stay_id=ICU_PAST,
            starttime=ts("06-02 10:00"),
            endtime=ts("06-02 11:00"),
            storetime=ts("06-02 11:05"),
            itemid=225158,
            amount=100.0,
            orderid=2,
        ),
    ],
    "icu.chartevents": [
        dict(
            subject_id=S,
            hadm_id=PAST,
            stay_id=ICU_PAST,
            charttime=ts("06-03 08:00"),
            storetime=ts("06-03 08:10"),
            itemid=220045,
            value="90",
            valuenum=90.0,
        ),
        dict(
            subject_id=S,
            hadm_id=PAST,
            stay_id=ICU_PAST,
            charttime=ts("06-03 09:00"),
            storetime=T,
            itemid=220045,
            value="95",
            valuenum=95.0,
            valueuom="bpm",
            warning=1,
        ),
    ],
    "icu.datetimeevents": [
        dict(
            subject_id=S,
            hadm_id=PAST,
            stay_id=ICU_PAST,
            charttime=ts("06-03 08:00"),
            storetime=ts("06-11 05:14"),
            itemid=225754,
            value=ts("06-03 07:00"),
            valueuom="Date",
        ),
    ],
    "icu.outputevents": [
        dict(
            subject_id=S,
            hadm_id=PAST,
            stay_id=ICU_PAST,
            charttime=ts("06-03 08:00"),
            storetime=ts("06-11 05:14"),
            itemid=226559,
            value=300.0,
            valueuom="mL",
        ),
    ],
    "icu.procedureevents": [
        dict(
            subject_id=S,
            hadm_id=PAST,
            stay_id=ICU_PAST,
            starttime=ts("06-02 09:00"),
            endtime=ts("06-10 10:00"),
            storetime=ts("06-10 13:00"),
            itemid=225792,
            value=8000.0,
            orderid=1,
            statusdescription="FinishedRunning",
        ),
        dict(
            subject_id=S,
            hadm_id=PAST,
            stay_id=ICU_PAST,
            starttime=ts("06-02 09:30"),
            endtime=ts("06-10 10:00"),
            storetime=ts("06-10 11:00"),
            itemid=225794,
            value=7000.0,
            orderid=2,
            statusdescription="FinishedRunning",
        ),
    ],
    "ed.edstays": [
        dict(
            subject_id=S, hadm_id=FUTURE, stay_id=ED_PAST, intime=ts("06-10 07:00"), outtime=ts("06-10 17:00")
        ),
        dict(
            subject_id=S, hadm_id=None, stay_id=ED_FUTURE, intime=ts("06-10 13:00"), outtime=ts("06-10 15:00")
        ),
    ],
    "ed.vitalsign": [
        dict(subject_id=S, stay_id=ED_PAST, charttime=ts("06-10 07:30"), heartrate=90.0),
        dict(subject_id=S, stay_id=ED_FUTURE, charttime=ts("06-10 11:00"), heartrate=100.0),
    ],
}


def build_holes_store(path: Path) -> Path:
    """Write the store to ``path`` (every registry table present, rows from :data:`ROWS`)."""
    return write_store(path, ROWS, "tests/policy/holes.py")
