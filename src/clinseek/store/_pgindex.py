"""``clinseek data pg-index``: the indexes that make one patient's reads fast on a mimic-code build.

mimic-code's ``index.sql`` indexes times, items and codes, not ``subject_id``; a live PostgreSQL source
reads every table (and every parent and mask subquery) of one patient with ``subject_id = $1``, which
without an index scans the whole table. One B-tree on ``subject_id`` per patient table (on a
partitioned table: on its parent, which PostgreSQL creates on every partition) turns each read into
an index scan; the tables are then analysed so that the planner uses them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import StoreError
from ..schema import tables
from ._pg import PgCatalog, pg_connect, pg_error, psycopg_module, quote, read_catalog

PG_INDEX_COLUMN = "subject_id"
"""The column every per-patient read filters on."""


@dataclass(frozen=True, slots=True)
class PgIndex:
    """One table's ``subject_id`` index.

    Attributes:
        table: the registry table (``hosp.labevents``).
        relation: the PostgreSQL relation (``mimiciv_hosp.labevents``).
        name: the index clinseek creates (or the existing one that already serves).
        sql: the ``CREATE INDEX`` statement (empty when an index already serves).
        status: ``created``, ``exists`` (an index whose first column is ``subject_id`` is there), or
            ``planned`` (a dry run).
        seconds: time to create and analyse it (0 unless created).
    """

    table: str
    relation: str
    name: str
    sql: str
    status: Literal["created", "exists", "planned"]
    seconds: float = 0.0


_EXISTING_SQL = """
SELECT c.oid::regclass::text, i.indexrelid::regclass::text
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
WHERE a.attname = %s
"""


def pg_index(
    url: str, *, dry_run: bool = False, on_table: Callable[[PgIndex], None] | None = None
) -> list[PgIndex]:
    """Create a ``subject_id`` index on every patient table of a mimic-code database that lacks one.

    A table counts as indexed when any index's first column is ``subject_id``. Each new index is
    created (``CREATE INDEX IF NOT EXISTS``; it blocks writes to the table while it builds, not reads)
    and its table analysed. Needs a role that owns the tables (the one that built the database);
    the read-only role of episodes cannot.

    Args:
        url: the database (``postgresql://user:password@host:port/db``).
        dry_run: only say what would be created (``status="planned"``).
        on_table: called after each table (progress).

    Returns:
        One entry per patient table present, in registry order.

    Raises:
        StoreError: the server cannot be reached, no MIMIC schema is there, or the role may not create
            an index (names the table and what is needed).
    """
    psycopg = psycopg_module()
    with pg_connect(url, application_name="clinseek pg-index", read_only=False) as con:
        catalog = read_catalog(con, url, tables())
        if not catalog.relations:
            raise StoreError(f"{catalog.url}: no MIMIC table found (looked in the mimiciv_* and mimic_* schemas); "
                             "is this a database built with mimic-code's buildmimic/postgres scripts?")
        try:
            existing = dict(con.execute(_EXISTING_SQL, [PG_INDEX_COLUMN]).fetchall())
        except psycopg.Error as err:
            raise pg_error(url, err, "read the indexes") from err
        out = []
        for table in tables():
            relation = catalog.relations.get(table.qualified)
            if relation is None or PG_INDEX_COLUMN not in {c.name for c in relation.columns}:
                continue
            entry = _index(con, url, catalog, table.qualified, existing, dry_run)
            out.append(entry)
            if on_table is not None:
                on_table(entry)
        return out


def _index(
    con: Any, url: str, catalog: PgCatalog, name: str, existing: dict[str, str], dry_run: bool
) -> PgIndex:
    psycopg = psycopg_module()
    relation = catalog.relations[name]
    found = existing.get(relation.display) or existing.get(relation.qualified)
    if found is not None:
        return PgIndex(name, relation.display, found, "", "exists")
    index = f"{relation.name}_subject_id_clinseek"[:63]
    sql = f"CREATE INDEX IF NOT EXISTS {quote(index)} ON {relation.qualified} ({quote(PG_INDEX_COLUMN)})"
    if dry_run:
        return PgIndex(name, relation.display, f"{relation.schema}.{index}", sql, "planned")
    started = time.perf_counter()
    try:
        con.execute(sql)
        con.execute(f"ANALYZE {relation.qualified}")
    except psycopg.errors.InsufficientPrivilege as err:
        raise StoreError(
            f"{catalog.location(relation)}: role {catalog.role!r} may not create an index on {relation.display} "
            f"({str(err).strip().splitlines()[0]}); run pg-index as the role that owns the MIMIC tables"
        ) from err
    except psycopg.Error as err:
        raise pg_error(url, err, f"index {relation.display}") from err
    return PgIndex(name, relation.display, f"{relation.schema}.{index}", sql, "created",
                   time.perf_counter() - started)
