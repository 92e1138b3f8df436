"""Helpers of the imaging tests (importable by name: tests/imaging is on pythonpath)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_dicom(path: Path, pixels: np.ndarray, **tags: object) -> Path:
    """A CR DICOM of ``pixels`` (uint16 unless given uint8) with extra ``tags`` set on the dataset."""
    from pydicom.dataset import FileDataset, FileMetaDataset
    from pydicom.uid import UID, ExplicitVRLittleEndian, generate_uid

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = UID("1.2.840.10008.5.1.4.1.1.1")
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = FileDataset(str(path), {}, file_meta=meta, preamble=b"\0" * 128)
    ds.SOPClassUID = meta.MediaStorageSOPClassUID
    ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
    ds.Modality = "CR"
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.Rows, ds.Columns = pixels.shape
    bits = 8 if pixels.dtype == np.uint8 else 16
    ds.BitsAllocated = ds.BitsStored = bits
    ds.HighBit = bits - 1
    ds.PixelRepresentation = 0
    for name, value in tags.items():
        setattr(ds, name, value)
    ds.PixelData = np.ascontiguousarray(pixels).tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.save_as(str(path), enforce_file_format=True)
    return path
