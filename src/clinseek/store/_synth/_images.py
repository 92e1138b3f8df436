"""Chest film images derived from a real radiograph.

The base is pydicom-data's ``RG1_UNCR.dcm`` (a real PA chest radiograph from the NEMA sample set,
MIT licence). Each image is a deterministic variation of it: a crop, a contrast/gamma change and a
small rotation (seeded by study and image), plus visible synthetic shapes matching the study's
CheXpert labels: a lower-lobe opacity (consolidation, pneumonia, lung opacity, atelectasis),
basal meniscus (pleural effusion), an enlarged cardiac silhouette (cardiomegaly, enlarged
cardiomediastinum), perihilar haze (edema), an endotracheal tube line (support devices) and a
dark apical rim (pneumothorax). Images are written as JPG in the MIMIC-CXR-JPG layout; a few
studies also get a DICOM copy.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path

import numpy as np
from PIL import Image

from ...errors import StoreError

WIDTH = 512


@functools.lru_cache(maxsize=1)
def base_film() -> np.ndarray:
    """The base radiograph as float32 in [0, 255], bones bright, downsampled to ~640 px wide.

    Raises:
        StoreError: pydicom-data (the source film) is not installed.
    """
    import pydicom
    from pydicom.data import get_testdata_file

    path = get_testdata_file("RG1_UNCR.dcm")
    if path is None:
        raise StoreError("pydicom-data is not installed: it provides the chest film (RG1_UNCR.dcm) synthetic CXR images derive from")
    ds = pydicom.dcmread(str(path))
    pixels = ds.pixel_array.astype(np.float32)
    if str(ds.PhotometricInterpretation) == "MONOCHROME1":
        pixels = pixels.max() - pixels
    lo, hi = np.percentile(pixels, (1, 99.5))
    pixels = np.clip((pixels - lo) / (hi - lo), 0, 1) * 255
    img = Image.fromarray(pixels.astype(np.uint8))
    height = round(img.height * 640 / img.width)
    return np.asarray(img.resize((640, height), Image.Resampling.BILINEAR), dtype=np.float32)


@functools.lru_cache(maxsize=4)
def _coords(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    return y / h, x / w


def _blob(y: np.ndarray, x: np.ndarray, cy: float, cx: float, sy: float, sx: float) -> np.ndarray:
    return np.exp(-(((y - cy) / sy) ** 2 + ((x - cx) / sx) ** 2) / 2)


VARIANTS = 8


@functools.lru_cache(maxsize=1)
def _variants() -> tuple[np.ndarray, ...]:
    """Fixed crops/rotations of the base film (computed once; each image picks one)."""
    rng = np.random.default_rng(20_260_000)
    base = base_film()
    bh, bw = base.shape
    out = []
    for _ in range(VARIANTS):
        cw, ch = int(bw * rng.uniform(0.86, 0.96)), int(bh * rng.uniform(0.86, 0.96))
        x0, y0 = int(rng.integers(0, bw - cw + 1)), int(rng.integers(0, bh - ch + 1))
        img = Image.fromarray(base[y0 : y0 + ch, x0 : x0 + cw].astype(np.uint8))
        img = img.resize((WIDTH, round(WIDTH * ch / cw)), Image.Resampling.BILINEAR)
        img = img.rotate(float(rng.uniform(-3, 3)), resample=Image.Resampling.BILINEAR, fillcolor=0)
        out.append(np.asarray(img))
    return tuple(out)


TONES = 3
"""Gamma/contrast settings an image can get."""


def image_key(labels: dict[str, float], seed: tuple[int, ...], lateral: bool = False) -> tuple[int, int, bool, frozenset[str]]:
    """What an image looks like: (variant, tone, lateral, findings drawn), chosen by ``seed``.

    Images with the same key are identical, so :func:`jpg_bytes` encodes each look once.
    """
    rng = np.random.default_rng(list(seed))
    variant, tone = int(rng.integers(VARIANTS)), int(rng.integers(TONES))
    on = frozenset(k for k, v in labels.items() if v in (1.0, -1.0)) - {"No Finding"}
    return variant, tone, lateral, on


def render(labels: dict[str, float], seed: tuple[int, ...], lateral: bool = False) -> np.ndarray:
    """A uint8 image (``WIDTH`` wide) for a study with these CheXpert labels (1.0 or -1.0 draw a shape).

    The image is one of :data:`VARIANTS` crops/rotations of the base film and one of :data:`TONES`
    gamma/contrast settings (both chosen by ``seed``), with the finding shapes added; ``lateral``
    mirrors it.
    """
    return _render(image_key(labels, seed, lateral))


def _render(key: tuple[int, int, bool, frozenset[str]]) -> np.ndarray:
    variant, tone, lateral, on = key
    arr = _variants()[variant]
    h, w = arr.shape
    rng = np.random.default_rng([variant, tone])
    if on:
        small = _overlay(set(on), h // 4, w // 4, rng)
        add = np.asarray(Image.fromarray(small, mode="F").resize((w, h), Image.Resampling.BILINEAR))
        arr = np.clip(arr + add, 0, 255).astype(np.uint8)
    if lateral:
        arr = arr[:, ::-1]
    gamma, gain = 0.85 + 0.15 * tone, 0.95 + 0.05 * tone
    lut = np.clip(((np.arange(256) / 255) ** gamma) * gain * 255, 0, 255).astype(np.uint8)
    out: np.ndarray = lut[arr]
    return out


@functools.lru_cache(maxsize=1024)
def jpg_bytes(key: tuple[int, int, bool, frozenset[str]]) -> tuple[bytes, tuple[int, int]]:
    """The JPG encoding of an image look and its (rows, columns)."""
    pixels = _render(key)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=85)
    return buf.getvalue(), (int(pixels.shape[0]), int(pixels.shape[1]))


def _overlay(on: set[str], h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """Brightness to add (float32, low resolution) for the findings in ``on``."""
    y, x = _coords(h, w)
    add = np.zeros((h, w), dtype=np.float32)
    if on & {"Consolidation", "Pneumonia", "Lung Opacity", "Atelectasis"}:
        add += 60 * _blob(y, x, 0.62 + rng.uniform(-0.04, 0.04), 0.3 + rng.uniform(-0.04, 0.04), 0.06, 0.07)
    if "Pleural Effusion" in on:
        line = 0.76 + 0.2 * (x - 0.5) ** 2
        lungs = ((np.abs(x - 0.5) > 0.1) & (np.abs(x - 0.5) < 0.38)).astype(np.float32)
        add += 55 / (1 + np.exp(-(y - line) * 60)) * lungs
    if on & {"Cardiomegaly", "Enlarged Cardiomediastinum"}:
        r = ((y - 0.63) / 0.15) ** 2 + ((x - 0.56) / 0.2) ** 2
        add += 35 / (1 + np.exp(np.minimum((r - 1) * 8, 50)))
    if "Edema" in on:
        add += 30 * (_blob(y, x, 0.45, 0.38, 0.1, 0.08) + _blob(y, x, 0.45, 0.62, 0.1, 0.08))
    if "Support Devices" in on:
        add += 110 * ((np.abs(x - 0.5) < 0.008) & (y < 0.36))
    if "Pneumothorax" in on:
        add -= 50 * _blob(y, x, 0.15, 0.25, 0.05, 0.07)
    return add


def write_jpg(pixels: np.ndarray, path: Path) -> None:
    """Write a grayscale JPG, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path, format="JPEG", quality=85)


