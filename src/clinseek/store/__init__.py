"""Building and opening the store: one DuckDB file, tables in module schemas, provenance metadata."""

from ._damage import check_complete, damage_error, is_damage
from ._duck import (
    META_SCHEMA,
    Store,
    StoreLimits,
    connect_store,
    finished_tables,
    init_store,
    open_store,
    record_table,
    store_file_problem,
    table_ddl,
)
from ._eventindex import (
    EVENT_INDEX,
    EVENT_INDEX_TABLES,
    EVENT_INDEX_VERSION,
    collapses,
    encounter_column,
    event_index_current,
    event_index_layout,
    indexable,
    store_layout,
    valid_event_index,
    write_event_index,
)
from ._info import StoreInfo, TableInfo, store_info
from ._ingest import ingest
from ._ingest_report import IngestReport, TableIngest
from ._instants import (
    INSTANT_PREFIX,
    ROW_INSTANTS,
    ROW_INSTANTS_VERSION,
    RowInstants,
    TableInstants,
    row_instants_current,
    stored_instants,
    valid_row_instants,
    write_row_instants,
)
from ._pg import PG_SCHEMAS, is_postgres_url, redact_url
from ._pgindex import PgIndex, pg_index
from ._pgsource import PgSource
from ._spans import RecordSpan, record_spans
from ._synth import SynthReport, check_consistency, synthesize

__all__ = [
    "EVENT_INDEX",
    "EVENT_INDEX_TABLES",
    "EVENT_INDEX_VERSION",
    "INSTANT_PREFIX",
    "META_SCHEMA",
    "PG_SCHEMAS",
    "ROW_INSTANTS",
    "ROW_INSTANTS_VERSION",
    "IngestReport",
    "PgIndex",
    "PgSource",
    "RecordSpan",
    "RowInstants",
    "Store",
    "StoreInfo",
    "StoreLimits",
    "SynthReport",
    "TableInfo",
    "TableIngest",
    "TableInstants",
    "check_complete",
    "check_consistency",
    "collapses",
    "connect_store",
    "damage_error",
    "encounter_column",
    "event_index_current",
    "event_index_layout",
    "finished_tables",
    "indexable",
    "ingest",
    "init_store",
    "is_damage",
    "is_postgres_url",
    "open_store",
    "pg_index",
    "record_spans",
    "record_table",
    "redact_url",
    "row_instants_current",
    "store_file_problem",
    "store_info",
    "store_layout",
    "stored_instants",
    "synthesize",
    "table_ddl",
    "valid_event_index",
    "valid_row_instants",
    "write_event_index",
    "write_row_instants",
]
