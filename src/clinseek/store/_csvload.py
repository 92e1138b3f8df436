"""Loading one MIMIC CSV into a typed, sorted store table with DuckDB (streaming, bounded memory)."""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb

from ..errors import IngestError
from ..schema import Table
from ._sources import HeaderMatch

MAX_LINE_BYTES = 8 * 1024 * 1024
"""Largest CSV record DuckDB accepts (discharge notes are long multi-line quoted fields)."""

BUFFER_BYTES = MAX_LINE_BYTES
"""DuckDB CSV read buffer (the smallest DuckDB allows with :data:`MAX_LINE_BYTES`).

A ``.csv.gz`` is decompressed one buffer at a time under a lock while the other threads parse;
small buffers keep both cores busy (a 20M-row ``labevents`` ingest: 32 MB buffers left each
thread blocked 20-40 % of the read phase, 8 MB 10-20 %) and take less memory. Records longer than
a buffer still span buffers (tested up to :data:`MAX_LINE_BYTES`).
"""

_REJECTS = "_clinseek_rejects"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def read_csv_sql(path: Path, match: HeaderMatch, *, extra: str = "") -> str:
    """``read_csv(...)`` over ``path`` with every header field declared and typed, no sniffing.

    Registry columns are read as their registry type (DATE as TIMESTAMP, so that
    ``YYYY-MM-DD 00:00:00`` is accepted); fields that match no column are read as VARCHAR.
    """
    decls = []
    for i, col in enumerate(match.columns):
        if col is None:
            decls.append(f"{_literal(f'_ignored_{i}')}: 'VARCHAR'")
        else:
            read_type = "TIMESTAMP" if col.type == "DATE" else col.type
            decls.append(f"{_literal(col.name)}: {_literal(read_type)}")
    return (
        f"read_csv({_literal(str(path))}, header=true, auto_detect=false, delim=',', quote='\"', "
        f"escape='\"', strict_mode=true, null_padding=false, max_line_size={MAX_LINE_BYTES}, buffer_size={BUFFER_BYTES}, "
        f"columns={{{', '.join(decls)}}}{extra})"
    )


def select_sql(table: Table, match: HeaderMatch) -> str:
    """The typed projection: registry order, blank strings to NULL, DATE from TIMESTAMP, absent optional NULL.

    A VARCHAR value that is empty or only spaces (the demo's ``labevents.valueuom`` holds
    ``" "``) is stored as NULL; other strings are kept byte for byte.
    """
    present = {c.name for c in match.columns if c is not None}
    items = []
    for col in table.columns:
        name = _quote(col.name)
        if col.name not in present:
            items.append(f"CAST(NULL AS {col.type}) AS {name}")
        elif col.type == "VARCHAR":
            # ascii() is the first code point; only values starting with a space pay for trim()
            items.append(
                f"CASE WHEN {name} = '' OR (ascii({name}) = 32 AND trim({name}) = '') THEN NULL ELSE {name} END AS {name}"
            )
        elif col.type == "DATE":
            items.append(f"CAST({name} AS DATE) AS {name}")
        else:
            items.append(name)
    return ", ".join(items)


def order_sql(table: Table) -> str:
    """``ORDER BY`` for the store: :attr:`Table.sort_columns`, then the key (a deterministic order)."""
    cols = list(table.sort_columns)
    cols += [k for k in table.key if k not in cols]
    return ", ".join(_quote(c) for c in cols)


def insert_csv(
    con: duckdb.DuckDBPyConnection, target: str, table: Table, path: Path, match: HeaderMatch
) -> int:
    """``INSERT INTO target`` the typed, sorted rows of ``path``; returns the row count.

    Raises:
        duckdb.Error: DuckDB's own error; the caller rolls back, then turns it into an
            :class:`IngestError` with :func:`explain_csv_error`.
    """
    sql = (
        f"INSERT INTO {target} SELECT {select_sql(table, match)} FROM {read_csv_sql(path, match)} "
        f"ORDER BY {order_sql(table)}"
    )
    return int(con.execute(sql).fetchall()[0][0])


def _first_line(err: BaseException) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def explain_csv_error(
    con: duckdb.DuckDBPyConnection, path: Path, match: HeaderMatch, err: duckdb.Error
) -> IngestError:
    """Turn a DuckDB error raised while loading ``path`` into an :class:`IngestError`.

    A CSV error (bad value, wrong field count, bad encoding) is located by re-scanning the file
    with DuckDB's reject tables (structured: column, error type, byte position); the byte
    position becomes the physical line (multi-line quoted fields count every line they span;
    the header is line 1). DuckDB keeps at most 1,000 rejected rows per scan; the earliest of
    them is reported. Call it outside any open transaction.
    """
    if isinstance(err, duckdb.IOException):
        return IngestError(path, f"cannot read the file: truncated or corrupt? ({_first_line(err)})")
    if not isinstance(err, duckdb.ConversionException | duckdb.InvalidInputException):
        return IngestError(path, f"DuckDB failed: {_first_line(err)}")
    con.execute(f"DROP TABLE IF EXISTS temp.{_REJECTS}")
    con.execute(f"DROP TABLE IF EXISTS temp.{_REJECTS}_scans")
    options = (
        f", store_rejects=true, rejects_table={_literal(_REJECTS)}, "
        f"rejects_scan={_literal(_REJECTS + '_scans')}, rejects_limit=1000"
    )
    try:
        # count every column so that each one is converted (count(*) alone converts nothing),
        # while only one row of counts comes back, whatever the file's size
        names = [c.name if c is not None else f"_ignored_{i}" for i, c in enumerate(match.columns)]
        counts = ", ".join(f"count({_quote(n)})" for n in names)
        con.execute(f"SELECT {counts} FROM {read_csv_sql(path, match, extra=options)}").fetchall()
        rows = con.execute(
            "SELECT CASE WHEN error_type = 'CAST' THEN byte_position ELSE line_byte_position END AS pos, "
            f"column_name, error_type, csv_line, error_message FROM {_REJECTS} ORDER BY pos LIMIT 1"
        ).fetchall()
    except duckdb.Error:
        rows = []
    if not rows:
        return IngestError(path, f"cannot parse the file: {_first_line(err)}")
    byte_position, column, error_type, csv_line, message = rows[0]
    line = physical_line(path, int(byte_position))
    problem = f"{str(error_type).lower()} error: {message}; the line reads: {str(csv_line)[:200]!r}"
    return IngestError(path, problem, line=line, column=column)


def physical_line(path: Path, byte_position: int, chunk: int = 1 << 20) -> int:
    """1-based line number of the byte at ``byte_position`` of the (decompressed) file."""
    opener = gzip.open if path.name.endswith(".gz") else open
    newlines = 0
    remaining = byte_position
    with opener(path, "rb") as fh:
        while remaining > 0:
            data = fh.read(min(chunk, remaining))
            if not data:
                break
            newlines += data.count(b"\n")
            remaining -= len(data)
    return newlines + 1
