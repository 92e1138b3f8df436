"""Chest X-ray imaging: finding CXR files in any MIMIC-CXR layout, reading DICOM/JPG pixels, and the
model backends behind the ``image.*`` tools (one interface; torchxrayvision and Hugging Face
implementations in the ``[imaging]`` extra, loaded lazily once per process from local weights).

Importing this package imports neither torch nor transformers.
"""

from . import _hf, _xrv  # noqa: F401  (register the built-in backends)
from ._backend import (
    BACKEND_KINDS,
    DEFAULT_BACKENDS,
    BackendKind,
    BackendUnavailable,
    Classifier,
    GeneratedReport,
    Grounding,
    ImagingConfig,
    PhraseGrounder,
    ReportGenerator,
    Segmenter,
    backend_names,
    load_backend,
    register_backend,
    unregister_backend,
)
from ._draw import draw_boxes, fit, overlay_masks, with_text
from ._paths import CxrLocator, CxrRef, parse_cxr_path, store_cxr_root
from ._pixels import CxrImage, fit_for_model, is_dicom, load_image, save_png
from ._session import ImagingSession, LinkedImage, LinkedReport
from ._xrv import DENSENET_FILE, PSPNET_FILE, PSPNET_STRUCTURES, XRV_DIR, XRV_PATHOLOGIES

__all__ = [
    "BACKEND_KINDS",
    "DEFAULT_BACKENDS",
    "DENSENET_FILE",
    "PSPNET_FILE",
    "PSPNET_STRUCTURES",
    "XRV_DIR",
    "XRV_PATHOLOGIES",
    "BackendKind",
    "BackendUnavailable",
    "Classifier",
    "CxrImage",
    "CxrLocator",
    "CxrRef",
    "GeneratedReport",
    "Grounding",
    "ImagingConfig",
    "ImagingSession",
    "LinkedImage",
    "LinkedReport",
    "PhraseGrounder",
    "ReportGenerator",
    "Segmenter",
    "backend_names",
    "draw_boxes",
    "fit",
    "fit_for_model",
    "is_dicom",
    "load_backend",
    "load_image",
    "overlay_masks",
    "parse_cxr_path",
    "register_backend",
    "save_png",
    "store_cxr_root",
    "unregister_backend",
    "with_text",
]
