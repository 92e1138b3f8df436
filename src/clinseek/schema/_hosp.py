"""MIMIC-IV 3.1 ``hosp`` module: hospital-wide EHR data (https://mimic.mit.edu/docs/iv/modules/hosp/)."""

from __future__ import annotations

from ._model import DictJoin, EventTime, Mask, ParentTime, Table, parse_columns

_LAB_RESULT = ("value", "valuenum", "valueuom", "flag", "ref_range_lower", "ref_range_upper", "comments")
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
_ADMISSION = ParentTime("hosp.admissions", ("hadm_id",), "t.dischtime")
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
            "subject_id INTEGER, gender VARCHAR, anchor_age SMALLINT, anchor_year SMALLINT, "
            "anchor_year_group VARCHAR, dod DATE",
            {
                "anchor_age": "Age in years in anchor_year (patients over 89 are grouped as 91).",
                "anchor_year": "A shifted year; the patient's real year lies in anchor_year_group.",
                "anchor_year_group": "Three-year range of the real year that anchor_year stands for.",
                "dod": "Date of death (date only); an outcome, visible only once that day has ended before the cutoff.",
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
            "subject_id INTEGER, hadm_id INTEGER, admittime TIMESTAMP, dischtime TIMESTAMP, deathtime TIMESTAMP, "
            "admission_type VARCHAR, admit_provider_id VARCHAR, admission_location VARCHAR, discharge_location VARCHAR, "
            "insurance VARCHAR, language VARCHAR, marital_status VARCHAR, race VARCHAR, edregtime TIMESTAMP, "
            "edouttime TIMESTAMP, hospital_expire_flag SMALLINT",
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
        ),
        key=("hadm_id",),
        event_time=EventTime(
            "t.admittime", sort=("admittime",), rationale="an admission exists from its admittime"
        ),
        masks=(
            Mask(
                ("dischtime", "deathtime", "discharge_location", "hospital_expire_flag"),
                "t.dischtime",
                "the discharge and its outcome are unknown while the admission is open",
            ),
        ),
        required=True,
    ),
    Table(
        "hosp",
        "transfers",
        "Every ward/unit the patient stayed in (ED, wards, ICUs), with intime and outtime; "
        "eventtype is admit, transfer, discharge or ED.",
        parse_columns(
            "subject_id INTEGER, hadm_id INTEGER, transfer_id INTEGER, eventtype VARCHAR, careunit VARCHAR, "
            "intime TIMESTAMP, outtime TIMESTAMP",
            {
                "hadm_id": "Admission identifier; NULL for ED visits that did not lead to admission.",
                "eventtype": "ed, admit, transfer or discharge.",
                "careunit": "The unit the patient was in (e.g. Medical Intensive Care Unit (MICU)).",
            },
        ),
        key=("transfer_id",),
        event_time=EventTime(
            "t.intime", sort=("intime",), rationale="a stay in a unit is known when it starts"
        ),
        required=True,
    ),
    Table(
        "hosp",
        "services",
        "The clinical service (e.g. MED, SURG, CMED) the patient was under, with the time of each change.",
        parse_columns(
            "subject_id INTEGER, hadm_id INTEGER, transfertime TIMESTAMP, prev_service VARCHAR, curr_service VARCHAR",
        ),
        key=("hadm_id", "transfertime"),
        event_time=EventTime("t.transfertime", sort=("transfertime",)),
    ),
    Table(
        "hosp",
        "diagnoses_icd",
        "Billed ICD-9/ICD-10 diagnoses per admission, ranked by seq_num. Assigned by coders after discharge.",
        parse_columns(
            "subject_id INTEGER, hadm_id INTEGER, seq_num INTEGER, icd_code VARCHAR, icd_version SMALLINT",
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
            "subject_id INTEGER, hadm_id INTEGER, drg_type VARCHAR, drg_code VARCHAR, description VARCHAR, "
            "drg_severity SMALLINT, drg_mortality SMALLINT",
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
            "subject_id INTEGER, hadm_id INTEGER, seq_num INTEGER, chartdate DATE, icd_code VARCHAR, icd_version SMALLINT",
            {"chartdate": "Date of the procedure (date only)."},
        ),
        key=("hadm_id", "seq_num"),
        event_time=EventTime(
            "greatest(t.chartdate + INTERVAL 1 DAY, parent_time)",
            parent=_ADMISSION,
            sort=("chartdate",),
            rationale="billing codes are assigned after discharge and some encode durations (ventilation >= 96 h)",
        ),
        target_key="hadm_id",
        dict_joins=(_ICD_DICT_PX,),
    ),
    Table(
        "hosp",
        "hcpcsevents",
        "Billed HCPCS/CPT events (procedures and services) per admission.",
        parse_columns(
            "subject_id INTEGER, hadm_id INTEGER, chartdate DATE, hcpcs_cd VARCHAR, seq_num INTEGER, short_description VARCHAR",
        ),
        key=("hadm_id", "seq_num"),
        event_time=EventTime(
            "greatest(t.chartdate + INTERVAL 1 DAY, parent_time)",
            parent=_ADMISSION,
            sort=("chartdate",),
            rationale="billing codes are assigned after discharge",
        ),
        target_key="hadm_id",
        dict_joins=(DictJoin(("hcpcs_cd",), "hosp.d_hcpcs", ("code",), ("long_description",)),),
    ),
    Table(
        "hosp",
        "labevents",
        "Laboratory measurements (blood, urine, other fluids), in and out of hospital, with units, "
        "reference ranges and abnormal flags. charttime is the specimen time; storetime is when the result was available.",
        parse_columns(
            "labevent_id INTEGER, subject_id INTEGER, hadm_id INTEGER, specimen_id INTEGER, itemid INTEGER, "
            "order_provider_id VARCHAR, charttime TIMESTAMP, storetime TIMESTAMP, value VARCHAR, valuenum DOUBLE, "
            "valueuom VARCHAR, ref_range_lower DOUBLE, ref_range_upper DOUBLE, flag VARCHAR, priority VARCHAR, comments VARCHAR",
            {
                "hadm_id": "Admission identifier; NULL for outpatient labs.",
                "specimen_id": "Groups measurements made on one specimen.",
                "itemid": "Lab test; join hosp.d_labitems for its label.",
                "charttime": "Time the specimen was drawn.",
                "storetime": "Time the result was available (validated).",
                "value": "Result as text.",
                "valuenum": "Result as a number, in valueuom.",
                "flag": "'abnormal' when outside the reference range.",
                "priority": "ROUTINE or STAT.",
            },
        ),
        key=("labevent_id",),
        event_time=EventTime("t.charttime", sort=("charttime",), rationale="the specimen time"),
        masks=(
            Mask(
                _LAB_RESULT,
                "coalesce(t.storetime, t.charttime)",
                "drawn before the cutoff but resulted after it",
            ),
        ),
        dict_joins=(DictJoin(("itemid",), "hosp.d_labitems", ("itemid",), ("label", "fluid", "category")),),
        required=True,
    ),
    Table(
        "hosp",
        "microbiologyevents",
        "Microbiology cultures and tests: specimen, test, organisms grown and antibiotic susceptibilities.",
        parse_columns(
            "microevent_id INTEGER, subject_id INTEGER, hadm_id INTEGER, micro_specimen_id INTEGER, "
            "order_provider_id VARCHAR, chartdate DATE, charttime TIMESTAMP, spec_itemid INTEGER, spec_type_desc VARCHAR, "
            "test_seq INTEGER, storedate DATE, storetime TIMESTAMP, test_itemid INTEGER, test_name VARCHAR, "
            "org_itemid INTEGER, org_name VARCHAR, isolate_num SMALLINT, quantity VARCHAR, ab_itemid INTEGER, "
            "ab_name VARCHAR, dilution_text VARCHAR, dilution_comparison VARCHAR, dilution_value DOUBLE, "
            "interpretation VARCHAR, comments VARCHAR",
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
        ),
        key=("microevent_id",),
        event_time=EventTime(
            "coalesce(t.charttime, t.chartdate + INTERVAL 1 DAY)",
            sort=("chartdate", "charttime"),
            rationale="specimen time",
        ),
        masks=(
            Mask(
                _MICRO_RESULT,
                "coalesce(t.storetime, t.storedate + INTERVAL 1 DAY)",
                "organisms and susceptibilities are known only once the culture is resulted",
                collapse_on=("micro_specimen_id", "test_itemid"),
                renumber="microevent_id",
            ),
        ),
    ),
    Table(
        "hosp",
        "prescriptions",
        "Medications prescribed (ordered), with dose, route, formulary code, GSN and NDC.",
        parse_columns(
            "subject_id INTEGER, hadm_id INTEGER, pharmacy_id INTEGER, poe_id VARCHAR, poe_seq INTEGER, "
            "order_provider_id VARCHAR, starttime TIMESTAMP, stoptime TIMESTAMP, drug_type VARCHAR, drug VARCHAR, "
            "formulary_drug_cd VARCHAR, gsn VARCHAR, ndc VARCHAR, prod_strength VARCHAR, form_rx VARCHAR, "
            "dose_val_rx VARCHAR, dose_unit_rx VARCHAR, form_val_disp VARCHAR, form_unit_disp VARCHAR, "
            "doses_per_24_hrs DOUBLE, route VARCHAR",
            {
                "drug_type": "MAIN, BASE (a diluent) or ADDITIVE.",
                "gsn": "Generic Sequence Number(s), space separated.",
                "ndc": "National Drug Code.",
                "dose_val_rx": "Prescribed dose (text; may be a range).",
            },
        ),
        key=("pharmacy_id", "drug", "drug_type"),
        event_time=EventTime(
            "t.starttime", sort=("starttime",), rationale="a prescription is evidence once it starts"
        ),
        required=True,
    ),
    Table(
        "hosp",
        "pharmacy",
        "Pharmacy dispensing records for each medication order: drug, route, frequency, schedule and status.",
        parse_columns(
            "subject_id INTEGER, hadm_id INTEGER, pharmacy_id INTEGER, poe_id VARCHAR, starttime TIMESTAMP, "
            "stoptime TIMESTAMP, medication VARCHAR, proc_type VARCHAR, status VARCHAR, entertime TIMESTAMP, "
            "verifiedtime TIMESTAMP, route VARCHAR, frequency VARCHAR, disp_sched VARCHAR, infusion_type VARCHAR, "
            "sliding_scale VARCHAR, lockout_interval VARCHAR, basal_rate DOUBLE, one_hr_max VARCHAR, "
            "doses_per_24_hrs DOUBLE, duration DOUBLE, duration_interval VARCHAR, expiration_value INTEGER, "
            "expiration_unit VARCHAR, expirationdate TIMESTAMP, dispensation VARCHAR, fill_quantity VARCHAR",
            {
                "status": "Final state of the order (Active, Discontinued, Expired, ...).",
                "entertime": "Time the order was entered into the pharmacy system.",
                "verifiedtime": "Time a pharmacist verified the order.",
            },
        ),
        key=("pharmacy_id",),
        event_time=EventTime(
            "t.starttime",
            sort=("starttime",),
            rationale="an order entered but not started is not yet evidence of the next medication",
        ),
        masks=(
            Mask(("status",), "t.stoptime", "the order's final status is known only once it has stopped"),
        ),
    ),
    Table(
        "hosp",
        "emar",
        "Electronic medication administration record: each administration (or refusal/hold) charted by nursing.",
        parse_columns(
            "subject_id INTEGER, hadm_id INTEGER, emar_id VARCHAR, emar_seq INTEGER, poe_id VARCHAR, "
            "pharmacy_id INTEGER, enter_provider_id VARCHAR, charttime TIMESTAMP, medication VARCHAR, event_txt VARCHAR, "
            "scheduletime TIMESTAMP, storetime TIMESTAMP",
            {
                "emar_id": "Administration identifier (subject_id-emar_seq).",
                "charttime": "Time of administration.",
                "event_txt": "What happened (Administered, Not Given, Held, ...).",
                "scheduletime": "Time the administration was scheduled.",
            },
        ),
        key=("emar_id",),
        event_time=EventTime("t.charttime", sort=("charttime",), rationale="time of administration"),
    ),
    Table(
        "hosp",
        "emar_detail",
        "Details of each eMAR administration: dose due and given, product, infusion rates, route and site.",
        parse_columns(
            "subject_id INTEGER, emar_id VARCHAR, emar_seq INTEGER, parent_field_ordinal VARCHAR, "
            "administration_type VARCHAR, pharmacy_id INTEGER, barcode_type VARCHAR, reason_for_no_barcode VARCHAR, "
            "complete_dose_not_given VARCHAR, dose_due VARCHAR, dose_due_unit VARCHAR, dose_given VARCHAR, "
            "dose_given_unit VARCHAR, will_remainder_of_dose_be_given VARCHAR, product_amount_given VARCHAR, "
            "product_unit VARCHAR, product_code VARCHAR, product_description VARCHAR, product_description_other VARCHAR, "
            "prior_infusion_rate VARCHAR, infusion_rate VARCHAR, infusion_rate_adjustment VARCHAR, "
            "infusion_rate_adjustment_amount VARCHAR, infusion_rate_unit VARCHAR, route VARCHAR, infusion_complete VARCHAR, "
            "completion_interval VARCHAR, new_iv_bag_hung VARCHAR, continued_infusion_in_other_location VARCHAR, "
            "restart_interval VARCHAR, side VARCHAR, site VARCHAR, non_formulary_visual_verification VARCHAR",
            {
                "parent_field_ordinal": "Orders several detail rows of one administration (e.g. 1.1, 1.2); text."
            },
        ),
        key=("emar_id", "parent_field_ordinal"),
        event_time=EventTime(
            "parent_time",
            parent=ParentTime("hosp.emar", ("emar_id",), "t.charttime"),
            sort=("emar_id",),
            rationale="a detail row is known when its administration is charted",
        ),
    ),
    Table(
        "hosp",
        "poe",
        "Provider order entry: every order (medications, labs, imaging, ADT, consults, ...) with its type and links.",
        parse_columns(
            "poe_id VARCHAR, poe_seq INTEGER, subject_id INTEGER, hadm_id INTEGER, ordertime TIMESTAMP, "
            "order_type VARCHAR, order_subtype VARCHAR, transaction_type VARCHAR, discontinue_of_poe_id VARCHAR, "
            "discontinued_by_poe_id VARCHAR, order_provider_id VARCHAR, order_status VARCHAR",
            {
                "order_type": "Broad order category (Medications, Lab, Radiology, ADT orders, ...).",
                "transaction_type": "New, Change, D/C, ...",
                "discontinue_of_poe_id": "The earlier order this order discontinues.",
                "discontinued_by_poe_id": "The later order that discontinued this one.",
                "order_status": "Final status (Active/Inactive); reflects the order's final state.",
            },
        ),
        key=("poe_id",),
        event_time=EventTime("t.ordertime", sort=("ordertime",)),
        masks=(
            Mask(
                ("discontinued_by_poe_id",),
                "(SELECT min(d.ordertime) FROM hosp.poe d WHERE d.poe_id = t.discontinued_by_poe_id)",
                "names a later order until that order exists",
            ),
            Mask(("order_status",), None, "reflects the order's final state"),
        ),
    ),
    Table(
        "hosp",
        "poe_detail",
        "Name/value details of provider orders (e.g. admit to, code status, discharge planning).",
        parse_columns(
            "poe_id VARCHAR, poe_seq INTEGER, subject_id INTEGER, field_name VARCHAR, field_value VARCHAR"
        ),
        key=("poe_id", "field_name"),
        event_time=EventTime(
            "parent_time", parent=ParentTime("hosp.poe", ("poe_id",), "t.ordertime"), sort=("poe_id",)
        ),
    ),
    Table(
        "hosp",
        "omr",
        "Online medical record: outpatient measurements such as blood pressure, weight, height and BMI (date only).",
        parse_columns(
            "subject_id INTEGER, chartdate DATE, seq_num INTEGER, result_name VARCHAR, result_value VARCHAR",
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
        parse_columns("itemid INTEGER, label VARCHAR, fluid VARCHAR, category VARCHAR"),
        key=("itemid",),
        visibility="dictionary",
        required=True,
    ),
    Table(
        "hosp",
        "d_icd_diagnoses",
        "Dictionary of ICD-9-CM and ICD-10-CM diagnosis codes with their long titles.",
        parse_columns("icd_code VARCHAR, icd_version SMALLINT, long_title VARCHAR"),
        key=("icd_code", "icd_version"),
        visibility="dictionary",
        required=True,
    ),
    Table(
        "hosp",
        "d_icd_procedures",
        "Dictionary of ICD-9-CM and ICD-10-PCS procedure codes with their long titles.",
        parse_columns("icd_code VARCHAR, icd_version SMALLINT, long_title VARCHAR"),
        key=("icd_code", "icd_version"),
        visibility="dictionary",
    ),
    Table(
        "hosp",
        "d_hcpcs",
        "Dictionary of HCPCS/CPT codes.",
        parse_columns("code VARCHAR, category SMALLINT, long_description VARCHAR, short_description VARCHAR"),
        key=("code",),
        visibility="dictionary",
    ),
    Table(
        "hosp",
        "provider",
        "Dictionary of de-identified provider ids.",
        parse_columns("provider_id VARCHAR"),
        key=("provider_id",),
        visibility="dictionary",
    ),
)
