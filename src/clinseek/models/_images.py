"""Reading referenced images at request time (bytes are never kept on a record)."""

from __future__ import annotations

import base64
from pathlib import Path

from ..errors import ModelError
from ._messages import ImageRef

_MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}


def load_image(image: ImageRef) -> tuple[str, str]:
    """``(media_type, base64 data)`` of a referenced image.

    Raises:
        ModelError: the file is missing or unreadable, or its type is not PNG/JPEG/GIF/WebP.
    """
    path = Path(image.path)
    media_type = image.media_type or _MEDIA_TYPES.get(path.suffix.lower())
    if media_type is None or media_type not in _MEDIA_TYPES.values():
        raise ModelError(f"{path}: image type {path.suffix or '(none)'!r} is not PNG, JPEG, GIF or WebP")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ModelError(f"{path}: cannot read image: {err.strerror}") from None
    return media_type, base64.b64encode(data).decode("ascii")


__all__ = ["load_image"]
