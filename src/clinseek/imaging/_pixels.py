"""Reading a chest radiograph (DICOM, JPG or PNG) into display pixels, and writing PNG/JPEG copies.

DICOM handling follows PS3.3 C.11 / C.7.6.3 as implemented by pydicom 3: the Modality LUT
(``RescaleSlope`` / ``RescaleIntercept``) first, then the VOI LUT or ``WindowCenter`` /
``WindowWidth`` windowing (given values win over the file's), then MONOCHROME1 inversion (so
bone is always bright), then scaling to 8 bits. Without any window the 0.5-99.5 percentile range
is used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from ..errors import ImagingError

DICOM_SUFFIXES = (".dcm", ".dicom")


@dataclass(frozen=True, slots=True)
class CxrImage:
    """One radiograph ready for display or a model.

    Attributes:
        path: the source file.
        pixels: uint8 array (rows, columns), 0 = black, bone bright.
        pixel_spacing_mm: (row, column) spacing in millimetres from ``PixelSpacing`` or
            ``ImagerPixelSpacing``; ``None`` when the file does not say (JPG, PNG).
        metadata: DICOM attributes kept for the model (Modality, ViewPosition, StudyDate, ...), and
            the window actually applied; for JPG/PNG only format and size.
    """

    path: Path
    pixels: np.ndarray
    pixel_spacing_mm: tuple[float, float] | None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns)."""
        return int(self.pixels.shape[0]), int(self.pixels.shape[1])


def is_dicom(path: Path) -> bool:
    """True for a ``.dcm`` file or a file with the DICM preamble marker."""
    if path.suffix.lower() in DICOM_SUFFIXES:
        return True
    try:
        with path.open("rb") as fh:
            fh.seek(128)
            return fh.read(4) == b"DICM"
    except OSError:
        return False


def load_image(path: Path, *, window_center: float | None = None, window_width: float | None = None) -> CxrImage:
    """Read ``path`` (DICOM, JPG or PNG) into a :class:`CxrImage`.

    Args:
        path: the file.
        window_center: VOI window centre in modality units (after rescale); with ``window_width``
            it overrides the file's window (DICOM only).
        window_width: VOI window width in modality units.

    Raises:
        ImagingError: the file is missing, unreadable, not an image, or a DICOM without pixel data.
    """
    if not path.is_file():
        raise ImagingError(path, "no such image file")
    if is_dicom(path):
        return _load_dicom(path, window_center, window_width)
    try:
        with Image.open(path) as img:
            pixels = np.asarray(img.convert("L"), dtype=np.uint8)
            fmt = img.format
    except (OSError, ValueError) as err:
        raise ImagingError(path, f"not a readable image: {err}") from err
    meta = {"format": fmt, "Rows": int(pixels.shape[0]), "Columns": int(pixels.shape[1])}
    return CxrImage(path, pixels, None, meta)


_KEPT = ("Modality", "BodyPartExamined", "ViewPosition", "StudyDate", "StudyTime", "PhotometricInterpretation",
         "Rows", "Columns", "BitsStored", "RescaleSlope", "RescaleIntercept", "Manufacturer")


