"""Hand-written manifest rows in the released schemas, with fake ids (no MIMIC data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clinseek.bench import CATEGORIES, MM_LEAKAGE_POLICY, TEXT_TASKS

CARD_TITLE = {c.slug: c.title for c in CATEGORIES}


def text_row(idx: int, task: str = "ED_Hospitalization", **over: Any) -> dict[str, Any]:
    spec = next(t for t in TEXT_TASKS if t.name == task)
    risk = spec.task_type == "risk_prediction"
    row: dict[str, Any] = {
        "qid": f"ehr_bench_{spec.task_type}_{idx}",
        "subject_id": 19990000 + idx,
        "hadm_id": 29990000 + idx,
        "prediction_time": "2150-03-02 08:00:01",
        "latest_event_time": "2150-03-02 08:00:00",
        "task": task,
        "task_type": spec.task_type,
        "category": CARD_TITLE[spec.category],
        "instruction": spec.instruction,
        "candidates": ["yes", "no"] if risk else ["Glucose", "Potassium", "Sodium"],
        "label": "yes" if risk else ["Glucose", "Sodium"],
        "output": "yes" if risk else "Glucose\nSodium",
        "task_info": {"task": task, "source_idx": idx, "target": "[]"},
        "source_file": f"ehr_bench_{spec.task_type}.jsonl",
        "source_idx": idx,
    }
    row.update(over)
    return row


def mm_row(idx: int, task: str = "ehrxqa_image", **over: Any) -> dict[str, Any]:
    source = task.split("_")[0]
    row: dict[str, Any] = {
        "qid": f"{task}_test_{idx}",
        "task": task,
        "category": "CXR finding presence" if source == "ehrxqa" else None,
        "task_family": "qa",
        "source_benchmark": source,
        "subject_id": 18880000 + idx,
        "hadm_id": 28880000 + idx,
        "stay_id": None,
        "prediction_time": "2105-06-01 10:00:00",
        "question": "<task_instruction>Is there pleural effusion?</task_instruction>",
        "answer_type": "list",
        "ground_truth": [{"name": "yes"}],
        "modalities": ["cxr_table", "cxr_image"],
        "study_ids": [51111111 + idx],
        "dicom_ids": [f"aaaa-{idx}"],
        "image_paths": [
            f"EHRXQAOriginalLinked_v1/mimic-cxr/2.0.0/files/p18/p{18880000 + idx}/s{51111111 + idx}/aaaa-{idx}.jpg"
        ],
        "report_paths": [],
        "scope": "patient_scope",
        "snapshot_spec": {
            "cutoff_time": "2105-06-01 10:00:00",
            "time_policy": "inclusive_leq_cutoff",
            "cxr_policy": "linked_studies_only",
            "table_policy": "rows_visible_if_event_time_leq_cutoff",
            "cohort_materialization": None,
        },
        "leakage_policy_version": MM_LEAKAGE_POLICY,
    }
    row.update(over)
    return row


def fake_text_release() -> list[dict[str, Any]]:
    """1,800 rows = 45 x 40 with the card's composition: 1,563 patients, 80 + 80 target ids."""
    rows: list[dict[str, Any]] = []
    for t_index, spec in enumerate(TEXT_TASKS):
        for k in range(40):
            idx = t_index * 40 + k
            row = text_row(idx, spec.name)
            row["qid"] = f"ehr_bench_{spec.task_type}_{idx}"
            row["subject_id"] = 10_000_000 + (idx % 1563)
            if spec.name in ("diagnoses_icd", "diagnoses_ccs"):
                row["target_hadm_id"] = row["hadm_id"]
            if spec.name in ("diagnosis", "diagnosis_ccs"):
                row["target_stay_id"] = 30_000_000 + idx
            rows.append(row)
    return rows


def fake_mm_release() -> list[dict[str, Any]]:
    """989 rows: 497 EHRXQA (215 presence, 60 enumeration, 222 change) + 492 MedMod (125/125/120/122)."""
    rows: list[dict[str, Any]] = []
    plan = [
        ("ehrxqa_image", "CXR finding presence", 215),
        ("ehrxqa_image", "CXR finding enumeration", 60),
        ("ehrxqa_image", "CXR change comparison", 222),
        ("medmod_decompensation", None, 125),
        ("medmod_in_hospital_mortality", "Mortality", 125),
        ("medmod_phenotyping", None, 120),
        ("medmod_radiology", None, 122),
    ]
    for task, category, n in plan:
        for _ in range(n):
            rows.append(mm_row(len(rows), task, category=category))
    return rows


def write_json(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
