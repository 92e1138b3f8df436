"""MIMIC-IV 3.1 ``icu`` module: MetaVision ICU data (https://mimic.mit.edu/docs/iv/modules/icu/)."""

from __future__ import annotations

from ._model import DictJoin, EventTime, Mask, Table, parse_columns

_ITEM = DictJoin(("itemid",), "icu.d_items", ("itemid",), ("label", "category", "unitname"))
_STAY_COLS = "subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, caregiver_id INTEGER"
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
_INFUSION_MASK_REASON = "they describe the finished infusion (and are charted at storetime)"
_FINISHED = "greatest(t.endtime, t.storetime)"
_STORED = "coalesce(t.storetime, t.charttime)"
_STORED_REASON = "charted before the cutoff but entered (storetime) after it"

ICU: tuple[Table, ...] = (
    Table(
        "icu",
        "icustays",
        "One row per ICU stay: first and last care unit, intime, outtime and length of stay in days.",
        parse_columns(
            "subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, first_careunit VARCHAR, last_careunit VARCHAR, "
            "intime TIMESTAMP, outtime TIMESTAMP, los DOUBLE",
            {
                "stay_id": "ICU stay identifier.",
                "first_careunit": "ICU the stay began in.",
                "last_careunit": "ICU the stay ended in (known only when the stay ends).",
                "los": "Length of stay in fractional days (outtime - intime).",
            },
        ),
        key=("stay_id",),
        event_time=EventTime("t.intime", sort=("intime",)),
        masks=(Mask(("outtime", "los", "last_careunit"), "t.outtime", "the stay is still open"),),
        required=True,
    ),
    Table(
        "icu",
        "chartevents",
        "Charted ICU observations: vital signs, ventilator settings, assessments, scores (itemid in icu.d_items).",
        parse_columns(
            f"{_STAY_COLS}, charttime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, value VARCHAR, valuenum DOUBLE, "
            "valueuom VARCHAR, warning SMALLINT",
            {
                **_STAY_DOCS,
                "charttime": "Time of the observation.",
                "storetime": "Time it was validated.",
                "warning": "1 if the value triggered a warning.",
            },
        ),
        event_time=EventTime("t.charttime", sort=("charttime",)),
        masks=(Mask(("value", "valuenum", "valueuom", "warning"), _STORED, _STORED_REASON),),
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "datetimeevents",
        "Charted date-time observations (e.g. time of last dialysis, line insertion dates).",
        parse_columns(
            f"{_STAY_COLS}, charttime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, value TIMESTAMP, valueuom VARCHAR, "
            "warning SMALLINT",
            {**_STAY_DOCS, "value": "The charted date-time itself."},
        ),
        event_time=EventTime("t.charttime", sort=("charttime",)),
        masks=(Mask(("value", "valueuom", "warning"), _STORED, _STORED_REASON),),
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "inputevents",
        "Continuous infusions and intermittent boluses given in the ICU (fluids, vasopressors, sedation, nutrition).",
        parse_columns(
            f"{_STAY_COLS}, starttime TIMESTAMP, endtime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, amount DOUBLE, "
            "amountuom VARCHAR, rate DOUBLE, rateuom VARCHAR, orderid INTEGER, linkorderid INTEGER, "
            "ordercategoryname VARCHAR, secondaryordercategoryname VARCHAR, ordercomponenttypedescription VARCHAR, "
            "ordercategorydescription VARCHAR, patientweight DOUBLE, totalamount DOUBLE, totalamountuom VARCHAR, "
            "isopenbag SMALLINT, continueinnextdept SMALLINT, statusdescription VARCHAR, originalamount DOUBLE, "
            "originalrate DOUBLE",
            {
                **_INFUSION_DOCS,
                "patientweight": "Weight in kg used for weight-based dosing.",
                "totalamount": "Total volume of the bag.",
            },
        ),
        key=("orderid", "itemid", "starttime"),
        event_time=EventTime("t.starttime", sort=("starttime",)),
        masks=(
            Mask(
                ("endtime", "amount", "totalamount", "originalamount", "statusdescription"),
                _FINISHED,
                _INFUSION_MASK_REASON,
            ),
        ),
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "ingredientevents",
        "Ingredients (water, calories, electrolytes) of the ICU inputs.",
        parse_columns(
            f"{_STAY_COLS}, starttime TIMESTAMP, endtime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, amount DOUBLE, "
            "amountuom VARCHAR, rate DOUBLE, rateuom VARCHAR, orderid INTEGER, linkorderid INTEGER, "
            "statusdescription VARCHAR, originalamount DOUBLE, originalrate DOUBLE",
            _INFUSION_DOCS,
        ),
        event_time=EventTime("t.starttime", sort=("starttime",)),
        masks=(
            Mask(
                ("endtime", "amount", "originalamount", "statusdescription"),
                _FINISHED,
                _INFUSION_MASK_REASON,
            ),
        ),
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "outputevents",
        "Fluid outputs charted in the ICU (urine, drains, stool), in mL.",
        parse_columns(
            f"{_STAY_COLS}, charttime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, value DOUBLE, valueuom VARCHAR",
            _STAY_DOCS,
        ),
        event_time=EventTime("t.charttime", sort=("charttime",)),
        masks=(Mask(("value", "valueuom"), _STORED, _STORED_REASON),),
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "procedureevents",
        "Procedures documented in the ICU: ventilation, lines, dialysis, imaging, with start and end times.",
        parse_columns(
            f"{_STAY_COLS}, starttime TIMESTAMP, endtime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, value DOUBLE, "
            "valueuom VARCHAR, location VARCHAR, locationcategory VARCHAR, orderid INTEGER, linkorderid INTEGER, "
            "ordercategoryname VARCHAR, ordercategorydescription VARCHAR, patientweight DOUBLE, isopenbag SMALLINT, "
            "continueinnextdept SMALLINT, statusdescription VARCHAR, originalamount DOUBLE alias=ORIGINALAMOUNT, "
            "originalrate DOUBLE alias=ORIGINALRATE",
            {
                **_STAY_DOCS,
                "value": "Duration or count of the procedure, in valueuom.",
                "location": "Body site (lines, drains).",
            },
        ),
        key=("orderid",),
        event_time=EventTime("t.starttime", sort=("starttime",)),
        masks=(
            Mask(
                ("endtime", "value", "statusdescription"),
                _FINISHED,
                "a duration is known once the procedure ends",
            ),
        ),
        dict_joins=(_ITEM,),
    ),
    Table(
        "icu",
        "d_items",
        "Dictionary of ICU items (chartevents, inputevents, outputevents, procedureevents, datetimeevents).",
        parse_columns(
            "itemid INTEGER, label VARCHAR, abbreviation VARCHAR, linksto VARCHAR, category VARCHAR, unitname VARCHAR, "
            "param_type VARCHAR, lownormalvalue DOUBLE, highnormalvalue DOUBLE",
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
        parse_columns("caregiver_id INTEGER"),
        key=("caregiver_id",),
        visibility="dictionary",
    ),
)
