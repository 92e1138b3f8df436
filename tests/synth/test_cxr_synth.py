"""CXR studies: images in the MIMIC-CXR-JPG layout with the metadata's size, DICOM copies, reports that agree with labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pydicom
from PIL import Image

from clinseek.store import connect_store, open_store
from clinseek.store._synth._images import render


def _cxr_root(store: Path) -> Path:
    return store.parent / open_store(store).info["cxr_root"]


def test_every_image_exists_with_the_metadata_size(synthetic_store: Path) -> None:
    con = connect_store(synthetic_store)
    try:
        meta = con.execute('SELECT subject_id, study_id, dicom_id, "Rows", "Columns" FROM cxr.metadata').fetchall()
    finally:
        con.close()
    root = _cxr_root(synthetic_store)
    assert meta
    for subject_id, study_id, dicom_id, n_rows, n_cols in meta:
        path = root / "files" / f"p{str(subject_id)[:2]}" / f"p{subject_id}" / f"s{study_id}" / f"{dicom_id}.jpg"
        with Image.open(path) as img:
            assert (img.height, img.width) == (n_rows, n_cols)
            assert img.mode == "L"


def test_some_studies_have_dicom_copies(synthetic_store: Path) -> None:
    dicoms = sorted(_cxr_root(synthetic_store).rglob("*.dcm"))
    assert dicoms
    ds = pydicom.dcmread(dicoms[0])
    assert ds.Modality == "CR" and ds.pixel_array.ndim == 2


def test_reports_agree_with_chexpert_labels(medium_store: Path) -> None:
    con = connect_store(medium_store)
    try:
        got = con.execute(
            'SELECT c."Pleural Effusion", c."No Finding", c."Cardiomegaly", lower(r.text) FROM cxr.chexpert c '
            "JOIN cxr.reports r USING (study_id)"
        ).fetchall()
    finally:
        con.close()
    assert any(e == 1.0 for e, _, _, _ in got) and any(n == 1.0 for _, n, _, _ in got)
    for effusion, normal, cardiomegaly, text in got:
        if effusion == 1.0:
            assert "pleural effusion" in text and "no pleural effusion" not in text
        if effusion == 0.0:
            assert "no pleural effusion" in text
        if normal == 1.0:
            assert "no acute cardiopulmonary process" in text
        if cardiomegaly == 1.0:
            assert "heart is enlarged" in text


def test_cxr_reports_are_also_radiology_notes(medium_store: Path) -> None:
    con = connect_store(medium_store)
    try:
        missing = con.execute(
            "SELECT count(*) FROM cxr.reports r ANTI JOIN note.radiology n ON n.subject_id = r.subject_id AND n.text = r.text"
        ).fetchall()[0][0]
    finally:
        con.close()
    assert missing == 0


def test_findings_are_drawn_on_the_film() -> None:
    normal = render({"No Finding": 1.0}, (1, 2, 3)).astype(np.int32)
    sick = render({"Pleural Effusion": 1.0, "Cardiomegaly": 1.0}, (1, 2, 3)).astype(np.int32)
    assert normal.shape == sick.shape
    h = normal.shape[0]
    assert sick[h // 2 :].mean() > normal[h // 2 :].mean() + 3  # brighter lower chest
