"""A results tree in the reference's layout (ClinSeek-Evaluation-Results, seed 002), built from the documented
row schema (ref_data_scoring.md §1.1, §1.3, §5): text, multimodal (symbolic links into ``_multi_eval_raw``,
``merged_unique.jsonl``, a scored copy) and AgentEHR-Bench, with the per-category F1 each scorer must give,
computed by hand below. No file is copied: every row is written here.

Models: ``claude_opus_4_6`` (real folders, rows carry the v2 ``category``) and ``glm_4_7`` (multimodal agentic
run linked from ``_multi_eval_raw``, rows without ``category``, as in v1).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

OPUS, GLM = "claude_opus_4_6", "glm_4_7"
RAW_BATCH = "_multi_eval_raw/full5_20260421T091517Z"

# ---- text: one task per card category (the registry's), two questions each --------------------------
RISK = {"mortality": ("Inpatient_Mortality", "Mortality"), "readmission": ("Readmission_30day", "Readmission"),
        "length_of_stay": ("LengthOfStay_3day", "Length of stay"),
        "escalation_of_care": ("ED_Hospitalization", "Escalation of care")}
DECISION = {"diagnosis": ("diagnoses_ccs", "Diagnosis"), "medication": ("prescriptions", "Medication"),
            "procedure": ("procedures_ccs", "Procedure"),
            "laboratory_microbiology": ("labevents", "Laboratory & microbiology"),
            "vitals_measurements": ("chartevents", "Vitals & measurements"),
            "imaging_report": ("radiology", "Imaging report"), "orders": ("poe", "Orders"),
            "encounter_flow": ("transfers", "Encounter & flow"), "next_event": ("next_event", "Next event")}
TEXT_ORDER = ["mortality", "readmission", "length_of_stay", "escalation_of_care", "diagnosis", "medication",
              "procedure", "laboratory_microbiology", "vitals_measurements", "imaging_report", "orders",
              "encounter_flow", "next_event"]
CANDIDATES = ["Alpha", "Beta", "Gamma Delta", "Zeta"]
NO_ANSWER = object()
ERROR = object()

# (model, mode) → answers of (question a, question b); gold: risk a "yes", b "no"; decision a [Alpha, Beta],
# b ["Gamma Delta"]. Each entry's comment: clinseek F1, reference F1.
TEXT_ANSWERS: dict[tuple[str, str], dict[str, tuple[Any, Any]]] = {
    (OPUS, "agentic"): {"risk": (["yes"], ["yes", "no"]),          # 1 | 1;  0 | 2/3 (both labels)
                        "decision": (["Alpha", "Zeta"], ["gamma  delta"])},  # 1/2 | 1/2;  1 | 0 (inner spaces)
    (OPUS, "oneshot"): {"risk": (["no"], ["no"]),                   # 0 | 0;  1 | 1
                        "decision": (["Alpha", "Beta"], NO_ANSWER)},  # 1 | 1;  0 | 0
    (GLM, "agentic"): {"risk": (["yes"], ["no"]),                   # 1 | 1;  1 | 1
                       "decision": (["Alpha"], ERROR)},             # 2/3 | 2/3;  infra error: left out | 0
    (GLM, "oneshot"): {"risk": (["yes"], NO_ANSWER),                # 1 | 1;  0 | 0
                       "decision": (NO_ANSWER, NO_ANSWER)},         # 0 | 0;  0 | 0
}
TEXT_EXPECTED: dict[tuple[str, str], dict[str, tuple[float, float]]] = {
    # (model, mode) → kind → (clinseek category F1, reference category F1)
    (OPUS, "agent"): {"risk": ((1 + 0) / 2, (1 + 2 / 3) / 2), "decision": ((0.5 + 1) / 2, (0.5 + 0) / 2)},
    (OPUS, "curated"): {"risk": ((0 + 1) / 2, (0 + 1) / 2), "decision": ((1 + 0) / 2, (1 + 0) / 2)},
    (GLM, "agent"): {"risk": (1.0, 1.0), "decision": (2 / 3, (2 / 3 + 0) / 2)},
    (GLM, "curated"): {"risk": ((1 + 0) / 2, (1 + 0) / 2), "decision": (0.0, 0.0)},
}

# ---- multimodal: the card's six categories, two questions each ---------------------------------------
MM_ORDER = ["cxr_finding_presence", "cxr_finding_enumeration", "cxr_change_comparison", "clinical_deterioration",
            "mm_mortality", "phenotype"]
MM_TITLES = {"cxr_finding_presence": "CXR finding presence", "cxr_finding_enumeration": "CXR finding enumeration",
             "cxr_change_comparison": "CXR change comparison", "clinical_deterioration": "Clinical deterioration",
             "mm_mortality": "Mortality", "phenotype": "Phenotype"}
# category → two questions: (qid, task, question, gold names)
MM_QUESTIONS: dict[str, list[tuple[str, str, str, list[str]]]] = {
    "cxr_finding_presence": [
        ("ehrxqa_test_1", "ehrxqa_image", "Given the last study of patient 18880001 in 2105, is there any pleural "
         "effusion?", ["yes"]),
        ("ehrxqa_test_2", "ehrxqa_image", "Given the last study of patient 18880001 in 2105, is there any "
         "pneumothorax in the left lung?", ["no"])],
    "cxr_finding_enumeration": [
        ("medmod_radiology_test_51111111", "medmod_radiology", "Which CheXpert findings does the study show?",
         ["Pleural Effusion", "Cardiomegaly"]),
        ("ehrxqa_test_3", "ehrxqa_image", "List all abnormalities seen in the last study of patient 18880001.",
         ["atelectasis", "pleural effusion"])],
    "cxr_change_comparison": [
        ("ehrxqa_test_4", "ehrxqa_image", "Given the last study of patient 18880001, compared to the previous "
         "study, which findings are newly detected?", ["lung opacity", "pleural effusion"]),
        ("ehrxqa_test_5", "ehrxqa_image", "Compared to the first study of patient 18880001, is the pneumothorax "
         "still present?", ["yes"])],
    "clinical_deterioration": [
        ("medmod_decompensation_test_30000001_25.0", "medmod_decompensation", "Will the patient die within the "
         "next 24 hours?", ["no"]),
        ("medmod_decompensation_test_30000002_48.0", "medmod_decompensation", "Will the patient die within the "
         "next 24 hours?", ["yes"])],
    "mm_mortality": [
        ("medmod_in-hospital-mortality_test_30000003", "medmod_in_hospital_mortality", "Will the patient die "
         "during this ICU stay?", ["yes"]),
        ("medmod_in-hospital-mortality_test_30000004", "medmod_in_hospital_mortality", "Will the patient die "
         "during this ICU stay?", ["no"])],
    "phenotype": [
        ("medmod_phenotyping_test_30000005", "medmod_phenotyping", "Which phenotypes does this ICU stay have?",
         ["Shock", "Essential hypertension"]),
        ("medmod_phenotyping_test_30000006", "medmod_phenotyping", "Which phenotypes does this ICU stay have?",
         ["Septicemia (except in labor)", "Shock"])],
}
# agent answers (both models; GLM answers the second mortality question): clinseek | reference
MM_AGENT: dict[str, tuple[Any, Any]] = {
    "cxr_finding_presence": (["Yes."], ["no"]),        # 1 | 0 (no judge: exact);  1 | 1
    "cxr_finding_enumeration": (["effusion", "cardiomegaly"], ["atelectasis"]),  # 1 | 1/2 (no vocab);  2/3 | 2/3
    "cxr_change_comparison": (["lung opacity", "pneumothorax"], ["yes"]),        # 1/2 | 1/2;  1 | 1
    "clinical_deterioration": (["no"], ["yes", "no"]),  # 1 | 1;  0 | 0
    "mm_mortality": (["yes"], NO_ANSWER),               # 1 | 1;  0 | 0   (GLM: ["no"]: 1 | 1)
    "phenotype": (["shock"], ["Septicemia (except in labor)", "Shock"]),  # 2/3 | 2/3;  1 | 1
}
MM_AGENT_EXPECTED: dict[str, tuple[float, float]] = {
    "cxr_finding_presence": ((1 + 1) / 2, (0 + 1) / 2),
    "cxr_finding_enumeration": ((1 + 2 / 3) / 2, (0.5 + 2 / 3) / 2),
    "cxr_change_comparison": ((0.5 + 1) / 2, (0.5 + 1) / 2),
    "clinical_deterioration": ((1 + 0) / 2, (1 + 0) / 2),
    "mm_mortality": ((1 + 0) / 2, (1 + 0) / 2),
    "phenotype": ((2 / 3 + 1) / 2, (2 / 3 + 1) / 2),
}
GLM_MM_MORTALITY = (1.0, 1.0)
# curated (both models): the first question answered with its exact gold, the second not answered: 1/2 | 1/2

# ---- AgentEHR-Bench (agentic only, one model) -----------------------------------------------------------
AGENTEHR = [  # qid, task, gold (reference label objects), answer;  clinseek | reference
    ("agentehr_diagnoses_ccs_1", "diagnoses_ccs", [{"name": "Septicemia"}, {"name": "Shock"}], ["Septicemia"]),  # 2/3|2/3
    ("agentehr_prescriptions_1", "prescriptions", [{"name": "Aspirin", "atc_name": "B01AC06"}], ["Aspirin"]),  # 1|2/3
    ("agentehr_labevents_1", "labevents", [{"name": "Glucose"}], ["glucose"]),                                 # 1|1
    ("agentehr_microbiologyevents_1", "microbiologyevents", [{"name": "Blood Culture"}], ["Urine Culture"]),  # 0|0
    ("agentehr_transfers_1", "transfers", [{"name": "Medicine"}], ["Medicine"]),                              # 1|1
]
AGENTEHR_EXPECTED = {"diagnosis": (2 / 3, 2 / 3), "medication": (1.0, 2 / 3), "laboratory_microbiology": (0.5, 0.5),
                     "encounter_flow": (1.0, 1.0)}


def _finish(response: Any, call_id: str = "call_1") -> dict[str, Any]:
    args = json.dumps({"response": response})
    return {"role": "assistant", "content": "", "reasoning_content": "checking the record",
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "ehr.finish", "arguments": args}}]}


def _messages(answer: Any, mode: str, question: str) -> list[dict[str, Any]]:
    """A trajectory of the reference's harness (§5): tools, then the finish call (agentic) or the reply with
    the synthetic ``one_shot_*`` finish (oneshot)."""
    user = {"role": "user", "content": question}
    if answer is NO_ANSWER:
        return [user, {"role": "assistant", "content": "I could not decide."}]
    if mode == "oneshot":
        return [user, {**_finish(answer, "one_shot_0"), "content": f"<answer>{answer}</answer>"},
                {"role": "tool", "content": "Finish (one-shot)", "tool_call_id": "one_shot_0"}]
    sql = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_0", "type": "function",
         "function": {"name": "ehr_run_sql_query", "arguments": json.dumps({"sql_query": "SELECT 1"})}}]}
    return [user, sql, {"role": "tool", "content": "1", "tool_call_id": "call_0"}, _finish(answer)]


def _status(answer: Any, mode: str) -> dict[str, Any]:
    if answer is ERROR:
        return {"completed": False, "status": "error", "stop_reason": "exception_before_completion",
                "error": "ThrottlingException: rate exceeded"}
    if mode == "oneshot":
        return {"completed": answer is not NO_ANSWER, "status": "ok", "stop_reason": "finish_tool_call", "error": None}
    done = answer is not NO_ANSWER
    return {"completed": done, "status": "success" if done else "incomplete",
            "stop_reason": "finish_tool_call" if done else "no_final_answer", "error": None}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def text_rows(model: str, mode: str, *, with_category: bool) -> list[dict[str, Any]]:
    """ClinSeek-Bench-Text results rows (§1.1 manifest fields merged into each run row, §5)."""
    rows = []
    answers = TEXT_ANSWERS[(model, mode)]
    for i, slug in enumerate(TEXT_ORDER):
        risk = slug in RISK
        task, title = (RISK | DECISION)[slug]
        golds = ("yes", "no") if risk else (["Alpha", "Beta"], ["Gamma Delta"])
        for j, (gold, answer) in enumerate(zip(golds, answers["risk" if risk else "decision"], strict=True)):
            qid = f"ehr_bench_{'risk_prediction' if risk else 'decision_making'}_{10 * i + j}"
            question = f"<task_instruction>Predict {task}.</task_instruction> Subject ID: {19990000 + i}"
            row = {"qid": qid, "run_index": 0, "runs_per_question": 1, "session_id": f"{qid}__q_{i}__run_0",
                   "question": question, "messages": [] if answer is ERROR else _messages(answer, mode, question),
                   **_status(answer, mode), "subject_id": 19990000 + i, "hadm_id": 29990000 + i,
                   "prediction_time": "2150-03-02 08:00:01", "latest_event_time": "2150-03-02 08:00:00",
                   "task": task, "task_type": "risk_prediction" if risk else "decision_making", "label": gold,
                   "output": gold if risk else "\n".join(gold),
                   "candidates": ["yes", "no"] if risk else CANDIDATES, "instruction": f"Please predict {task}.",
                   "source_file": "ehr_bench_x.jsonl", "source_idx": 10 * i + j}
            if with_category:
                row["category"] = title
            rows.append(row)
    return rows


def mm_question(qid: str, question: str) -> str:
    """A pre-rendered multimodal prompt (§1.3 ``question``)."""
    return (f"<task_instruction>Answer from the EHR and the linked studies; one item per line, no bullets."
            f"</task_instruction>\n<patient_info>Current Time: 2105-06-01 10:00:00\nSubject ID: 18880001"
            f"</patient_info>\n<question>{question}</question>")


def mm_rows(model: str, mode: str, *, with_category: bool) -> list[dict[str, Any]]:
    """ClinSeek-Bench-MM results rows: manifest fields (§1.3, no ``task_type``) plus the run fields (§5)."""
    rows = []
    for slug in MM_ORDER:
        for j, (qid, task, text, gold) in enumerate(MM_QUESTIONS[slug]):
            if mode == "agentic":
                answer = MM_AGENT[slug][j]
                if model == GLM and slug == "mm_mortality" and j == 1:
                    answer = ["no"]
            else:
                answer = list(gold) if j == 0 else NO_ANSWER
            question = mm_question(qid, text)
            row = {"qid": qid, "run_index": 0, "session_id": f"{qid}__q_0__run_0", "question": question,
                   "messages": _messages(answer, mode, question), **_status(answer, mode), "task": task,
                   "task_family": "qa", "source_benchmark": "ehrxqa" if task.startswith("ehrxqa") else "medmod",
                   "subject_id": 18880001, "hadm_id": None, "stay_id": None,
                   "prediction_time": "2105-06-01 10:00:00", "label": [{"name": g} for g in gold],
                   "answer_type": "list", "scope": "patient_scope", "modalities": ["cxr_table", "cxr_image"],
                   "study_ids": [51111111], "multimodal_summary": {"num_images": 1, "num_reports": 0}}
            if with_category:
                row["category"] = MM_TITLES[slug]
            rows.append(row)
    return rows


def agentehr_rows() -> list[dict[str, Any]]:
    """AgentEHR-Bench results rows (no ``task_type``, no candidates in the prompt)."""
    rows = []
    for qid, task, gold, answer in AGENTEHR:
        question = f"Predict the next {task} of subject 10000032 at 2180-07-23 12:00:00."
        rows.append({"qid": qid, "run_index": 0, "question": question, "messages": _messages(answer, "agentic", question),
                     **_status(answer, "agentic"), "task": task, "subject_id": 10000032,
                     "timestamp": "2180-07-23 12:00:00", "label": gold})
    return rows


def build_tree(root: Path) -> Path:
    """The whole tree under ``root`` (returned)."""
    for model, cat in ((OPUS, True), (GLM, False)):
        for mode in ("agentic", "oneshot"):
            write_jsonl(root / f"ehr_bench/{mode}/full1800/{model}/results.jsonl", text_rows(model, mode, with_category=cat))
        write_jsonl(root / f"mm_bench/oneshot/full2703/{model}/results.jsonl", mm_rows(model, "oneshot", with_category=cat))
    # a smaller split and an archived run of the same model: left out
    write_jsonl(root / f"ehr_bench/agentic/smoke20/{OPUS}/results.jsonl", text_rows(GLM, "oneshot", with_category=False))
    write_jsonl(root / f"_archive/ehr_bench_opus46_1800_pre_ssl_retry/{OPUS}/results.jsonl",
                text_rows(GLM, "oneshot", with_category=False))
    # the Opus multimodal agentic run: a real folder
    write_jsonl(root / f"mm_bench/agentic/full2703/{OPUS}/results.jsonl", mm_rows(OPUS, "agentic", with_category=True))
    # GLM's: raw batch output under _multi_eval_raw (results.jsonl with a retried duplicate, merged_unique.jsonl),
    # linked as full2703/glm_4_7, plus the scored copy linked as scored/glm_4_7
    raw = root / "mm_bench/agentic/full2703" / RAW_BATCH / "glm-4-7"
    merged = mm_rows(GLM, "agentic", with_category=False)
    write_jsonl(raw / "merged_unique.jsonl", merged)
    write_jsonl(raw / "results.jsonl", [{**merged[0], "status": "error", "messages": []}, *merged])
    scored = root / "mm_bench/agentic/full2703" / RAW_BATCH / "scored_vocab/glm-4-7"
    write_jsonl(scored / "rescored.jsonl", [{"qid": r["qid"], "run_index": 0, "task": r["task"], "note": "ok",
                                             "gold_names": [g["name"] for g in r["label"]],
                                             "prediction_strs": ["wrong"], "status": "scored"} for r in merged])
    os.symlink(f"{RAW_BATCH}/glm-4-7", root / f"mm_bench/agentic/full2703/{GLM}")
    (root / "mm_bench/agentic/scored").mkdir(parents=True)
    os.symlink(f"../full2703/{RAW_BATCH}/scored_vocab/glm-4-7", root / f"mm_bench/agentic/scored/{GLM}")
    write_jsonl(root / f"agent_ehr_bench/agentic/subset600/{OPUS}/results.jsonl", agentehr_rows())
    return root
