"""Check an output path before a command starts work: one clear error instead of an OSError traceback."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Literal

from ..errors import ClinseekError

EXIT_INFRA_ERRORS = 3
"""Exit code of ``clinseek run`` and ``clinseek demo`` when result rows with infrastructure errors
remain (the rows written are kept; rerunning the same command resumes and redoes only those)."""

EXIT_INVALID_INPUT = 4
"""Exit code of ``clinseek run`` when every runnable row ran but some manifest rows could not run
(``invalid_input`` rows, each with its reason; the valid rows' results are written)."""


def check_out(path: Path, kind: Literal["dir", "file"], option: str = "--out", *, example: str = "") -> Path:
    """Refuse an output path the command could not write, before anything is written.

    ``kind="dir"``: ``path`` must be a folder or not exist; ``kind="file"``: it must not be a
    folder (the error suggests ``path / example``: the file name the command writes, e.g. ``mimic.duckdb``). The folder that will receive the output (``path`` itself, its parent, or the nearest
    existing ancestor when neither exists yet) must be a folder where a file can be created: a
    probe file is created and removed there. Nothing else is created.

    Returns:
        ``path`` unchanged.

    Raises:
        ClinseekError: names the option, the path and what is wrong (a file where a folder is
            expected or the reverse, a file among the parents, a read-only or forbidden place).
    """
    if path.exists():
        if kind == "dir" and not path.is_dir():
            raise ClinseekError(f"{option} {path}: is a file, expected a folder; give a folder path")
        if kind == "file" and path.is_dir():
            raise ClinseekError(f"{option} {path}: is a folder, expected a file name (e.g. {path / (example or 'out')})")
    anchor = path if kind == "dir" else path.parent
    while not anchor.exists() and anchor != anchor.parent:
        anchor = anchor.parent
    if not anchor.is_dir():
        raise ClinseekError(f"{option} {path}: {anchor} is a file, not a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=anchor, prefix=".clinseek-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise ClinseekError(f"{option} {path}: cannot write in {anchor}: {err.strerror or err}") from None
    return path
