"""Things embedded once and referenced by id from many trajectories: shared texts and images."""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, UnidentifiedImageError

THUMBNAIL_PX = 768
"""Longest side, in pixels, of an image as embedded in the report (the file itself is not changed)."""


class SharedTexts:
    """Long texts that repeat across runs (system prompts), stored once: ``ref(text)`` → ``"s<n>"``."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}
        self.texts: dict[str, str] = {}

    def ref(self, text: str) -> str:
        """The id of ``text`` (the same text always gets the same id)."""
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
        if digest not in self._ids:
            key = f"s{len(self._ids)}"
            self._ids[digest] = key
            self.texts[key] = text
        return self._ids[digest]


def encode_thumbnail(path: Path, max_px: int = THUMBNAIL_PX) -> str:
    """``path`` as a base64 JPEG data URI, shrunk so its longest side is at most ``max_px``.

    Raises:
        OSError: the file cannot be read or is not an image Pillow can open (PNG, JPEG, GIF, WebP...).
    """
    try:
        with Image.open(path) as image:
            image.thumbnail((max_px, max_px))
            rgb = image.convert("L" if image.mode in ("L", "I", "I;16", "1", "F") else "RGB")
            buffer = io.BytesIO()
            rgb.save(buffer, format="JPEG", quality=80)
    except UnidentifiedImageError as err:
        raise OSError(f"not an image: {err}") from None
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class ImageTable:
    """Images of trajectories, embedded once each as a JPEG thumbnail (deduplicated by resolved path).

    A relative image path is looked up under each of ``roots`` in order (e.g. the results folder and
    ``--image-root`` folders); an image that cannot be found or read is kept as an error entry, so the
    viewer can say what is missing instead of failing.
    """

    def __init__(self, roots: Sequence[Path] = (), max_px: int = THUMBNAIL_PX) -> None:
        self.roots = [Path(r) for r in roots]
        self.max_px = max_px
        self._ids: dict[str, str] = {}
        self.entries: dict[str, dict[str, str]] = {}
        """id → ``{"path": as recorded, "uri": data URI}`` or ``{"path": ..., "error": why}``."""

    def _resolve(self, recorded: str, extra_roots: Sequence[Path]) -> Path | None:
        path = Path(recorded)
        if path.is_absolute():
            return path if path.is_file() else None
        for root in [*extra_roots, *self.roots]:
            if (root / path).is_file():
                return root / path
        return path if path.is_file() else None

    def ref(self, recorded: str, extra_roots: Sequence[Path] = ()) -> str:
        """The id of the image recorded as ``recorded`` (encoding it the first time it is seen)."""
        found = self._resolve(recorded, extra_roots)
        key_path = str(found.resolve()) if found is not None else recorded
        if key_path in self._ids:
            return self._ids[key_path]
        key = f"i{len(self._ids)}"
        self._ids[key_path] = key
        if found is None:
            self.entries[key] = {"path": recorded, "error": "file not found"}
        else:
            try:
                self.entries[key] = {"path": recorded, "uri": encode_thumbnail(found, self.max_px)}
            except OSError as err:
                self.entries[key] = {"path": recorded, "error": str(err)}
        return key
