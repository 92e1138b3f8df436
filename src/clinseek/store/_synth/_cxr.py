"""MIMIC-CXR tables (metadata, chexpert, negbio, split, reports) and the image files of each study.

Images go to ``<cxr_root>/files/pNN/p<subject_id>/s<study_id>/<dicom_id>.jpg`` (MIMIC-CXR-JPG
layout); the first ``dicom_studies`` studies also get a ``.dcm`` copy beside the JPG.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...schema import CHEXPERT_LABELS
from ._context import Ctx
from ._frame import Frame, Rows
from ._images import image_key, jpg_bytes, render, write_dicom
from ._studies import Study

_VIEW_MEANING = {"PA": "postero-anterior", "AP": "antero-posterior", "LATERAL": "lateral"}


def image_path(root: Path, subject_id: int, study_id: int, dicom_id: str, suffix: str = ".jpg") -> Path:
    """Where an image lives in the MIMIC-CXR-JPG layout."""
    return root / "files" / f"p{str(subject_id)[:2]}" / f"p{subject_id}" / f"s{study_id}" / f"{dicom_id}{suffix}"


def _dicom_id(rng: np.random.Generator) -> str:
    return "-".join(f"{int(v):08x}" for v in rng.integers(0, 2**32, 5))


def cxr_tables(studies: list[Study], ctx: Ctx) -> tuple[dict[str, Frame], list[tuple[Study, str, str]]]:
    """The CXR tables of a chunk, and the (study, dicom_id, view) of every image to render."""
    meta, chexpert, negbio, split, reports = Rows(), Rows(), Rows(), Rows(), Rows()
    images: list[tuple[Study, str, str]] = []
    rng = ctx.rng
    split_of: dict[int, str] = {}
    for s in studies:
        if s.study_id is None:
            continue
        views = ["AP"] if s.portable else (["PA", "LATERAL"] if rng.random() < 0.5 else ["PA"])
        day = np.datetime64(int(s.time), "s")
        date = int(str(day.astype("datetime64[D]")).replace("-", ""))
        clock = str(day).split("T")[1]
        hhmmss = float(clock.replace(":", "")) + float(rng.integers(0, 1000)) / 1000
        for view in views:
            dicom_id = _dicom_id(rng)
            images.append((s, dicom_id, view))
            meta.add(1, dicom_id=dicom_id, subject_id=s.subject_id, study_id=s.study_id,
                     PerformedProcedureStepDescription=s.exam, ViewPosition=view, Rows=0, Columns=0,
                     StudyDate=date, StudyTime=hhmmss, ProcedureCodeSequence_CodeMeaning=s.exam,
                     ViewCodeSequence_CodeMeaning=_VIEW_MEANING[view],
                     PatientOrientationCodeSequence_CodeMeaning="Recumbent" if s.portable else "Erect")
            group = split_of.setdefault(s.subject_id, str(rng.choice(("train", "validate", "test"), p=(0.95, 0.025, 0.025))))
            split.add(1, dicom_id=dicom_id, study_id=s.study_id, subject_id=s.subject_id, split=group)
        labels = {label: s.labels.get(label, np.nan) for label in CHEXPERT_LABELS}
        chexpert.add(1, subject_id=s.subject_id, study_id=s.study_id, **labels)
        nb = {k: (np.nan if v == -1.0 and rng.random() < 0.5 else v) for k, v in labels.items()}
        negbio.add(1, subject_id=s.subject_id, study_id=s.study_id, **nb)
        reports.add(1, subject_id=s.subject_id, study_id=s.study_id, text=s.text)
    return {"metadata": meta.frame(), "chexpert": chexpert.frame(), "negbio": negbio.frame(),
            "split": split.frame(), "reports": reports.frame()}, images


def write_images(images: list[tuple[Study, str, str]], root: Path, seed: int, *, dicom_left: int) -> tuple[dict[str, tuple[int, int]], int]:
    """Render and write every image; returns {dicom_id: (Rows, Columns)} and how many DICOMs were written."""
    sizes: dict[str, tuple[int, int]] = {}
    for s, dicom_id, view in images:
        assert s.study_id is not None
        data, shape = jpg_bytes(image_key(s.labels, (seed, s.study_id, int(dicom_id[:8], 16)), lateral=view == "LATERAL"))
        path = image_path(root, s.subject_id, s.study_id, dicom_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        sizes[dicom_id] = shape
    written = 0
    for s, dicom_id, view in images[: max(dicom_left, 0)]:
        assert s.study_id is not None
        pixels = render(s.labels, (seed, s.study_id, int(dicom_id[:8], 16)), lateral=view == "LATERAL")
        day = np.datetime64(int(s.time), "s")
        write_dicom(pixels, image_path(root, s.subject_id, s.study_id, dicom_id, ".dcm"), subject_id=s.subject_id,
                    study_id=s.study_id, dicom_id=dicom_id, view=view,
                    study_date=str(day.astype("datetime64[D]")).replace("-", ""),
                    study_time=str(day).split("T")[1].replace(":", ""))
        written += 1
    return sizes, written
