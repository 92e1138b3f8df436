"""Building and opening the store: one DuckDB file, tables in module schemas, provenance metadata."""

from ._duck import (
    META_SCHEMA,
    Store,
    StoreLimits,
    connect_store,
    finished_tables,
    init_store,
    open_store,
    record_table,
    table_ddl,
)

__all__ = [
    "META_SCHEMA",
    "Store",
    "StoreLimits",
    "connect_store",
    "finished_tables",
    "init_store",
    "open_store",
    "record_table",
    "table_ddl",
]