def _load_dicom(path: Path, center: float | None, width: float | None) -> CxrImage:
    import pydicom
    from pydicom.errors import InvalidDicomError
    from pydicom.pixels.processing import apply_modality_lut, apply_voi_lut

    try:
        ds = pydicom.dcmread(str(path))
        raw = ds.pixel_array
    except (InvalidDicomError, OSError, AttributeError, ValueError, RuntimeError) as err:
        raise ImagingError(path, f"not a readable DICOM image with pixel data: {err}") from err
    if raw.ndim != 2:
        raise ImagingError(path, f"expected a single-frame grayscale image, got pixel array of shape {raw.shape}")
    values = np.asarray(apply_modality_lut(raw, ds), dtype=np.float64)
    window: dict[str, Any]
    if center is not None and width is not None:
        lo, hi = center - width / 2, center + width / 2
        window = {"WindowCenter": center, "WindowWidth": width, "window_source": "arguments"}
    elif "VOILUTSequence" in ds or ("WindowCenter" in ds and "WindowWidth" in ds):
        values = np.asarray(apply_voi_lut(values, ds), dtype=np.float64)
        lo, hi = float(values.min()), float(values.max())
        window = {"WindowCenter": _first(ds.get("WindowCenter")), "WindowWidth": _first(ds.get("WindowWidth")),
                  "window_source": "file"}
    else:
        lo, hi = (float(v) for v in np.percentile(values, (0.5, 99.5)))
        window = {"window_source": "percentile 0.5-99.5"}
    scaled = np.clip((values - lo) / max(hi - lo, 1e-9), 0.0, 1.0)
    if str(ds.get("PhotometricInterpretation", "")) == "MONOCHROME1":
        scaled = 1.0 - scaled
    pixels = np.round(scaled * 255).astype(np.uint8)
    meta = {k: _plain(ds.get(k)) for k in _KEPT if k in ds}
    meta.update(window)
    return CxrImage(path, pixels, _spacing(ds), meta)


def _first(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value[0]) if hasattr(value, "__len__") and not isinstance(value, str) else float(value)
    except (TypeError, ValueError, IndexError):
        return None


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, int | float | str):
        return value
    try:
        return float(value) if not hasattr(value, "__len__") else str(value)
    except (TypeError, ValueError):
        return str(value)


def _spacing(ds: Any) -> tuple[float, float] | None:
    for name in ("PixelSpacing", "ImagerPixelSpacing"):
        value = ds.get(name)
        if value is not None and len(value) == 2:
            try:
                row, col = float(value[0]), float(value[1])
            except (TypeError, ValueError):
                continue
            if row > 0 and col > 0:
                return row, col
    return None


def save_png(pixels: np.ndarray, out_dir: Path, prefix: str, *, key: str) -> Path:
    """Write ``pixels`` (uint8 gray or RGB) as ``<out_dir>/<prefix><12 hex of key>.png``; returns the path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{prefix}{hashlib.sha256(key.encode()).hexdigest()[:12]}.png"
    tmp = path.with_suffix(".tmp.png")
    Image.fromarray(pixels).save(tmp, format="PNG")
    tmp.replace(path)
    return path


def fit_for_model(path: Path, out_dir: Path, *, max_edge: int = 1568) -> Path:
    """A copy of ``path`` a vision model accepts: JPEG/PNG with the long edge at most ``max_edge`` pixels.

    JPG and PNG files already within the limit are returned unchanged; larger ones and DICOMs are
    written once (JPEG quality 90, RGB) to ``out_dir`` under a name derived from the source path
    and its modification time. The 1568 px default is the reference's ``--image_max_edge``.

    Raises:
        ImagingError: the source cannot be read.
    """
    dicom = is_dicom(path)
    if not dicom:
        try:
            with Image.open(path) as probe:
                size, fmt = probe.size, probe.format
        except (OSError, ValueError) as err:
            raise ImagingError(path, f"not a readable image: {err}") from err
        if max(size) <= max_edge and fmt in ("JPEG", "PNG"):
            return path
    stamp = f"{path.resolve()}:{path.stat().st_mtime_ns}:{max_edge}"
    out = out_dir / f"fit_{hashlib.sha256(stamp.encode()).hexdigest()[:16]}.jpg"
    if out.is_file():
        return out
    source: Image.Image = Image.fromarray(load_image(path).pixels) if dicom else Image.open(path)
    with source as img:
        rgb = img.convert("RGB")
        rgb.thumbnail((max_edge, max_edge), Image.Resampling.LANCZOS)
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp.jpg")
        rgb.save(tmp, format="JPEG", quality=90)
        tmp.replace(out)
    return out
