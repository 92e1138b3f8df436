"""DICOM/JPG/PNG pixels: rescale, windowing, MONOCHROME1 inversion, pixel spacing, model-size copies (real films)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _imaging_helpers import write_dicom
from PIL import Image

from clinseek.errors import ImagingError
from clinseek.imaging import fit_for_model, load_image


def test_real_pa_film_is_inverted_so_bone_is_bright(rg1: Path) -> None:
    image = load_image(rg1)
    assert image.metadata["PhotometricInterpretation"] == "MONOCHROME1"
    assert image.shape == (1955, 1841) and image.pixels.dtype == np.uint8
    rows, cols = image.shape
    spine = image.pixels[rows // 3 : rows // 2, cols // 2 - 40 : cols // 2 + 40].mean()
    lung = image.pixels[rows // 3 : rows // 2, cols // 4 - 40 : cols // 4 + 40].mean()
    assert spine > lung + 20  # mediastinum/spine brighter than aerated lung after inversion
    assert image.pixel_spacing_mm is None  # the file says PixelSpacing 0\0: not trusted, areas stay in pixels


def test_rescale_then_given_window(tmp_path: Path) -> None:
    raw = np.tile(np.arange(0, 1000, 10, dtype=np.uint16), (10, 1))  # 0..990
    path = write_dicom(tmp_path / "r.dcm", raw, RescaleSlope=2, RescaleIntercept=-1000)  # modality -1000..980
    image = load_image(path, window_center=0.0, window_width=200.0)  # shows -100..100 = raw 450..550
    row = image.pixels[0]
    assert row[40] == 0 and row[60] == 255 and 0 < row[50] < 255
    assert image.metadata["window_source"] == "arguments"


def test_window_from_file_tags(tmp_path: Path) -> None:
    raw = np.tile(np.arange(0, 1000, 10, dtype=np.uint16), (4, 1))
    path = write_dicom(tmp_path / "w.dcm", raw, WindowCenter=500, WindowWidth=100)
    image = load_image(path)
    assert image.metadata["window_source"] == "file"
    assert image.pixels[0, 0] == 0 and image.pixels[0, -1] == 255 and 0 < image.pixels[0, 50] < 255


def test_monochrome1_synthetic_is_inverted(tmp_path: Path) -> None:
    raw = np.tile(np.arange(0, 1000, 10, dtype=np.uint16), (4, 1))
    path = write_dicom(tmp_path / "m1.dcm", raw, PhotometricInterpretation="MONOCHROME1", PixelSpacing=[0.2, 0.25])
    image = load_image(path)
    assert image.pixels[0, 0] > image.pixels[0, -1]
    assert image.pixel_spacing_mm == (0.2, 0.25)


def test_nih_png_reads_without_spacing(nih_pngs: list[Path]) -> None:
    image = load_image(nih_pngs[0])
    assert image.shape == (1024, 1024) and image.pixel_spacing_mm is None
    assert image.metadata["format"] == "PNG" and 20 < image.pixels.mean() < 235


def test_not_an_image_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.jpg"
    bad.write_text("not an image")
    with pytest.raises(ImagingError, match="not a readable image"):
        load_image(bad)
    with pytest.raises(ImagingError, match="no such image file"):
        load_image(tmp_path / "absent.jpg")


def test_fit_for_model_caps_the_long_edge(rg1: Path, nih_pngs: list[Path], tmp_path: Path) -> None:
    small = fit_for_model(nih_pngs[0], tmp_path)
    assert small == nih_pngs[0]  # 1024 px PNG: sent as is
    fitted = fit_for_model(rg1, tmp_path, max_edge=1568)
    with Image.open(fitted) as img:
        assert img.format == "JPEG" and max(img.size) == 1568
    assert fit_for_model(rg1, tmp_path, max_edge=1568) == fitted  # written once
