"""The six image tools on a real multimodal episode of the synthetic store (JPGs derived from a real PA film)."""

from __future__ import annotations

from pathlib import Path

import anyio
import numpy as np
import pytest
from PIL import Image

from clinseek.tools import IMAGE_TOOLS, ToolContext, call_tool, tool_names


def _call(ctx: ToolContext, name: str, **arguments: object):
    return anyio.run(lambda: call_tool(ctx, name, arguments))


def test_six_reference_tools_are_registered() -> None:
    assert tool_names("image") == IMAGE_TOOLS and len(IMAGE_TOOLS) == 6


def test_dicom_processor_needs_no_weights_and_returns_the_picture(mm_ctx, mm_case) -> None:
    result = _call(mm_ctx, "image.dicom_processor", dicom_path=mm_case.dicom_ids[0])
    assert result.ok, result.content
    (png,) = result.images
    with Image.open(png) as img:
        assert img.format == "PNG" and max(img.size) <= 1568
    assert result.data["metadata"]["study_id"] == mm_case.study_id


def test_dicom_processor_reads_the_dicom_copy_when_asked(mm_ctx) -> None:
    session = mm_ctx.state["imaging"]
    linked = next((i for i in session.images if i.dicom_path is not None), None)
    if linked is None:
        pytest.skip("this study has no DICOM copy in the synthetic store")
    result = _call(mm_ctx, "image.dicom_processor", dicom_path=str(linked.dicom_path), window_center=128.0,
                   window_width=256.0)
    assert result.ok and result.data["metadata"]["Modality"] == "CR"
    assert result.data["metadata"]["window_source"] == "arguments"


def test_model_tools_without_weights_say_what_to_install_where(mm_ctx, mm_case) -> None:
    for name, extra in [("image.chest_xray_classifier", {}), ("image.chest_xray_segmentation", {}),
                        ("image.chest_xray_report_generator", {}),
                        ("image.xray_phrase_grounding", {"phrase": "pleural effusion"})]:
        result = _call(mm_ctx, name, image_path=mm_case.dicom_ids[0], **extra)
        assert not result.ok and result.error_kind == "unavailable", (name, result.content)
        assert "clinseek[imaging]" in result.content and "--imaging-weights" in result.content
        assert "continue with the other evidence" in result.content


def test_missing_weights_file_names_the_exact_path(mm_case, tmp_path: Path) -> None:
    from clinseek.episode import MM_POLICY, EpisodeKey, build_episode
    from clinseek.imaging import DENSENET_FILE, CxrLocator, ImagingConfig
    from clinseek.tools import attach_imaging

    key = EpisodeKey(mm_case.subject_id, mm_case.prediction_time, MM_POLICY, study_ids=(mm_case.study_id,))
    with build_episode(mm_case.store, key) as episode:
        ctx = ToolContext(episode=episode)
        attach_imaging(ctx, CxrLocator((mm_case.cxr_root,)), ImagingConfig(weights_dir=tmp_path / "w"), tmp_path / "a")
        result = _call(ctx, "image.chest_xray_classifier", image_path=mm_case.dicom_ids[0])
    assert result.error_kind == "unavailable"
    assert str(tmp_path / "w" / "torchxrayvision" / DENSENET_FILE) in result.content


def test_visualizer_draws_boxes_and_title_on_a_linked_image(mm_ctx, mm_case) -> None:
    result = _call(mm_ctx, "image.image_visualizer", image_path=mm_case.dicom_ids[0], title="PA view",
                   description="right lower zone", boxes=[[0.1, 0.5, 0.4, 0.8]])
    assert result.ok
    with Image.open(result.images[0]) as img:
        arr = np.asarray(img.convert("RGB"))
    assert ((arr[..., 0] == 255) & (arr[..., 1] == 0)).any()  # the red box
    again = _call(mm_ctx, "image.image_visualizer", image_path=result.images[0])  # an artifact of this run opens
    assert again.ok


def test_bad_box_is_a_bad_argument(mm_ctx, mm_case) -> None:
    result = _call(mm_ctx, "image.image_visualizer", image_path=mm_case.dicom_ids[0], boxes=[[0.5, 0.5, 0.2, 0.9]])
    assert result.error_kind == "bad_argument"


def test_one_window_value_alone_is_refused(mm_ctx, mm_case) -> None:
    result = _call(mm_ctx, "image.dicom_processor", dicom_path=mm_case.dicom_ids[0], window_center=10.0)
    assert result.error_kind == "bad_argument"


def test_no_imaging_session_is_a_structured_error(mm_ctx, mm_case) -> None:
    bare = ToolContext(episode=mm_ctx.episode)
    result = _call(bare, "image.dicom_processor", dicom_path=mm_case.dicom_ids[0])
    assert result.error_kind == "unavailable"


def test_dicom_processor_on_the_real_pa_film_and_nih_films(mm_ctx, rg1: Path, nih_pngs: list[Path]) -> None:
    session = mm_ctx.state["imaging"]
    for film in (rg1, nih_pngs[0]):
        session.artifact(film)  # stand in for linked images (the same code path opens them)
    result = _call(mm_ctx, "image.dicom_processor", dicom_path=str(rg1))
    assert result.ok and result.data["metadata"]["PhotometricInterpretation"] == "MONOCHROME1"
    with Image.open(result.images[0]) as img:
        assert max(img.size) == 1568
        arr = np.asarray(img.convert("L"))
    h, w = arr.shape
    assert arr[h // 3 : h // 2, w // 2 - 20 : w // 2 + 20].mean() > arr[h // 3 : h // 2, w // 4 - 20 : w // 4 + 20].mean()
    shown = _call(mm_ctx, "image.image_visualizer", image_path=str(nih_pngs[0]), title="NIH 00000003_000")
    assert shown.ok and "1024x1024" in shown.content
