"""The six ClinSeek-Bench-MM categories: their declarations (:data:`MM_TASKS`) and builders, for any store with ``cxr`` tables.

Cutoffs follow the multimodal policy (``multimodal-strict-temporal-scope-v1``: visible iff event
time <= cutoff; only the linked studies exist). CheXpert labels (``cxr.chexpert``, a label source
that is never evidence) and outcomes are read through ``Policy.future_select``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

from ..policy import MM_POLICY, EpisodeKey
from ..schema import CHEXPERT_LABELS, STUDY_TIME_SQL
from ._anchor import Anchor, BuildContext, Drawn
from ._rows import MM_LEAKAGE_POLICY
from ._spec import TaskSpec
from ._vocab import medmod_phenotypes

Labelled = Iterator[tuple[Anchor, tuple[str, ...], dict[str, Any]]]
_FINDINGS = tuple(f for f in CHEXPERT_LABELS if f not in ("No Finding", "Support Devices"))
_STUDIES = (
    f"SELECT t.subject_id, t.study_id, min({STUDY_TIME_SQL}) AS study_time, list(t.dicom_id ORDER BY t.dicom_id) AS dicoms "
    "FROM cxr.metadata t GROUP BY t.subject_id, t.study_id"
)
_IN_ICU = (
    f"SELECT s.*, i.hadm_id, i.stay_id, i.intime, i.outtime, a.admittime FROM ({_STUDIES}) s "
    "JOIN icu.icustays i ON i.subject_id = s.subject_id AND s.study_time > i.intime AND s.study_time < i.outtime "
    "JOIN hosp.admissions a ON a.hadm_id = i.hadm_id"
)


def _key(anchor: Anchor, studies: tuple[int, ...], dicoms: tuple[str, ...]) -> EpisodeKey:
    return EpisodeKey(
        anchor.subject_id, anchor.prediction_time, MM_POLICY, study_ids=studies, dicom_ids=dicoms
    )


def _chexpert(
    ctx: BuildContext, anchor: Anchor, study_id: int, dicoms: tuple[str, ...]
) -> dict[str, Any] | None:
    rows = ctx.future.rows("cxr.chexpert", _key(anchor, (study_id,), dicoms), "f.study_id = ?", [study_id])
    return rows[0] if rows else None


def _positives(labels: dict[str, Any]) -> tuple[str, ...]:
    return tuple(f for f in CHEXPERT_LABELS if f != "No Finding" and labels.get(f) == 1.0)


def _study_anchor(r: dict[str, Any]) -> tuple[Anchor, dict[str, Any]]:
    info = {
        "studies": (r["study_id"],),
        "dicoms": tuple(r["dicoms"]),
        "pairs": [(r["study_id"], d) for d in r["dicoms"]],
    }
    return Anchor(r["subject_id"], r["study_time"], hadm_id=r.get("hadm_id"), stay_id=r.get("stay_id")), info


def finding_presence(ctx: BuildContext) -> Labelled:
    """Is <finding> present in the linked study (CheXpert 1.0 = yes; 0, -1, missing = no)?"""
    for r in ctx.shuffled(ctx.query(_STUDIES)):
        anchor, info = _study_anchor(r)
        labels = _chexpert(ctx, anchor, r["study_id"], info["dicoms"])
        if labels is None:
            continue
        pos = _positives(labels)
        ask_positive = any(f in pos for f in _FINDINGS) and ctx.rng.random() < 0.5
        pool = [f for f in _FINDINGS if (f in pos) == ask_positive]
        finding = ctx.rng.choice(pool)
        info["ask"] = f"Is {finding.lower()} present in the linked chest X-ray study? Answer yes or no."
        yield anchor, ("yes",) if finding in pos else ("no",), info


def finding_enumeration(ctx: BuildContext) -> Labelled:
    """Which CheXpert findings are positive in the linked study ('No Finding' when none)?"""
    for r in ctx.shuffled(ctx.query(_STUDIES)):
        anchor, info = _study_anchor(r)
        labels = _chexpert(ctx, anchor, r["study_id"], info["dicoms"])
        if labels is None:
            continue
        info["ask"] = "List the findings of the linked chest X-ray study. Return one finding per line."
        yield anchor, _positives(labels) or ("No Finding",), info


def change_comparison(ctx: BuildContext) -> Labelled:
    """Which findings are new in the later of two consecutive studies ('none' when nothing is new)?"""
    sql = (
        f"SELECT subject_id, study_id, study_time, dicoms, lag(study_id) OVER w AS prev_study, "
        f"lag(dicoms) OVER w AS prev_dicoms FROM ({_STUDIES}) WINDOW w AS (PARTITION BY subject_id ORDER BY study_time)"
    )
    for r in ctx.shuffled([x for x in ctx.query(sql) if x["prev_study"] is not None]):
        anchor = Anchor(r["subject_id"], r["study_time"])
        studies = (r["prev_study"], r["study_id"])
        dicoms = tuple(r["prev_dicoms"]) + tuple(r["dicoms"])
        later = _chexpert(ctx, anchor, r["study_id"], dicoms)
        earlier = _chexpert(ctx, anchor, r["prev_study"], dicoms)
        if later is None or earlier is None:
            continue
        new = tuple(f for f in _positives(later) if f not in _positives(earlier))
        pairs = [(r["prev_study"], d) for d in r["prev_dicoms"]] + [(r["study_id"], d) for d in r["dicoms"]]
        info = {
            "studies": studies,
            "dicoms": dicoms,
            "pairs": pairs,
            "ask": "Compared with the earlier linked study, which findings are new in the later study? "
            "Return one finding per line, or 'none'.",
        }
        yield anchor, new or ("none",), info


def _icu_outcomes(
    ctx: BuildContext,
) -> Iterator[tuple[Anchor, dict[str, Any], dict[str, Any], dict[str, Any]]]:
    for r in ctx.shuffled(ctx.query(_IN_ICU)):
        anchor, info = _study_anchor(r)
        adm = ctx.future.encounter(
            "hosp.admissions", r["subject_id"], r["admittime"], "hadm_id", r["hadm_id"]
        )
        if adm is not None and (adm["deathtime"] is None or adm["deathtime"] > anchor.prediction_time):
            yield anchor, info, adm, r


def decompensation(ctx: BuildContext) -> Labelled:
    """Will the patient die within the next 24 hours (MedMod decompensation)?"""
    for anchor, info, adm, _ in _icu_outcomes(ctx):
        death = adm["deathtime"]
        info["ask"] = "Will the patient die within the next 24 hours? Answer yes or no."
        yes = death is not None and death <= anchor.prediction_time + dt.timedelta(hours=24)
        yield anchor, ("yes",) if yes else ("no",), info


def icu_mortality(ctx: BuildContext) -> Labelled:
    """Will the patient die during the current ICU stay (MedMod in-hospital mortality)?"""
    for anchor, info, adm, r in _icu_outcomes(ctx):
        death = adm["deathtime"]
        info["ask"] = "Will the patient die during the current ICU stay? Answer yes or no."
        yes = death is not None and death <= r["outtime"]
        yield anchor, ("yes",) if yes else ("no",), info


def phenotype(ctx: BuildContext) -> Labelled:
    """Which of the 25 MedMod phenotypes will the admission be coded with?"""
    for anchor, info, _, r in _icu_outcomes(ctx):
        key = _key(anchor, info["studies"], info["dicoms"])
        rows = ctx.future.rows("hosp.diagnoses_icd", key, "f.hadm_id = ?", [r["hadm_id"]])
        labels = medmod_phenotypes([(x["icd_code"], int(x["icd_version"])) for x in rows if x["icd_code"]])
        info["ask"] = (
            "Which acute and chronic conditions (phenotypes) apply to this ICU stay? Return one per line."
        )
        yield anchor, labels, info


def build_mm_rows(ctx: BuildContext, spec: TaskSpec, title: str) -> tuple[list[dict[str, Any]], str | None]:
    """Rows of one multimodal category (``title``: the card's name, written to each row), and why it has
    fewer than asked (or none)."""
    missing = [t for t in spec.tables if t not in ctx.present]
    if missing:
        return [], f"the store has no {', '.join(missing)}"
    assert spec.build is not None and spec.row_task is not None
    picked: list[tuple[Drawn, dict[str, Any]]] = []
    by_answer: dict[str, int] = {}
    for anchor, label, info in spec.build(ctx):
        if not label:
            continue
        if spec.yes_no and by_answer.get(label[0], 0) >= ctx.per_task - ctx.per_task // 2:
            continue
        by_answer[label[0]] = by_answer.get(label[0], 0) + 1
        picked.append((Drawn(anchor, label), info))
        if len(picked) >= ctx.per_task:
            break
    rows = [_mm_row(spec.name, spec.row_task, title, d, info, i) for i, (d, info) in enumerate(picked)]
    reason = (
        None
        if len(rows) >= ctx.per_task
        else f"the store supports only {len(rows)} of {ctx.per_task} questions"
    )
    return rows, reason


def _cxr_path(subject_id: int, study_id: int, dicom: str | None = None) -> str:
    sid = str(subject_id)
    if dicom is None:
        return f"mimic-cxr/2.0.0/mimic-cxr-reports/files/p{sid[:2]}/p{sid}/s{study_id}.txt"
    return f"mimic-cxr/2.0.0/files/p{sid[:2]}/p{sid}/s{study_id}/{dicom}.jpg"


def _question(anchor: Anchor, info: dict[str, Any], ask: str) -> str:
    ids = ", ".join(str(s) for s in info["studies"])
    return (
        "<task_instruction>Use the patient's EHR and the linked chest X-ray studies available up to the current "
        "time to answer the question. Return only the final answer text; if it has several items, put one item "
        "per line with no bullets or numbering.</task_instruction>\n"
        f"<patient_info>Current Time: {anchor.prediction_time:%Y-%m-%d %H:%M:%S}\nSubject ID: {anchor.subject_id}\n"
        f"Hospital Admission ID: {anchor.hadm_id or 'UNKNOWN'}\nICU Stay ID: {anchor.stay_id or 'UNKNOWN'}</patient_info>\n"
        f"<cxr_info>Linked Study IDs: {ids}\nImages: {len(info['dicoms'])}</cxr_info>\n"
        f"<question>{ask}</question>"
    )


def _mm_row(
    category: str, task: str, title: str, drawn: Drawn, info: dict[str, Any], idx: int
) -> dict[str, Any]:
    a = drawn.anchor
    source = task.split("_")[0]
    cutoff = f"{a.prediction_time:%Y-%m-%d %H:%M:%S}"
    studies, dicoms = list(info["studies"]), list(info["dicoms"])
    images = [_cxr_path(a.subject_id, s, d) for s, d in info["pairs"]]
    return {
        "qid": f"clinseek_mm_{category}_{idx}",
        "task": task,
        "category": title,
        "task_family": "qa",
        "source_benchmark": source,
        "subject_id": a.subject_id,
        "hadm_id": a.hadm_id,
        "stay_id": a.stay_id,
        "prediction_time": cutoff,
        "question": _question(a, info, info["ask"]),
        "answer_type": "list",
        "ground_truth": [{"name": n} for n in drawn.label],
        "modalities": ["ehr", "cxr_table", "cxr_image"],
        "study_ids": studies,
        "dicom_ids": dicoms,
        "image_paths": images,
        "report_paths": [_cxr_path(a.subject_id, s) for s in studies] if source == "ehrxqa" else [],
        "scope": "patient_scope",
        "snapshot_spec": {
            "cutoff_time": cutoff,
            "time_policy": "inclusive_leq_cutoff",
            "cxr_policy": "linked_studies_only",
            "table_policy": "rows_visible_if_event_time_leq_cutoff",
            "cohort_materialization": None,
        },
        "leakage_policy_version": MM_LEAKAGE_POLICY,
    }


_CXR = ("cxr.metadata", "cxr.chexpert")
_IN_ICU_AT = "a CXR study time inside an ICU stay"
_PHENO = (
    "the MedMod phenotypes (25 HCUP CCS groups of Harutyunyan et al. 2019) of the ICU stay's admission, "
    "from its diagnoses_icd codes (future_select at the cutoff, target_hadm_id set)"
)


def _mm(name: str, upstream: tuple[str, ...], row_task: str, source: str, ask: str, label: str, when: str,
        build: Callable[[BuildContext], Labelled], *, needs: tuple[str, ...] = (), yes_no: bool = False,
        hides_reports: bool = False) -> TaskSpec:
    return TaskSpec(name, "clinseek-bench-mm", "multimodal", name, ask, (*_CXR, *needs), when, label, "",
                    source, build=build, upstream_tasks=upstream, row_task=row_task, yes_no=yes_no,
                    hides_linked_reports=hides_reports)


MM_TASKS: tuple[TaskSpec, ...] = (
    _mm("cxr_finding_presence", ("ehrxqa_image",), "ehrxqa_image", "EHRXQA",
        "Is <finding> present in the linked chest X-ray study? Answer yes or no.",
        "yes iff the CheXpert label of the asked finding is 1.0 for the linked study (0, -1, NULL = no)",
        "the study's acquisition time (inclusive policy: the study is visible)", finding_presence,
        yes_no=True, hides_reports=True),
    _mm("cxr_finding_enumeration", ("ehrxqa_image", "medmod_radiology"), "medmod_radiology", "EHRXQA, MedMod",
        "List the findings of the linked chest X-ray study. Return one finding per line.",
        "the CheXpert observations labelled 1.0 for the linked study ('No Finding' when none)",
        "the study's acquisition time", finding_enumeration, hides_reports=True),
    _mm("cxr_change_comparison", ("ehrxqa_image",), "ehrxqa_image", "EHRXQA",
        "Compared with the earlier linked study, which findings are new in the later study? Return one finding "
        "per line, or 'none'.",
        "the CheXpert observations positive (1.0) in the later of two linked studies and not in the "
        "earlier one ('none' when nothing is new)",
        "the later study's acquisition time", change_comparison, hides_reports=True),
    _mm("clinical_deterioration", ("medmod_decompensation",), "medmod_decompensation", "MedMod",
        "Will the patient die within the next 24 hours? Answer yes or no.",
        "yes iff the admission's deathtime falls within 24 h after the cutoff", _IN_ICU_AT, decompensation,
        needs=("icu.icustays", "hosp.admissions"), yes_no=True),
    _mm("mm_mortality", ("medmod_in_hospital_mortality",), "medmod_in_hospital_mortality", "MedMod",
        "Will the patient die during the current ICU stay? Answer yes or no.",
        "yes iff the patient dies during the current ICU stay (deathtime <= icustays.outtime)", _IN_ICU_AT,
        icu_mortality, needs=("icu.icustays", "hosp.admissions"), yes_no=True),
    _mm("phenotype", ("medmod_phenotyping",), "medmod_phenotyping", "MedMod",
        "Which acute and chronic conditions (phenotypes) apply to this ICU stay? Return one per line.",
        _PHENO, _IN_ICU_AT, phenotype, needs=("icu.icustays", "hosp.admissions", "hosp.diagnoses_icd")),
)
"""The six ClinSeek-Bench-MM categories, in the card's order (each a task named by its category slug)."""

