"""MIMIC-IV 3.1 ``hosp`` module: hospital-wide EHR data (https://mimic.mit.edu/docs/iv/modules/hosp/)."""

from __future__ import annotations

from ._model import DictJoin, EventTime, ParentTime, Pending, Sequence, Table, parse_columns, renumbered_by

_LAB_RESULT = ("value", "valuenum", "valueuom", "flag", "storetime")
_MICRO_RESULT = (
    "org_itemid",
    "org_name",
    "isolate_num",
    "quantity",
    "ab_itemid",
    "ab_name",
    "dilution_text",
    "dilution_comparison",
    "dilution_value",
    "interpretation",
    "comments",
)
_ICD_DICT = "icd_code VARCHAR static, icd_version SMALLINT static, long_title VARCHAR static"
_ADMISSION = ParentTime("hosp.admissions", ("hadm_id",), "t.dischtime")


def _billed_together(table: str) -> ParentTime:
    """The admission's codes of ``table`` (a table with a ``chartdate``) are known together: at the latest of
    its discharge and the end of the day of its last coded event. Each code's own day would show the earlier
    ones first, and their ``seq_num`` (the priority, 1 = principal) would count the codes still hidden (a
    procedure charted on the discharge day, or after it, in 3 demo admissions)."""
    last = f"(SELECT max(c.chartdate) FROM {table} c WHERE c.subject_id = t.subject_id AND c.hadm_id = t.hadm_id)"
    # greatest skips a NULL: without a discharge time the codes are never known (as diagnoses_icd's), not on the
    # day after the last coded event while the patient is still in hospital (attack15)
    return ParentTime(
        "hosp.admissions", ("hadm_id",),
        f"CASE WHEN t.dischtime IS NOT NULL THEN greatest(t.dischtime, {last} + INTERVAL 1 DAY) END",
    )


_BILLED_RATIONALE = (
    "billing codes are assigned after discharge, all of an admission's together (some encode durations, "
    "ventilation >= 96 h): known at the later of the discharge and the end of the day of its last coded event"
)
_TIME_TEXT = (
    r"^[0-9]{4}-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9](:[0-5][0-9](\.[0-9]+)?)?$"
)
"""A text value that reads as a timestamp (``YYYY-MM-DD HH:MM[:SS[.f]]``), in SQL both DuckDB and PostgreSQL read."""
_CONSULT_FIELDS = "'Consult Status', 'Consult Status Time'"
_CONSULT_ANSWERED = (
    f"(SELECT min(CASE WHEN regexp_matches(s.field_value, '{_TIME_TEXT}') THEN try_cast(s.field_value AS TIMESTAMP) "
    "END) FROM hosp.poe_detail s WHERE s.poe_id = t.poe_id AND s.field_name = 'Consult Status Time')"
)
"""When a consult order is answered: its 'Consult Status Time' detail, if written as a time (else never)."""
POE_SEQUENCE = Sequence("hosp.poe", "poe_id", "poe_seq")
"""A patient's provider orders, numbered in entry order (an order placed for a later time, e.g. an admission
order entered days ahead, comes before orders placed in between)."""


def admitted(row: str, otherwise: str) -> str:
    """SQL: the admittime of the admission the row's hadm_id names (``otherwise`` for a row of none)."""
    return f"coalesce((SELECT min(a.admittime) FROM hosp.admissions a WHERE a.hadm_id = {row}.hadm_id), {otherwise})"


