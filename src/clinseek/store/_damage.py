"""Store files DuckDB cannot read: a truncated copy found when it is opened, damage found when read.

A truncated file (an interrupted copy or download) is refused when it is opened, from DuckDB's own
header: the file must be at least ``total_blocks * block_size`` bytes. Damage inside the file (a
block whose checksum fails) shows only when that block is read; :func:`is_damage` recognises
DuckDB's errors for it so that callers can turn them into one :class:`StoreError` naming the file.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..errors import StoreError

_DAMAGE_TEXT = (
    "corrupt database file",
    "could not read enough bytes",
    "checksum",
    "is not a valid duckdb database file",
    "unexpected end of file",
)


def check_complete(con: duckdb.DuckDBPyConnection, path: Path, database: str) -> None:
    """Refuse a store file shorter than the blocks its DuckDB header says are in use.

    Only used blocks count: DuckDB may cut free blocks off the end of a file (a rewritten event index frees
    its old blocks), so the header's ``total_blocks`` can exceed a sound file's length. A file cut inside its
    used blocks is refused here; one cut only by a few is refused by DuckDB's first read of a missing block
    (:func:`is_damage`).

    Args:
        con: a connection with the store attached as ``database``.
        path: the store file (named in the error).
        database: the attached database's name in ``con``.

    Raises:
        StoreError: the file is truncated (naming its size and the size DuckDB expects).
    """
    found = con.execute(
        "SELECT block_size, used_blocks FROM pragma_database_size() WHERE database_name = ?", [database]
    ).fetchall()
    if not found or not path.is_file():
        return
    block_size, used_blocks = found[0]
    expected = int(block_size) * int(used_blocks)
    size = path.stat().st_size
    if size < expected:
        raise StoreError(
            f"{path}: the store file is truncated ({size:,} bytes; its DuckDB header needs at least "
            f"{expected:,}); copy it again or rebuild it with 'clinseek data ingest' / 'clinseek data synth'"
        )


def is_damage(err: BaseException) -> bool:
    """Whether ``err`` is DuckDB failing to read a damaged file (not a query's own error)."""
    if isinstance(err, StoreError):
        return False
    if isinstance(err, duckdb.IOException | duckdb.SerializationException):
        return True
    return isinstance(err, duckdb.Error) and any(t in str(err).lower() for t in _DAMAGE_TEXT)


def damage_error(path: Path | str, err: BaseException) -> StoreError:
    """The one-line :class:`StoreError` for a damaged store file."""
    first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
    return StoreError(
        f"{path}: DuckDB cannot read the store file ({first}); it is damaged or truncated: "
        "copy it again or rebuild it with 'clinseek data ingest' / 'clinseek data synth'"
    )
