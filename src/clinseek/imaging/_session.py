"""The imaging view of one episode: its linked, visible CXR images and reports, and the files its tools made.

An :class:`ImagingSession` is built per episode (one question run) and never shared. The images
it knows are exactly the rows of the episode's ``cxr.metadata`` (under
``multimodal-strict-temporal-scope-v1`` only the question's linked studies at or before the cutoff;
under the text policy the patient's studies before the cutoff), so no other study, image or report
can be opened through it.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ImagingError
from ._backend import ImagingConfig
from ._paths import CxrLocator, parse_cxr_path

if TYPE_CHECKING:
    from ..episode import Episode

_IMAGES_SQL = (
    "SELECT dicom_id, study_id, subject_id, ViewPosition, StudyDate, StudyTime FROM cxr.metadata "
    "ORDER BY StudyDate, StudyTime, study_id, dicom_id"
)
_REPORTS_SQL = "SELECT study_id, text FROM cxr.reports ORDER BY study_id"


@dataclass(frozen=True, slots=True)
class LinkedImage:
    """One image the episode may look at.

    Attributes:
        dicom_id: MIMIC-CXR image id.
        study_id: its study.
        view: ``ViewPosition`` (PA, AP, LATERAL, ...), or ``None``.
        study_time: acquisition instant (MIMIC's shifted clock, naive).
        path: the image file (JPG in MIMIC-CXR-JPG, else DICOM/PNG).
        dicom_path: the ``.dcm`` of the same image when one exists (pixel spacing), else ``None``.
    """

    dicom_id: str
    study_id: int
    view: str | None
    study_time: dt.datetime | None
    path: Path
    dicom_path: Path | None


@dataclass(frozen=True, slots=True)
class LinkedReport:
    """The report text of a visible linked study (from the episode's ``cxr.reports``)."""

    study_id: int
    text: str


def _study_time(date: int | None, time: float | None) -> dt.datetime | None:
    if date is None:
        return None
    clock = int(time or 0)
    try:
        return dt.datetime(date // 10000, date // 100 % 100, date % 100, clock // 10000, clock // 100 % 100, clock % 100)
    except ValueError:
        return None


class ImagingSession:
    """Linked images and reports of one episode, and the artifacts its imaging tools wrote.

    Args:
        episode: the sealed episode (its ``cxr`` tables decide what exists).
        locator: where image files are looked for.
        config: imaging weights and device.
        artifact_dir: where tool outputs (PNG) go; default a new temporary folder.

    Raises:
        ImagingError: a visible image has no file under the locator's roots (the question cannot
            be run as specified; never silently dropped).
    """

    def __init__(self, episode: Episode, locator: CxrLocator, config: ImagingConfig | None = None,
                 artifact_dir: Path | None = None) -> None:
        self.config = config or ImagingConfig()
        self.locator = locator
        self.artifact_dir = artifact_dir or Path(tempfile.mkdtemp(prefix="clinseek_img_"))
        self._artifacts: set[Path] = set()
        self._lock = threading.Lock()
        self.images = self._linked_images(episode)
        self.reports = self._linked_reports(episode)

    def _linked_images(self, episode: Episode) -> tuple[LinkedImage, ...]:
        if not episode.has_table("cxr.metadata"):
            return ()
        rows = episode.execute(_IMAGES_SQL, tables=("cxr.metadata",), max_rows=10_000).rows
        out = []
        for dicom_id, study_id, subject_id, view, date, time in rows:
            path = self.locator.image(subject_id, study_id, dicom_id)
            dcm = path if path.suffix == ".dcm" else self.locator.dicom(subject_id, study_id, dicom_id)
            out.append(LinkedImage(dicom_id, study_id, view, _study_time(date, time), path, dcm))
        return tuple(out)

    def _linked_reports(self, episode: Episode) -> tuple[LinkedReport, ...]:
        if not episode.has_table("cxr.reports"):
            return ()
        return tuple(LinkedReport(s, t) for s, t in episode.execute(_REPORTS_SQL, tables=("cxr.reports",), max_rows=10_000).rows if t)

    def image_list(self) -> str:
        """One line per linked image: ``dicom_id`` (study, view, time) and the path to pass to image tools."""
        if not self.images:
            return "No chest X-ray images are linked to this question."
        return "\n".join(f"- {i.dicom_id} (study {i.study_id}, {i.view or 'view unknown'}, {i.study_time}): {i.path}"
                         for i in self.images)

    def resolve(self, image: str) -> tuple[Path, LinkedImage | None]:
        """The file an image argument names, if this episode may open it.

        Accepted: a linked image's ``dicom_id``, its path (absolute or as in the manifest, release
        prefix stripped), or a PNG an imaging tool wrote in this session.

        Raises:
            ImagingError: the argument names no linked image and no artifact of this session (an
                unlinked study, a study after the cutoff, another patient, or any other file).
        """
        text = image.strip()
        for linked in self.images:
            if linked.dicom_path is not None and text == str(linked.dicom_path):
                return linked.dicom_path, linked
            if text in (linked.dicom_id, str(linked.path)):
                return linked.path, linked
        ref = parse_cxr_path(text)
        if ref is not None and ref.dicom_id is not None:
            for linked in self.images:
                if (ref.study_id, ref.dicom_id) == (linked.study_id, linked.dicom_id):
                    return (linked.dicom_path if text.lower().endswith(".dcm") and linked.dicom_path else linked.path), linked
        candidate = Path(text)
        with self._lock:
            if candidate in self._artifacts:
                return candidate, None
        names = ", ".join(i.dicom_id for i in self.images) or "none"
        raise ImagingError(text, f"not one of this question's linked images (linked dicom_ids: {names}) "
                           "nor an image a tool made in this run")

    def artifact(self, path: Path) -> Path:
        """Record a file an imaging tool wrote (later tools may open it)."""
        with self._lock:
            self._artifacts.add(path)
        return path
