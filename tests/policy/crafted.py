"""A tiny hand-built store whose rows each exercise one POLICY.md rule at the cutoff ``T``.

Subject ``S`` (1) has one admission discharged long ago (``DONE``), one open at ``T`` (``OPEN``),
one that starts after ``T`` (``LATER``), an ED stay closed before ``T`` and one still open at
``T`` whose admission starts after ``T``, labs drawn before ``T`` but resulted after it, rows
exactly at ``T`` (strict vs inclusive), and CXR studies before, at and after ``T``. Subject
``OTHER`` (2) has rows at the same instants; no episode of ``S`` may ever show them.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb

from clinseek.schema import tables
from clinseek.store import init_store, record_table, table_ddl, write_event_index

S = 1
OTHER = 2
T = datetime(2150, 6, 10, 12, 0, 0)
DONE, OPEN, LATER, ED_LATER = 100, 101, 102, 104
ED_CLOSED, ED_OPEN, ED_FUTURE = 500, 501, 502
ICU_DONE, ICU_OPEN = 299, 300
STUDY_PAST, STUDY_AT_T, STUDY_FUTURE = 900, 901, 902


def ts(text: str) -> datetime:
    """``"06-10 11:00"`` -> 2150-06-10 11:00 (the crafted store's year)."""
    return datetime.fromisoformat(f"2150-{text}")


def d(text: str) -> date:
    """``"06-10"`` -> 2150-06-10."""
    return date.fromisoformat(f"2150-{text}")


ROWS: dict[str, list[dict[str, Any]]] = {
    "hosp.patients": [
        dict(
            subject_id=S,
            gender="F",
            anchor_age=70,
            anchor_year=2150,
            anchor_year_group="2014 - 2016",
            dod=d("06-10"),
        ),
        dict(
            subject_id=OTHER,
            gender="M",
            anchor_age=60,
            anchor_year=2150,
            anchor_year_group="2014 - 2016",
            dod=d("06-09"),
        ),
    ],
    "hosp.admissions": [
        dict(
            subject_id=S,
            hadm_id=DONE,
            admittime=ts("01-01 08:00"),
            dischtime=ts("01-05 10:00"),
            admission_type="URGENT",
            discharge_location="HOME",
            hospital_expire_flag=0,
            edregtime=ts("01-01 06:00"),
            edouttime=ts("01-01 08:30"),
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            admittime=ts("06-09 20:00"),
            dischtime=ts("06-15 10:00"),
            deathtime=ts("06-15 10:00"),
            admission_type="EW EMER.",
            discharge_location="DIED",
            hospital_expire_flag=1,
            edregtime=ts("06-09 18:00"),
            edouttime=ts("06-10 13:00"),
        ),
        dict(
            subject_id=S,
            hadm_id=LATER,
            admittime=ts("07-01 08:00"),
            dischtime=ts("07-03 08:00"),
            discharge_location="HOME",
            hospital_expire_flag=0,
        ),
        dict(
            subject_id=S,
            hadm_id=ED_LATER,
            admittime=ts("06-10 15:00"),
            dischtime=ts("06-12 15:00"),
            discharge_location="HOME",
            hospital_expire_flag=0,
        ),
        dict(
            subject_id=OTHER,
            hadm_id=200,
            admittime=ts("06-09 20:00"),
            dischtime=ts("06-11 10:00"),
            discharge_location="HOME",
            hospital_expire_flag=0,
        ),
    ],
    "hosp.transfers": [
        dict(
            subject_id=S,
            hadm_id=DONE,
            transfer_id=1,
            eventtype="admit",
            careunit="Medicine",
            intime=ts("01-01 08:00"),
            outtime=ts("01-05 10:00"),
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            transfer_id=2,
            eventtype="admit",
            careunit="Medicine",
            intime=ts("06-09 21:00"),
            outtime=ts("06-11 09:00"),
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            transfer_id=3,
            eventtype="transfer",
            careunit="MICU",
            intime=ts("06-11 09:00"),
            outtime=ts("06-15 10:00"),
        ),
    ],
    "hosp.services": [
        dict(subject_id=S, hadm_id=OPEN, transfertime=ts("06-09 22:00"), curr_service="MED"),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            transfertime=ts("06-10 15:00"),
            prev_service="MED",
            curr_service="CMED",
        ),
    ],
    "hosp.diagnoses_icd": [
        dict(subject_id=S, hadm_id=DONE, seq_num=1, icd_code="I10", icd_version=10),
        dict(subject_id=S, hadm_id=DONE, seq_num=2, icd_code="E119", icd_version=10),
        dict(subject_id=S, hadm_id=OPEN, seq_num=1, icd_code="A419", icd_version=10),
        dict(subject_id=OTHER, hadm_id=200, seq_num=1, icd_code="J189", icd_version=10),
    ],
    "hosp.drgcodes": [
        dict(subject_id=S, hadm_id=DONE, drg_type="HCFA", drg_code="291", description="HEART FAILURE"),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            drg_type="APR",
            drg_code="720",
            description="SEPTICEMIA",
            drg_severity=4,
            drg_mortality=4,
        ),
    ],
    "hosp.procedures_icd": [
        dict(subject_id=S, hadm_id=DONE, seq_num=1, chartdate=d("01-02"), icd_code="0BH17EZ", icd_version=10),
        dict(subject_id=S, hadm_id=OPEN, seq_num=1, chartdate=d("06-09"), icd_code="5A1955Z", icd_version=10),
    ],
    "hosp.hcpcsevents": [
        dict(
            subject_id=S,
            hadm_id=DONE,
            chartdate=d("01-02"),
            hcpcs_cd="99223",
            seq_num=1,
            short_description="Hosp care",
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            chartdate=d("06-09"),
            hcpcs_cd="99291",
            seq_num=1,
            short_description="Crit care",
        ),
    ],
    "hosp.labevents": [
        dict(
            labevent_id=1,
            specimen_id=9001,  # one specimen per row (MIMIC never leaves it NULL: NULLs are one collapse group)
            subject_id=S,
            hadm_id=OPEN,
            itemid=50912,
            charttime=ts("06-10 08:00"),
            storetime=ts("06-10 09:00"),
            value="1.1",
            valuenum=1.1,
            valueuom="mg/dL",
            flag=None,
        ),
        dict(
            labevent_id=2,
            specimen_id=9002,  # one specimen per row (MIMIC never leaves it NULL: NULLs are one collapse group)
            subject_id=S,
            hadm_id=OPEN,
            itemid=50813,
            charttime=ts("06-10 11:00"),
            storetime=ts("06-10 13:00"),
            value="4.5",
            valuenum=4.5,
            valueuom="mmol/L",
            flag="abnormal",
            ref_range_lower=0.5,
            ref_range_upper=2.0,
            comments="critical",
        ),
        dict(
            labevent_id=3,
            specimen_id=9003,  # one specimen per row (MIMIC never leaves it NULL: NULLs are one collapse group)
            subject_id=S,
            hadm_id=OPEN,
            itemid=50912,
            charttime=T,
            storetime=T,
            value="1.3",
            valuenum=1.3,
            valueuom="mg/dL",
        ),
        dict(
            labevent_id=4,
            specimen_id=9004,  # one specimen per row (MIMIC never leaves it NULL: NULLs are one collapse group)
            subject_id=S,
            hadm_id=OPEN,
            itemid=50912,
            charttime=ts("06-11 06:00"),
            storetime=ts("06-11 07:00"),
            value="2.9",
            valuenum=2.9,
            valueuom="mg/dL",
            flag="abnormal",
        ),
        dict(
            labevent_id=5,
            specimen_id=9005,  # one specimen per row (MIMIC never leaves it NULL: NULLs are one collapse group)
            subject_id=OTHER,
            hadm_id=200,
            itemid=50912,
            charttime=ts("06-10 08:00"),
            storetime=ts("06-10 09:00"),
            value="0.9",
            valuenum=0.9,
            valueuom="mg/dL",
        ),
    ],
    "hosp.microbiologyevents": [
        dict(
            microevent_id=1,
            subject_id=S,
            hadm_id=OPEN,
            micro_specimen_id=1,
            chartdate=d("06-09"),
            charttime=ts("06-09 10:00"),
            spec_type_desc="BLOOD CULTURE",
            storedate=d("06-10"),
            storetime=ts("06-10 14:00"),
            test_name="Blood Culture",
            org_name="E. COLI",
            ab_name="CEFTRIAXONE",
            interpretation="R",
        ),
        dict(
            microevent_id=2,
            subject_id=S,
            hadm_id=OPEN,
            micro_specimen_id=2,
            chartdate=d("06-10"),
            charttime=None,
            spec_type_desc="URINE",
            test_name="Urine Culture",
        ),
        dict(
            microevent_id=3,
            subject_id=S,
            hadm_id=DONE,
            micro_specimen_id=3,
            chartdate=d("01-02"),
            charttime=ts("01-02 10:00"),
            spec_type_desc="URINE",
            storedate=d("01-04"),
            storetime=None,
            test_name="Urine Culture",
            org_name="KLEBSIELLA",
        ),
    ],
    "hosp.prescriptions": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            pharmacy_id=1,
            starttime=ts("06-09 23:00"),
            stoptime=ts("06-12 10:00"),
            drug_type="MAIN",
            drug="Vancomycin",
            route="IV",
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            pharmacy_id=2,
            starttime=ts("06-10 13:00"),
            stoptime=ts("06-11 10:00"),
            drug_type="MAIN",
            drug="Norepinephrine",
            route="IV",
        ),
    ],
    "hosp.pharmacy": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            pharmacy_id=1,
            starttime=ts("06-09 23:00"),
            stoptime=ts("06-12 10:00"),
            medication="Vancomycin",
            status="Discontinued",
            entertime=ts("06-09 22:00"),
            verifiedtime=ts("06-10 12:30"),
            expirationdate=ts("06-20 00:00"),
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            pharmacy_id=2,
            starttime=ts("06-10 14:00"),
            stoptime=ts("06-11 10:00"),
            medication="Norepinephrine",
            status="Active",
            entertime=ts("06-10 11:00"),
        ),
    ],
    "hosp.emar": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            emar_id="1-1",
            emar_seq=1,
            charttime=ts("06-10 08:00"),
            medication="Vancomycin",
            event_txt="Administered",
            scheduletime=ts("06-10 08:00"),
            storetime=ts("06-10 12:30"),
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            emar_id="1-2",
            emar_seq=2,
            charttime=ts("06-10 14:00"),
            medication="Norepinephrine",
            event_txt="Started",
            scheduletime=ts("06-10 14:00"),
            storetime=ts("06-10 14:05"),
        ),
    ],
    "hosp.emar_detail": [
        dict(subject_id=S, emar_id="1-1", emar_seq=1, parent_field_ordinal="1.1", dose_given="1000"),
        dict(subject_id=S, emar_id="1-2", emar_seq=2, parent_field_ordinal="1.1", dose_given="8"),
    ],
    "hosp.poe": [
        dict(
            poe_id="1-1",
            poe_seq=1,
            subject_id=S,
            hadm_id=OPEN,
            ordertime=ts("06-09 21:00"),
            order_type="Medications",
            transaction_type="New",
            discontinued_by_poe_id="1-2",
            order_status="Inactive",
        ),
        dict(
            poe_id="1-2",
            poe_seq=2,
            subject_id=S,
            hadm_id=OPEN,
            ordertime=ts("06-10 15:00"),
            order_type="Medications",
            transaction_type="D/C",
            discontinue_of_poe_id="1-1",
            order_status="Inactive",
        ),
        dict(
            poe_id="1-3",
            poe_seq=3,
            subject_id=S,
            hadm_id=DONE,
            ordertime=ts("01-02 08:00"),
            order_type="Lab",
            transaction_type="New",
            discontinued_by_poe_id="1-4",
            order_status="Inactive",
        ),
        dict(
            poe_id="1-4",
            poe_seq=4,
            subject_id=S,
            hadm_id=DONE,
            ordertime=ts("01-03 08:00"),
            order_type="Lab",
            transaction_type="D/C",
            discontinue_of_poe_id="1-3",
            order_status="Inactive",
        ),
    ],
    "hosp.poe_detail": [
        dict(poe_id="1-1", poe_seq=1, subject_id=S, field_name="Admit to", field_value="Medicine"),
        dict(poe_id="1-2", poe_seq=2, subject_id=S, field_name="Discharge Planning", field_value="Hospice"),
    ],
    "hosp.omr": [
        dict(subject_id=S, chartdate=d("06-09"), seq_num=1, result_name="Weight (Lbs)", result_value="150"),
        dict(subject_id=S, chartdate=d("06-10"), seq_num=1, result_name="Weight (Lbs)", result_value="149"),
    ],
    "hosp.d_labitems": [
        dict(itemid=50912, label="Creatinine", fluid="Blood", category="Chemistry"),
        dict(itemid=50813, label="Lactate", fluid="Blood", category="Blood Gas"),
    ],
    "hosp.d_icd_diagnoses": [
        dict(icd_code="I10", icd_version=10, long_title="Essential (primary) hypertension"),
        dict(icd_code="A419", icd_version=10, long_title="Sepsis, unspecified organism"),
    ],
    "hosp.d_icd_procedures": [dict(icd_code="5A1955Z", icd_version=10, long_title="Ventilation >96 hours")],
    "hosp.d_hcpcs": [
        dict(code="99291", category=1, long_description="Critical care", short_description="Crit care")
    ],
    "hosp.provider": [dict(provider_id="P1")],
    "icu.icustays": [
        dict(
            subject_id=S,
            hadm_id=DONE,
            stay_id=ICU_DONE,
            first_careunit="MICU",
            last_careunit="SICU",
            intime=ts("01-02 08:00"),
            outtime=ts("01-03 08:00"),
            los=1.0,
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ICU_OPEN,
            first_careunit="MICU",
            last_careunit="CCU",
            intime=ts("06-10 02:00"),
            outtime=ts("06-12 02:00"),
            los=2.0,
        ),
    ],
    "icu.chartevents": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ICU_OPEN,
            charttime=ts("06-10 10:00"),
            storetime=ts("06-10 12:10"),
            itemid=220045,
            value="112",
            valuenum=112.0,
            valueuom="bpm",
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ICU_OPEN,
            charttime=ts("06-10 12:30"),
            storetime=ts("06-10 12:35"),
            itemid=220045,
            value="130",
            valuenum=130.0,
            valueuom="bpm",
        ),
    ],
    "icu.datetimeevents": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ICU_OPEN,
            charttime=ts("06-10 09:00"),
            storetime=ts("06-10 09:05"),
            itemid=225754,
            value=ts("06-10 15:00"),
            valueuom="Date and Time",
        ),
    ],
    "icu.inputevents": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ICU_OPEN,
            starttime=ts("06-10 09:00"),
            endtime=ts("06-10 14:00"),
            storetime=ts("06-10 09:01"),
            itemid=221906,
            amount=500.0,
            amountuom="mL",
            rate=0.1,
            rateuom="mcg/kg/min",
            originalrate=0.1,
            orderid=1,
            totalamount=250.0,
            statusdescription="FinishedRunning",
            originalamount=500.0,
        ),
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ICU_OPEN,
            starttime=ts("06-10 08:00"),
            endtime=ts("06-10 09:00"),
            storetime=ts("06-10 09:01"),
            itemid=225158,
            amount=100.0,
            orderid=2,
            totalamount=100.0,
            statusdescription="FinishedRunning",
            originalamount=100.0,
        ),
    ],
    "icu.ingredientevents": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ICU_OPEN,
            starttime=ts("06-10 09:00"),
            endtime=ts("06-10 14:00"),
            itemid=220490,
            amount=500.0,
            orderid=1,
            statusdescription="FinishedRunning",
            originalamount=500.0,
        ),
    ],
    "icu.outputevents": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ICU_OPEN,
            charttime=ts("06-10 11:00"),
            storetime=ts("06-10 12:20"),
            itemid=226559,
            value=30.0,
            valueuom="ml",
        ),
    ],
    "icu.procedureevents": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ICU_OPEN,
            starttime=ts("06-10 03:00"),
            endtime=ts("06-13 03:00"),
            storetime=ts("06-10 03:10"),
            itemid=225792,
            value=4320.0,
            valueuom="min",
            orderid=7,
            statusdescription="FinishedRunning",
            originalamount=4320.0,  # MIMIC-IV: the duration again (starttime + originalamount min = endtime)
            originalrate=1.0,
        ),
    ],
    "icu.d_items": [
        dict(itemid=220045, label="Heart Rate", linksto="chartevents", category="Routine Vital Signs")
    ],
    "icu.caregiver": [dict(caregiver_id=1)],
    "ed.edstays": [
        dict(
            subject_id=S,
            hadm_id=OPEN,
            stay_id=ED_CLOSED,
            intime=ts("06-09 18:00"),
            outtime=ts("06-09 21:30"),
            gender="F",
            disposition="ADMITTED",
        ),
        dict(
            subject_id=S,
            hadm_id=ED_LATER,
            stay_id=ED_OPEN,
            intime=ts("06-10 10:00"),
            outtime=ts("06-10 16:00"),
            gender="F",
            disposition="ADMITTED",
        ),
        dict(
            subject_id=S,
            hadm_id=None,
            stay_id=ED_FUTURE,
            intime=ts("06-11 10:00"),
            outtime=ts("06-11 12:00"),
            gender="F",
            disposition="HOME",
        ),
    ],
    "ed.triage": [
        dict(subject_id=S, stay_id=ED_CLOSED, heartrate=120.0, acuity=2.0, chiefcomplaint="Fever"),
        dict(subject_id=S, stay_id=ED_OPEN, heartrate=100.0, acuity=3.0, chiefcomplaint="Dyspnea"),
        dict(subject_id=S, stay_id=ED_FUTURE, heartrate=80.0, acuity=4.0, chiefcomplaint="Fall"),
    ],
    "ed.vitalsign": [
        dict(subject_id=S, stay_id=ED_OPEN, charttime=ts("06-10 11:00"), heartrate=101.0),
        dict(subject_id=S, stay_id=ED_OPEN, charttime=ts("06-10 12:30"), heartrate=140.0),
    ],
    "ed.diagnosis": [
        dict(subject_id=S, stay_id=ED_CLOSED, seq_num=1, icd_code="R509", icd_version=10, icd_title="Fever"),
        dict(
            subject_id=S,
            stay_id=ED_OPEN,
            seq_num=1,
            icd_code="J9601",
            icd_version=10,
            icd_title="Hypoxic resp failure",
        ),
    ],
    "ed.medrecon": [
        dict(subject_id=S, stay_id=ED_OPEN, charttime=ts("06-10 10:30"), name="Metformin"),
        dict(subject_id=S, stay_id=ED_FUTURE, charttime=ts("06-11 10:30"), name="Aspirin"),
    ],
    "ed.pyxis": [
        dict(subject_id=S, stay_id=ED_OPEN, charttime=ts("06-10 10:45"), med_rn=1, name="Acetaminophen"),
        dict(subject_id=S, stay_id=ED_FUTURE, charttime=ts("06-11 10:45"), med_rn=1, name="Ibuprofen"),
    ],
    "note.discharge": [
        dict(
            note_id="1-DS-1",
            subject_id=S,
            hadm_id=DONE,
            note_type="DS",
            note_seq=1,
            charttime=ts("01-05 00:00"),
            storetime=ts("01-06 09:00"),
            text="Discharged home.",
        ),
        dict(
            note_id="1-DS-2",
            subject_id=S,
            hadm_id=OPEN,
            note_type="DS",
            note_seq=2,
            charttime=ts("06-15 00:00"),
            storetime=ts("06-16 09:00"),
            text="Patient expired.",
        ),
        dict(
            note_id="1-DS-3",
            subject_id=S,
            hadm_id=OPEN,
            note_type="AD",
            note_seq=3,
            charttime=ts("06-10 10:00"),
            storetime=ts("06-10 13:00"),
            text="Addendum signed after T.",
        ),
    ],
    "note.discharge_detail": [
        dict(note_id="1-DS-1", subject_id=S, field_name="author", field_value="Dr A", field_ordinal=1),
        dict(note_id="1-DS-2", subject_id=S, field_name="author", field_value="Dr B", field_ordinal=1),
    ],
    "note.radiology": [
        dict(
            note_id="1-RR-1",
            subject_id=S,
            hadm_id=OPEN,
            note_type="RR",
            note_seq=1,
            charttime=ts("06-10 09:00"),
            storetime=ts("06-10 11:00"),
            text="CXR: no pneumothorax.",
        ),
        dict(
            note_id="1-RR-2",
            subject_id=S,
            hadm_id=OPEN,
            note_type="RR",
            note_seq=2,
            charttime=ts("06-10 10:00"),
            storetime=ts("06-10 12:30"),
            text="CT: abscess.",
        ),
        dict(
            note_id="1-RR-3",
            subject_id=S,
            hadm_id=OPEN,
            note_type="RR",
            note_seq=3,
            charttime=ts("06-10 09:30"),
            storetime=None,
            text="US: normal.",
        ),
    ],
    "note.radiology_detail": [
        dict(
            note_id="1-RR-1",
            subject_id=S,
            field_name="exam_name",
            field_value="CHEST (PORTABLE AP)",
            field_ordinal=1,
        ),
        dict(note_id="1-RR-2", subject_id=S, field_name="exam_name", field_value="CT ABD", field_ordinal=1),
    ],
    "cxr.metadata": [
        dict(
            dicom_id="d900a",
            subject_id=S,
            study_id=STUDY_PAST,
            ViewPosition="PA",
            StudyDate=21500609,
            StudyTime=101500.0,
        ),
        dict(
            dicom_id="d900b",
            subject_id=S,
            study_id=STUDY_PAST,
            ViewPosition="LATERAL",
            StudyDate=21500609,
            StudyTime=101500.0,
        ),
        dict(
            dicom_id="d901",
            subject_id=S,
            study_id=STUDY_AT_T,
            ViewPosition="AP",
            StudyDate=21500610,
            StudyTime=120000.0,
        ),
        dict(
            dicom_id="d902",
            subject_id=S,
            study_id=STUDY_FUTURE,
            ViewPosition="AP",
            StudyDate=21500611,
            StudyTime=80000.0,
        ),
    ],
    "cxr.reports": [
        dict(subject_id=S, study_id=STUDY_PAST, text="FINDINGS: clear lungs."),
        dict(subject_id=S, study_id=STUDY_AT_T, text="FINDINGS: new effusion."),
        dict(subject_id=S, study_id=STUDY_FUTURE, text="FINDINGS: worsening effusion."),
    ],
    "cxr.chexpert": [dict(subject_id=S, study_id=STUDY_PAST)],
    "cxr.negbio": [dict(subject_id=S, study_id=STUDY_PAST)],
    "cxr.split": [dict(dicom_id="d900a", study_id=STUDY_PAST, subject_id=S, split="train")],
}


def build_crafted_store(path: Path) -> Path:
    """Write the crafted store to ``path`` (every registry table present, rows from :data:`ROWS`)."""
    return write_store(path, ROWS, "tests/policy/crafted.py")


def write_store(path: Path, table_rows: dict[str, list[dict[str, Any]]], fixture: str) -> Path:
    """A store at ``path`` with every registry table, holding ``table_rows`` (other tables empty)."""
    con = duckdb.connect(str(path))
    try:
        init_store(con, kind="synthetic", sources={"fixture": fixture})
        for table in tables():
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {table.module}")
            con.execute(table_ddl(table))
            rows = table_rows.get(table.qualified, [])
            for row in rows:
                cols = ", ".join(f'"{c}"' for c in row)
                marks = ", ".join("?" for _ in row)
                con.execute(f"INSERT INTO {table.qualified} ({cols}) VALUES ({marks})", list(row.values()))
            record_table(con, table, row_count=len(rows))
        write_event_index(con)  # as ingest does: the episodes' inventory reads it (tests/episode/test_event_index.py)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path
