"""Imaging studies: when chest films and other exams are done, their CheXpert labels, and report text.

Chest films follow the problem (pneumonia shows consolidation, heart failure shows cardiomegaly,
edema and effusions), the ICU (portable AP films with support devices while ventilated) and the
course (findings resolve in survivors and persist or appear in patients who die), so the label
of a later study and the change between studies can be read from the record. The report text is
written from the labels, so text and labels agree; uncertain labels (-1.0) are worded "possible".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...schema import CHEXPERT_LABELS
from ._conditions import CHRONIC
from ._context import Ctx
from ._frame import DAY, HOUR, MINUTE
from ._items import CXR_EXAM, CXR_PORTABLE_EXAM, OTHER_EXAMS
from ._timeline import Admission, Timeline

_CHEST = {"sepsis", "pneumonia", "chf", "copd", "nstemi"}
_FINDINGS = [label for label in CHEXPERT_LABELS if label not in ("No Finding",)]
_EXPLICIT_NEGATIVE = ("Pleural Effusion", "Pneumothorax", "Edema", "Consolidation")


@dataclass(slots=True)
class Study:
    """One radiology exam (a chest film when ``labels`` is set)."""

    subject_id: int
    hadm_id: int | None
    time: float
    exam: str
    cpt: str
    study_id: int | None = None
    portable: bool = False
    labels: dict[str, float] = field(default_factory=dict)
    prior_time: float | None = None
    prior_positive: frozenset[str] = frozenset()
    text: str = ""

    @property
    def positive(self) -> frozenset[str]:
        """Findings labelled 1.0 (definite)."""
        return frozenset(k for k, v in self.labels.items() if v == 1.0 and k != "No Finding")


def plan_studies(timelines: list[Timeline], ctx: Ctx) -> list[Study]:
    """Every imaging study of the chunk, in patient then time order, with labels and report text."""
    out: list[Study] = []
    for tl in timelines:
        studies: list[Study] = []
        for adm in tl.admissions:
            studies += _admission_studies(tl, adm, ctx)
        for t in tl.outpatient:
            if ctx.rng.random() < 0.06:
                studies.append(Study(tl.patient.subject_id, None, t + HOUR, CXR_EXAM[0], CXR_EXAM[1]))
        studies.sort(key=lambda s: s.time)
        _label_patient(tl, studies, ctx)
        out += studies
    return out


def _admission_studies(tl: Timeline, adm: Admission, ctx: Ctx) -> list[Study]:
    rng = ctx.rng
    sid = tl.patient.subject_id
    start = adm.ed.intime + rng.uniform(0.5, 1.5) * HOUR if adm.ed else adm.admittime + rng.uniform(1, 3) * HOUR
    out: list[Study] = []
    chest = adm.problem.key in _CHEST or bool(adm.problem.cxr) or bool(adm.icu)
    if chest or rng.random() < 0.25:
        icu_first = any(s.intime <= start < s.outtime for s in adm.icu)
        film = CXR_PORTABLE_EXAM if icu_first or adm.severity > 0.6 else CXR_EXAM
        out.append(Study(sid, adm.hadm_id, start, film[0], film[1], portable=film is CXR_PORTABLE_EXAM))
    for stay in adm.icu:
        t = stay.intime + rng.uniform(2, 10) * HOUR
        k = 0
        while t < stay.outtime and k < 3:
            out.append(Study(sid, adm.hadm_id, t, CXR_PORTABLE_EXAM[0], CXR_PORTABLE_EXAM[1], portable=True))
            t += rng.uniform(1, 2.5) * DAY
            k += 1
    if chest and not adm.icu and adm.dischtime - adm.admittime > 4 * DAY:
        t = adm.admittime + rng.uniform(2.5, 3.5) * DAY
        out.append(Study(sid, adm.hadm_id, t, CXR_EXAM[0], CXR_EXAM[1]))
    for exam in adm.problem.imaging:
        t = start + rng.uniform(0.5, 6) * HOUR
        out.append(Study(sid, adm.hadm_id, t, exam, OTHER_EXAMS[exam]))
    for s in out:
        s.time = math.floor(min(s.time, adm.dischtime - 10 * MINUTE) / MINUTE) * MINUTE
    return out


def _label_patient(tl: Timeline, studies: list[Study], ctx: Ctx) -> None:
    rng = ctx.rng
    chronic_hf = any(CHRONIC[i].key == "hf" for i in tl.patient.chronic)
    big_heart = chronic_hf and rng.random() < 0.6
    present: set[str] = set()
    prior: Study | None = None
    current_hadm: int | None = -1
    for s in studies:
        if s.exam not in (CXR_EXAM[0], CXR_PORTABLE_EXAM[0]):
            s.text = _other_report(s, tl, rng)
            continue
        s.study_id = ctx.counters.study_id
        ctx.counters.study_id += int(rng.integers(1, 40))
        adm = next((a for a in tl.admissions if a.hadm_id == s.hadm_id), None)
        if s.hadm_id != current_hadm:
            present = _first_findings(adm, rng) if adm else set()
            current_hadm = s.hadm_id
        elif adm is not None:
            present = _evolve(present, adm, rng)
        now = set(present)
        if big_heart:
            now.add("Cardiomegaly")
        if adm is not None and any(st.intime <= s.time < st.outtime and (st.ventilated or st.pressors) for st in adm.icu):
            now.add("Support Devices")
        s.labels = _encode(now, rng)
        if prior is not None:
            s.prior_time, s.prior_positive = prior.time, prior.positive
        s.text = cxr_report(s)
        prior = s


def _first_findings(adm: Admission, rng: np.random.Generator) -> set[str]:
    scale = 0.55 + 0.6 * adm.severity
    return {f for f, p in adm.problem.cxr.items() if rng.random() < p * scale}


def _evolve(present: set[str], adm: Admission, rng: np.random.Generator) -> set[str]:
    if adm.died:
        new = {f for f in ("Edema", "Pleural Effusion", "Lung Opacity") if rng.random() < 0.25}
        return present | new
    return {f for f in sorted(present) if rng.random() > 0.35}  # sorted: set order varies per process


def _encode(positive: set[str], rng: np.random.Generator) -> dict[str, float]:
    labels: dict[str, float] = {}
    for f in _FINDINGS:
        if f in positive:
            labels[f] = -1.0 if f != "Support Devices" and rng.random() < 0.1 else 1.0
        elif f in _EXPLICIT_NEGATIVE and rng.random() < 0.6:
            labels[f] = 0.0
    if not any(v in (1.0, -1.0) for v in labels.values()):
        labels["No Finding"] = 1.0
    return labels


_SENTENCES = {
    "Atelectasis": ("Bibasilar atelectasis.", "Possible bibasilar atelectasis."),
    "Cardiomegaly": ("The heart is enlarged.", "The heart size is borderline enlarged."),
    "Consolidation": ("Focal consolidation in the right lower lobe.", "Possible consolidation at the right base."),
    "Edema": ("Moderate pulmonary edema.", "Possible mild pulmonary vascular congestion."),
    "Enlarged Cardiomediastinum": ("The cardiomediastinal silhouette is widened.", "The mediastinum may be widened."),
    "Fracture": ("Healed right rib fracture.", "Possible rib fracture."),
    "Lung Lesion": ("A nodular opacity in the left upper lobe.", "A possible nodule in the left upper lobe."),
    "Lung Opacity": ("Patchy opacity at the right lung base.", "Possible opacity at the lung bases."),
    "Pleural Effusion": ("Small bilateral pleural effusions.", "Possible small left pleural effusion."),
    "Pleural Other": ("Pleural thickening at the left apex.", "Possible pleural thickening."),
    "Pneumonia": ("Findings are consistent with pneumonia.", "Pneumonia cannot be excluded."),
    "Pneumothorax": ("Small right apical pneumothorax.", "Possible tiny apical pneumothorax."),
    "Support Devices": (
        "Endotracheal tube terminates 4 cm above the carina; a right internal jugular catheter ends in the SVC.",
        "Support devices in place.",
    ),
}
_NEGATIVE = {
    "Pleural Effusion": "No pleural effusion.",
    "Pneumothorax": "No pneumothorax.",
    "Edema": "No pulmonary edema.",
    "Consolidation": "No focal consolidation.",
}


def cxr_report(s: Study) -> str:
    """The report of a chest film, written from its labels (FINDINGS and IMPRESSION)."""
    findings: list[str] = []
    for label in CHEXPERT_LABELS:
        value = s.labels.get(label)
        if label in _SENTENCES and value in (1.0, -1.0):
            findings.append(_SENTENCES[label][0 if value == 1.0 else 1])
        elif value == 0.0 and label in _NEGATIVE:
            findings.append(_NEGATIVE[label])
    if s.labels.get("No Finding") == 1.0:
        findings.insert(0, "The lungs are clear. Normal heart size.")
        impression = "No acute cardiopulmonary process."
    else:
        impression = " ".join(_SENTENCES[k][0 if s.labels[k] == 1.0 else 1] for k in CHEXPERT_LABELS
                              if k in _SENTENCES and s.labels.get(k) in (1.0, -1.0))
    comparison = "None."
    if s.prior_time is not None:
        day = np.datetime64(int(s.prior_time), "s").astype("datetime64[D]")
        comparison = f"Chest radiograph of {day}."
        now = s.positive
        if now - s.prior_positive:
            impression += " New since the prior study: " + ", ".join(sorted(now - s.prior_positive)).lower() + "."
        if s.prior_positive - now:
            impression += " Resolved since the prior study: " + ", ".join(sorted(s.prior_positive - now)).lower() + "."
        if now == s.prior_positive and now:
            impression += " No significant change since the prior study."
    view = "Portable AP view of the chest." if s.portable else "PA and lateral views of the chest."
    return (
        f"FINAL REPORT\nEXAMINATION:  {s.exam}\n\nINDICATION:  ___ with shortness of breath, evaluate for acute process.\n\n"
        f"TECHNIQUE:  {view}\n\nCOMPARISON:  {comparison}\n\nFINDINGS:\n\n{' '.join(findings)}\n\nIMPRESSION:\n\n{impression}\n"
    )


def _other_report(s: Study, tl: Timeline, rng: np.random.Generator) -> str:
    adm = next((a for a in tl.admissions if a.hadm_id == s.hadm_id), None)
    key = adm.problem.key if adm else ""
    if key == "stroke":
        impression = "Acute infarct in the left middle cerebral artery territory. No hemorrhage."
    elif key == "cirrhosis":
        impression = "Cirrhotic liver morphology with moderate ascites. Splenomegaly."
    else:
        impression = "No acute abnormality."
    return f"FINAL REPORT\nEXAMINATION:  {s.exam}\n\nFINDINGS:\n\n{impression}\n\nIMPRESSION:\n\n{impression}\n"
