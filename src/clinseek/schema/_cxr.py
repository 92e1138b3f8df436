"""MIMIC-CXR 2.0.0 / MIMIC-CXR-JPG 2.0.0: chest radiographs, their metadata, reports and labels.

Source: https://physionet.org/content/mimic-cxr-jpg/2.0.0/ (metadata, chexpert, negbio, split CSVs)
and https://physionet.org/content/mimic-cxr/2.0.0/ (free-text reports, ``files/pNN/p<subject>/s<study>.txt``).
"""

from __future__ import annotations

from ._model import Column, EventTime, ParentTime, Table, parse_columns

CHEXPERT_LABELS: tuple[str, ...] = (
    "Atelectasis",
    "Cardiomegaly",
    "Consolidation",
    "Edema",
    "Enlarged Cardiomediastinum",
    "Fracture",
    "Lung Lesion",
    "Lung Opacity",
    "No Finding",
    "Pleural Effusion",
    "Pleural Other",
    "Pneumonia",
    "Pneumothorax",
    "Support Devices",
)
"""The 14 CheXpert observations, exactly as the MIMIC-CXR-JPG label columns are named."""

STUDY_TIME_SQL = (
    "make_timestamp(t.StudyDate // 10000, (t.StudyDate // 100) % 100, t.StudyDate % 100, "
    "CAST(floor(t.StudyTime / 10000) AS BIGINT), CAST(floor(t.StudyTime / 100) AS BIGINT) % 100, "
    "CAST(floor(t.StudyTime) AS BIGINT) % 100)"
)
"""SQL over ``cxr.metadata`` (alias ``t``) giving the study's instant from StudyDate (YYYYMMDD) and StudyTime (HHMMSS.fff)."""

_LABEL_DOC = "1.0 positive, 0.0 negative, -1.0 uncertain, NULL not mentioned."
_LABEL_WHY = "a label source, never evidence"

_CXR = "MIMIC-CXR-JPG 2.0.0"


def _label_table(name: str, description: str, file: str) -> Table:
    cols = parse_columns("subject_id INTEGER final, study_id INTEGER final", why={"study_id": _LABEL_WHY})
    labels = tuple(Column(label, "DOUBLE", _LABEL_DOC, known="final", why=_LABEL_WHY) for label in CHEXPERT_LABELS)
    return Table(
        "cxr",
        name,
        description,
        cols + labels,
        key=("study_id",),
        visibility="never",
        source=_CXR,
        files=(file,),
    )


CXR: tuple[Table, ...] = (
    Table(
        "cxr",
        "metadata",
        "One row per chest radiograph image (dicom_id) with its study, view position and acquisition date and time.",
        parse_columns(
            "dicom_id VARCHAR event, subject_id INTEGER static, study_id INTEGER event, "
            "PerformedProcedureStepDescription VARCHAR event, ViewPosition VARCHAR event, Rows INTEGER event, "
            "Columns INTEGER event, StudyDate INTEGER event, StudyTime DOUBLE event, "
            "ProcedureCodeSequence_CodeMeaning VARCHAR event, ViewCodeSequence_CodeMeaning VARCHAR event, "
            "PatientOrientationCodeSequence_CodeMeaning VARCHAR event",
            {
                "dicom_id": "Image identifier; the JPG is files/pNN/p<subject_id>/s<study_id>/<dicom_id>.jpg.",
                "study_id": "Radiology study identifier (one report per study).",
                "ViewPosition": "PA, AP, LATERAL, LL, ...",
                "StudyDate": "Shifted study date as YYYYMMDD.",
                "StudyTime": "Study time as HHMMSS.fff.",
            },
            {
                "StudyDate": "the study's acquisition date: its event time",
                "StudyTime": "the study's acquisition time: its event time",
                "Rows": "the image's size, fixed at acquisition",
            },
        ),
        key=("dicom_id",),
        event_time=EventTime(
            STUDY_TIME_SQL, sort=("StudyDate", "StudyTime"), rationale="the study's acquisition time"
        ),
        source=_CXR,
        files=("mimic-cxr-2.0.0-metadata",),
    ),
    Table(
        "cxr",
        "reports",
        "Free-text radiology report of each chest X-ray study (MIMIC-CXR files/pNN/p<subject>/s<study>.txt).",
        parse_columns(
            "subject_id INTEGER static, study_id INTEGER event, text VARCHAR event",
            {"text": "The full report: FINDINGS and IMPRESSION sections when present."},
            {
                "text": "MIMIC-CXR gives no signing time: known at the study time (the reference's rule); "
                "questions whose answer a linked report states hide it (hide_cxr_reports)"
            },
        ),
        key=("study_id",),
        event_time=EventTime(
            "parent_time",
            parent=ParentTime("cxr.metadata", ("study_id",), STUDY_TIME_SQL),
            sort=("study_id",),
        ),
        source="MIMIC-CXR 2.0.0",
        files=("reports",),
    ),
    _label_table(
        "chexpert",
        "CheXpert labeler output per study (14 observations); a label source, never evidence.",
        "mimic-cxr-2.0.0-chexpert",
    ),
    _label_table(
        "negbio",
        "NegBio labeler output per study (14 observations); a label source, never evidence.",
        "mimic-cxr-2.0.0-negbio",
    ),
    Table(
        "cxr",
        "split",
        "The official train/validate/test split of each image; a benchmark artefact, never evidence.",
        parse_columns(
            "dicom_id VARCHAR final, study_id INTEGER final, subject_id INTEGER final, split VARCHAR final",
            why={"split": "a benchmark artefact, never evidence"},
        ),
        key=("dicom_id",),
        visibility="never",
        source=_CXR,
        files=("mimic-cxr-2.0.0-split",),
    ),
)
