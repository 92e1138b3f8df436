"""MIMIC-IV-ED 2.2: emergency department stays (https://mimic.mit.edu/docs/iv/modules/ed/)."""

from __future__ import annotations

from ._model import EventTime, ParentTime, Table, parse_columns

_VITALS = (
    "temperature DOUBLE event, heartrate DOUBLE event, resprate DOUBLE event, o2sat DOUBLE event, sbp DOUBLE event, "
    "dbp DOUBLE event"
)
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



def _in_ed_stay() -> EventTime:
    """A row charted in an ED stay's record (vital signs, medication reconciliation, Pyxis dispensing): known from
    its own charttime, and not before its stay's intime. A row charted before the intime (the demo has six, up to
    34 minutes ahead: the cabinet or the monitor used as the patient arrives), shown from its own time with its
    stay_id masked, told that an ED arrival was coming (attack21), as the ICU charting tables' rows before their
    stay did (attack17)."""
    return EventTime(
        "CASE WHEN t.charttime IS NOT NULL THEN greatest(t.charttime, parent_time) END",
        parent=ParentTime("ed.edstays", ("stay_id",), "t.intime"),
        sort=("charttime",),
        rationale="charted in its ED stay: known from its charttime, and not before the stay's intime (a row charted "
        "before the arrival, shown from its own time, told that an ED visit was coming: attack21)",
    )


ED: tuple[Table, ...] = (
    Table(
        "ed",
        "edstays",
        "One row per emergency department stay: arrival, departure, transport and disposition.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, stay_id INTEGER event, intime TIMESTAMP event, "
            "outtime TIMESTAMP end, gender VARCHAR static, race VARCHAR event, arrival_transport VARCHAR event, "
            "disposition VARCHAR end",
            {
                "hadm_id": "The admission this ED stay led to; NULL if not admitted.",
                "stay_id": "ED stay identifier (distinct from ICU stay ids).",
                "disposition": "Where the patient went: HOME, ADMITTED, TRANSFER, LEFT WITHOUT BEING SEEN, EXPIRED, ...",
            },
            {
                "hadm_id": "the admission the stay led to (an outcome): NULL until that admission's admittime",
                "stay_id": "the stay's own id: it exists from intime",
                "outtime": "the end of the ED stay",
                "disposition": "an outcome decided when the patient leaves the ED",
                "race": "recorded at registration",
                "arrival_transport": "known on arrival",
            },
        ),
        key=("stay_id",),
        event_time=EventTime("t.intime", sort=("intime",)),
        ends_at="t.outtime",
        required=True,
        source=_ED,
        files=("ed/edstays", "edstays"),
    ),
    Table(
        "ed",
        "triage",
        "Triage assessment at ED arrival: vital signs, pain, acuity (ESI 1-5) and chief complaint.",
        parse_columns(
            f"subject_id INTEGER static, stay_id INTEGER encounter, {_VITALS}, pain VARCHAR event, acuity DOUBLE event, "
            "chiefcomplaint VARCHAR event",
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
            f"subject_id INTEGER static, stay_id INTEGER encounter, charttime TIMESTAMP event, {_VITALS}, "
            "rhythm VARCHAR event, pain VARCHAR event",
            _VITAL_DOCS,
        ),
        event_time=_in_ed_stay(),
        source=_ED,
        files=("ed/vitalsign", "vitalsign"),
    ),
    Table(
        "ed",
        "diagnosis",
        "ICD diagnoses billed for the ED stay (assigned at ED discharge), with titles.",
        parse_columns(
            "subject_id INTEGER static, stay_id INTEGER encounter, seq_num INTEGER event, icd_code VARCHAR event, "
            "icd_version SMALLINT event, icd_title VARCHAR event"
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
            "subject_id INTEGER static, stay_id INTEGER encounter, charttime TIMESTAMP event, name VARCHAR event, "
            "gsn VARCHAR event, ndc VARCHAR event, etc_rn SMALLINT event, etccode VARCHAR event, "
            "etcdescription VARCHAR event",
            {
                "etcdescription": "Enhanced Therapeutic Class of the drug.",
                "etc_rn": "Rank when a drug has several classes.",
            },
        ),
        event_time=_in_ed_stay(),
        source=_ED,
        files=("ed/medrecon", "medrecon"),
    ),
    Table(
        "ed",
        "pyxis",
        "Medications dispensed in the ED from the Pyxis automated cabinet.",
        parse_columns(
            "subject_id INTEGER static, stay_id INTEGER encounter, charttime TIMESTAMP event, med_rn SMALLINT event, "
            "name VARCHAR event, gsn_rn SMALLINT event, gsn VARCHAR event"
        ),
        event_time=_in_ed_stay(),
        source=_ED,
        files=("ed/pyxis", "pyxis"),
    ),
)
