"""Write a text file whole or not at all (a leaf module: imports nothing from clinseek)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder, then rename it.

    A reader sees the old file or the new one, never half of one; on any error the temporary
    file is removed and ``path`` is untouched.

    Raises:
        OSError: the folder cannot be written.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