def write_dicom(pixels: np.ndarray, path: Path, *, subject_id: int, study_id: int, dicom_id: str, view: str,
                study_date: str, study_time: str) -> None:
    """Write a minimal CR DICOM (MONOCHROME2, 8-bit) of the image."""
    from pydicom.dataset import FileDataset, FileMetaDataset
    from pydicom.uid import UID, ExplicitVRLittleEndian, generate_uid

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = UID("1.2.840.10008.5.1.4.1.1.1")  # Computed Radiography Image Storage
    meta.MediaStorageSOPInstanceUID = generate_uid(entropy_srcs=[dicom_id])
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = FileDataset(str(path), {}, file_meta=meta, preamble=b"\0" * 128)
    ds.SOPClassUID = meta.MediaStorageSOPClassUID
    ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
    ds.StudyInstanceUID = generate_uid(entropy_srcs=[str(study_id)])
    ds.SeriesInstanceUID = generate_uid(entropy_srcs=[str(study_id), view])
    ds.PatientID = str(subject_id)
    ds.StudyID = str(study_id)
    ds.Modality = "CR"
    ds.BodyPartExamined = "CHEST"
    ds.ViewPosition = view
    ds.StudyDate = study_date
    ds.StudyTime = study_time
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.Rows, ds.Columns = pixels.shape
    ds.BitsAllocated = 8
    ds.BitsStored = 8
    ds.HighBit = 7
    ds.PixelRepresentation = 0
    ds.PixelData = np.ascontiguousarray(pixels, dtype=np.uint8).tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.save_as(str(path), enforce_file_format=True)
