"""Data embedded in the page: JSON safe inside ``<script>``, and gzip+base64 blobs decoded on demand.

A blob is a ``<script type="application/x-clinseek-gzip" id="...">`` element whose text is the
base64 of gzip-compressed UTF-8 JSON. The browser never parses it as script; the viewer decodes it
with ``DecompressionStream("gzip")`` only when the reader opens the question it belongs to.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from typing import Any

BLOB_TYPE = "application/x-clinseek-gzip"
"""The ``type`` of blob script elements."""


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by ``None`` (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere: written as null
        return json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def json_for_html(value: Any) -> str:
    """Compact JSON of ``value`` that is safe as the text of a ``<script>`` element.

    ``<``, ``>`` and ``&`` are written as ``\\u003c`` etc., so no ``</script>`` or ``<!--`` can
    appear; U+2028/U+2029 are escaped too; NaN and infinities become ``null``. ``JSON.parse``
    reads it back.
    """
    text = _dumps(value)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def encode_blob(value: Any) -> str:
    """``value`` as gzip-compressed JSON in base64 (ASCII, safe anywhere in HTML)."""
    raw = _dumps(value).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def decode_blob(text: str) -> Any:
    """The inverse of :func:`encode_blob` (used by tests and tools that read reports)."""
    return json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))


def blob_element(blob_id: str, value: Any) -> str:
    """One blob ``<script>`` element holding ``value`` (see the module docstring)."""
    return f'<script type="{BLOB_TYPE}" id="{blob_id}">{encode_blob(value)}</script>\n'
