"""The backend interface through the tools, with small fake backends registered the way real ones are."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import numpy as np
import pytest
from _imaging_helpers import write_dicom

from clinseek.errors import RegistryError
from clinseek.imaging import (
    CxrImage,
    CxrLocator,
    GeneratedReport,
    Grounding,
    ImagingConfig,
    register_backend,
    unregister_backend,
)
from clinseek.tools import ToolContext, attach_imaging, call_tool

LOADS: list[str] = []


class FakeClassifier:
    labels = ("Effusion", "Cardiomegaly")

    def __init__(self, config: ImagingConfig) -> None:
        LOADS.append("classifier")

    def classify(self, image: CxrImage) -> dict[str, float]:
        return {"Effusion": float(image.pixels.mean() / 255), "Cardiomegaly": 0.25}


class FakeSegmenter:
    structures = ("Left Lung", "Right Lung", "Heart")

    def __init__(self, config: ImagingConfig) -> None:
        LOADS.append("segmenter")

    def segment(self, image: CxrImage) -> dict[str, np.ndarray]:
        h, w = image.shape
        masks = {name: np.zeros((h, w), dtype=bool) for name in self.structures}
        masks["Right Lung"][10:50, 0:40] = True  # patient's right is image left
        masks["Left Lung"][10:50, 60:100] = True
        masks["Heart"][30:60, 35:80] = True
        return masks


class FakeReporter:
    def __init__(self, config: ImagingConfig) -> None: ...

    def generate(self, image: CxrImage) -> GeneratedReport:
        return GeneratedReport("Small left effusion.", "Left pleural effusion.")


class FakeGrounder:
    def __init__(self, config: ImagingConfig) -> None: ...

    def ground(self, image: CxrImage, phrase: str) -> Grounding:
        return Grounding(phrase, ((0.6, 0.6, 0.9, 0.9),) if "effusion" in phrase else ())


FAKES = {"classifier": FakeClassifier, "segmenter": FakeSegmenter, "report_generator": FakeReporter,
         "grounder": FakeGrounder}


@pytest.fixture(scope="module", autouse=True)
def _fakes() -> Iterator[None]:
    for kind, cls in FAKES.items():
        register_backend(kind, "fake", cls)  # type: ignore[arg-type]
    yield
    for kind in FAKES:
        unregister_backend(kind, "fake")  # type: ignore[arg-type]


@pytest.fixture()
def fake_ctx(mm_case, tmp_path: Path) -> Iterator[ToolContext]:
    from clinseek.episode import MM_POLICY, EpisodeKey, build_episode

    key = EpisodeKey(mm_case.subject_id, mm_case.prediction_time, MM_POLICY, study_ids=(mm_case.study_id,),
                     dicom_ids=mm_case.dicom_ids)
    config = ImagingConfig(backends=dict.fromkeys(FAKES, "fake"))
    with build_episode(mm_case.store, key) as episode:
        ctx = ToolContext(episode=episode)
        attach_imaging(ctx, CxrLocator((mm_case.cxr_root,)), config, tmp_path / "a")
        yield ctx


def _call(ctx: ToolContext, name: str, **arguments: object):
    return anyio.run(lambda: call_tool(ctx, name, arguments))


def test_a_name_registered_twice_is_refused() -> None:
    with pytest.raises(RegistryError):
        register_backend("classifier", "fake", FakeClassifier)  # type: ignore[arg-type]


def test_classifier_tool_ranks_and_loads_once(fake_ctx, mm_case) -> None:
    before = LOADS.count("classifier")
    first = _call(fake_ctx, "image.chest_xray_classifier", image_path=mm_case.dicom_ids[0])
    _call(fake_ctx, "image.chest_xray_classifier", image_path=mm_case.dicom_ids[0])
    probs = list(first.data["probabilities"].values())
    assert first.ok and probs == sorted(probs, reverse=True) and set(first.data["probabilities"]) == {"Effusion", "Cardiomegaly"}
    assert LOADS.count("classifier") - before <= 1


def test_segmentation_areas_use_the_dicom_pixel_spacing(fake_ctx, tmp_path: Path) -> None:
    session = fake_ctx.state["imaging"]
    dcm = write_dicom(tmp_path / "film.dcm", np.full((100, 100), 120, dtype=np.uint8), PixelSpacing=[0.5, 0.5])
    session.artifact(dcm)  # stands in for a linked DICOM with a real spacing
    result = _call(fake_ctx, "image.chest_xray_segmentation", image_path=str(dcm))
    assert result.ok, result.content
    heart = result.data["structures"]["Heart"]
    assert heart["area_px"] == 30 * 45 and heart["area_cm2"] == pytest.approx(30 * 45 * 0.25 / 100, abs=0.01)
    assert heart["width_mm"] == 22.5
    assert result.data["cardiothoracic_ratio"] == pytest.approx(45 / 100)
    assert len(result.images) == 1 and Path(result.images[0]).is_file()


def test_segmentation_without_spacing_reports_pixels_only(fake_ctx, mm_case) -> None:
    # synthetic JPGs (and their DICOM copies) carry no pixel spacing: never a made-up 0.2 mm
    result = _call(fake_ctx, "image.chest_xray_segmentation", image_path=mm_case.dicom_ids[0], organs=["heart"])
    assert result.ok and list(result.data["structures"]) == ["Heart"]
    assert result.data["structures"]["Heart"]["area_cm2"] is None and "unknown" in result.content


def test_unknown_organ_is_a_bad_argument(fake_ctx, mm_case) -> None:
    result = _call(fake_ctx, "image.chest_xray_segmentation", image_path=mm_case.dicom_ids[0], organs=["Liver"])
    assert result.error_kind == "bad_argument" and "Heart" in result.content


def test_grounding_returns_boxes_and_the_picture(fake_ctx, mm_case) -> None:
    found = _call(fake_ctx, "image.xray_phrase_grounding", image_path=mm_case.dicom_ids[0], phrase="left effusion")
    assert found.ok and found.data["boxes"] == [[0.6, 0.6, 0.9, 0.9]] and len(found.images) == 1
    none = _call(fake_ctx, "image.xray_phrase_grounding", image_path=mm_case.dicom_ids[0], phrase="pneumothorax")
    assert none.ok and none.data["status"] == "completed_no_finding" and not none.images


def test_report_generator_text(fake_ctx, mm_case) -> None:
    result = _call(fake_ctx, "image.chest_xray_report_generator", image_path=mm_case.dicom_ids[0])
    assert result.ok and result.data["impression"] == "Left pleural effusion." and "FINDINGS" in result.content
