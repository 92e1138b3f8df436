"""MIMIC-IV 3.1 ``icu`` module: MetaVision ICU data (https://mimic.mit.edu/docs/iv/modules/icu/)."""

from __future__ import annotations

from ._encounter import ICU_STAY_START
from ._hosp import admitted
from ._model import DictJoin, EventTime, ParentTime, Table, parse_columns

_ITEM = DictJoin(("itemid",), "icu.d_items", ("itemid",), ("label", "category", "unitname"))
_STAY_COLS = "subject_id INTEGER static, hadm_id INTEGER encounter, stay_id INTEGER encounter, caregiver_id INTEGER event"
_STAY_DOCS = {
    "stay_id": "ICU stay identifier (icu.icustays).",
    "caregiver_id": "De-identified caregiver who charted the row.",
}
_INFUSION_DOCS = {
    **_STAY_DOCS,
    "starttime": "Start of the infusion or bolus.",
    "endtime": "End of the infusion or bolus.",
    "amount": "Total amount given over starttime-endtime, in amountuom.",
    "rate": "Infusion rate, in rateuom.",
    "orderid": "Groups components of one order.",
    "linkorderid": "Links rows of one continuing order across rate changes.",
    "statusdescription": "Final state of the row: FinishedRunning, Stopped, Paused, ChangeDose/Rate, Flushed, Rewritten.",
    "originalamount": "Amount in the bag when the infusion started.",
    "originalrate": "Rate initially ordered.",
}
_INFUSION_WHY = {
    "endtime": "the end of the infusion or bolus",
    "storetime": "when the row was entered (often after endtime)",
    "amount": "the amount given over starttime-endtime: final only at the end",
    "amountuom": "the unit of the amount (it varies within an item)",
    "rate": "the true rate delivered over the row (amount over duration, MIMIC docs): final only at the end",
    "rateuom": "the unit of rate and originalrate, fixed by the item",
    "originalrate": "the rate the caregiver entered when the row started (MIMIC docs: the planned rate)",
    "originalamount": "the bag's contents at starttime; over originalrate it gives the planned end",
    "statusdescription": "why the row ended (FinishedRunning, Stopped, ChangeDose/Rate, ...): known at the end",
    "continueinnextdept": "whether the order continued after a transfer: known when the row ends",
    "isopenbag": "set when the bag is hung",
    "linkorderid": "the first order of the chain this row continues",
}
_FINISHED = "greatest(t.endtime, t.storetime)"


def _in_stay(time: str) -> EventTime:
    """A charted row's event time: its own ``time``, and, when that is before its ICU stay's intime (the parent),
    not before the row is in the record: its storetime, or the stay's intime, whichever comes first; and never
    before its admission starts.

    MetaVision charts one ICU stay: a row timed before the stay starts (a line placed on the floor, fluids given in
    the ED or OR) is mostly documented once the patient is in the ICU. Shown from its own time, its stay_id masked,
    its presence told that an ICU admission was coming (attack17: 36 of the demo's 140 stays, up to 24 h ahead).
    A row stored before the intime (the chart opened ahead) is in the record from its storetime. ICU stays are kept
    only for hospitalizations: a row charted before its admission's admittime (4 in the demo, after surgery), shown
    from its own time, told that an admission was coming (attack25)."""
    return EventTime(
        f"CASE WHEN t.{time} IS NOT NULL THEN greatest(t.{time}, least(t.storetime, parent_time), "
        f"{admitted('t', f't.{time}')}) END",
        parent=ParentTime("icu.icustays", ("stay_id",), "t.intime"),
        sort=(time,),
        rationale="charted in its ICU stay's chart: known from its own time; a row timed before the stay starts once "
        "it is in the record (its storetime, or the stay's intime if earlier): shown from its own time, such a row "
        "told that an ICU admission was coming (attack17); and not before its admission starts (ICU stays are kept "
        "only for hospitalizations: attack25)",
    )


_STORED = "coalesce(t.storetime, t.charttime)"
_CHARTED_WHY = {
    "storetime": "when the value was validated",
    "value": "charted before the cutoff can be entered (storetime) after it",
    "valuenum": "charted before the cutoff can be entered (storetime) after it",
    "valueuom": "entered with the value",
    "warning": "entered with the value",
}

