"""Finding MIMIC source files for registry tables and matching their headers to registry columns."""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

from ..errors import IngestError
from ..schema import Column, Module, Table, tables

SOURCE_MODULES: dict[str, tuple[Module, ...]] = {
    "mimic_iv": ("hosp", "icu"),
    "ed": ("ed",),
    "note": ("note",),
    "cxr": ("cxr",),
}
"""Which registry modules each ``ingest`` source directory holds (``--mimic-iv`` holds ``hosp/`` and ``icu/``)."""

SOURCE_NAMES: dict[str, str] = {"mimic_iv": "MIMIC-IV", "ed": "MIMIC-IV-ED", "note": "MIMIC-IV-Note", "cxr": "MIMIC-CXR"}
"""The dataset each ``ingest`` source directory holds, as error messages name it."""

SUFFIXES = (".csv.gz", ".csv")
"""Accepted file suffixes, in order of preference (the released ``.csv.gz`` first)."""

SPECIAL_TABLES = frozenset({"cxr.reports"})
"""Tables not read from one CSV (MIMIC-CXR report text comes from ``files/`` or a zip)."""


@dataclass(frozen=True, slots=True)
class HeaderMatch:
    """How a CSV header lines up with a registry table.

    Attributes:
        header: the header fields as in the file.
        columns: for each header field, the registry column it holds, or ``None`` (ignored).
        absent_optional: optional registry columns the file lacks (stored as NULL).
    """

    header: tuple[str, ...]
    columns: tuple[Column | None, ...]
    absent_optional: tuple[str, ...]

    @property
    def ignored(self) -> tuple[str, ...]:
        """Header fields that match no registry column."""
        return tuple(h for h, c in zip(self.header, self.columns, strict=True) if c is None)


@dataclass(frozen=True, slots=True)
class SourceTable:
    """One registry table and the file it will be ingested from.

    Attributes:
        table: the registry table.
        path: the source file (``.csv``/``.csv.gz``), or the CXR report source for ``cxr.reports``.
        match: the header match (``None`` for tables not read from a CSV).
    """

    table: Table
    path: Path
    match: HeaderMatch | None


def find_table_file(base: Path, table: Table) -> Path | None:
    """The first existing ``<base>/<stem><suffix>`` over ``table.file_stems`` x :data:`SUFFIXES`."""
    for stem in table.file_stems:
        for suffix in SUFFIXES:
            candidate = base / f"{stem}{suffix}"
            if candidate.is_file():
                return candidate
    return None


def expected_names(base: Path, table: Table) -> str:
    """Human-readable list of the paths looked for (for error messages)."""
    return " or ".join(str(base / f"{stem}{SUFFIXES[0]}") for stem in table.file_stems[:1]) + " (or .csv)"


def read_header(path: Path) -> tuple[str, ...]:
    """The header row of a ``.csv`` or ``.csv.gz`` file.

    Raises:
        IngestError: the file is empty, is not valid gzip, or is not UTF-8 text.
    """
    try:
        with _open_text(path) as fh:
            row = next(csv.reader(fh), None)
    except (OSError, EOFError, gzip.BadGzipFile) as err:
        raise IngestError(
            path, f"cannot read the header: not a readable (gzip) CSV file ({err})", line=1
        ) from err
    except UnicodeDecodeError as err:
        raise IngestError(path, f"the header is not UTF-8 text ({err})", line=1) from err
    if not row:
        raise IngestError(path, "empty file: expected a header line", line=1)
    return tuple(row)


