"""The linked evidence of a multimodal question: its visible images and reports, read from its own episode."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..imaging import CxrLocator, ImagingConfig, ImagingSession, LinkedImage, fit_for_model, parse_cxr_path
from ..models import ImageRef
from ..tools import ToolContext, attach_imaging
from ._prompts import LinkedEvidence

if TYPE_CHECKING:
    from ..bench import Question


def linked_evidence(
    ctx: ToolContext,
    question: Question,
    *,
    cxr_root: Path | None,
    imaging: ImagingConfig | None = None,
    max_images: int = 4,
    artifact_dir: Path,
    fitted_dir: Path,
    imaging_tools: bool = False,
) -> tuple[LinkedEvidence | None, list[ImageRef]]:
    """What a multimodal question's task turn carries, and the imaging session its ``image.*`` tools read.

    Blocking (DuckDB and image files): call it from a worker thread in async code. Without ``cxr_root``
    the visible linked reports still come from the episode (no images); with it, ``ctx`` gets its
    imaging session (artifacts under ``artifact_dir``) and the visible linked images, in the manifest's
    ``image_paths`` order and at most ``max_images``, are attached by reference to model-ready copies
    under ``fitted_dir`` (long edge <= 1568 px; JPG/PNG within it are used as they are). A question that
    is not multimodal has no linked evidence: ``(None, [])``.

    Raises:
        ImagingError: a visible linked image has no file under ``cxr_root`` (an image is never dropped
            silently).
    """
    if question.task_type != "multimodal":
        return None, []
    if cxr_root is None:  # no images configured: the reports still come from the episode
        rows = ctx.episode.execute("SELECT study_id, text FROM cxr.reports ORDER BY study_id",
                                   tables=("cxr.reports",)).rows \
            if ctx.episode.has_table("cxr.reports") else []
        return LinkedEvidence(reports=tuple((s, t) for s, t in rows if t), reports_hidden=question.hide_cxr_reports), []
    session = attach_imaging(ctx, CxrLocator((Path(cxr_root),)), imaging, artifact_dir)
    chosen = _chosen(question, session, max_images)
    evidence = LinkedEvidence(images=tuple((i.dicom_id, str(i.path)) for i in chosen),
                              reports=tuple((r.study_id, r.text) for r in session.reports),
                              reports_hidden=question.hide_cxr_reports, imaging_tools=imaging_tools)
    return evidence, _refs(chosen, fitted_dir)


def _chosen(question: Question, session: ImagingSession, max_images: int) -> list[LinkedImage]:
    """Visible linked images in the manifest's ``image_paths`` order (others after), at most ``max_images``."""
    order: dict[str, int] = {}
    for n, path in enumerate(question.image_paths):
        ref = parse_cxr_path(path)
        if ref is not None and ref.dicom_id is not None:
            order.setdefault(ref.dicom_id, n)
    ranked = sorted(session.images, key=lambda i: order.get(i.dicom_id, len(order)))
    return ranked[:max_images]


def _refs(images: Sequence[LinkedImage], fitted_dir: Path) -> list[ImageRef]:
    """References to model-ready copies of ``images``."""
    return [ImageRef(path=str(fit_for_model(i.path, fitted_dir))) for i in images]
