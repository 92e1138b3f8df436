"""torchxrayvision backends: the DenseNet-121 classifier (18 pathologies) and the ChestX-Det PSPNet (14 structures).

Source: torchxrayvision 1.5 (Cohen et al., MIDL 2022; https://github.com/mlmed/torchxrayvision).
Weights are never downloaded: torchxrayvision loads ``<cache_dir>/<release file name>`` when the
file exists, and clinseek checks that it does before asking. Files expected under
``<weights_dir>/torchxrayvision/``:

* ``nih-pc-chex-mimic_ch-google-openi-kaggle-densenet121-d121-tw-lr001-rot45-tr15-sc15-seed0-best.pt``
  (``densenet121-res224-all``, a pickled model);
* ``pspnet_chestxray_best_model_4.pth`` (a state dict saved from ``DataParallel``).

Preprocessing follows torchxrayvision: 8-bit pixels scaled to [-1024, 1024], one channel, a
centre crop on the long side, resized to 224 (classifier) or 512 (segmentation) pixels.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np
from PIL import Image

from ..errors import MissingExtraError, import_optional, install_hint
from ._backend import BackendUnavailable, ImagingConfig, register_backend, weights_file
from ._pixels import CxrImage

XRV_DIR = "torchxrayvision"
DENSENET_FILE = "nih-pc-chex-mimic_ch-google-openi-kaggle-densenet121-d121-tw-lr001-rot45-tr15-sc15-seed0-best.pt"
PSPNET_FILE = "pspnet_chestxray_best_model_4.pth"
DENSENET_WEIGHTS = "densenet121-res224-all"

XRV_PATHOLOGIES: tuple[str, ...] = (
    "Atelectasis", "Consolidation", "Infiltration", "Pneumothorax", "Edema", "Emphysema", "Fibrosis", "Effusion",
    "Pneumonia", "Pleural_Thickening", "Cardiomegaly", "Nodule", "Mass", "Hernia", "Lung Lesion", "Fracture",
    "Lung Opacity", "Enlarged Cardiomediastinum",
)
"""The 18 labels of ``densenet121-res224-all`` (``xrv.datasets.default_pathologies``), in output order."""

PSPNET_STRUCTURES: tuple[str, ...] = (
    "Left Clavicle", "Right Clavicle", "Left Scapula", "Right Scapula", "Left Lung", "Right Lung",
    "Left Hilus Pulmonis", "Right Hilus Pulmonis", "Heart", "Aorta", "Facies Diaphragmatica", "Mediastinum",
    "Weasand", "Spine",
)
"""The 14 ChestX-Det structures of the PSPNet, in output-channel order."""

_INSTALL = f"{install_hint('imaging')} (torch, torchvision, torchxrayvision)"


def _import_xrv(kind: str, backend: str) -> tuple[Any, Any]:
    try:
        return import_optional("torch", kind, "imaging"), import_optional("torchxrayvision", kind, "imaging")
    except MissingExtraError as err:
        raise BackendUnavailable(kind, backend, _INSTALL if err.module_absent else str(err)) from err


def crop_square(pixels: np.ndarray) -> tuple[np.ndarray, tuple[int, int, int]]:
    """The centre square crop of the long side (torchxrayvision's ``XRayCenterCrop``) and (top, left, size)."""
    rows, cols = pixels.shape
    size = min(rows, cols)
    top, left = rows // 2 - size // 2, cols // 2 - size // 2
    return pixels[top : top + size, left : left + size], (top, left, size)


def to_model_input(pixels: np.ndarray, size: int) -> np.ndarray:
    """uint8 (rows, cols) -> float32 (1, 1, size, size) in [-1024, 1024] after a centre crop and resize."""
    square, _ = crop_square(pixels)
    img = Image.fromarray(square.astype(np.float32), mode="F").resize((size, size), Image.Resampling.BILINEAR)
    scaled = (2 * (np.asarray(img, dtype=np.float32) / 255.0) - 1.0) * 1024
    return scaled[None, None, :, :]


class XrvDenseNet:
    """``image.chest_xray_classifier`` backend: torchxrayvision ``DenseNet(weights="densenet121-res224-all")``."""

    labels = XRV_PATHOLOGIES

    def __init__(self, config: ImagingConfig) -> None:
        folder = weights_file(config, "classifier", "xrv-densenet", f"{XRV_DIR}/{DENSENET_FILE}",
                              f"{_INSTALL} and download the torchxrayvision release file {DENSENET_FILE}").parent
        torch, xrv = _import_xrv("classifier", "xrv-densenet")
        self._torch = torch
        self._device = config.device
        self._model = xrv.models.DenseNet(weights=DENSENET_WEIGHTS, cache_dir=str(folder)).to(config.device).eval()
        self.labels = tuple(self._model.pathologies)
        self._lock = threading.Lock()

    def classify(self, image: CxrImage) -> dict[str, float]:
        """Probabilities in [0, 1] (sigmoid, then the release's operating-point normalisation)."""
        x = self._torch.from_numpy(to_model_input(image.pixels, 224)).to(self._device)
        with self._lock, self._torch.inference_mode():
            out = self._model(x)[0].detach().float().cpu().numpy()
        return {label: float(np.clip(v, 0.0, 1.0)) for label, v in zip(self.labels, out, strict=True) if label}


class XrvPSPNet:
    """``image.chest_xray_segmentation`` backend: torchxrayvision ``baseline_models.chestx_det.PSPNet``."""

    structures = PSPNET_STRUCTURES

    def __init__(self, config: ImagingConfig) -> None:
        folder = weights_file(config, "segmenter", "xrv-pspnet", f"{XRV_DIR}/{PSPNET_FILE}",
                              f"{_INSTALL} and download the torchxrayvision release file {PSPNET_FILE}").parent
        torch, xrv = _import_xrv("segmenter", "xrv-pspnet")
        self._torch = torch
        self._device = config.device
        self._model = xrv.baseline_models.chestx_det.PSPNet(cache_dir=str(folder)).to(config.device).eval()
        self.structures = tuple(self._model.targets)
        self._lock = threading.Lock()

    def segment(self, image: CxrImage) -> dict[str, np.ndarray]:
        """Sigmoid > 0.5 masks, mapped back from the 512 px square to the image's own pixel grid."""
        x = self._torch.from_numpy(to_model_input(image.pixels, 512)).to(self._device)
        with self._lock, self._torch.inference_mode(), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*upsample.* is deprecated")  # inside torchxrayvision's PSPNet
            prob = self._torch.sigmoid(self._model(x))[0].detach().float().cpu().numpy()
        return {name: back_to_image(prob[i] > 0.5, image.shape) for i, name in enumerate(self.structures)}


def back_to_image(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """A square model-grid mask placed back into the centre crop of an image of ``shape`` (bool)."""
    rows, cols = shape
    size = min(rows, cols)
    top, left = rows // 2 - size // 2, cols // 2 - size // 2
    small = Image.fromarray(mask.astype(np.uint8) * 255).resize((size, size), Image.Resampling.NEAREST)
    out = np.zeros(shape, dtype=bool)
    out[top : top + size, left : left + size] = np.asarray(small) > 127
    return out


register_backend("classifier", "xrv-densenet", XrvDenseNet)
register_backend("segmenter", "xrv-pspnet", XrvPSPNet)
