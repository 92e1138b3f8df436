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