def _open_text(path: Path) -> io.TextIOBase:
    if path.name.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def match_header(path: Path, table: Table, header: tuple[str, ...]) -> HeaderMatch:
    """Match header fields to registry columns, case-insensitively and through ``Column.aliases``.

    Raises:
        IngestError: a required column is missing (line 1 names the header), or two header
            fields map to the same column.
    """
    spellings = {c.name.lower(): c for c in table.columns}
    for col in table.columns:
        spellings.update({a.lower(): col for a in col.aliases})
    matched: list[Column | None] = []
    seen: set[str] = set()
    for field in header:
        found = spellings.get(field.strip().lower())
        if found is not None and found.name in seen:
            raise IngestError(path, f"two header fields map to column {found.name!r}", line=1, column=field)
        if found is not None:
            seen.add(found.name)
        matched.append(found)
    missing = [c for c in table.columns if c.name not in seen]
    required = [c.name for c in missing if not c.optional]
    if required:
        raise IngestError(
            path,
            f"missing column(s) {', '.join(map(repr, required))} of {table.qualified}; "
            f"the header has {', '.join(header)}",
            line=1,
            column=required[0],
        )
    return HeaderMatch(tuple(header), tuple(matched), tuple(c.name for c in missing))


def resolve_sources(sources: dict[str, Path]) -> tuple[list[SourceTable], list[str]]:
    """Find every registry table's file under the given source directories and check its header.

    Args:
        sources: source name (a key of :data:`SOURCE_MODULES`) to directory.

    Returns:
        The tables to ingest, in registry order, and the qualified names of optional tables
        whose files are absent.

    Raises:
        IngestError: a directory is missing or holds no MIMIC file of its modules, a required
            table's file is missing, or a header lacks a registered column. Nothing is written.
    """
    found: list[SourceTable] = []
    absent: list[str] = []
    for source, base in sources.items():
        mods = SOURCE_MODULES[source]
        if not base.is_dir():
            raise IngestError(base, f"--{source.replace('_', '-')}: not a directory")
        if source == "cxr":  # the CSVs may sit in a release folder below --cxr (mimic-cxr-jpg/2.1.0/ ...)
            from ._cxr_reports import cxr_csv_dir

            here, missing = _resolve_modules(cxr_csv_dir(base), mods, report_base=base)
        else:
            here, missing = _resolve_modules(base, mods)
        if (not here or any(t.required for t in missing)) and (hint := _module_folder_hint(base, source, missing)):
            raise IngestError(base, hint)
        if not here:
            first = tables(mods)[0]
            raise IngestError(
                base,
                f"no {'/'.join(mods)} files found (expected e.g. {expected_names(base, first)}); "
                f"is this the right directory for --{source.replace('_', '-')}?",
            )
        required = [t for t in missing if t.required]
        if required:
            names = "; ".join(f"{t.qualified} ({expected_names(base, t)})" for t in required)
            raise IngestError(base, f"required table file(s) missing: {names}")
        found += here
        absent += [t.qualified for t in missing]
    return found, absent


def _module_folder_hint(base: Path, source: str, missing: list[Table]) -> str | None:
    """For a source directory that is one module folder (``hosp/``) of a release whose parent holds the
    missing tables' files: say so and name the parent (the folder the option takes)."""
    mods = SOURCE_MODULES[source]
    name = base.name or base.absolute().name  # "." names the folder it stands for
    if source == "cxr" or name not in mods:
        return None
    parent = base.parent if base.name and base.parent != Path() else base.absolute().parent
    if not any(find_table_file(parent, t) for t in missing if t.required):
        return None
    return f"looks like the {name}/ folder of {SOURCE_NAMES[source]}; give its parent ({parent})"


def _resolve_modules(
    base: Path, mods: tuple[Module, ...], *, report_base: Path | None = None
) -> tuple[list[SourceTable], list[Table]]:
    from ._cxr_reports import find_report_source

    here: list[SourceTable] = []
    missing: list[Table] = []
    for table in tables(mods):
        if table.qualified in SPECIAL_TABLES:
            report_source = find_report_source(report_base or base)
            if report_source is None:
                missing.append(table)
            else:
                here.append(SourceTable(table, report_source, None))
            continue
        path = find_table_file(base, table)
        if path is None:
            missing.append(table)
            continue
        here.append(SourceTable(table, path, match_header(path, table, read_header(path))))
    return here, missing
