"""Write a file or a folder whole or not at all (a leaf module: imports nothing from clinseek).

Temporary files and folders are created here with the modes of an ordinary ``open()`` / ``mkdir``
(0666 / 0777 less the user's umask), not the private 0600 / 0700 of :mod:`tempfile`: what clinseek
writes (reports, scores, benchmarks, SFT data) can be read by whoever the user's umask lets read
any other file of theirs, e.g. colleagues on a shared server.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


def _sibling(path: Path, tag: str) -> Path:
    return path.parent / f".{path.name}.{tag}-{secrets.token_hex(4)}.tmp"


def _create_file(path: Path, tag: str) -> tuple[int, Path]:
    while True:
        tmp = _sibling(path, tag)
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue


@contextmanager
def atomic_writer(path: Path) -> Iterator[TextIO]:
    """A UTF-8 text handle on a temporary file beside ``path`` that replaces ``path`` when the block ends.

    A reader sees the old file or the new one, never half of one; on any error (the block's or
    the rename's) the temporary file is removed and ``path`` is untouched. The file gets the mode
    of a plain ``open(path, "w")`` (0666 less the umask).

    Raises:
        OSError: the folder cannot be written.
    """
    fd, tmp = _create_file(path, "writing")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder, then rename it
    (see :func:`atomic_writer`).

    Raises:
        OSError: the folder cannot be written.
    """
    with atomic_writer(path) as handle:
        handle.write(text)


def staging_dir(out: Path) -> Path:
    """A new empty folder beside ``out`` (``.<name>.staging-<random>.tmp``) to fill and then rename to
    ``out``, with the mode of a plain ``mkdir`` (0777 less the umask). The caller removes it on failure.

    Raises:
        OSError: ``out``'s parent cannot be written.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = _sibling(out, "staging")
        try:
            tmp.mkdir(mode=0o777)
            return tmp
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue

