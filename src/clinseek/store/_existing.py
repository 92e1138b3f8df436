"""What an existing ``--out`` file is, so that building a store never overwrites someone else's data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..errors import StoreError
from ._duck import META_SCHEMA, connect_store


@dataclass(frozen=True, slots=True)
class ExistingFile:
    """What lies at a store path before a build writes it.

    Attributes:
        kind: ``"absent"`` (nothing there), ``"empty"`` (a DuckDB file with no tables or views),
            ``"ingest"`` / ``"synthetic"`` (a clinseek store of that ``store_info.kind``), or
            ``"other"`` (a folder, a file DuckDB cannot open, or a DuckDB file holding other data).
        what: a short description for error messages (e.g. ``"a DuckDB file holding hosp.patients"``).
        cxr_root: the store's ``store_info.cxr_root`` (synthetic stores), else ``None``.
    """

    kind: str
    what: str
    cxr_root: str | None = None


def existing_file(path: Path) -> ExistingFile:
    """Inspect ``path`` read-only (it is never modified)."""
    if not path.exists():
        return ExistingFile("absent", "nothing")
    if not path.is_file():
        return ExistingFile("other", "not a file")
    try:
        con = connect_store(path, read_only=True)
    except StoreError as err:  # not a database, or locked by another process
        return ExistingFile("other", f"a file DuckDB cannot open ({err.__cause__ or err})")
    try:
        try:
            info = dict(con.execute(f"SELECT key, value FROM {META_SCHEMA}.store_info").fetchall())
        except duckdb.Error:
            info = {}
        if info.get("kind"):
            return ExistingFile(info["kind"], f"a clinseek {info['kind']} store", info.get("cxr_root"))
        names = [f"{s}.{t}" for s, t in con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT internal "
            "UNION ALL SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1, 2"
        ).fetchall() if s != META_SCHEMA]
    except duckdb.Error:
        return ExistingFile("other", "a DuckDB file that cannot be read")
    finally:
        con.close()
    if not names:
        return ExistingFile("empty", "an empty DuckDB file")
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return ExistingFile("other", f"a DuckDB file that is not a clinseek store (holds {shown})")
