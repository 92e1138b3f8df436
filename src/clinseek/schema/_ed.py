"""MIMIC-IV-ED 2.2: emergency department stays (https://mimic.mit.edu/docs/iv/modules/ed/)."""

from __future__ import annotations

from ._model import EventTime, Mask, ParentTime, Table, parse_columns

_VITALS = "temperature DOUBLE, heartrate DOUBLE, resprate DOUBLE, o2sat DOUBLE, sbp DOUBLE, dbp DOUBLE"
_VITAL_DOCS = {
    "temperature": "Degrees Fahrenheit.",
    "heartrate": "Beats per minute.",
    "resprate": "Breaths per minute.",
    "o2sat": "Peripheral oxygen saturation, %.",
    "sbp": "Systolic blood pressure, mmHg.",
    "dbp": "Diastolic blood pressure, mmHg.",
    "pain": "Self-reported pain, 0-10 (free text).",
}
_ED = "MIMIC-IV-ED 2.2"

ED: tuple[Table, ...] = (
    Table(
        "ed",
        "edstays",
        "One row per emergency department stay: arrival, departure, transport and disposition.",
        parse_columns(
            "subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, intime TIMESTAMP, outtime TIMESTAMP, gender VARCHAR, "
            "race VARCHAR, arrival_transport VARCHAR, disposition VARCHAR",
            {
                "hadm_id": "The admission this ED stay led to; NULL if not admitted.",
                "stay_id": "ED stay identifier (distinct from ICU stay ids).",
                "disposition": "Where the patient went: HOME, ADMITTED, TRANSFER, LEFT WITHOUT BEING SEEN, EXPIRED, ...",
            },
        ),
        key=("stay_id",),
        event_time=EventTime("t.intime", sort=("intime",)),
        masks=(Mask(("outtime", "disposition"), "t.outtime", "the ED stay is still open"),),
        required=True,
        source=_ED,
        files=("ed/edstays", "edstays"),
    ),
    Table(
        "ed",
        "triage",
        "Triage assessment at ED arrival: vital signs, pain, acuity (ESI 1-5) and chief complaint.",
        parse_columns(
            f"subject_id INTEGER, stay_id INTEGER, {_VITALS}, pain VARCHAR, acuity DOUBLE, chiefcomplaint VARCHAR",
            {
                **_VITAL_DOCS,
                "acuity": "Emergency Severity Index, 1 (most urgent) to 5.",
                "chiefcomplaint": "Reason for the visit, free text.",
            },
        ),
        key=("stay_id",),
        event_time=EventTime(
            "parent_time",
            parent=ParentTime("ed.edstays", ("stay_id",), "t.intime"),
            sort=("stay_id",),
            rationale="taken at arrival",
        ),
        source=_ED,
        files=("ed/triage", "triage"),
    ),
    Table(
        "ed",
        "vitalsign",
        "Vital signs charted during the ED stay.",
        parse_columns(
            f"subject_id INTEGER, stay_id INTEGER, charttime TIMESTAMP, {_VITALS}, rhythm VARCHAR, pain VARCHAR",
            _VITAL_DOCS,
        ),
        event_time=EventTime("t.charttime", sort=("charttime",)),
        source=_ED,
        files=("ed/vitalsign", "vitalsign"),
    ),
    Table(
        "ed",
        "diagnosis",
        "ICD diagnoses billed for the ED stay (assigned at ED discharge), with titles.",
        parse_columns(
            "subject_id INTEGER, stay_id INTEGER, seq_num INTEGER, icd_code VARCHAR, icd_version SMALLINT, icd_title VARCHAR"
        ),
        key=("stay_id", "seq_num"),
        event_time=EventTime(
            "parent_time",
            parent=ParentTime("ed.edstays", ("stay_id",), "t.outtime"),
            sort=("stay_id", "seq_num"),
            rationale="assigned at ED discharge",
        ),
        target_key="stay_id",
        source=_ED,
        files=("ed/diagnosis", "diagnosis"),
    ),
    Table(
        "ed",
        "medrecon",
        "Medication reconciliation at ED arrival: medications the patient was taking before the visit.",
        parse_columns(
            "subject_id INTEGER, stay_id INTEGER, charttime TIMESTAMP, name VARCHAR, gsn VARCHAR, ndc VARCHAR, "
            "etc_rn SMALLINT, etccode VARCHAR, etcdescription VARCHAR",
            {
                "etcdescription": "Enhanced Therapeutic Class of the drug.",
                "etc_rn": "Rank when a drug has several classes.",
            },
        ),
        event_time=EventTime("t.charttime", sort=("charttime",)),
        source=_ED,
        files=("ed/medrecon", "medrecon"),
    ),
    Table(
        "ed",
        "pyxis",
        "Medications dispensed in the ED from the Pyxis automated cabinet.",
        parse_columns(
            "subject_id INTEGER, stay_id INTEGER, charttime TIMESTAMP, med_rn SMALLINT, name VARCHAR, gsn_rn SMALLINT, gsn VARCHAR"
        ),
        event_time=EventTime("t.charttime", sort=("charttime",)),
        source=_ED,
        files=("ed/pyxis", "pyxis"),
    ),
)
