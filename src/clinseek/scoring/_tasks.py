"""Task → task type and category for rows of the reference's results, which carry no category.

Text: the EHR-Bench L3 semantic groups (ref_data_scoring.md §1.2). Multimodal: the paper's L4
categories where the task decides them; ``ehrxqa_image`` rows (presence, enumeration or change
questions, told apart only by the reference's LLM classifier) report under ``cxr_vqa``.
"""

from __future__ import annotations

from ._model import TaskType

_RISK_GROUPS: dict[str, str] = {
    "ED_Critical_Outcomes": "ED_Critical_Outcomes",
    "ED_Hospitalization": "ED_Hospitalization",
    "ED_ICU_Tranfer_12hour": "ED_ICU_Transfer_12h",
    "ED_Inpatient_Mortality": "Mortality_Hospital",
    "ED_Reattendance_3day": "ED_Reattendance_3day",
    "ICU_Mortality_1day": "ICU_Mortality",
    "ICU_Mortality_2day": "ICU_Mortality",
    "ICU_Mortality_3day": "ICU_Mortality",
    "ICU_Mortality_7day": "ICU_Mortality",
    "ICU_Mortality_14day": "ICU_Mortality",
    "ICU_Readmission": "ICU_Readmission",
    "ICU_Stay_7day": "ICU_StayLength",
    "ICU_Stay_14day": "ICU_StayLength",
    "Inpatient_Mortality": "Mortality_Hospital",
    "LengthOfStay_3day": "LengthOfStay",
    "LengthOfStay_7day": "LengthOfStay",
    "Readmission_30day": "Readmission_Hospital",
    "Readmission_60day": "Readmission_Hospital",
}
_DECISION_GROUPS: dict[str, tuple[str, ...]] = {
    "Diagnosis_coding": ("diagnoses_ccs", "diagnoses_icd", "diagnosis", "diagnosis_ccs"),
    "Procedure_coding": ("procedures_ccs", "procedures_icd", "procedureevents"),
    "Medication_suggestion": (
        "prescriptions",
        "prescriptions_atc",
        "medrecon",
        "medrecon_atc",
        "emar",
        "pyxis",
    ),
    "Lab_Microbiology_orders": ("labevents", "microbiologyevents"),
    "ICU_Events": ("chartevents", "datetimeevents", "inputevents", "outputevents", "ingredientevents"),
    "Provider_Orders": ("poe",),
    "Radiology_Orders": ("radiology",),
    "Transfers_Services_Admissions": ("admissions", "transfers", "services"),
    "Outpatient_Records": ("omr",),
    "Next_Event": ("next_event",),
}
_MM_CATEGORIES: dict[str, str] = {
    "ehrxqa_image": "cxr_vqa",
    "medmod_decompensation": "mortality_24h",
    "medmod_in_hospital_mortality": "inpatient_mortality_mm",
    "medmod_phenotyping": "phenotype_ccs",
    "medmod_radiology": "cxr_finding_enumeration",
}
_CATEGORY: dict[str, str] = {
    **_RISK_GROUPS,
    **{task: group for group, tasks in _DECISION_GROUPS.items() for task in tasks},
    **_MM_CATEGORIES,
}


def reference_category(task: str) -> str:
    """The category a reference task reports under (the task itself when it is not known)."""
    return _CATEGORY.get(task, task)


def reference_task_type(task: str, declared: object = None) -> TaskType:
    """``risk_prediction``/``decision_making`` as declared or known, ``multimodal`` for MM tasks.

    Raises:
        ValueError: for a task that is neither declared nor known.
    """
    for known in ("risk_prediction", "decision_making", "multimodal"):
        if declared == known:
            return known
    if task in _RISK_GROUPS:
        return "risk_prediction"
    if task in _CATEGORY and task not in _MM_CATEGORIES:
        return "decision_making"
    if task in _MM_CATEGORIES or task.startswith(("ehrxqa_", "medmod_")) or task.startswith("cxr_"):
        return "multimodal"
    raise ValueError(f"field 'task_type': absent, and task {task!r} is not a known reference task")
