"""Pictures for the model: a radiograph with a title, a caption, boxes or coloured masks (PIL only)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from PIL import Image, ImageDraw

_COLOURS = ((230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48), (145, 30, 180),
            (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212), (0, 128, 128), (220, 190, 255),
            (170, 110, 40), (128, 0, 0))


def fit(pixels: np.ndarray, max_edge: int) -> Image.Image:
    """An RGB copy of a uint8 gray image with its long edge at most ``max_edge`` pixels."""
    img = Image.fromarray(pixels).convert("RGB")
    img.thumbnail((max_edge, max_edge), Image.Resampling.LANCZOS)
    return img


def with_text(img: Image.Image, title: str | None, caption: str | None) -> Image.Image:
    """``img`` with a black band holding ``title`` above and ``caption`` below (when given)."""
    lines_top = [title] if title else []
    lines_bottom = _wrap(caption, max(20, img.width // 7)) if caption else []
    band = 14
    top, bottom = band * len(lines_top) + (6 if lines_top else 0), band * len(lines_bottom) + (6 if lines_bottom else 0)
    out = Image.new("RGB", (img.width, img.height + top + bottom), (0, 0, 0))
    out.paste(img, (0, top))
    draw = ImageDraw.Draw(out)
    for i, line in enumerate(lines_top):
        draw.text((4, 3 + i * band), line, fill=(255, 255, 255))
    for i, line in enumerate(lines_bottom):
        draw.text((4, top + img.height + 3 + i * band), line, fill=(255, 255, 255))
    return out


def _wrap(text: str, width: int) -> list[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        if len(line) + len(word) + 1 > width and line:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line] if line else lines


def draw_boxes(img: Image.Image, boxes: Sequence[tuple[float, float, float, float]], label: str | None = None) -> Image.Image:
    """``img`` with each box (fractions 0-1 of width and height) outlined in red."""
    out = img.copy()
    draw = ImageDraw.Draw(out)
    for x1, y1, x2, y2 in boxes:
        xy = (x1 * out.width, y1 * out.height, x2 * out.width, y2 * out.height)
        draw.rectangle(xy, outline=(255, 0, 0), width=max(2, out.width // 200))
        if label:
            draw.text((xy[0] + 3, xy[1] + 3), label, fill=(255, 0, 0))
    return out


def overlay_masks(pixels: np.ndarray, masks: Mapping[str, np.ndarray], max_edge: int) -> Image.Image:
    """The radiograph with each mask blended in its own colour (alpha 0.4) and a legend, long edge <= ``max_edge``."""
    base = np.stack([pixels] * 3, axis=-1).astype(np.float32)
    for i, mask in enumerate(masks.values()):
        colour = np.array(_COLOURS[i % len(_COLOURS)], dtype=np.float32)
        base[mask] = 0.6 * base[mask] + 0.4 * colour
    img = Image.fromarray(base.clip(0, 255).astype(np.uint8))
    img.thumbnail((max_edge, max_edge), Image.Resampling.LANCZOS)
    draw = ImageDraw.Draw(img)
    for i, name in enumerate(masks):
        draw.rectangle((4, 4 + i * 13, 13, 13 + i * 13), fill=_COLOURS[i % len(_COLOURS)])
        draw.text((17, 3 + i * 13), name, fill=(255, 255, 255))
    return img