_POE_KNOWN = f"CASE WHEN t.ordertime IS NOT NULL THEN greatest(t.ordertime, {admitted('t', 't.ordertime')}) END"
"""When a provider order is known: its ordertime, and not before its admission's admittime. MIMIC-IV keeps orders
only for hospitalizations (``poe.hadm_id`` is never NULL): the orders of an ED visit that ends at home are not in
the data, so one placed in the ED of a patient admitted later (2,281 of the demo's orders, 183 admissions, up to
19 h ahead), shown from its ordertime, told that an admission was coming (attack21). An order of no admission
(NULL ``hadm_id``, not in MIMIC) is known at its ordertime."""
_TRANSFER_KNOWN = (
    "CASE WHEN t.intime IS NOT NULL THEN CASE WHEN upper(t.eventtype) = 'ED' THEN t.intime "
    f"ELSE greatest(t.intime, {admitted('t', 't.intime')}) END END"
)
"""When a stay in a unit is known: its intime; a unit stay of a hospitalization (every row but an ED visit's) not
before its admission's admittime. MIMIC-IV keeps ED visits whether the patient is admitted or sent home, but the
other rows (eventtype admit, transfer) only for hospitalizations: a same-day surgical patient's pre-operative
'admit' row (Discharge Lounge, 19 of the demo's admissions, up to 10.8 h before the admittime; a CVICU 'transfer'
row twice, a 'Cardiac Surgery' row once), shown from its intime, its hadm_id NULL, told that an admission was
coming (attack25)."""
_SERVICE_KNOWN = (
    f"CASE WHEN t.transfertime IS NOT NULL THEN greatest(t.transfertime, {admitted('t', 't.transfertime')}) END"
)
"""When a service assignment is known: its transfertime, and not before its admission's admittime. MIMIC-IV keeps
services only for hospitalizations (``services.hadm_id`` is never NULL): the first service of a same-day surgical
admission is assigned when the patient arrives (20 of the demo's admissions, up to 10.8 h before the admittime);
shown from its transfertime, its hadm_id NULL, it told that an admission was coming, and its service (CSURG,
NSURG, ...) what for (attack25)."""
EMAR_SEQUENCE = Sequence("hosp.emar", "emar_id", "emar_seq")
"""A patient's eMAR rows, numbered in storage order (storetime: 100 % of the demo's rows), not charttime."""
_POE_REF_WHY = (
    "names the provider order, which can be placed after this row's time (up to 16 days in the MIMIC-IV demo), "
    "by its per-patient counter: the renumbered order once it is placed, NULL until then"
)
_POE_SEQ_WHY = (
    "MIMIC's per-patient order counter (entry order, not ordertime: gaps would count orders to come): "
    "renumbered by ordertime among the visible orders"
)
_EMAR_SEQ_WHY = (
    "MIMIC's per-patient eMAR counter (storage order, not charttime: gaps would count administrations charted "
    "after the cutoff): renumbered by charttime among the visible administrations"
)


_PHARMACY_TIME = (
    f"CASE WHEN t.starttime IS NOT NULL THEN greatest(t.starttime, t.entertime, {admitted('t', 't.starttime')}) END"
)
"""When a pharmacy order is known: once it has started and been entered into the pharmacy system (570 demo
prescriptions were entered more than an hour after their starttime, up to 4 days): a NULL entertime counts as
its starttime, a NULL starttime never; and not before its admission starts: MIMIC keeps pharmacy orders only for
hospitalizations, so one shown before its admittime, its hadm_id NULL, told that an admission was coming (attack21:
one demo order, 6 days ahead)."""
_PHARMACY_REF = (
    "(SELECT min(CASE WHEN p.starttime IS NOT NULL THEN "
    f"greatest(p.starttime, p.entertime, {admitted('p', 'p.starttime')}) END) "
    "FROM hosp.pharmacy p WHERE p.pharmacy_id = t.pharmacy_id)"
)
_EMAR_KNOWN = "greatest(t.charttime, t.storetime)"
_EMAR_KNOWN_WHY = (
    "an administration is in the record once documented (storetime), and not before its charttime: the "
    "row exists from its storetime (documented later, or ahead, as 'Not Given' up to 12 h ahead in the MIMIC-IV "
    "demo); shown before it, its presence, its charttime against scheduletime (35 % vs 3.6 % not given) and its "
    "details told what was documented (attack16)"
)
_PHARMACY_REF_WHY = (
    "names the pharmacy order, which can start (or be entered) after the administration is charted (up to 2.25 "
    "days in the MIMIC-IV demo): NULL until that order is visible (its starttime, or its entertime if later)"
)
_ICD_DICT_DX = DictJoin(
    ("icd_code", "icd_version"), "hosp.d_icd_diagnoses", ("icd_code", "icd_version"), ("long_title",)
)
_ICD_DICT_PX = DictJoin(
    ("icd_code", "icd_version"), "hosp.d_icd_procedures", ("icd_code", "icd_version"), ("long_title",)
)

