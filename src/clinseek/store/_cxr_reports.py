"""MIMIC-CXR free-text reports (``files/pNN/p<subject_id>/s<study_id>.txt``, or ``mimic-cxr-reports.zip``).

Source: MIMIC-CXR 2.0.0 (https://physionet.org/content/mimic-cxr/2.0.0/): one report per study,
stored as ``files/p10/p10000032/s50414267.txt``; the same tree ships as ``mimic-cxr-reports.zip``.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa

from ..errors import IngestError

REPORTS_ZIP = "mimic-cxr-reports.zip"
_REPORT_PATH = re.compile(r"(?:^|/)files/p\d{2}/p(\d+)/s(\d+)\.txt$")
_BATCH = 5_000


CSV_RELEASE_DIRS: tuple[str, ...] = ("", "mimic-cxr-jpg/2.1.0", "mimic-cxr-jpg/2.0.0", "mimic-cxr-jpg-2.1.0",
                                     "mimic-cxr-jpg-2.0.0", "2.1.0", "2.0.0")
"""Where the MIMIC-CXR-JPG CSVs may sit below ``--cxr`` (the release folder itself, or a PhysioNet download root)."""

REPORT_DIRS: tuple[str, ...] = ("", "mimic-cxr-reports", "mimic-cxr/2.0.0", "mimic-cxr/2.0.0/mimic-cxr-reports",
                                "mimic-cxr-2.0.0", *CSV_RELEASE_DIRS[1:])
"""Where the report zip or ``files/`` report tree may sit below ``--cxr`` (MIMIC-CXR 2.0.0 ships the reports)."""


def cxr_csv_dir(base: Path) -> Path:
    """The folder below ``base`` holding ``mimic-cxr-2.0.0-metadata.csv(.gz)`` (MIMIC-CXR-JPG 2.0.0 or 2.1.0), else ``base``."""
    for rel in CSV_RELEASE_DIRS:
        folder = base / rel if rel else base
        if any((folder / f"mimic-cxr-2.0.0-metadata{s}").is_file() for s in (".csv.gz", ".csv")):
            return folder
    return base


def find_report_source(base: Path) -> Path | None:
    """The first ``mimic-cxr-reports.zip``, else ``files/`` tree holding report ``.txt`` files, under
    ``base`` or one of its :data:`REPORT_DIRS` (release folders of a PhysioNet download)."""
    for rel in REPORT_DIRS:
        folder = base / rel if rel else base
        archive = folder / REPORTS_ZIP
        if archive.is_file():
            return archive
        files = folder / "files"
        if files.is_dir() and next(files.glob("p*/p*/s*.txt"), None) is not None:
            return files
    return None


def _iter_zip(archive: Path) -> Iterator[tuple[str, bytes]]:
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if _REPORT_PATH.search(info.filename):
                    yield info.filename, zf.read(info)
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        raise IngestError(archive, f"cannot read the report archive: {err}") from err


def _iter_dir(files: Path) -> Iterator[tuple[str, bytes]]:
    for path in sorted(files.glob("p*/p*/s*.txt")):
        rel = path.relative_to(files.parent).as_posix()
        if _REPORT_PATH.search(rel):
            yield rel, path.read_bytes()


def iter_reports(source: Path) -> Iterator[tuple[int, int, str, str]]:
    """Yield ``(subject_id, study_id, text, member_name)`` for every report of ``source``.

    Raises:
        IngestError: a report is not UTF-8 text, or the archive is unreadable.
    """
    members = _iter_zip(source) if source.is_file() else _iter_dir(source)
    for name, data in members:
        found = _REPORT_PATH.search(name)
        assert found is not None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise IngestError(source, f"report {name} is not UTF-8 text ({err})", column="text") from err
        yield int(found.group(1)), int(found.group(2)), text, name


def insert_reports(con: duckdb.DuckDBPyConnection, target: str, source: Path) -> tuple[int, str]:
    """Insert every report into ``target`` (``subject_id, study_id, text``) in bounded batches.

    Returns:
        The row count and a sha256 over the reports (member names and bytes, in read order).
    """
    digest = hashlib.sha256()
    batch: list[tuple[int, int, str]] = []
    count = 0
    for subject_id, study_id, text, name in iter_reports(source):
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
        batch.append((subject_id, study_id, text))
        if len(batch) >= _BATCH:
            count += _flush(con, target, batch)
    count += _flush(con, target, batch)
    return count, digest.hexdigest()


def _flush(con: duckdb.DuckDBPyConnection, target: str, batch: list[tuple[int, int, str]]) -> int:
    if not batch:
        return 0
    subject_ids, study_ids, texts = zip(*batch, strict=True)
    arrow = pa.table(
        {
            "subject_id": pa.array(subject_ids, pa.int32()),
            "study_id": pa.array(study_ids, pa.int32()),
            "text": pa.array(texts, pa.string()),
        }
    )
    con.register("_clinseek_report_batch", arrow)
    try:
        con.execute(f"INSERT INTO {target} SELECT subject_id, study_id, text FROM _clinseek_report_batch")
    finally:
        con.unregister("_clinseek_report_batch")
    n = len(batch)
    batch.clear()
    return n
