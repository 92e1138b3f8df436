"""``clinseek data pg-index``: the indexes that make one patient's reads fast on a mimic-code build.

mimic-code's ``index.sql`` indexes times, items and codes, not ``subject_id``; a live PostgreSQL source
reads every table (and every parent and mask subquery) of one patient with ``subject_id = $1``, which
without an index scans the whole table. Two kinds of B-tree serve those reads (on a partitioned table
they go on its parent, which PostgreSQL creates on every partition):

- ``(subject_id)`` on every patient table;
- ``(subject_id, key)`` where the policy looks a row up by a key for each row of another table (a
  value known when the row it names was stored: ``hosp.emar.emar_id`` for ``emar_detail``,
  ``hosp.poe.poe_id``, ``note.discharge.note_id``, ...), found in the registry's own SQL. PostgreSQL
  runs such a lookup once per row; without this index each one reads all the patient's rows of that
  table (a patient with 1,454 ``emar_detail`` rows: 12 s, 0.2 s with it).

The tables are then analysed so that the planner uses them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import sqlglot
from sqlglot import exp

from ..errors import StoreError
from ..schema import tables
from ._pg import PgCatalog, pg_connect, pg_error, psycopg_module, quote, read_catalog

PG_INDEX_COLUMN = "subject_id"
"""The column every per-patient read filters on."""


@lru_cache(maxsize=1)
def lookup_keys() -> tuple[tuple[str, str], ...]:
    """``(table, column)`` pairs the registry's SQL looks a row up by, for each row of another table.

    Found in every instant the registry declares (``stored_at``, ``ends_at``, reference instants, mask
    instants): a subquery over a store table whose WHERE compares one of its columns with a column of
    the outer row ``t`` (``... FROM hosp.emar e WHERE e.emar_id = t.emar_id``).
    """
    found: set[tuple[str, str]] = set()
    for table in tables():
        exprs = [table.stored_at, table.ends_at, *(e for _, e in table.references), *(m.known_at for m in table.masks)]
        for expr in exprs:
            if expr and "select" in expr.lower():
                found |= _lookups(expr)
    order = {t.qualified: i for i, t in enumerate(tables())}
    return tuple(sorted(found, key=lambda tc: (order.get(tc[0], len(order)), tc[1])))


def _lookups(expr: str) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for select in sqlglot.parse_one(expr, dialect="duckdb").find_all(exp.Select):
        source = select.find(exp.Table)
        where = select.args.get("where")
        if source is None or where is None or not source.db:
            continue
        alias = source.alias or source.name
        for eq in where.find_all(exp.EQ):
            sides = [eq.this, eq.expression]
            mine = [c for c in sides if isinstance(c, exp.Column) and c.table == alias]
            outer = [c for c in sides if isinstance(c, exp.Column) and c.table == "t"]
            if mine and outer and alias != "t":
                out.add((f"{source.db}.{source.name}", mine[0].name))
    return out


@dataclass(frozen=True, slots=True)
class PgIndex:
    """One table's ``subject_id`` index.

    Attributes:
        table: the registry table (``hosp.labevents``).
        relation: the PostgreSQL relation (``mimiciv_hosp.labevents``).
        columns: the indexed columns (``("subject_id",)`` or ``("subject_id", "emar_id")``).
        name: the index clinseek creates (or the existing one that already serves).
        sql: the ``CREATE INDEX`` statement (empty when an index already serves).
        status: ``created``, ``exists`` (an index whose leading columns are these, or for a lookup one
            that starts with its key, is there), or ``planned`` (a dry run).
        seconds: time to create and analyse it (0 unless created).
    """

    table: str
    relation: str
    columns: tuple[str, ...]
    name: str
    sql: str
    status: Literal["created", "exists", "planned"]
    seconds: float = 0.0


_EXISTING_SQL = """
SELECT c.oid::regclass::text, i.indexrelid::regclass::text,
       array(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum ORDER BY k.n)
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_namespace s ON s.oid = c.relnamespace
WHERE s.nspname = ANY(%s)
"""


def pg_index(
    url: str, *, dry_run: bool = False, on_table: Callable[[PgIndex], None] | None = None
) -> list[PgIndex]:
    """Create the per-patient indexes a mimic-code database lacks (see the module's docstring).

    An index counts as there when an existing index starts with its columns (a lookup index also when
    one starts with its key). Each new index is created (``CREATE INDEX IF NOT EXISTS``; it blocks
    writes to the table while it builds, not reads) and its table analysed. Needs a role that owns the
    tables (the one that built the database); the read-only role of episodes cannot.

    Args:
        url: the database (``postgresql://user:password@host:port/db``).
        dry_run: only say what would be created (``status="planned"``).
        on_table: called after each index (progress).

    Returns:
        The ``subject_id`` index of every patient table present, then the lookup indexes, in registry order.

    Raises:
        StoreError: the server cannot be reached, no MIMIC table is there, or the role may not create an
            index (names the table and what is needed).
    """
    psycopg = psycopg_module()
    with pg_connect(url, application_name="clinseek pg-index", read_only=False) as con:
        catalog = read_catalog(con, url, tables())
        if not catalog.relations:
            raise StoreError(f"{catalog.url}: no MIMIC table found (looked in the mimiciv_* and mimic_* schemas); "
                             "is this a database built with mimic-code's buildmimic/postgres scripts?")
        try:
            rows = con.execute(_EXISTING_SQL, [sorted({r.schema for r in catalog.relations.values()})]).fetchall()
        except psycopg.Error as err:
            raise pg_error(url, err, "read the indexes") from err
        existing: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for relation, index, columns in rows:
            existing.setdefault(str(relation), []).append((str(index), tuple(columns)))
        wanted: list[tuple[str, tuple[str, ...]]] = [(t.qualified, (PG_INDEX_COLUMN,)) for t in tables()]
        wanted += [(name, (PG_INDEX_COLUMN, key)) for name, key in lookup_keys()]
        out = []
        for name, columns in wanted:
            relation = catalog.relations.get(name)
            if relation is None or not set(columns) <= {c.name for c in relation.columns}:
                continue
            entry = _index(con, url, catalog, name, columns, existing, dry_run)
            out.append(entry)
            if on_table is not None:
                on_table(entry)
        return out


def _index(
    con: Any, url: str, catalog: PgCatalog, name: str, columns: tuple[str, ...],
    existing: dict[str, list[tuple[str, tuple[str, ...]]]], dry_run: bool,
) -> PgIndex:
    psycopg = psycopg_module()
    relation = catalog.relations[name]
    serves = [columns] + ([columns[1:]] if len(columns) > 1 else [])
    for index, have in existing.get(relation.display, []) + existing.get(relation.qualified, []):
        if any(have[: len(cols)] == cols for cols in serves):
            return PgIndex(name, relation.display, columns, index, "", "exists")
    index = f"{relation.name}_{'_'.join(columns)}_clinseek"[:63]
    sql = (f"CREATE INDEX IF NOT EXISTS {quote(index)} ON {relation.qualified} "
           f"({', '.join(quote(c) for c in columns)})")
    if dry_run:
        return PgIndex(name, relation.display, columns, f"{relation.schema}.{index}", sql, "planned")
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
    return PgIndex(name, relation.display, columns, f"{relation.schema}.{index}", sql, "created",
                   time.perf_counter() - started)
