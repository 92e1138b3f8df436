"""PostgreSQL as a MIMIC source: where a mimic-code build keeps each module, connections with one clear
error each, the catalog, and each table read as the registry types it.

MIT-LCP/mimic-code's ``buildmimic/postgres`` scripts keep each MIMIC module in its own schema
(:data:`PG_SCHEMAS`, the one place clinseek maps module names to schema names), with the release's table
and column names and PostgreSQL types of their own (``CHAR(7)`` codes, ``TIMESTAMP(0)`` dates,
``REAL`` and ``NUMERIC`` amounts). :func:`registry_select` reads a table with the registry's columns
and the values ingest would store from the release CSV, so every reader (``ingest --postgres``, the
live episode source) sees the same rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit, urlunsplit

from ..errors import IngestError, StoreError, import_optional
from ..schema import Column, Module, Table
from ._sources import HeaderMatch, match_header

if TYPE_CHECKING:
    import psycopg

PG_SCHEMAS: dict[Module, tuple[str, ...]] = {
    "hosp": ("mimiciv_hosp", "mimic_hosp"),
    "icu": ("mimiciv_icu", "mimic_icu"),
    "ed": ("mimiciv_ed", "mimic_ed"),
    "note": ("mimiciv_note", "mimic_note"),
    "cxr": ("mimiciv_cxr", "mimic_cxr"),
}
"""Where a PostgreSQL build keeps each registry module, in order of preference: mimic-code's current
names (``mimiciv_hosp``, ...), then its older ones (``mimic_hosp``, ...). MIMIC-CXR has no mimic-code
PostgreSQL build; its tables (``metadata``, ``reports``, ...) are looked for in ``mimiciv_cxr``. Table
names are the registry's (``mimiciv_hosp.labevents``); a partitioned table is read through its parent."""

URL_SCHEMES = ("postgresql://", "postgres://")
"""What a PostgreSQL URL starts with (libpq's connection URIs)."""

CONNECT_TIMEOUT_S = 10
"""Seconds to wait for a connection before giving up (libpq ``connect_timeout``)."""

_PG_TYPE = {
    "SMALLINT": "smallint",
    "INTEGER": "integer",
    "BIGINT": "bigint",
    "DOUBLE": "double precision",
    "VARCHAR": "text",
    "TIMESTAMP": "timestamp",
    "DATE": "date",
    "BOOLEAN": "boolean",
}
_INTEGERS = ("smallint", "integer", "bigint")
_STRINGS = ("text", "character varying", "character", "bpchar", "name")


def is_postgres_url(value: object) -> bool:
    """Whether ``value`` (a string or path as given on a command line) is a PostgreSQL URL."""
    return isinstance(value, str) and value.startswith(URL_SCHEMES)


