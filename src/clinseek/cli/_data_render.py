"""Rich rendering of ingest reports and store summaries for ``clinseek data``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..store import EVENT_INDEX_VERSION, IngestReport, StoreInfo


def print_ingest_report(report: IngestReport) -> None:
    """One line per table (rows, seconds, ingested/skipped), absent optional tables, totals."""
    out = Console()
    grid = Table("table", "rows", "seconds", "status", "notes", title=f"ingest → {report.store}")
    for t in report.tables:
        notes = []
        if t.absent_optional_columns:
            notes.append(f"absent optional columns: {', '.join(t.absent_optional_columns)}")
        if t.ignored_columns:
            notes.append(f"ignored columns: {', '.join(t.ignored_columns)}")
        grid.add_row(t.table, f"{t.rows:,}", f"{t.seconds:.1f}", t.status, "; ".join(notes))
    out.print(grid)
    if report.absent_tables:
        out.print(f"absent optional tables: {', '.join(report.absent_tables)}")
    if report.absent_modules:
        out.print(f"modules the database has no schema for: {', '.join(report.absent_modules)}")
    out.print(
        f"{len(report.ingested)} ingested, {len(report.skipped)} already done, "
        f"{report.rows:,} rows, {report.seconds:.1f} s"
    )


def print_info(info: StoreInfo) -> None:
    """Provenance, patients and time range, then one row per table."""
    out = Console()
    out.print(f"[bold]{info.path}[/bold]  kind={info.kind}  clinseek={info.clinseek_version}")
    out.print(f"modules: {', '.join(info.modules) or '-'}   patients: {info.patients}")
    out.print(f"event time range: {info.time_min} … {info.time_max}")
    for key, value in sorted(info.provenance.items()):
        if key not in {"kind", "clinseek_version"}:
            out.print(f"  {key}: {value}")
    layout = info.provenance.get("event_index_version")
    if layout is not None and layout != EVENT_INDEX_VERSION:
        read = "microbiology and labs are counted apart" if layout == "2" else "it is not used"
        out.print(f"  note: event index layout {layout}, not {EVENT_INDEX_VERSION}: {read}; `clinseek data ingest "
                  f"--out {info.path}` with its sources rewrites it")
    elif layout is not None and not info.event_index_current:
        out.print("  note: the event index times some tables by an older definition of when their rows become known: "
                  f"they are counted per table (same rows, slower); `clinseek data ingest --out {info.path}` with its "
                  "sources rewrites it")
    grid = Table("table", "rows", "first event", "last event", "source")
    for t in info.tables:
        source = Path(t.source_file).name if t.source_file else (t.registry_release or "")
        first, last = _minute(t.time_min), _minute(t.time_max)
        if t.time_from and not t.time_min and t.rows:
            first, last = f"time of {t.time_from}", "(no current event index)"
        grid.add_row(t.table, f"{t.rows:,}", first, last, source)
    out.print(grid)
    out.print(f"{len(info.tables)} tables, {info.rows:,} rows")


def _minute(value: dt.datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else ""
