"""A live mimic-code PostgreSQL database as the source of sealed episodes: checked once, then read one
policy query at a time through a pool of read-only connections.

Opening checks everything a run would otherwise find out question by question: the server answers,
the login works, the module schemas and required tables are there, the role may read every table, and
every table has the registry's required columns. Each query is the policy's SQL written for the source
(:class:`~clinseek.store._pgsql.PgRenderer`); its rows come back as Arrow with the registry's types
(``COPY ... TO STDOUT`` parsed by Arrow, the codec ``ingest --postgres`` uses, so a live episode holds
what an episode of the ingested store holds). The model never gets any of this: an episode builder
copies the rows into its sealed DuckDB database.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EpisodeError, StoreError, import_optional
from ..schema import get_table, tables
from ._pg import (
    CONNECT_TIMEOUT_S,
    PgCatalog,
    check_readable,
    match_relation,
    pg_connect,
    pg_error,
    psycopg_module,
    read_catalog,
    redact_url,
    registry_select,
)
from ._pgcopy import copy_rows
from ._pgingest import _REQUIRED_MODULES
from ._pgsql import PgRenderer

if TYPE_CHECKING:
    import psycopg

STATEMENT_TIMEOUT_S = 60.0
"""Default limit of one policy query on the server (one patient's table; ``data pg-index`` keeps it short)."""

POOL_SIZE = 8
"""Default most connections one source holds open (builds of several questions at once share them)."""

_SCALAR = {
    16: pa.bool_(),
    20: pa.int64(),
    21: pa.int16(),
    23: pa.int32(),
    25: pa.string(),
    1042: pa.string(),
    1043: pa.string(),
    700: pa.float64(),
    701: pa.float64(),
    1082: pa.date32(),
    1114: pa.timestamp("us"),
}
"""Arrow types of the PostgreSQL result types a policy query gives (by type OID)."""
_ARRAYS = {1000: pa.bool_(), 1005: pa.int16(), 1007: pa.int32(), 1016: pa.int64(), 1009: pa.string(),
           1015: pa.string(), 1022: pa.float64(), 1182: pa.date32(), 1115: pa.timestamp("us")}


class PgSource:
    """One mimic-code PostgreSQL database, read-only, as a source of policy queries.

    Args:
        url: ``postgresql://user:password@host:port/database`` (a role that may read the ``mimiciv_*``
            schemas suffices; it is never written to).
        pool_size: most connections held open at once (builds beyond it wait for one).
        connect_timeout_s: seconds to wait for a connection.
        statement_timeout_s: seconds the server lets one query run.

    Raises:
        MissingExtraError: psycopg or psycopg_pool is not installed (the ``postgres`` extra).
        StoreError: the server cannot be reached or refuses the login; no MIMIC schema; a required
            module, table or column is missing; the role may not read a table (names the grant).
    """

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE, connect_timeout_s: float = CONNECT_TIMEOUT_S,
                 statement_timeout_s: float = STATEMENT_TIMEOUT_S) -> None:
        self._url = url
        self.location = redact_url(url)
        self._connect_timeout_s = connect_timeout_s
        self._statement_timeout_s = statement_timeout_s
        with pg_connect(url, connect_timeout_s=connect_timeout_s, application_name="clinseek") as con:
            self.catalog = read_catalog(con, url, tables())
            trim_scale = int(con.info.server_version) >= 130000
        self.present = _check(self.catalog)
        selects = {}
        for name in self.present:
            table = get_table(name)
            relation = self.catalog.relations[name]
            selects[name] = registry_select(relation, table, match_relation(self.catalog, table, relation),
                                            trim_scale=trim_scale)
        self.renderer = PgRenderer(selects)
        self._described: dict[str, list[tuple[str, int]]] = {}
        self._lock = threading.Lock()
        pool_module = import_optional("psycopg_pool", "a PostgreSQL source", "postgres")
        options = (f"-c TimeZone=UTC -c DateStyle=ISO,YMD -c extra_float_digits=3 -c default_transaction_read_only=on "
                   "-c jit=off "  # compiling a per-patient query costs more than running it
                   f"-c statement_timeout={max(1, int(statement_timeout_s * 1000))}")
        self._pool = pool_module.ConnectionPool(
            url, min_size=0, max_size=max(1, pool_size), open=True, timeout=connect_timeout_s + 5,
            kwargs={"autocommit": True, "connect_timeout": max(1, round(connect_timeout_s)),
                    "application_name": "clinseek episodes", "options": options},
        )

    def arrow(self, sql: str, params: Sequence[Any], *, what: str) -> pa.Table:
        """Run one policy query (DuckDB dialect, ``$n`` parameters); its rows as Arrow (registry types).

        Raises:
            StoreError: the server is unreachable or went away, cancelled the query (statement timeout),
                or refuses a read it allowed at open (a revoked grant, a dropped table).
            EpisodeError: the server refused the query itself (``what`` failed).
        """
        shape, rendered = self.renderer.render(sql)
        bound = {str(i + 1): v for i, v in enumerate(params)}
        with self._connection(what) as con:
            try:
                columns = self._describe(con, shape, rendered, bound)
                if all(oid in _SCALAR for _, oid in columns):
                    schema = pa.schema([pa.field(name, _SCALAR[oid]) for name, oid in columns])
                    with copy_rows(con, rendered, bound, schema) as (reader, _):
                        return as_stored(reader.read_all())
                with con.cursor() as cur:
                    rows = cur.execute(rendered, bound).fetchall()
                return as_stored(_from_rows(columns, rows))
            except psycopg_module().Error as err:
                raise self._error(err, what) from err

    def tuples(self, sql: str, params: Sequence[Any], *, what: str) -> list[tuple[Any, ...]]:
        """As :meth:`arrow`, the rows as tuples."""
        _, rendered = self.renderer.render(sql)
        bound = {str(i + 1): v for i, v in enumerate(params)}
        with self._connection(what) as con:
            try:
                with con.cursor() as cur:
                    return cur.execute(rendered, bound).fetchall()
            except psycopg_module().Error as err:
                raise self._error(err, what) from err

    def close(self) -> None:
        """Close every pooled connection. Idempotent."""
        self._pool.close()

    def _describe(
        self, con: psycopg.Connection[Any], shape: str, rendered: str, bound: dict[str, Any]
    ) -> list[tuple[str, int]]:
        """Result column names and type OIDs (the query planned, not run: ``LIMIT 0``), kept per query shape."""
        with self._lock:
            found = self._described.get(shape)
        if found is not None:
            return found
        with con.cursor() as cur:
            cur.execute(f"SELECT * FROM ({rendered}) AS _clinseek_describe LIMIT 0", bound)
            columns = [(d.name, int(d.type_code)) for d in cur.description or []]
        with self._lock:
            if len(self._described) >= 1024:
                self._described.clear()
            self._described[shape] = columns
        return columns

    @contextmanager
    def _connection(self, what: str) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for one query (a broken one is dropped by the pool when it comes back)."""
        pool_module = import_optional("psycopg_pool", "a PostgreSQL source", "postgres")
        try:
            con = self._pool.getconn()
        except pool_module.PoolTimeout as err:
            raise self._unreachable(what) from err
        try:
            yield con
        finally:
            self._pool.putconn(con)

    def _unreachable(self, what: str) -> StoreError:
        """Why no connection came: a direct attempt gives the server's or libpq's reason."""
        try:
            pg_connect(self._url, connect_timeout_s=self._connect_timeout_s).close()
        except StoreError as err:
            return StoreError(f"{err} (while trying to {what})")
        return StoreError(f"{self.location}: cannot {what}: no connection free within "
                          f"{self._connect_timeout_s + 5:g} s (pool of {self._pool.max_size}); fewer builds at once?")

    def _error(self, err: BaseException, what: str) -> Exception:
        psycopg = psycopg_module()
        errors = psycopg.errors
        if isinstance(err, errors.InsufficientPrivilege):
            return StoreError(f"{self.location}: cannot {what}: {str(err).strip().splitlines()[0]} "
                              f"(GRANT SELECT ON ALL TABLES IN SCHEMA ... TO {self.catalog.role})")
        if isinstance(err, errors.UndefinedTable | errors.UndefinedColumn | errors.InvalidSchemaName):
            return StoreError(f"{self.location}: cannot {what}: {str(err).strip().splitlines()[0]} "
                              "(the database changed since the source was opened)")
        if isinstance(err, errors.QueryCanceled):
            return StoreError(f"{self.location}: cannot {what}: the server cancelled the query after "
                              f"{self._statement_timeout_s:g} s (statement timeout; has 'clinseek data pg-index' "
                              "indexed subject_id?)")
        if isinstance(err, psycopg.OperationalError):
            return pg_error(self._url, err, what)
        return EpisodeError(f"{self.location}: cannot {what}: {str(err).strip().splitlines()[0]}")


def _check(catalog: PgCatalog) -> frozenset[str]:
    """The registry tables the source holds, after the checks of :class:`PgSource`."""
    if not catalog.relations:
        raise StoreError(f"{catalog.url}: no MIMIC table found (looked in the mimiciv_* and mimic_* schemas); "
                         "is this a database built with mimic-code's buildmimic/postgres scripts?")
    missing = [f"{m} (schema {catalog.looked_for(m)})" for m in _REQUIRED_MODULES if m not in catalog.schemas]
    missing += [f"{t.qualified} ({catalog.schemas[t.module]}.{t.name})" for t in tables()
                if t.required and t.module in catalog.schemas and t.qualified not in catalog.relations]
    if missing:
        raise StoreError(f"{catalog.url}: required module(s) or table(s) missing: {'; '.join(missing)}")
    for relation in catalog.relations.values():
        check_readable(catalog, relation)
    return frozenset(catalog.relations)


def as_stored(data: pa.Table) -> pa.Table:
    """Rows as a store holds them: empty or all-space text NULL (as ingest stores it), ``subject_id`` INTEGER."""
    for i, field in enumerate(data.schema):
        column = data.column(i)
        if pa.types.is_string(field.type):
            blank = pc.equal(pc.utf8_trim(column, characters=" "), "")
            if pc.any(blank).as_py():
                data = data.set_column(i, field, pc.if_else(blank, pa.scalar(None, pa.string()), column))
        elif field.name == "subject_id" and pa.types.is_integer(field.type) and field.type != pa.int32():
            data = data.set_column(i, pa.field("subject_id", pa.int32()), column.cast(pa.int32()))
    return data


def _from_rows(columns: list[tuple[str, int]], rows: list[tuple[Any, ...]]) -> pa.Table:
    """Rows fetched as Python values, as Arrow typed from their PostgreSQL types (arrays as lists)."""
    data = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    arrays = {}
    for (name, oid), values in zip(columns, data, strict=True):
        kind = _SCALAR.get(oid) or (pa.list_(_ARRAYS[oid]) if oid in _ARRAYS else None)
        arrays[name] = pa.array(list(values), type=kind)
    return pa.table(arrays)