def redact_url(url: str) -> str:
    """``url`` without its password (in the user part or a ``password=`` parameter): safe to print and record."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"(//[^:/@]*):[^@]*@", r"\1@", url)
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        netloc = f"{user.split(':', 1)[0]}@{host}"
    query = "&".join(p for p in parts.query.split("&") if p and not p.lower().startswith("password="))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def psycopg_module() -> ModuleType:
    """``psycopg``, or a :class:`~clinseek.errors.MissingExtraError` naming the ``postgres`` extra."""
    return import_optional("psycopg", "a PostgreSQL source", "postgres")


def _first_line(err: BaseException) -> str:
    """The server's or libpq's reason, on one line, without what the URL already says (host and port)."""
    text = str(err).strip().removeprefix("connection failed: ")
    line = next((line.strip() for line in text.splitlines() if line.strip()), type(err).__name__)
    line = re.sub(r'connection to server (at|on socket) "[^"]*"(, port \d+)? failed: ', "", line)
    line = re.sub(r"^(FATAL|ERROR):\s+", "", line)
    return re.sub(r"\s+", " ", line)


def pg_error(url: str, err: BaseException, doing: str = "") -> StoreError:
    """One line for a PostgreSQL failure: the server (without password), what was being done, the reason."""
    sqlstate = getattr(err, "sqlstate", None) or ""
    reason = _first_line(err)
    hint = ""
    if "password authentication failed" in reason or sqlstate == "28P01":
        hint = "; check the user and password in the URL (or PGPASSWORD / ~/.pgpass)"
    elif "does not exist" in reason and "database" in reason:
        hint = "; check the database name at the end of the URL"
    elif "Connection refused" in reason or "timeout expired" in reason or "could not translate host" in reason \
            or "failed to resolve host" in reason:
        hint = "; is the server running and reachable at that host and port?"
    elif sqlstate in ("57P01", "57P02", "57P03", "08006", "08003", "08000") or "connection is closed" in reason \
            or "server closed the connection" in reason or "consuming input failed" in reason:
        reason = f"the connection to the server was lost ({reason})"
    elif sqlstate == "57014":
        reason = f"the server cancelled the query ({reason}: statement timeout)"
    what = f"cannot {doing}: " if doing else ""
    return StoreError(f"{redact_url(url)}: {what}{reason}{hint}")


def pg_connect(
    url: str,
    *,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    statement_timeout_s: float | None = None,
    application_name: str = "clinseek",
    read_only: bool = True,
) -> psycopg.Connection[Any]:
    """An autocommit connection to ``url`` with the session settings every reader relies on.

    ``TimeZone`` UTC, ISO dates and ``extra_float_digits = 3`` (floats printed so that they read back
    exactly), ``synchronize_seqscans`` off (a whole-table read returns rows in the table's order), and
    ``default_transaction_read_only`` (unless ``read_only`` is false: ``pg-index`` creates indexes).
    ``statement_timeout_s``: the server cancels longer statements.

    Raises:
        MissingExtraError: psycopg is not installed (the ``postgres`` extra).
        StoreError: the URL is malformed, the server cannot be reached, authentication fails, or the
            database does not exist (one line, the password never shown).
    """
    pg = psycopg_module()
    timeout_ms = 0 if statement_timeout_s is None else max(1, int(statement_timeout_s * 1000))
    options = (f"-c TimeZone=UTC -c DateStyle=ISO,YMD -c extra_float_digits=3 -c synchronize_seqscans=off "
               f"-c default_transaction_read_only={'on' if read_only else 'off'} -c statement_timeout={timeout_ms}")
    try:
        con = pg.connect(url, autocommit=True, connect_timeout=max(1, round(connect_timeout_s)),
                         application_name=application_name, options=options)
    except pg.ProgrammingError as err:  # libpq could not parse the URL
        raise StoreError(f"{redact_url(url)}: not a PostgreSQL URL libpq accepts ({_first_line(err)}); "
                         "expected postgresql://user:password@host:port/database") from err
    except pg.Error as err:
        raise pg_error(url, err, "connect") from err
    return cast("psycopg.Connection[Any]", con)


@dataclass(frozen=True, slots=True)
class PgColumn:
    """A column of a PostgreSQL relation: its name and type (``format_type``: ``character(7)``, ...)."""

    name: str
    type: str

    @property
    def base_type(self) -> str:
        """The type without its modifier (``character(7)`` -> ``character``)."""
        return re.sub(r"\(.*\)", "", self.type).replace(" without time zone", "").strip()


@dataclass(frozen=True, slots=True)
class PgRelation:
    """A table, view or partitioned table of the source database.

    Attributes:
        schema: its schema (``mimiciv_hosp``).
        name: its name (``labevents``).
        columns: in column order.
        readable: the connected role holds ``SELECT`` on it.
        schema_usable: the connected role holds ``USAGE`` on its schema.
    """

    schema: str
    name: str
    columns: tuple[PgColumn, ...]
    readable: bool
    schema_usable: bool

    @property
    def qualified(self) -> str:
        """``schema.name``, quoted for SQL."""
        return f"{quote(self.schema)}.{quote(self.name)}"

    @property
    def display(self) -> str:
        """``schema.name`` for messages."""
        return f"{self.schema}.{self.name}"


@dataclass(frozen=True, slots=True)
class PgCatalog:
    """What a source database holds of the registry.

    Attributes:
        url: the URL without its password.
        role: the connected role.
        schemas: for each module whose schema exists, that schema (:data:`PG_SCHEMAS`).
        relations: registry table (qualified, ``hosp.labevents``) to its relation, for the tables found.
    """

    url: str
    role: str
    schemas: Mapping[str, str]
    relations: Mapping[str, PgRelation]

    def location(self, relation: PgRelation) -> str:
        """Where a relation is, for messages and provenance: ``postgresql://user@host:port/db#schema.table``."""
        return f"{self.url}#{relation.display}"

    def looked_for(self, module: str) -> str:
        """The schema names looked for a module, for messages (``mimiciv_hosp or mimic_hosp``)."""
        return " or ".join(PG_SCHEMAS[module])  # type: ignore[index]


def quote(name: str) -> str:
    """A PostgreSQL-quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


_CATALOG_SQL = """
SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
       has_table_privilege(c.oid, 'SELECT'), has_schema_privilege(n.oid, 'USAGE')
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = ANY(%s) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
ORDER BY n.nspname, c.relname, a.attnum
"""


def read_catalog(con: psycopg.Connection[Any], url: str, registry: Iterable[Table]) -> PgCatalog:
    """The registry tables the database holds, from ``pg_catalog`` (seen whatever the role may read).

    Raises:
        StoreError: the catalog cannot be read (the connection failed).
    """
    wanted = sorted({s for names in PG_SCHEMAS.values() for s in names})
    psycopg = psycopg_module()
    try:
        rows = con.execute(_CATALOG_SQL, [wanted]).fetchall()
        role = str(con.execute("SELECT current_user").fetchall()[0][0])
    except psycopg.Error as err:
        raise pg_error(url, err, "read the catalog") from err
    found: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for row in rows:
        found.setdefault((row[0], row[1]), []).append(row)
    present = {schema for schema, _ in found}
    schemas: dict[str, str] = {m: next(s for s in names if s in present) for m, names in PG_SCHEMAS.items()
               if any(s in present for s in names)}
    relations: dict[str, PgRelation] = {}
    for table in registry:
        schema = schemas.get(table.module)
        cols = found.get((schema, table.name)) if schema else None
        if cols is None:
            continue
        relations[table.qualified] = PgRelation(
            schema=str(schema), name=table.name, columns=tuple(PgColumn(str(r[2]), str(r[3])) for r in cols),
            readable=bool(cols[0][4]), schema_usable=bool(cols[0][5]),
        )
    return PgCatalog(url=redact_url(url), role=role, schemas=schemas, relations=relations)


def check_readable(catalog: PgCatalog, relation: PgRelation) -> None:
    """Refuse a relation the connected role may not read, naming the grant it lacks.

    Raises:
        StoreError: no ``USAGE`` on its schema or no ``SELECT`` on it.
    """
    if not relation.schema_usable:
        raise StoreError(f"{catalog.location(relation)}: role {catalog.role!r} may not use schema {relation.schema} "
                         f"(GRANT USAGE ON SCHEMA {relation.schema} TO {catalog.role})")
    if not relation.readable:
        raise StoreError(f"{catalog.location(relation)}: role {catalog.role!r} may not read {relation.display} "
                         f"(GRANT SELECT ON ALL TABLES IN SCHEMA {relation.schema} TO {catalog.role})")


def match_relation(catalog: PgCatalog, table: Table, relation: PgRelation) -> HeaderMatch:
    """Line the relation's columns up with the registry's, as a CSV header is (names case-insensitive,
    release aliases accepted, optional columns may be absent).

    Raises:
        IngestError: a required column is missing, or two columns map to the same registry column
            (names the relation and the column).
    """
    where = Path(catalog.location(relation))
    try:
        return match_header(where, table, tuple(c.name for c in relation.columns))
    except IngestError as err:
        raise IngestError(catalog.location(relation), err.problem.replace("the header has", "the table has"),
                          column=err.column) from None


def registry_select(relation: PgRelation, table: Table, match: HeaderMatch, *, trim_scale: bool = True) -> str:
    """``SELECT`` over ``relation`` giving the registry's columns in registry order, valued as ingest stores them.

    Each column holds what ingest would store from the release CSV: text as written (``CHAR(n)``
    padding dropped, ``NUMERIC`` without trailing zeros), ``REAL`` values as the decimals they print
    as, dates and times of the registry's type, absent optional columns NULL. Two things are left to
    the reader, so that an index on a column still serves a filter or join on it: empty or all-space
    text (ingest stores NULL), and ``subject_id`` of another integer type (read as it is).

    Args:
        relation: the source relation.
        table: its registry table.
        match: the relation's columns lined up with the registry's (:func:`match_relation`).
        trim_scale: use ``trim_scale`` on ``NUMERIC`` text (PostgreSQL 13 and later).
    """
    items = [f"{expr} AS {quote(name)}" for name, expr in registry_columns(relation, table, match, trim_scale=trim_scale)]
    return f"SELECT {', '.join(items)} FROM {relation.qualified}"


def registry_columns(
    relation: PgRelation, table: Table, match: HeaderMatch, *, trim_scale: bool = True
) -> list[tuple[str, str]]:
    """``(registry column, SQL expression over the relation)`` for every registry column, in registry order
    (what :func:`registry_select` selects)."""
    by_name = {c.name: c for c in relation.columns}
    source = {col.name: by_name[field] for field, col in zip(match.header, match.columns, strict=True) if col}
    return [(col.name, _value(col, source.get(col.name), trim_scale)) for col in table.columns]


def _value(col: Column, src: PgColumn | None, trim_scale: bool) -> str:
    target = _PG_TYPE[col.type]
    if src is None:
        return f"CAST(NULL AS {target})"
    ref = quote(src.name)
    base = src.base_type
    if col.type == "VARCHAR":  # the text as written; blank text becomes NULL where the rows arrive (an index still serves)
        return f"CAST({'trim_scale(' + ref + ')' if base == 'numeric' and trim_scale else ref} AS text)"
    if base in _STRINGS:  # a number or time kept as text: blank is NULL, the rest must parse
        return f"CAST(NULLIF(btrim(CAST({ref} AS text)), '') AS {target})"
    if col.type in ("SMALLINT", "INTEGER", "BIGINT"):
        if base == target or (base in _INTEGERS and col.name == "subject_id"):
            return ref  # subject_id as it is: every per-patient read filters on it (readers take any integer width)
        if base in _INTEGERS:
            return f"CAST({ref} AS {target})"
        integral = f"trim_scale({ref})" if base == "numeric" and trim_scale else ref
        return f"CAST(CAST({integral} AS text) AS {target})"  # 1.5 is refused, not rounded
    if col.type == "DOUBLE" and base == "real":
        return f"CAST(CAST({ref} AS text) AS double precision)"  # the decimal it prints as, not its binary widening
    if col.type == "TIMESTAMP" and base == "timestamp":
        return ref
    return ref if base == target else f"CAST({ref} AS {target})"
