"""Frames -> Arrow tables with exactly the registry's columns and types -> DuckDB inserts."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...schema import Table
from .._arrow import ARROW_TYPES
from ._frame import DAY, Frame, frame_len


def _column(values: Any, duck_type: str, n: int) -> pa.Array:
    arrow_type = ARROW_TYPES[duck_type]
    if values is None:
        return pa.nulls(n, type=arrow_type)
    if isinstance(values, pa.Array | pa.ChunkedArray):
        return values.cast(arrow_type)
    arr = np.asarray(values)
    if duck_type in ("TIMESTAMP", "DATE"):
        seconds = _as_float(arr)
        mask = np.isnan(seconds)
        if duck_type == "DATE":
            days = np.floor(np.nan_to_num(seconds) / DAY).astype(np.int32)
            return pa.array(days, type=pa.int32(), mask=mask).cast(pa.date32())
        micros = (np.nan_to_num(seconds) * 1_000_000).astype(np.int64)
        return pa.array(micros, type=pa.int64(), mask=mask).cast(arrow_type)
    if duck_type == "VARCHAR":
        if arr.dtype.kind in "fiu":
            arr = arr.astype(object)
        return pa.array(arr, type=pa.string(), from_pandas=True)
    if arr.dtype == object:
        floats = _as_float(arr)
        return pa.array(floats, from_pandas=True).cast(arrow_type)
    if arr.dtype.kind == "f" and duck_type != "DOUBLE":
        return pa.array(arr, from_pandas=True).cast(arrow_type)
    return pa.array(arr, from_pandas=True).cast(arrow_type)


def _as_float(arr: np.ndarray) -> np.ndarray:
    if arr.dtype == object:
        return np.array([np.nan if v is None else float(v) for v in arr], dtype=np.float64)
    return arr.astype(np.float64)


def to_arrow(table: Table, frame: Frame) -> pa.Table:
    """The frame as an Arrow table with the registry's columns (missing ones NULL), sorted like the store.

    Raises:
        ValueError: the frame has a column the registry does not know (a generator bug).
    """
    unknown = set(frame) - set(table.column_names)
    if unknown:
        raise ValueError(f"{table.qualified}: generator produced unknown columns {sorted(unknown)}")
    n = frame_len(frame)
    arrays = [_column(frame.get(c.name), c.type, n) for c in table.columns]
    result = pa.Table.from_arrays(arrays, names=list(table.column_names))
    if n and table.sort_columns:
        keys = [(c, "ascending", "at_end") for c in table.sort_columns]
        idx = pc.sort_indices(result, sort_keys=keys)
        result = result.take(idx)
    return result


def insert(con: duckdb.DuckDBPyConnection, table: Table, frame: Frame) -> int:
    """Append the frame's rows to the store table; returns the number of rows."""
    n = frame_len(frame)
    if not n:
        return 0
    data = to_arrow(table, frame)
    con.register("_synth_batch", data)
    try:
        con.execute(f"INSERT INTO {table.qualified} SELECT * FROM _synth_batch")
    finally:
        con.unregister("_synth_batch")
    return n
