"""The six ``image.*`` tools (names and arguments of the reference's image server, ref_agent_tools.md §5).

Unlike the reference: an image argument must name one of the question's linked, visible images
(its ``dicom_id`` or path) or a picture a tool made in this run — nothing else opens; pictures
come back to the model as images (``ToolResult.images``, by path), not only as a path; model
tools without weights return a structured ``unavailable`` error; segmentation areas use the
image's real pixel spacing when a DICOM gives it (never a fixed 0.2 mm).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ToolError
from ..imaging import draw_boxes, fit, overlay_masks, save_png, with_text
from ._context import ToolContext
from ._image_state import MAX_EDGE, backend, open_image
from ._registry import tool
from ._result import ToolResult


def _fmt(meta: dict[str, Any]) -> str:
    return "; ".join(f"{k}: {v}" for k, v in meta.items() if v is not None)


@tool("image.dicom_processor")
def dicom_processor(
    ctx: ToolContext, dicom_path: str, window_center: float | None = None, window_width: float | None = None
) -> ToolResult:
    """Convert a linked chest X-ray (DICOM or JPG) to a viewable PNG and report its acquisition metadata.

    DICOM pixels get the rescale slope/intercept, then the window (arguments, else the file's
    VOI LUT/window, else the 0.5-99.5 percentile range), MONOCHROME1 is inverted so bone is
    bright. Needs no model weights. The PNG comes back as an image.

    Args:
        dicom_path: a linked image's dicom_id or path (as listed in the task).
        window_center: window centre in the image's rescaled units (with window_width).
        window_width: window width in the image's rescaled units (with window_center).
    """
    if (window_center is None) != (window_width is None):
        raise ToolError("bad_argument", "give both window_center and window_width, or neither")
    session, image, linked = open_image(
        ctx, dicom_path, window_center=window_center, window_width=window_width
    )
    img = fit(image.pixels, MAX_EDGE)
    key = f"{image.path}:{window_center}:{window_width}"
    png = session.artifact(save_png(np.asarray(img), session.artifact_dir, "dicom_", key=key))
    meta = {
        **image.metadata,
        "PixelSpacing_mm": image.pixel_spacing_mm,
        "dicom_id": linked.dicom_id if linked else None,
        "study_id": linked.study_id if linked else None,
    }
    content = f"Converted {image.path.name} ({image.shape[1]}x{image.shape[0]} px) to {png}.\n{_fmt(meta)}"
    return ToolResult(
        ok=True, content=content, data={"image_path": str(png), "metadata": meta}, images=(str(png),)
    )


@tool("image.chest_xray_classifier")
def chest_xray_classifier(ctx: ToolContext, image_path: str) -> ToolResult:
    """Probabilities (0-1) of 18 chest X-ray pathologies (torchxrayvision DenseNet-121, densenet121-res224-all).

    Scores are screening aids, calibrated so 0.5 is the model's operating point; they are not
    diagnoses. Returns an "unavailable" error when the model weights are not installed.

    Args:
        image_path: a linked image's dicom_id or path (as listed in the task).
    """
    session, image, _ = open_image(ctx, image_path)
    model = backend(session, "classifier")
    scores = model.classify(image)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    lines = [f"{name}: {p:.3f}" for name, p in ranked]
    return ToolResult(
        ok=True,
        content=f"Pathology probabilities for {image.path.name} (highest first):\n" + "\n".join(lines),
        data={"probabilities": dict(ranked)},
    )


@tool("image.chest_xray_report_generator")
def chest_xray_report_generator(ctx: ToolContext, image_path: str) -> ToolResult:
    """A draft radiology report (FINDINGS and IMPRESSION) generated from one linked chest X-ray.

    Generated text is a model's draft, not the signed report. Returns an "unavailable" error
    when the model weights are not installed.

    Args:
        image_path: a linked image's dicom_id or path (as listed in the task).
    """
    session, image, _ = open_image(ctx, image_path)
    report = backend(session, "report_generator").generate(image)
    text = f"CHEST X-RAY REPORT (generated)\nFINDINGS: {report.findings}\nIMPRESSION: {report.impression}"
    return ToolResult(
        ok=True,
        content=text,
        data={"findings": report.findings, "impression": report.impression, "report": text},
    )


@tool("image.xray_phrase_grounding")
def xray_phrase_grounding(
    ctx: ToolContext, image_path: str, phrase: str, max_new_tokens: int = 300
) -> ToolResult:
    """Find where a finding phrase (e.g. "left pleural effusion") is seen in a linked chest X-ray (MAIRA-2).

    Boxes are fractions (0-1) of the image width and height, ``[x1, y1, x2, y2]``; the image with
    the boxes drawn comes back as an image. Returns an "unavailable" error when the model
    weights are not installed.

    Args:
        image_path: a linked image's dicom_id or path (as listed in the task).
        phrase: the finding to locate (at most 200 characters).
        max_new_tokens: generation cap of the grounding model (1-600).
    """
    if not phrase.strip() or len(phrase) > 200:
        raise ToolError("bad_argument", "phrase must be 1-200 characters")
    if not 1 <= max_new_tokens <= 600:
        raise ToolError("bad_argument", "max_new_tokens must be between 1 and 600")
    session, image, _ = open_image(ctx, image_path)
    found = backend(session, "grounder").ground(image, phrase.strip())
    boxes = [list(b) for b in found.boxes]
    data: dict[str, Any] = {
        "phrase": found.phrase,
        "boxes": boxes,
        "status": "completed" if boxes else "completed_no_finding",
    }
    if not boxes:
        return ToolResult(
            ok=True, content=f"'{found.phrase}' was not localised in {image.path.name}.", data=data
        )
    img = draw_boxes(fit(image.pixels, MAX_EDGE), found.boxes, found.phrase)
    png = session.artifact(
        save_png(np.asarray(img), session.artifact_dir, "ground_", key=f"{image.path}:{phrase}")
    )
    data["visualization_path"] = str(png)
    listed = "; ".join("[" + ", ".join(f"{v:.3f}" for v in b) + "]" for b in boxes)
    return ToolResult(
        ok=True,
        content=f"'{found.phrase}' in {image.path.name}: {len(boxes)} box(es) {listed} "
        f"(x1, y1, x2, y2 as fractions). Picture: {png}",
        data=data,
        images=(str(png),),
    )


@tool("image.chest_xray_segmentation")
def chest_xray_segmentation(ctx: ToolContext, image_path: str, organs: list[str] | None = None) -> ToolResult:
    """Segment anatomical structures of a linked chest X-ray (torchxrayvision PSPNet, 14 ChestX-Det structures).

    Per structure: area in pixels and in cm2 (only when the DICOM gives the pixel spacing),
    centroid and bounding box as fractions of the image, width and height in mm when known;
    plus the cardiothoracic ratio when the heart and both lungs are found. The overlay comes back
    as an image. Returns an "unavailable" error when the model weights are not installed.

    Args:
        organs: structures to report (default all): Left/Right Clavicle, Left/Right Scapula,
            Left/Right Lung, Left/Right Hilus Pulmonis, Heart, Aorta, Facies Diaphragmatica,
            Mediastinum, Weasand, Spine.
        image_path: a linked image's dicom_id or path (as listed in the task).
    """
    session, image, _ = open_image(ctx, image_path)
    model = backend(session, "segmenter")
    wanted = _organs(organs, model.structures)
    masks = {k: v for k, v in model.segment(image).items() if k in wanted}
    stats = {name: _mask_stats(mask, image.pixel_spacing_mm) for name, mask in masks.items()}
    ctr = _ctr(masks)
    img = overlay_masks(image.pixels, {k: v for k, v in masks.items() if v.any()}, MAX_EDGE)
    png = session.artifact(
        save_png(np.asarray(img), session.artifact_dir, "seg_", key=f"{image.path}:{sorted(wanted)}")
    )
    spacing = image.pixel_spacing_mm
    lines = [
        f"{name}: " + ", ".join(f"{k} {v}" for k, v in s.items() if v is not None)
        for name, s in stats.items()
    ]
    head = (
        f"Segmentation of {image.path.name} ({image.shape[1]}x{image.shape[0]} px, pixel spacing "
        f"{'{:.3f} x {:.3f} mm'.format(*spacing) if spacing else 'unknown: areas in pixels only'})."
    )
    tail = [f"cardiothoracic ratio: {ctr:.2f}"] if ctr is not None else []
    return ToolResult(
        ok=True,
        content="\n".join([head, *lines, *tail, f"Overlay: {png}"]),
        data={
            "structures": stats,
            "cardiothoracic_ratio": ctr,
            "pixel_spacing_mm": spacing,
            "overlay_path": str(png),
        },
        images=(str(png),),
    )


def _organs(organs: list[str] | None, known: tuple[str, ...]) -> set[str]:
    if not organs:
        return set(known)
    by_lower = {k.lower(): k for k in known}
    bad = [o for o in organs if o.strip().lower() not in by_lower]
    if bad:
        raise ToolError("bad_argument", f"unknown structure(s) {bad}; known: {', '.join(known)}")
    return {by_lower[o.strip().lower()] for o in organs}


def _mask_stats(mask: np.ndarray, spacing: tuple[float, float] | None) -> dict[str, Any]:
    area = int(mask.sum())
    if area == 0:
        return {"area_px": 0}
    rows, cols = np.nonzero(mask)
    h, w = mask.shape
    out: dict[str, Any] = {
        "area_px": area,
        "area_cm2": round(area * spacing[0] * spacing[1] / 100, 2) if spacing else None,
        "centroid_xy": [round(float(cols.mean()) / w, 3), round(float(rows.mean()) / h, 3)],
        "bbox_xyxy": [
            round(cols.min() / w, 3),
            round(rows.min() / h, 3),
            round((cols.max() + 1) / w, 3),
            round((rows.max() + 1) / h, 3),
        ],
    }
    if spacing:
        out["width_mm"] = round((cols.max() - cols.min() + 1) * spacing[1], 1)
        out["height_mm"] = round((rows.max() - rows.min() + 1) * spacing[0], 1)
    return out


def _ctr(masks: dict[str, np.ndarray]) -> float | None:
    """Cardiothoracic ratio: widest heart extent / widest extent of both lungs together."""
    heart, left, right = masks.get("Heart"), masks.get("Left Lung"), masks.get("Right Lung")
    if heart is None or left is None or right is None or not (heart.any() and left.any() and right.any()):
        return None
    hc = np.nonzero(heart.any(axis=0))[0]
    lc = np.nonzero((left | right).any(axis=0))[0]
    return float((hc.max() - hc.min() + 1) / (lc.max() - lc.min() + 1))


@tool("image.image_visualizer")
def image_visualizer(
    ctx: ToolContext,
    image_path: str,
    title: str | None = None,
    description: str | None = None,
    boxes: list[list[float]] | None = None,
) -> ToolResult:
    """Show a linked chest X-ray (or a picture a tool made in this run) to you as an image, with an optional
    title, caption and boxes drawn on it. Needs no model weights.

    Args:
        image_path: a linked image's dicom_id or path, or a picture path returned by an image tool.
        title: a line drawn above the image.
        description: a caption drawn below the image.
        boxes: boxes to outline, each [x1, y1, x2, y2] as fractions (0-1) of width and height.
    """
    parsed: list[tuple[float, float, float, float]] = []
    for box in boxes or []:
        if len(box) != 4 or not all(0 <= v <= 1 for v in box) or box[0] >= box[2] or box[1] >= box[3]:
            raise ToolError(
                "bad_argument", f"box {box}: expected [x1, y1, x2, y2] fractions with x1<x2, y1<y2"
            )
        parsed.append((box[0], box[1], box[2], box[3]))
    session, image, _ = open_image(ctx, image_path)
    img = with_text(draw_boxes(fit(image.pixels, MAX_EDGE), parsed), title, description)
    key = f"{image.path}:{title}:{description}:{parsed}"
    png = session.artifact(save_png(np.asarray(img), session.artifact_dir, "view_", key=key))
    return ToolResult(
        ok=True,
        content=f"Showing {image.path.name} ({image.shape[1]}x{image.shape[0]} px) as {png}.",
        data={"image_path": str(png)},
        images=(str(png),),
    )