HOSP: tuple[Table, ...] = (
    Table(
        "hosp",
        "patients",
        "One row per patient: sex, age at the anchor year, the de-identified anchor year group, "
        "and date of death (from hospital records and state death records, up to one year after the last discharge).",
        parse_columns(
            "subject_id INTEGER static, gender VARCHAR static, anchor_age SMALLINT static, anchor_year SMALLINT static, "
            "anchor_year_group VARCHAR static, dod DATE own_time",
            {
                "anchor_age": "Age in years in anchor_year (patients over 89 are grouped as 91).",
                "anchor_year": "A shifted year; the patient's real year lies in anchor_year_group.",
                "anchor_year_group": "Three-year range of the real year that anchor_year stands for.",
                "dod": "Date of death (date only); an outcome, visible only once that day has ended before the cutoff.",
            },
            {
                "anchor_age": "the de-identified age in anchor_year: one value for the whole record",
                "dod": "an outcome: known at the earliest once the day of death has ended",
            },
        ),
        key=("subject_id",),
        visibility="static",
        required=True,
    ),
    Table(
        "hosp",
        "admissions",
        "One row per hospital admission: admission and discharge times, type and location, insurance, "
        "demographics, and in-hospital death.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER event, admittime TIMESTAMP event, dischtime TIMESTAMP end, "
            "deathtime TIMESTAMP end, admission_type VARCHAR event, admit_provider_id VARCHAR event, "
            "admission_location VARCHAR event, discharge_location VARCHAR end, insurance VARCHAR event, "
            "language VARCHAR event, marital_status VARCHAR event, race VARCHAR event, edregtime TIMESTAMP own_time, "
            "edouttime TIMESTAMP own_time, hospital_expire_flag SMALLINT end",
            {
                "hadm_id": "Hospital admission identifier.",
                "admittime": "Time of admission to the hospital.",
                "dischtime": "Time of discharge (or death) from the hospital.",
                "deathtime": "Time of in-hospital death, if the patient died in hospital.",
                "admission_type": "Urgency and kind of admission (e.g. EW EMER., ELECTIVE, URGENT, OBSERVATION ADMIT).",
                "admit_provider_id": "De-identified provider who admitted the patient.",
                "discharge_location": "Where the patient went at discharge (HOME, SKILLED NURSING FACILITY, DIED, ...).",
                "edregtime": "Registration time in the emergency department, if admitted through it.",
                "edouttime": "Time the patient left the emergency department.",
                "hospital_expire_flag": "1 if the patient died during this admission, else 0.",
            },
            {
                "hadm_id": "the admission's own id: it exists from admittime",
                "dischtime": "the end of the admission",
                "deathtime": "an outcome: death ends the admission (deathtime <= dischtime)",
                "discharge_location": "an outcome decided at discharge (DIED, HOSPICE, HOME, ...)",
                "hospital_expire_flag": "an outcome: in-hospital death, known at discharge",
                "admission_type": "recorded at admission (registration)",
                "insurance": "recorded at registration",
                "edregtime": "ED registration: normally before admittime; shown once it has passed",
                "edouttime": "leaving the ED can follow admittime; shown once it has passed",
            },
        ),
        key=("hadm_id",),
        event_time=EventTime(
            "t.admittime", sort=("admittime",), rationale="an admission exists from its admittime"
        ),
        ends_at="t.dischtime",
        required=True,
    ),
    Table(
        "hosp",
        "transfers",
        "Every ward/unit the patient stayed in (ED, wards, ICUs), with intime and outtime; "
        "eventtype is admit, transfer, discharge or ED.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, transfer_id INTEGER event, eventtype VARCHAR event, "
            "careunit VARCHAR event, intime TIMESTAMP event, outtime TIMESTAMP end",
            {
                "hadm_id": "Admission identifier; NULL for ED visits that did not lead to admission.",
                "eventtype": "ed, admit, transfer or discharge.",
                "careunit": "The unit the patient was in (e.g. Medical Intensive Care Unit (MICU)).",
            },
            {
                "outtime": "leaving the unit ends the stay in it (the last one is the discharge or death)",
                "eventtype": "the kind of move into the unit, known when it happens ('discharge' rows start at dischtime)",
            },
        ),
        key=("transfer_id",),
        event_time=EventTime(
            _TRANSFER_KNOWN, sort=("intime",),
            rationale="a stay in a unit is known when it starts; one of a hospitalization (every row but an ED "
            "visit's) not before its admission starts (kept only for hospitalizations: a pre-operative 'admit' row "
            "shown before the admittime, hadm_id NULL, told of the admission: attack25)",
        ),
        ends_at="t.outtime",
        required=True,
    ),
    Table(
        "hosp",
        "services",
        "The clinical service (e.g. MED, SURG, CMED) the patient was under, with the time of each change.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, transfertime TIMESTAMP event, "
            "prev_service VARCHAR event, curr_service VARCHAR event",
        ),
        key=("hadm_id", "transfertime"),
        event_time=EventTime(
            _SERVICE_KNOWN, sort=("transfertime",),
            rationale="a service is known from its transfertime, and not before its admission starts (kept only for "
            "hospitalizations: one shown before the admittime, hadm_id NULL, told of the admission and its service: "
            "attack25)",
        ),
    ),
    Table(
        "hosp",
        "diagnoses_icd",
        "Billed ICD-9/ICD-10 diagnoses per admission, ranked by seq_num. Assigned by coders after discharge.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, seq_num INTEGER event, icd_code VARCHAR event, "
            "icd_version SMALLINT event",
            {
                "seq_num": "Priority of the code within the admission (1 = principal).",
                "icd_version": "9 or 10.",
            },
        ),
        key=("hadm_id", "seq_num"),
        event_time=EventTime(
            "parent_time",
            parent=_ADMISSION,
            sort=("hadm_id", "seq_num"),
            rationale="billing codes are assigned after discharge, so they become known at the admission's dischtime",
        ),
        target_key="hadm_id",
        dict_joins=(_ICD_DICT_DX,),
        required=True,
    ),
    Table(
        "hosp",
        "drgcodes",
        "Diagnosis-related groups (HCFA or APR) billed for an admission, with APR severity and mortality risk.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, drg_type VARCHAR event, drg_code VARCHAR event, "
            "description VARCHAR event, drg_severity SMALLINT event, drg_mortality SMALLINT event",
            {
                "drg_type": "HCFA or APR.",
                "drg_severity": "APR-DRG severity of illness (1-4).",
                "drg_mortality": "APR-DRG risk of mortality (1-4).",
            },
        ),
        key=("hadm_id", "drg_type"),
        event_time=EventTime(
            "parent_time", parent=_ADMISSION, sort=("hadm_id",), rationale="billed after discharge"
        ),
        target_key="hadm_id",
    ),
    Table(
        "hosp",
        "procedures_icd",
        "Billed ICD-9/ICD-10 procedures per admission with the date performed.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, seq_num INTEGER event, chartdate DATE event, "
            "icd_code VARCHAR event, icd_version SMALLINT event",
            {"chartdate": "Date of the procedure (date only)."},
        ),
        key=("hadm_id", "seq_num"),
        event_time=EventTime(
            "parent_time",
            parent=_billed_together("hosp.procedures_icd"),
            sort=("chartdate",),
            rationale=_BILLED_RATIONALE,
        ),
        target_key="hadm_id",
        dict_joins=(_ICD_DICT_PX,),
    ),
    Table(
        "hosp",
        "hcpcsevents",
        "Billed HCPCS/CPT events (procedures and services) per admission.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, chartdate DATE event, hcpcs_cd VARCHAR event, "
            "seq_num INTEGER event, short_description VARCHAR event",
        ),
        key=("hadm_id", "seq_num"),
        event_time=EventTime(
            "parent_time",
            parent=_billed_together("hosp.hcpcsevents"),
            sort=("chartdate",),
            rationale=_BILLED_RATIONALE,
        ),
        target_key="hadm_id",
        dict_joins=(DictJoin(("hcpcs_cd",), "hosp.d_hcpcs", ("code",), ("long_description",)),),
    ),
    Table(
        "hosp",
        "labevents",
        "Laboratory measurements (blood, urine, other fluids), in and out of hospital, with units, "
        "reference ranges and abnormal flags. charttime is the specimen time; storetime is when the result was available. "
        "A specimen whose results are still pending shows as one row (itemid and results NULL).",
        parse_columns(
            "labevent_id INTEGER stored, subject_id INTEGER static, hadm_id INTEGER encounter, specimen_id INTEGER event, "
            "itemid INTEGER stored, order_provider_id VARCHAR event, charttime TIMESTAMP event, storetime TIMESTAMP stored, "
            "value VARCHAR stored, valuenum DOUBLE stored, valueuom VARCHAR stored, ref_range_lower DOUBLE stored, "
            "ref_range_upper DOUBLE stored, flag VARCHAR stored, priority VARCHAR event, comments VARCHAR stored",
            {
                "hadm_id": "Admission identifier; NULL for outpatient labs.",
                "specimen_id": "Groups measurements made on one specimen.",
                "labevent_id": "Row identifier; NULL on a pending specimen's row.",
                "itemid": "Lab test; join hosp.d_labitems for its label. NULL on a pending specimen's row.",
                "charttime": "Time the specimen was drawn.",
                "storetime": "Time the result was available (validated).",
                "value": "Result as text.",
                "valuenum": "Result as a number, in valueuom.",
                "flag": "'abnormal' when outside the reference range.",
                "priority": "ROUTINE or STAT.",
            },
            {
                **{c: "the result: a specimen drawn before the cutoff may be resulted after it" for c in _LAB_RESULT},
                "ref_range_lower": "reported with the result",
                "ref_range_upper": "reported with the result",
                "comments": "written with the result",
                "priority": "set when the specimen is ordered (the same for every row of a specimen in the MIMIC-IV demo)",
                "labevent_id": "MIMIC numbers a patient's lab rows in specimen-time order: a store id would count a pending "
                "specimen's rows; NULL while pending, else renumbered 1..n by the instant it is shown (its result's), then id",
                "itemid": "the test: the lab adds tests to a specimen after an abnormal automated count (a manual "
                "differential, a smear review), so a pending test's name would tell the result; while pending, one row per "
                "specimen shows, without its test, and none once a test of the specimen is resulted (a test added "
                "after the first results, ordered after the cutoff, would show as pending before it)",
            },
        ),
        key=("labevent_id",),
        event_time=EventTime("t.charttime", sort=("charttime",), rationale="the specimen time"),
        stored_at="coalesce(t.storetime, t.charttime)",
        dict_joins=(DictJoin(("itemid",), "hosp.d_labitems", ("itemid",), ("label", "fluid", "category")),),
        pending=Pending(("specimen_id",), renumber="labevent_id"),
        required=True,
    ),
    Table(
        "hosp",
        "microbiologyevents",
        "Microbiology cultures and tests: specimen, test, organisms grown and antibiotic susceptibilities.",
        parse_columns(
            "microevent_id INTEGER stored, subject_id INTEGER static, hadm_id INTEGER encounter, "
            "micro_specimen_id INTEGER event, order_provider_id VARCHAR event, chartdate DATE event, "
            "charttime TIMESTAMP event, spec_itemid INTEGER event, spec_type_desc VARCHAR event, test_seq INTEGER final, "
            "storedate DATE stored, storetime TIMESTAMP stored, test_itemid INTEGER stored, test_name VARCHAR stored, "
            "org_itemid INTEGER stored, org_name VARCHAR stored, isolate_num SMALLINT stored, quantity VARCHAR stored, "
            "ab_itemid INTEGER stored, ab_name VARCHAR stored, dilution_text VARCHAR stored, "
            "dilution_comparison VARCHAR stored, dilution_value DOUBLE stored, interpretation VARCHAR stored, "
            "comments VARCHAR stored",
            {
                "chartdate": "Date of the specimen (used when charttime is missing).",
                "charttime": "Time of the specimen.",
                "spec_type_desc": "Specimen type (BLOOD CULTURE, URINE, SWAB, ...).",
                "storedate": "Date the result was available.",
                "storetime": "Time the result was available.",
                "test_name": "The test performed on the specimen.",
                "org_name": "Organism grown; NULL if none.",
                "ab_name": "Antibiotic tested for susceptibility.",
                "interpretation": "S (sensitive), R (resistant), I (intermediate), P (pending).",
            },
            {
                **{c: "the culture's result: known once resulted (storetime, else the end of storedate)" for c in _MICRO_RESULT},
                "microevent_id": "one row per organism x antibiotic: a store id would count a pending result's rows; "
                "NULL while pending, else renumbered 1..n by the instant it is shown (its result's), then id",
                "storedate": "when the result was available",
                "storetime": "when the result was available",
                "test_name": "the test: the lab adds tests to a specimen after a result (the Gram stain of a blood culture "
                "bottle that flagged positive), so a pending test's name would tell the result; while pending, one row per "
                "specimen shows, without its test, and none once a test of the specimen is resulted (a test added "
                "after a result would show as pending before it)",
                "test_itemid": "the test's id, as test_name",
                "test_seq": "the test's ordinal in the specimen, numbered over all its tests: among the resulted rows a gap "
                "would count the tests still pending (a resulted test 3 tells that tests 1 and 2, e.g. the Gram stains "
                "added to a positive bottle, are pending); never shown",
            },
        ),
        key=("microevent_id",),
        event_time=EventTime(
            "coalesce(t.charttime, t.chartdate + INTERVAL 1 DAY)",
            sort=("chartdate", "charttime"),
            rationale="specimen time",
        ),
        stored_at="coalesce(t.storetime, t.storedate + INTERVAL 1 DAY)",
        pending=Pending(("micro_specimen_id",), renumber="microevent_id"),
    ),
    Table(
        "hosp",
        "prescriptions",
        "Medications prescribed (ordered), with dose, route, formulary code, GSN and NDC.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, pharmacy_id INTEGER event, poe_id VARCHAR sequence, "
            "poe_seq INTEGER sequence, order_provider_id VARCHAR event, starttime TIMESTAMP event, stoptime TIMESTAMP end, "
            "drug_type VARCHAR event, drug VARCHAR event, formulary_drug_cd VARCHAR event, gsn VARCHAR event, "
            "ndc VARCHAR event, prod_strength VARCHAR event, form_rx VARCHAR event, dose_val_rx VARCHAR event, "
            "dose_unit_rx VARCHAR event, form_val_disp VARCHAR event, form_unit_disp VARCHAR event, "
            "doses_per_24_hrs DOUBLE event, route VARCHAR event",
            {
                "drug_type": "MAIN, BASE (a diluent) or ADDITIVE.",
                "gsn": "Generic Sequence Number(s), space separated.",
                "ndc": "National Drug Code.",
                "dose_val_rx": "Prescribed dose (text; may be a range).",
            },
            {
                "stoptime": "the end of the prescription (planned or actual): shown once it has passed",
                "poe_id": _POE_REF_WHY,
                "poe_seq": _POE_REF_WHY,
            },
        ),
        key=("pharmacy_id", "drug", "drug_type"),
        event_time=EventTime(
            "CASE WHEN t.starttime IS NOT NULL THEN "
            f"greatest(t.starttime, parent_time, {admitted('t', 't.starttime')}) END",
            parent=ParentTime("hosp.pharmacy", ("pharmacy_id",), "coalesce(t.entertime, TIMESTAMP '-infinity')"),
            sort=("starttime",),
            rationale="a prescription is evidence once it starts and its order is entered into the pharmacy system "
            "(up to 4 days after a back-dated starttime in the MIMIC-IV demo; a NULL entertime: its starttime); "
            "a prescription without a pharmacy row is never shown; and not before its admission starts (kept only "
            "for hospitalizations: one shown before its admittime, hadm_id NULL, told of the admission: attack21)",
        ),
        ends_at="t.stoptime",
        renumbered=renumbered_by(POE_SEQUENCE, "poe_id", id="poe_id", counter="poe_seq"),
        required=True,
    ),
    Table(
        "hosp",
        "pharmacy",
        "Pharmacy dispensing records for each medication order: drug, route, frequency, schedule and status.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, pharmacy_id INTEGER event, poe_id VARCHAR sequence, "
            "starttime TIMESTAMP event, stoptime TIMESTAMP end, medication VARCHAR event, proc_type VARCHAR event, "
            "status VARCHAR end, entertime TIMESTAMP own_time, verifiedtime TIMESTAMP own_time, route VARCHAR event, "
            "frequency VARCHAR event, disp_sched VARCHAR event, infusion_type VARCHAR event, sliding_scale VARCHAR event, "
            "lockout_interval VARCHAR event, basal_rate DOUBLE event, one_hr_max VARCHAR event, "
            "doses_per_24_hrs DOUBLE event, duration DOUBLE end, duration_interval VARCHAR end, "
            "expiration_value INTEGER end, expiration_unit VARCHAR end, expirationdate TIMESTAMP end, "
            "dispensation VARCHAR event, fill_quantity VARCHAR event",
            {
                "status": "Final state of the order (Active, Discontinued, Expired, ...).",
                "entertime": "Time the order was entered into the pharmacy system.",
                "verifiedtime": "Time a pharmacist verified the order.",
                "duration": "Ordered duration, in duration_interval units (Hours, Days, Doses, ...).",
            },
            {
                "stoptime": "the end of the order (planned or actual): shown once it has passed",
                "status": "the order's final state ('Discontinued via patient discharge' names the discharge)",
                "duration": "the planned duration: starttime + duration gives stoptime in most timed orders",
                "duration_interval": "the unit of the planned duration",
                "expiration_value": "a planned expiry relative to the start; unclear in MIMIC's documentation: hidden",
                "expiration_unit": "the unit of the planned expiry",
                "expirationdate": "a planned expiry time",
                "entertime": "entry into the pharmacy system can follow starttime; shown once it has passed",
                "verifiedtime": "verification can follow starttime; shown once it has passed",
                "poe_id": _POE_REF_WHY,
            },
        ),
        key=("pharmacy_id",),
        event_time=EventTime(
            _PHARMACY_TIME,
            sort=("starttime",),
            rationale="an order entered but not started is not yet evidence of the next medication, nor one "
            "started (back-dated) but not yet entered into the pharmacy system, nor one of an admission not yet "
            "started (kept only for hospitalizations: shown before its admittime, hadm_id NULL, it told of the "
            "admission: attack21)",
        ),
        ends_at="t.stoptime",
        renumbered=renumbered_by(POE_SEQUENCE, "poe_id", id="poe_id"),
        required=True,  # prescriptions take their time from it: without it none would be visible
    ),
    Table(
        "hosp",
        "emar",
        "Electronic medication administration record: each administration (or refusal/hold) charted by nursing.",
        parse_columns(
            "subject_id INTEGER static, hadm_id INTEGER encounter, emar_id VARCHAR sequence, emar_seq INTEGER sequence, "
            "poe_id VARCHAR sequence, pharmacy_id INTEGER reference, enter_provider_id VARCHAR stored, "
            "charttime TIMESTAMP event, "
            "medication VARCHAR event, event_txt VARCHAR stored, scheduletime TIMESTAMP own_time, "
            "storetime TIMESTAMP stored",
            {
                "emar_id": "Administration identifier (subject_id-emar_seq).",
                "charttime": "Time of administration.",
                "event_txt": "What happened (Administered, Not Given, Held, ...).",
                "scheduletime": "Time the administration was scheduled.",
                "storetime": "Time the administration was recorded in the eMAR.",
            },
            {
                "event_txt": "recorded at storetime, with the row",
                "enter_provider_id": "the provider who recorded the row, at storetime",
                "storetime": "when the administration was recorded",
                "scheduletime": "a planned time: shown once it has passed",
                "medication": "the scheduled medication, known from the order",
                "emar_id": _EMAR_SEQ_WHY,
                "emar_seq": _EMAR_SEQ_WHY,
                "poe_id": _POE_REF_WHY,
                "pharmacy_id": _PHARMACY_REF_WHY,
            },
        ),
        key=("emar_id",),
        event_time=EventTime(_EMAR_KNOWN, sort=("charttime",), rationale=_EMAR_KNOWN_WHY),
        stored_at="coalesce(t.storetime, t.charttime)",
        references=(("pharmacy_id", _PHARMACY_REF),),
        renumbered=(
            *renumbered_by(EMAR_SEQUENCE, "emar_id", id="emar_id", counter="emar_seq"),
            *renumbered_by(POE_SEQUENCE, "poe_id", id="poe_id"),
        ),
    ),
    Table(
        "hosp",
        "emar_detail",
        "Details of each eMAR administration: dose due and given, product, infusion rates, route and site.",
        parse_columns(
            "subject_id INTEGER static, emar_id VARCHAR sequence, emar_seq INTEGER sequence, "
            "parent_field_ordinal VARCHAR event, administration_type VARCHAR event, "
            "pharmacy_id INTEGER reference, barcode_type VARCHAR event, reason_for_no_barcode VARCHAR event, "
            "complete_dose_not_given VARCHAR event, dose_due VARCHAR event, dose_due_unit VARCHAR event, "
            "dose_given VARCHAR event, dose_given_unit VARCHAR event, "
            "will_remainder_of_dose_be_given VARCHAR event, product_amount_given VARCHAR event, "
            "product_unit VARCHAR event, product_code VARCHAR event, product_description VARCHAR event, "
            "product_description_other VARCHAR event, prior_infusion_rate VARCHAR event, "
            "infusion_rate VARCHAR event, infusion_rate_adjustment VARCHAR event, "
            "infusion_rate_adjustment_amount VARCHAR event, infusion_rate_unit VARCHAR event, "
            "route VARCHAR event, infusion_complete VARCHAR event, completion_interval VARCHAR event, "
            "new_iv_bag_hung VARCHAR event, continued_infusion_in_other_location VARCHAR event, "
            "restart_interval VARCHAR event, side VARCHAR event, site VARCHAR event, "
            "non_formulary_visual_verification VARCHAR event",
            {
                "parent_field_ordinal": "Orders several detail rows of one administration (e.g. 1.1, 1.2); text."
            },
            {
                "administration_type": "documented with the administration, at its eMAR storetime",
                "dose_given": "documented with the administration, at its eMAR storetime",
                "infusion_complete": "documented with the administration, at its eMAR storetime",
                "pharmacy_id": _PHARMACY_REF_WHY,
                "emar_id": _EMAR_SEQ_WHY,
                "emar_seq": _EMAR_SEQ_WHY,
            },
        ),
        key=("emar_id", "parent_field_ordinal"),
        event_time=EventTime(
            "parent_time",
            parent=ParentTime("hosp.emar", ("emar_id",), _EMAR_KNOWN),
            sort=("emar_id",),
            rationale=(
                "written with the administration's documentation, visible with it: one row per product given, so "
                "their number tells whether the dose was given (attack16)"
            ),
        ),
        references=(("pharmacy_id", _PHARMACY_REF),),
        renumbered=renumbered_by(EMAR_SEQUENCE, "emar_id", id="emar_id", counter="emar_seq"),
    ),
    Table(
        "hosp",
        "poe",
        "Provider order entry: every order (medications, labs, imaging, ADT, consults, ...) with its type and links.",
        parse_columns(
            "poe_id VARCHAR sequence, poe_seq INTEGER sequence, subject_id INTEGER static, hadm_id INTEGER encounter, "
            "ordertime TIMESTAMP event, order_type VARCHAR event, order_subtype VARCHAR event, "
            "transaction_type VARCHAR event, discontinue_of_poe_id VARCHAR sequence, discontinued_by_poe_id VARCHAR sequence, "
            "order_provider_id VARCHAR event, order_status VARCHAR final",
            {
                "order_type": "Broad order category (Medications, Lab, Radiology, ADT orders, ...).",
                "transaction_type": "New, Change, D/C, ...",
                "discontinue_of_poe_id": "The earlier order this order discontinues.",
                "discontinued_by_poe_id": "The later order that discontinued this one.",
                "order_status": "Final status (Active/Inactive); reflects the order's final state.",
            },
            {
                "poe_id": _POE_SEQ_WHY,
                "poe_seq": _POE_SEQ_WHY,
                "discontinue_of_poe_id": "names an earlier order (the one this order discontinues) by its counter: "
                "renumbered; NULL where the store lacks it",
                "discontinued_by_poe_id": "names a later order by its counter: the renumbered order once it is "
                "placed, NULL until then",
                "order_status": "the order's final state, with no time of its own",
            },
        ),
        key=("poe_id",),
        event_time=EventTime(
            _POE_KNOWN, sort=("ordertime",),
            rationale="an order is known from its ordertime, and not before its admission starts: MIMIC keeps "
            "orders only for hospitalizations (hadm_id is never NULL), so an order placed in the ED before the "
            "admittime, shown from its own time, told that the patient would be admitted (attack21)",
        ),
        renumbered=(
            *renumbered_by(POE_SEQUENCE, "poe_id", id="poe_id", counter="poe_seq"),
            *renumbered_by(POE_SEQUENCE, "discontinue_of_poe_id", id="discontinue_of_poe_id"),
            *renumbered_by(POE_SEQUENCE, "discontinued_by_poe_id", id="discontinued_by_poe_id"),
        ),
    ),
    Table(
        "hosp",
        "poe_detail",
        "Name/value details of provider orders (e.g. admit to, code status, discharge planning).",
        parse_columns(
            "poe_id VARCHAR sequence, poe_seq INTEGER sequence, subject_id INTEGER static, field_name VARCHAR event, "
            "field_value VARCHAR reference",
            None,
            {
                "poe_id": _POE_SEQ_WHY,
                "poe_seq": _POE_SEQ_WHY,
                "field_value": "a consult's 'Consult Status' and 'Consult Status Time' are set when the consult is "
                "answered (up to days after the order): NULL until that time; other fields (admit to, code "
                "status, discharge planning, ...) are known with the order",
            },
        ),
        key=("poe_id", "field_name"),
        event_time=EventTime(
            # the consult's two status rows are written when it is answered: shown at an order's time they said
            # that it would be (585 of the demo's 600 consult orders never get them; the other 15: 'Accepted')
            f"CASE WHEN t.field_name IN ({_CONSULT_FIELDS}) THEN CASE WHEN {_CONSULT_ANSWERED} IS NOT NULL THEN "
            f"greatest(parent_time, {_CONSULT_ANSWERED}) END ELSE parent_time END",
            parent=ParentTime("hosp.poe", ("poe_id",), _POE_KNOWN), sort=("poe_id",),
            rationale=(
                "a detail is known with its order (attack21: not before the order's admission starts); a consult's 'Consult Status' and 'Consult Status Time' rows "
                "once the consult is answered (their 'Consult Status Time'; never if it is not written as a time): "
                "attack16"
            ),
        ),
        renumbered=renumbered_by(POE_SEQUENCE, "poe_id", id="poe_id", counter="poe_seq"),
        references=(
            (
                "field_value",
                # only a value written as a time is read as one (PostgreSQL has no try_cast: sqlglot writes CAST,
                # which would fail the whole read on a malformed value); anything else keeps the status hidden
                f"CASE WHEN t.field_name IN ({_CONSULT_FIELDS}) THEN {_CONSULT_ANSWERED} ELSE TIMESTAMP '-infinity' END",
            ),
        ),
    ),
    Table(
        "hosp",
        "omr",
        "Online medical record: outpatient measurements such as blood pressure, weight, height and BMI (date only).",
        parse_columns(
            "subject_id INTEGER static, chartdate DATE event, seq_num INTEGER event, result_name VARCHAR event, "
            "result_value VARCHAR event",
            {
                "result_name": "Measurement name (e.g. 'Blood Pressure', 'Weight (Lbs)', 'BMI (kg/m2)').",
                "result_value": "Value as text.",
            },
        ),
        key=("subject_id", "chartdate", "result_name", "seq_num"),
        event_time=EventTime(
            "t.chartdate + INTERVAL 1 DAY",
            sort=("chartdate",),
            rationale="date only: known at the end of that day",
        ),
    ),
    Table(
        "hosp",
        "d_labitems",
        "Dictionary of laboratory tests (itemid, label, fluid, category).",
        parse_columns("itemid INTEGER static, label VARCHAR static, fluid VARCHAR static, category VARCHAR static"),
        key=("itemid",),
        visibility="dictionary",
        required=True,
    ),
    Table(
        "hosp",
        "d_icd_diagnoses",
        "Dictionary of ICD-9-CM and ICD-10-CM diagnosis codes with their long titles.",
        parse_columns(_ICD_DICT),
        key=("icd_code", "icd_version"),
        visibility="dictionary",
        required=True,
    ),
    Table(
        "hosp",
        "d_icd_procedures",
        "Dictionary of ICD-9-CM and ICD-10-PCS procedure codes with their long titles.",
        parse_columns(_ICD_DICT),
        key=("icd_code", "icd_version"),
        visibility="dictionary",
    ),
    Table(
        "hosp",
        "d_hcpcs",
        "Dictionary of HCPCS/CPT codes.",
        parse_columns(
            "code VARCHAR static, category SMALLINT static, long_description VARCHAR static, "
            "short_description VARCHAR static"
        ),
        key=("code",),
        visibility="dictionary",
    ),
    Table(
        "hosp",
        "provider",
        "Dictionary of de-identified provider ids.",
        parse_columns("provider_id VARCHAR static"),
        key=("provider_id",),
        visibility="dictionary",
    ),
)
