"""One statement's rows as Arrow, the way ``clinseek.episode._reader`` reads them (for the tests' oracles that run
thousands of small statements).

``con.sql(text, params=...).to_arrow_table()`` plans a statement twice (the relation binds it, the fetch plans it
again); ``con.execute(text, params).to_arrow_table()`` plans it once, and DuckDB warns that it copies the rows
once more, which costs less than the second planning. Same statement, parameters and Arrow table.
"""

from __future__ import annotations

import warnings
from typing import Any

import duckdb
import pyarrow as pa


def arrow(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> pa.Table:
    """The rows of ``sql`` with ``params`` (``None``/empty: none) on ``con``, as an Arrow table."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Arrow output on a DB-API result", category=UserWarning)
        return con.execute(sql, params or None).to_arrow_table()
