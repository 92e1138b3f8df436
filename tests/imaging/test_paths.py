"""CXR files are found in every release layout from manifest rows; a missing file is a clear error naming the roots."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinseek.errors import ImagingError
from clinseek.imaging import CxrLocator, CxrRef, parse_cxr_path

SID, STUDY, DICOM = 10000032, 50414267, "02aa804e-bde0afdd-112c0b34-7bc16630-4e384014"
NESTED = f"files/p10/p{SID}/s{STUDY}/{DICOM}.jpg"


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    return path


@pytest.mark.parametrize("layout", [
    f"mimic-cxr/2.0.0/{NESTED}",
    f"mimic-cxr-jpg/2.0.0/{NESTED}",
    f"mimic-cxr-jpg/2.1.0/{NESTED}",
    NESTED,
    f"mimic-cxr2/p10_p{SID}_s{STUDY}_{DICOM}.jpg",
])
def test_manifest_image_path_resolves_in_every_layout(tmp_path: Path, layout: str) -> None:
    target = _touch(tmp_path / layout)
    manifest = f"EHRXQAOriginalLinked_v1/mimic-cxr/2.0.0/{NESTED}"
    assert CxrLocator((tmp_path,)).resolve(manifest) == target


def test_report_path_resolves_from_the_reports_tree(tmp_path: Path) -> None:
    target = _touch(tmp_path / f"mimic-cxr/2.0.0/mimic-cxr-reports/files/p10/p{SID}/s{STUDY}.txt")
    manifest = f"MedModOriginalLinked_v1/mimic-cxr/2.0.0/mimic-cxr-reports/files/p10/p{SID}/s{STUDY}.txt"
    assert CxrLocator((tmp_path,)).resolve(manifest) == target
    assert CxrLocator((tmp_path,)).report(SID, STUDY) == target


def test_second_root_is_searched(tmp_path: Path) -> None:
    target = _touch(tmp_path / "b" / NESTED)
    assert CxrLocator((tmp_path / "a", tmp_path / "b")).image(SID, STUDY, DICOM) == target


def test_missing_image_names_the_roots_and_layouts(tmp_path: Path) -> None:
    with pytest.raises(ImagingError) as err:
        CxrLocator((tmp_path,)).resolve(f"mimic-cxr/2.0.0/{NESTED}")
    assert str(tmp_path) in str(err.value) and "2.1.0" in str(err.value)
    assert err.value.path == f"p{SID}/s{STUDY}/{DICOM}"


def test_jpg_is_preferred_and_dicom_found_beside_it(tmp_path: Path) -> None:
    jpg = _touch(tmp_path / NESTED)
    dcm = _touch(tmp_path / NESTED.replace(".jpg", ".dcm"))
    locator = CxrLocator((tmp_path,))
    assert locator.image(SID, STUDY, DICOM) == jpg
    assert locator.dicom(SID, STUDY, DICOM) == dcm


def test_parse_cxr_path_reads_ids_or_refuses() -> None:
    assert parse_cxr_path(f"x/{NESTED}") == CxrRef(SID, STUDY, DICOM)
    assert parse_cxr_path(f"mimic-cxr2/p10_p{SID}_s{STUDY}_{DICOM}.jpg") == CxrRef(SID, STUDY, DICOM)
    assert parse_cxr_path(f"files/p10/p{SID}/s{STUDY}.txt") == CxrRef(SID, STUDY)
    assert parse_cxr_path("/etc/passwd") is None


def test_a_non_cxr_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ImagingError, match="not a MIMIC-CXR"):
        CxrLocator((tmp_path,)).resolve("notes/readme.txt")


@pytest.mark.parametrize("release", ["mimic-cxr-jpg/2.0.0", "mimic-cxr-jpg/2.1.0"])
def test_ingest_finds_a_physionet_download_tree_and_its_images(tmp_path: Path, release: str) -> None:
    from clinseek.imaging import store_cxr_root
    from clinseek.schema import CHEXPERT_LABELS
    from clinseek.store import ingest

    root = tmp_path / "physionet"
    csvs = root / release
    csvs.mkdir(parents=True)
    (csvs / "mimic-cxr-2.0.0-metadata.csv").write_text(
        "dicom_id,subject_id,study_id,PerformedProcedureStepDescription,ViewPosition,Rows,Columns,StudyDate,"
        "StudyTime,ProcedureCodeSequence_CodeMeaning,ViewCodeSequence_CodeMeaning,"
        f"PatientOrientationCodeSequence_CodeMeaning\n{DICOM},{SID},{STUDY},CHEST (PA AND LAT),PA,3056,2544,"
        "21800506,213014.531,CHEST (PA AND LAT),postero-anterior,Erect\n")
    (csvs / "mimic-cxr-2.0.0-chexpert.csv").write_text(
        f"subject_id,study_id,{','.join(CHEXPERT_LABELS)}\n{SID},{STUDY},{',' * (len(CHEXPERT_LABELS) - 1)}\n")
    image = _touch(csvs / NESTED)
    report = root / f"mimic-cxr/2.0.0/mimic-cxr-reports/files/p10/p{SID}/s{STUDY}.txt"
    report.parent.mkdir(parents=True)
    report.write_text("IMPRESSION: No acute process.\n")
    out = tmp_path / "s.duckdb"
    result = ingest(out, cxr=root, progress=False)
    assert result.table("cxr.metadata").rows == 1 and result.table("cxr.reports").rows == 1
    cxr_root = store_cxr_root(out)
    assert cxr_root == root.resolve()
    assert CxrLocator((cxr_root,)).image(SID, STUDY, DICOM) == cxr_root / release / NESTED
    assert image.is_file()
