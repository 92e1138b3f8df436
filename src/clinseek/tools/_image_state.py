"""Attaching the imaging view of an episode to a tool context, and the helpers every ``image.*`` tool shares."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ImagingError, ToolError
from ..imaging import (
    BackendKind,
    BackendUnavailable,
    CxrImage,
    ImagingConfig,
    ImagingSession,
    LinkedImage,
    load_backend,
    load_image,
)

if TYPE_CHECKING:
    from ..imaging import CxrLocator
    from ._context import ToolContext

STATE_KEY = "imaging"
"""Key of the :class:`~clinseek.imaging.ImagingSession` in ``ToolContext.state``."""

MAX_EDGE = 1568
"""Long edge (pixels) of every picture a tool returns to the model (the reference's image cap)."""


def attach_imaging(
    ctx: ToolContext,
    locator: CxrLocator,
    config: ImagingConfig | None = None,
    artifact_dir: Path | None = None,
) -> ImagingSession:
    """Give ``ctx`` its imaging session (the episode's linked, visible images and reports).

    Raises:
        ImagingError: a visible linked image has no file under the locator's roots.
    """
    session = ImagingSession(ctx.episode, locator, config, artifact_dir)
    ctx.state[STATE_KEY] = session
    return session


def session_of(ctx: ToolContext) -> ImagingSession:
    """The context's imaging session.

    Raises:
        ToolError: kind ``"unavailable"`` when the run has no imaging (no CXR root configured).
    """
    session = ctx.state.get(STATE_KEY)
    if not isinstance(session, ImagingSession):
        raise ToolError(
            "unavailable",
            "imaging tools are not enabled in this run (no chest X-ray images are "
            "configured); continue with the EHR tools",
        )
    return session


def open_image(
    ctx: ToolContext, image_path: str, **window: float | None
) -> tuple[ImagingSession, CxrImage, LinkedImage | None]:
    """Resolve an image argument against the linked images and read its pixels.

    The pixel spacing of a JPG comes from the ``.dcm`` of the same image when the release has one.

    Raises:
        ToolError: ``"not_linked"`` for anything but a linked image or an artifact of this run;
            ``"bad_image"`` when the file cannot be read.
    """
    session = session_of(ctx)
    try:
        path, linked = session.resolve(image_path)
        image = load_image(path, **window)
    except ImagingError as err:
        kind = "not_linked" if "linked" in err.problem else "bad_image"
        raise ToolError(kind, str(err)) from None
    if image.pixel_spacing_mm is None and linked is not None and linked.dicom_path is not None:
        image = _with_spacing(image, linked.dicom_path)
    return session, image, linked


def _with_spacing(image: CxrImage, dicom_path: Path) -> CxrImage:
    import pydicom

    try:
        ds = pydicom.dcmread(str(dicom_path), stop_before_pixels=True)
    except (OSError, ValueError, pydicom.errors.InvalidDicomError):
        return image
    value = ds.get("PixelSpacing") or ds.get("ImagerPixelSpacing")
    rows = ds.get("Rows")
    if value is None or len(value) != 2 or not rows:
        return image
    scale = float(rows) / image.shape[0]  # the JPG may be a downsampled copy of the DICOM
    spacing = (float(value[0]) * scale, float(value[1]) * scale)
    return CxrImage(
        image.path, image.pixels, spacing, {**image.metadata, "pixel_spacing_source": str(dicom_path.name)}
    )


def backend(session: ImagingSession, kind: BackendKind) -> Any:
    """The loaded backend of ``kind``.

    Raises:
        ToolError: kind ``"unavailable"`` naming exactly what to install where; the agent goes on
            with other evidence.
    """
    try:
        return load_backend(kind, session.config)
    except BackendUnavailable as err:
        raise ToolError(
            "unavailable",
            f"{err}. This tool cannot run here; continue with the other evidence "
            "(the EHR, linked reports, image.dicom_processor, image.image_visualizer).",
        ) from None
