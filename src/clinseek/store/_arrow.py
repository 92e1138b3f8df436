"""The Arrow type of each column type the schema registry uses (synthetic frames, PostgreSQL COPY)."""

from __future__ import annotations

import pyarrow as pa

ARROW_TYPES: dict[str, pa.DataType] = {
    "SMALLINT": pa.int16(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "VARCHAR": pa.string(),
    "TIMESTAMP": pa.timestamp("us"),
    "DATE": pa.date32(),
    "BOOLEAN": pa.bool_(),
}
"""Registry (DuckDB) column type -> Arrow type; a type not listed is not used by the registry."""
