"""Finding MIMIC-CXR images and reports on disk, whatever the release layout.

Source layouts (PhysioNet MIMIC-CXR 2.0.0, MIMIC-CXR-JPG 2.0.0 / 2.1.0, and the ClinSeek-Bench-MM
packaging, ``reference/ref_data_scoring.md`` §1.3 and §2.6):

* nested: ``files/pNN/p<subject_id>/s<study_id>/<dicom_id>.jpg`` (``.dcm`` for MIMIC-CXR DICOMs),
  under a release folder such as ``mimic-cxr/2.0.0/``, ``mimic-cxr-jpg/2.0.0/`` or
  ``mimic-cxr-jpg/2.1.0/`` (or directly under the root);
* flat: ``mimic-cxr2/pNN_p<subject_id>_s<study_id>_<dicom_id>.jpg``;
* reports: ``mimic-cxr-reports/files/pNN/p<subject_id>/s<study_id>.txt`` (the unzipped
  ``mimic-cxr-reports.zip``) or ``files/pNN/p<subject_id>/s<study_id>.txt``;
* released manifests prefix asset paths with ``EHRXQAOriginalLinked_v1/`` or
  ``MedModOriginalLinked_v1/``; the prefix is stripped before looking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ImagingError

RELEASE_FOLDERS: tuple[str, ...] = (
    "",
    "mimic-cxr-jpg/2.1.0",
    "mimic-cxr-jpg/2.0.0",
    "mimic-cxr/2.0.0",
    "mimic-cxr-jpg-2.1.0",
    "mimic-cxr-jpg-2.0.0",
    "2.1.0",
    "2.0.0",
)
"""Release folders looked under, in order, below each root (``""`` = the root itself)."""

IMAGE_SUFFIXES: tuple[str, ...] = (".jpg", ".dcm", ".png")
"""Image file suffixes, in order of preference (MIMIC-CXR-JPG first)."""

_ASSET_PREFIX = re.compile(r"^[A-Za-z0-9]+OriginalLinked_v\d+/")
_NESTED_IMAGE = re.compile(r"(?:^|/)p\d{2}/p(\d+)/s(\d+)/([^/]+?)\.(jpg|jpeg|dcm|png)$", re.I)
_FLAT_IMAGE = re.compile(r"(?:^|/)p\d{2}_p(\d+)_s(\d+)_([^/]+?)\.(jpg|jpeg|dcm|png)$", re.I)
_REPORT = re.compile(r"(?:^|/)p\d{2}/p(\d+)/s(\d+)\.txt$", re.I)


@dataclass(frozen=True, slots=True)
class CxrRef:
    """The ids a CXR asset path encodes.

    Attributes:
        subject_id: MIMIC ``subject_id``.
        study_id: MIMIC-CXR ``study_id``.
        dicom_id: the image's ``dicom_id``; ``None`` for a report.
    """

    subject_id: int
    study_id: int
    dicom_id: str | None = None


def parse_cxr_path(path: str) -> CxrRef | None:
    """The ids of a nested, flat or report asset path; ``None`` when it is none of them."""
    text = _ASSET_PREFIX.sub("", path.replace("\\", "/"), count=1)
    for pattern in (_NESTED_IMAGE, _FLAT_IMAGE):
        found = pattern.search(text)
        if found:
            return CxrRef(int(found.group(1)), int(found.group(2)), found.group(3))
    found = _REPORT.search(text)
    return CxrRef(int(found.group(1)), int(found.group(2))) if found else None


def _group(subject_id: int) -> str:
    return f"p{str(subject_id)[:2]}"


@dataclass(frozen=True, slots=True)
class CxrLocator:
    """Finds CXR files under one or more roots (a MIMIC-CXR(-JPG) download, a benchmark's asset folder).

    Attributes:
        roots: folders looked under, in order.
        release_folders: release sub-folders tried below each root (default :data:`RELEASE_FOLDERS`).
    """

    roots: tuple[Path, ...]
    release_folders: tuple[str, ...] = RELEASE_FOLDERS

    def image_candidates(self, subject_id: int, study_id: int, dicom_id: str) -> list[Path]:
        """Every place an image may be, in the order they are tried."""
        g = _group(subject_id)
        out: list[Path] = []
        for root in self.roots:
            for folder in self.release_folders:
                base = root / folder if folder else root
                for suffix in IMAGE_SUFFIXES:
                    out.append(base / "files" / g / f"p{subject_id}" / f"s{study_id}" / f"{dicom_id}{suffix}")
            for flat in ("mimic-cxr2", ""):
                base = root / flat if flat else root
                out.append(base / f"{g}_p{subject_id}_s{study_id}_{dicom_id}.jpg")
        return out

    def report_candidates(self, subject_id: int, study_id: int) -> list[Path]:
        """Every place a study's report may be, in the order they are tried."""
        g = _group(subject_id)
        out: list[Path] = []
        for root in self.roots:
            for folder in self.release_folders:
                base = root / folder if folder else root
                for reports in ("mimic-cxr-reports/files", "files"):
                    out.append(base / reports / g / f"p{subject_id}" / f"s{study_id}.txt")
        return out

    def image(self, subject_id: int, study_id: int, dicom_id: str) -> Path:
        """The image file of ``dicom_id`` (JPG preferred, then DICOM, then PNG).

        Raises:
            ImagingError: no candidate exists (the message names the roots and the layouts tried).
        """
        return self._first(self.image_candidates(subject_id, study_id, dicom_id),
                           f"p{subject_id}/s{study_id}/{dicom_id}", "image")

    def dicom(self, subject_id: int, study_id: int, dicom_id: str) -> Path | None:
        """The ``.dcm`` file of ``dicom_id`` when one exists (for its pixel spacing), else ``None``."""
        found = (p for p in self.image_candidates(subject_id, study_id, dicom_id) if p.suffix == ".dcm")
        return next((p for p in found if p.is_file()), None)

    def report(self, subject_id: int, study_id: int) -> Path:
        """The report file of ``study_id``.

        Raises:
            ImagingError: no candidate exists.
        """
        return self._first(self.report_candidates(subject_id, study_id), f"p{subject_id}/s{study_id}.txt", "report")

    def resolve(self, manifest_path: str) -> Path:
        """The file a manifest ``image_paths`` / ``report_paths`` entry names.

        The exact path (release prefix stripped) is tried under each root first, then the ids it
        encodes are looked up in every known layout.

        Raises:
            ImagingError: the file is in none of the places tried, or the path encodes no CXR ids.
        """
        text = _ASSET_PREFIX.sub("", manifest_path.replace("\\", "/"), count=1)
        direct = [Path(text)] if Path(text).is_absolute() else [root / text for root in self.roots]
        hit = next((p for p in direct if p.is_file()), None)
        if hit is not None:
            return hit
        ref = parse_cxr_path(text)
        if ref is None:
            raise ImagingError(manifest_path, "not a MIMIC-CXR image or report path "
                               "(expected .../pNN/p<subject_id>/s<study_id>/<dicom_id>.jpg or .../s<study_id>.txt)")
        if ref.dicom_id is None:
            return self.report(ref.subject_id, ref.study_id)
        return self.image(ref.subject_id, ref.study_id, ref.dicom_id)

    def _first(self, candidates: list[Path], what: str, kind: str) -> Path:
        hit = next((p for p in candidates if p.is_file()), None)
        if hit is not None:
            return hit
        roots = ", ".join(str(r) for r in self.roots) or "(no CXR root configured)"
        raise ImagingError(what, f"linked CXR {kind} not found under {roots} "
                           "(looked for files/pNN/p<subject>/s<study>/... in the nested 2.0.0/2.1.0 layouts, "
                           "the flat mimic-cxr2/ layout and mimic-cxr-reports/)")


def store_cxr_root(store: Path) -> Path | None:
    """The image folder a store records, if it exists: ``store_info.cxr_root`` (synthetic stores, relative to
    the store's folder) or ``source.cxr`` (the ``--cxr`` folder an ingested store was built from)."""
    from ..store import open_store

    info = open_store(store).info
    root = info.get("cxr_root") or info.get("source.cxr")  # synthetic stores / ingested MIMIC-CXR(-JPG)
    if not root:
        return None
    path = Path(root) if Path(root).is_absolute() else store.parent / root
    return path if path.is_dir() else None