ICU: tuple[Table, ...] = (
    Table(
        "icu",
        "icustays",
        "One row per ICU stay: first and last care unit, intime, outtime and length of stay in days.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, stay_id INTEGER event, first_careunit VARCHAR event, "
            "last_careunit VARCHAR end, intime TIMESTAMP event, outtime TIMESTAMP end, los DOUBLE end",
            {
                "stay_id": "ICU stay identifier.",
                "first_careunit": "ICU the stay began in.",
                "last_careunit": "ICU the stay ended in (known only when the stay ends).",
                "los": "Length of stay in fractional days (outtime - intime).",
            },
            {
                "stay_id": "the stay's own id: it exists from the stay's start (intime, not before the admittime)",
                "last_careunit": "the unit the stay ended in",
                "outtime": "the end of the ICU stay (discharge from the ICU or death)",
                "los": "the stay's length: intime + los gives outtime",
            },
        ),
        key=("stay_id",),
        event_time=EventTime(
            ICU_STAY_START, sort=("intime",),
            rationale="an ICU stay is known from its intime, and not before its admission starts (kept only for "
            "hospitalizations: one shown before the admittime, hadm_id NULL, told of the admission: attack25); the "
            "stay's id in every icu table and the visible stay ids follow the same instant (ENCOUNTER_IDS)",
        ),
        ends_at="t.outtime",
        required=True,
    ),
    Table(
        "icu",
        "chartevents",
        "Charted ICU observations: vital signs, ventilator settings, assessments, scores (itemid in icu.d_items).",
        parse_columns(
            f"{_STAY_COLS}, charttime TIMESTAMP event, storetime TIMESTAMP stored, itemid INTEGER event, "
            "value VARCHAR stored, valuenum DOUBLE stored, valueuom VARCHAR stored, warning SMALLINT stored",
            {
                **_STAY_DOCS,
                "charttime": "Time of the observation.",
                "storetime": "Time it was validated.",
                "warning": "1 if the value triggered a warning.",
            },
            _CHARTED_WHY,
        ),
        event_time=_in_stay("charttime"),
        stored_at=_STORED,
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "datetimeevents",
        "Charted date-time observations (e.g. time of last dialysis, line insertion dates).",
        parse_columns(
            f"{_STAY_COLS}, charttime TIMESTAMP event, storetime TIMESTAMP stored, itemid INTEGER event, "
            "value TIMESTAMP stored, valueuom VARCHAR stored, warning SMALLINT stored",
            {**_STAY_DOCS, "value": "The charted date-time itself."},
            {
                **{k: v for k, v in _CHARTED_WHY.items() if k != "valuenum"},
                "value": "a charted date-time, entered at storetime; also NULL while it lies after the cutoff",
            },
        ),
        event_time=_in_stay("charttime"),
        stored_at=_STORED,
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "inputevents",
        "Continuous infusions and intermittent boluses given in the ICU (fluids, vasopressors, sedation, nutrition).",
        parse_columns(
            f"{_STAY_COLS}, starttime TIMESTAMP event, endtime TIMESTAMP end, storetime TIMESTAMP stored, "
            "itemid INTEGER event, amount DOUBLE end, amountuom VARCHAR end, rate DOUBLE end, rateuom VARCHAR event, "
            "orderid INTEGER event, linkorderid INTEGER event, ordercategoryname VARCHAR event, "
            "secondaryordercategoryname VARCHAR event, ordercomponenttypedescription VARCHAR event, "
            "ordercategorydescription VARCHAR event, patientweight DOUBLE event, totalamount DOUBLE end, "
            "totalamountuom VARCHAR end, isopenbag SMALLINT event, continueinnextdept SMALLINT end, "
            "statusdescription VARCHAR end, originalamount DOUBLE end, originalrate DOUBLE event",
            {
                **_INFUSION_DOCS,
                "patientweight": "Weight in kg used for weight-based dosing.",
                "totalamount": "Total volume of the bag.",
            },
            {
                **_INFUSION_WHY,
                "totalamount": "the bag's volume: over originalrate it gives the planned end of a fresh bag",
                "totalamountuom": "the unit of totalamount",
                "patientweight": "the weight used for dosing when the row started",
            },
        ),
        key=("orderid", "itemid", "starttime"),
        event_time=_in_stay("starttime"),
        stored_at="t.storetime",
        ends_at=_FINISHED,
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "ingredientevents",
        "Ingredients (water, calories, electrolytes) of the ICU inputs.",
        parse_columns(
            f"{_STAY_COLS}, starttime TIMESTAMP event, endtime TIMESTAMP end, storetime TIMESTAMP stored, "
            "itemid INTEGER event, amount DOUBLE end, amountuom VARCHAR end, rate DOUBLE end, rateuom VARCHAR event, "
            "orderid INTEGER event, linkorderid INTEGER event, statusdescription VARCHAR end, "
            "originalamount DOUBLE end, originalrate DOUBLE event",
            _INFUSION_DOCS,
            {k: v for k, v in _INFUSION_WHY.items() if k not in ("continueinnextdept", "isopenbag")},
        ),
        event_time=_in_stay("starttime"),
        stored_at="t.storetime",
        ends_at=_FINISHED,
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "outputevents",
        "Fluid outputs charted in the ICU (urine, drains, stool), in mL.",
        parse_columns(
            f"{_STAY_COLS}, charttime TIMESTAMP event, storetime TIMESTAMP stored, itemid INTEGER event, "
            "value DOUBLE stored, valueuom VARCHAR stored",
            _STAY_DOCS,
            {k: v for k, v in _CHARTED_WHY.items() if k in ("storetime", "value", "valueuom")},
        ),
        event_time=_in_stay("charttime"),
        stored_at=_STORED,
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "procedureevents",
        "Procedures documented in the ICU: ventilation, lines, dialysis, imaging, with start and end times.",
        parse_columns(
            f"{_STAY_COLS}, starttime TIMESTAMP event, endtime TIMESTAMP end, storetime TIMESTAMP stored, "
            "itemid INTEGER event, value DOUBLE end, valueuom VARCHAR end, location VARCHAR event, "
            "locationcategory VARCHAR event, orderid INTEGER event, linkorderid INTEGER event, "
            "ordercategoryname VARCHAR event, ordercategorydescription VARCHAR event, patientweight DOUBLE event, "
            "isopenbag SMALLINT event, continueinnextdept SMALLINT end, statusdescription VARCHAR end, "
            "originalamount DOUBLE end alias=ORIGINALAMOUNT, originalrate DOUBLE end alias=ORIGINALRATE",
            {
                **_STAY_DOCS,
                "value": "Duration or count of the procedure, in valueuom.",
                "location": "Body site (lines, drains).",
                "originalamount": "Undocumented in MIMIC-IV; in the demo it equals value (the duration) in 1,432 of 1,468 rows.",
                "originalrate": "Undocumented in MIMIC-IV; in the demo 1 for timed items and 0 otherwise.",
            },
            {
                "endtime": "the end of the procedure",
                "storetime": "when the row was entered (often after endtime)",
                "value": "the procedure's duration: starttime + value gives endtime",
                "valueuom": "the duration's unit: min or day within one item, so it gives the duration's scale",
                "originalamount": "undocumented; equals the duration in minutes in 97% of demo rows "
                "(starttime + originalamount gives endtime): hidden until the end",
                "originalrate": "undocumented in MIMIC-IV: hidden until the end",
                "statusdescription": "why the procedure ended: known at the end",
                "continueinnextdept": "whether the procedure continued after a transfer: known when it ends",
                "location": "the body site, chosen when the procedure starts",
                "isopenbag": "set when the procedure starts",
                "patientweight": "the weight recorded when the row started",
            },
        ),
        key=("orderid",),
        event_time=_in_stay("starttime"),
        stored_at="t.storetime",
        ends_at=_FINISHED,
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "d_items",
        "Dictionary of ICU items (chartevents, inputevents, outputevents, procedureevents, datetimeevents).",
        parse_columns(
            "itemid INTEGER static, label VARCHAR static, abbreviation VARCHAR static, linksto VARCHAR static, "
            "category VARCHAR static, unitname VARCHAR static, param_type VARCHAR static, lownormalvalue DOUBLE static, "
            "highnormalvalue DOUBLE static",
            {
                "linksto": "The event table that uses the item.",
                "param_type": "Numeric, Text, Date time, Solution, Process, ...",
            },
        ),
        key=("itemid",),
        visibility="dictionary",
        required=True,
    ),
    Table(
        "icu",
        "caregiver",
        "Dictionary of de-identified ICU caregiver ids.",
        parse_columns("caregiver_id INTEGER static"),
        key=("caregiver_id",),
        visibility="dictionary",
    ),
)
