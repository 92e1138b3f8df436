"""What ``ingest`` did, table by table (returned to the caller and printed by the CLI)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class TableIngest(BaseModel):
    """The outcome for one table.

    Attributes:
        table: qualified name (``hosp.labevents``).
        status: ``ingested`` in this run, or ``skipped`` because the store already held it
            complete (resumable ingest).
        rows: rows in the store table.
        source_file: the file (or CXR report source) it came from.
        source_sha256: sha256 of that file (for ``cxr.reports``: over member names and bytes).
        seconds: wall time spent on this table in this run (0 for skipped tables), seconds.
        ignored_columns: header fields that match no registry column (not stored).
        absent_optional_columns: optional registry columns the file lacks (stored as NULL).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: str
    status: Literal["ingested", "skipped"]
    rows: int
    source_file: str
    source_sha256: str
    seconds: float
    ignored_columns: tuple[str, ...] = ()
    absent_optional_columns: tuple[str, ...] = ()


class IngestReport(BaseModel):
    """The outcome of one :func:`~clinseek.store.ingest` run.

    Attributes:
        store: path of the DuckDB store file.
        tables: one entry per table found in the sources, in registry order.
        absent_tables: optional tables of the given modules whose files were not found
            (e.g. ``icu.chartevents`` in the MIMIC-IV demo copy), or that the PostgreSQL
            database lacks; not an error.
        seconds: wall time of the whole run, seconds.
        absent_modules: optional modules (ed, note, cxr) with no schema in the PostgreSQL database
            (``ingest --postgres``); not an error.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    store: str
    tables: tuple[TableIngest, ...]
    absent_tables: tuple[str, ...]
    seconds: float
    absent_modules: tuple[str, ...] = ()

    @property
    def rows(self) -> int:
        """Rows across all tables (ingested and skipped)."""
        return sum(t.rows for t in self.tables)

    @property
    def ingested(self) -> tuple[str, ...]:
        """Tables ingested in this run."""
        return tuple(t.table for t in self.tables if t.status == "ingested")

    @property
    def skipped(self) -> tuple[str, ...]:
        """Tables skipped because the store already held them complete."""
        return tuple(t.table for t in self.tables if t.status == "skipped")

    def table(self, name: str) -> TableIngest:
        """The entry for the qualified table ``name``.

        Raises:
            KeyError: the table was not part of this run.
        """
        for entry in self.tables:
            if entry.table == name:
                return entry
        raise KeyError(name)
