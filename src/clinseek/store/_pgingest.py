"""``ingest --postgres``: the plan (which tables a mimic-code database holds, checked before anything is
written) and the streaming load of one table from PostgreSQL into the store."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from ..errors import IngestError, StoreError
from ..schema import MODULES, Table, tables
from ._csvload import order_sql, select_sql
from ._pg import (
    PG_SCHEMAS,
    PgCatalog,
    PgRelation,
    check_readable,
    match_relation,
    pg_connect,
    pg_error,
    psycopg_module,
    read_catalog,
    redact_url,
    registry_columns,
    registry_select,
)
from ._pgcopy import arrow_error_column, copy_rows, registry_arrow_schema
from ._sources import SOURCE_MODULES, HeaderMatch

if TYPE_CHECKING:
    import psycopg

_REQUIRED_MODULES = SOURCE_MODULES["mimic_iv"]
"""Modules a database must hold unless their files are given (``--mimic-iv``): hosp and icu."""


@dataclass(frozen=True, slots=True)
class PgSourceTable:
    """One registry table and the PostgreSQL relation it will be ingested from.

    Attributes:
        table: the registry table.
        relation: the source relation (a partitioned table is read through its parent).
        match: its columns lined up with the registry's.
        location: ``postgresql://user@host:port/db#schema.table`` (no password): the recorded source.
        select: the query giving the registry's columns (:func:`~clinseek.store.registry_select`).
    """

    table: Table
    relation: PgRelation
    match: HeaderMatch
    location: str
    select: str


@dataclass(frozen=True, slots=True)
class PgPlan:
    """What ``--postgres`` ingests.

    Attributes:
        url: the URL as given (with its password: never recorded or printed; :attr:`catalog` has it redacted).
        catalog: what the database holds.
        tables: the tables to ingest, in registry order.
        absent: optional tables of the database's modules it lacks (qualified registry names).
        absent_modules: optional modules with no schema in the database (``ed``, ``note``, ``cxr``).
    """

    url: str
    catalog: PgCatalog
    tables: tuple[PgSourceTable, ...]
    absent: tuple[str, ...]
    absent_modules: tuple[str, ...]

    @property
    def provenance(self) -> dict[str, str]:
        """``store_info`` entries: the URL without password, the role and the schema of each module read."""
        used = sorted({st.table.module for st in self.tables}, key=MODULES.index)
        return {
            "source.postgres": self.catalog.url,
            "source.postgres.role": self.catalog.role,
            "source.postgres.schemas": ",".join(f"{m}={self.catalog.schemas[m]}" for m in used),
        }


def resolve_postgres(url: str, con: psycopg.Connection[Any], *, skip_modules: frozenset[str]) -> PgPlan:
    """Find every registry table in the database's module schemas and check it can be ingested.

    Modules in ``skip_modules`` (given as files) are not read from the database. hosp and icu
    must be there (unless skipped), with their required tables; ed, note and cxr are read when their
    schema exists. Nothing is written.

    Raises:
        IngestError: no MIMIC schema at all, a required module or table missing, or a relation lacking
            a required column (names the relation and the column).
        StoreError: the role may not read a relation it needs (names the grant), or the catalog
            cannot be read.
    """
    catalog = read_catalog(con, url, tables())
    wanted = [m for m in MODULES if m not in skip_modules]
    if not any(m in catalog.schemas for m in wanted):
        names = ", ".join(s for m in wanted for s in PG_SCHEMAS[m][:1])
        raise IngestError(redact_url(url), f"no MIMIC schema found (looked for {names} and the older mimic_* names); "
                                       f"is this a database built with mimic-code's buildmimic/postgres scripts?")
    planned: list[PgSourceTable] = []
    absent: list[str] = []
    missing_required: list[str] = []
    for module in wanted:
        if module not in catalog.schemas:
            if module in _REQUIRED_MODULES:
                missing_required.append(f"{module} (schema {catalog.looked_for(module)})")
            continue
        for table in tables((module,)):
            relation = catalog.relations.get(table.qualified)
            if relation is None:
                if table.required:
                    missing_required.append(f"{table.qualified} ({catalog.schemas[module]}.{table.name})")
                else:
                    absent.append(table.qualified)
                continue
            check_readable(catalog, relation)
            match = match_relation(catalog, table, relation)
            planned.append(PgSourceTable(table, relation, match, catalog.location(relation),
                                         registry_select(relation, table, match, trim_scale=_trim_scale(con))))
    if missing_required:
        raise IngestError(catalog.url, f"required module(s) or table(s) missing: {'; '.join(missing_required)}")
    absent_modules = tuple(m for m in wanted if m not in catalog.schemas and m not in _REQUIRED_MODULES)
    return PgPlan(url, catalog, tuple(planned), tuple(absent), absent_modules)


def _trim_scale(con: psycopg.Connection[Any]) -> bool:
    return int(con.info.server_version) >= 130000


def open_source(url: str) -> psycopg.Connection[Any]:
    """The connection an ingest reads through (no statement timeout: a whole table streams).

    Raises:
        StoreError: the server cannot be reached or refuses the login (one line).
        MissingExtraError: psycopg is not installed.
    """
    return pg_connect(url, application_name="clinseek ingest")


def count_rows(con: psycopg.Connection[Any], url: str, st: PgSourceTable) -> int:
    """Rows of the source relation now (to check a resumed store still matches it).

    Raises:
        StoreError: the count fails (connection lost, grant revoked).
    """
    psycopg = psycopg_module()
    try:
        return int(con.execute(f"SELECT count(*) FROM {st.relation.qualified}").fetchall()[0][0])
    except psycopg.Error as err:
        raise pg_error(url, err, f"count the rows of {st.relation.display}") from err


def insert_postgres(
    duck: duckdb.DuckDBPyConnection, target: str, st: PgSourceTable, con: psycopg.Connection[Any], url: str
) -> tuple[int, str]:
    """``INSERT INTO target`` the table's rows streamed from PostgreSQL, sorted as the store keeps them.

    Rows stream as Arrow batches (:func:`~clinseek.store._pgcopy.copy_rows`) into DuckDB, which stores
    them as it stores a CSV's (the same projection: blank text as NULL) and sorts them within its memory
    limit (spilling beyond it). Returns the row count and the sha256 of the
    rows as the server sent them (``COPY ... (FORMAT csv)``, the table's physical order).

    Raises:
        IngestError: a value does not parse as its registry type (names the relation, the column and
            the value).
        StoreError: the server failed or the connection was lost while streaming.
        duckdb.Error: DuckDB failed for another reason (out of memory or disk).
    """
    psycopg = psycopg_module()
    schema = registry_arrow_schema(st.table)
    view = "_clinseek_postgres_rows"
    try:
        with copy_rows(con, st.select, None, schema) as (reader, stream):
            duck.register(view, reader)
            try:
                typed = HeaderMatch(tuple(st.table.column_names), st.table.columns, ())  # the stream has every column
                rows = duck.execute(f"INSERT INTO {target} SELECT {select_sql(st.table, typed)} FROM {view} "
                                    f"ORDER BY {order_sql(st.table)}")
                count = int(rows.fetchall()[0][0])
            except duckdb.Error as err:
                raise _explain(err, stream.error, st, schema, url) from err
            finally:
                duck.unregister(view)
    except psycopg.DataError as err:  # a value the server cannot cast to the registry's type
        raise _cast_error(con, st, err) from err
    except psycopg.Error as err:
        raise pg_error(url, err, f"read {st.relation.display}") from err
    except pa.ArrowInvalid as err:
        raise _conversion_error(err, st, schema) from err
    return count, stream.sha256.hexdigest()


def _cast_error(con: psycopg.Connection[Any], st: PgSourceTable, err: Exception) -> IngestError:
    """The server refused a cast: find the column whose values do not convert (one scan per cast column)."""
    psycopg = psycopg_module()
    problem = str(err).strip().splitlines()[0]
    for name, expr in registry_columns(st.relation, st.table, st.match, trim_scale=_trim_scale(con)):
        if "CAST(" not in expr:
            continue
        try:
            con.execute(f"SELECT count({expr}) FROM {st.relation.qualified}")
        except psycopg.DataError:
            expected = st.table.column(name).type
            return IngestError(st.location, f"a value does not convert to {expected}: {problem}", column=name)
        except psycopg.Error:
            break
    return IngestError(st.location, f"a value does not convert to its registry type: {problem}")


def _explain(
    err: duckdb.Error, source_error: BaseException | None, st: PgSourceTable, schema: pa.Schema, url: str
) -> Exception:
    if source_error is not None:
        psycopg = psycopg_module()
        if isinstance(source_error, psycopg.Error):
            return pg_error(url, source_error, f"read {st.relation.display}")
        return source_error if isinstance(source_error, Exception) else err
    if "CSV conversion error" in str(err) or "In CSV column" in str(err):
        return _conversion_error(err, st, schema)
    return err


def _conversion_error(err: BaseException, st: PgSourceTable, schema: pa.Schema) -> IngestError:
    column, problem = arrow_error_column(err, schema)
    row = re.match(r"Row #(\d+): ", problem)
    problem = re.sub(r"^(Row #\d+: )?CSV conversion error to [^:]+: ", "", problem)
    if row is not None:
        problem += f" (row {int(row.group(1)):,} in the order the server sent them)"
    expected = st.table.column(column).type if column else "its registry type"
    return IngestError(st.location, f"a value does not convert to {expected}: {problem}", column=column)


def check_same_source(recorded_rows: int, st: PgSourceTable, now: int) -> None:
    """Refuse to resume from a relation whose row count changed since its table was ingested.

    Raises:
        StoreError: the counts differ.
    """
    if now != recorded_rows:
        raise StoreError(
            f"{st.table.qualified} in this store holds {recorded_rows:,} rows, but {st.location} has {now:,} now; "
            "ingest into a new --out file"
        )
