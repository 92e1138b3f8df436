"""The policy's SQL (DuckDB dialect) written for a mimic-code PostgreSQL database.

The temporal policy generates DuckDB SQL over the store's tables (``hosp.labevents``, registry column
names and types). :class:`PgRenderer` writes the same query for PostgreSQL with sqlglot, and changes
only what the source needs:

- every registry table becomes its relation read as the registry types it (:func:`registry_select`:
  ``(SELECT ... FROM "mimiciv_hosp"."labevents") AS t``), so every comparison, mask and value is
  computed on what ingest would store;
- text in ``ORDER BY`` sorts by bytes (``COLLATE "C"``), as DuckDB sorts it, whatever the database's collation;
- ``QUALIFY`` (which PostgreSQL lacks) becomes a boolean column of the same query, filtered by an outer
  query (the window functions see exactly the rows they saw before);
- column names the registry spells with capitals (``StudyDate``) are quoted as spelled;
- ``make_timestamp`` gets the integer arguments PostgreSQL's takes;
- DuckDB's ``$n`` parameters become psycopg's ``%(n)s`` (and a literal ``%`` becomes ``%%``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from functools import lru_cache

import sqlglot
from sqlglot import exp

from ..schema import tables

_TOKEN = "__clinseek_relation_{}__"
_IDS = "__clinseek_ids_{}__"
_ID_LIST = re.compile(r"\bIN \((-?\d+(?:, -?\d+)*)\)")
"""An inlined list of ids (the visible encounters the builder passes): left out of the text sqlglot renders,
so that one rendering serves every patient."""
_KEEP = "_clinseek_keep"
_QUALIFIED = "_clinseek_q"


@lru_cache(maxsize=1)
def _text_columns() -> frozenset[str]:
    """Column names that are VARCHAR in every registry table that has them (ordered byte-wise, as DuckDB does)."""
    types: dict[str, set[str]] = {}
    for table in tables():
        for col in table.columns:
            types.setdefault(col.name, set()).add(col.type)
    return frozenset(name for name, found in types.items() if found == {"VARCHAR"})


@lru_cache(maxsize=1)
def _spellings() -> dict[str, str]:
    """Registry column names written with capitals, by their lower case (``studydate`` -> ``StudyDate``)."""
    return {c.name.lower(): c.name for t in tables() for c in t.columns if c.name != c.name.lower()}


class PgRenderer:
    """Writes policy SQL for one PostgreSQL source.

    Args:
        selects: registry table (``hosp.labevents``) to the PostgreSQL query reading it as the registry's
            columns (:func:`~clinseek.store.registry_select`).
    """

    def __init__(self, selects: Mapping[str, str]) -> None:
        self._selects = dict(selects)
        self._tokens = {name: _TOKEN.format(i) for i, name in enumerate(sorted(self._selects))}
        self._lock = threading.Lock()
        self._cache: dict[str, str] = {}

    def render(self, sql: str) -> tuple[str, str]:
        """``sql`` (DuckDB dialect, ``$n`` parameters, registry table names) for this source (``%(n)s``).

        Returns:
            ``(shape, text)``: the text to run, and its shape: the same text with inlined id lists left
            out (one per policy query form, whatever the patient; a key for caches).

        Raises:
            KeyError: ``sql`` reads a registry table the source does not hold (the policy only names
                tables of its ``present`` set, so this is a bug).
            sqlglot.errors.ParseError: ``sql`` is not DuckDB SQL.
        """
        lists: list[str] = []

        def hole(found: re.Match[str]) -> str:
            lists.append(found.group(1))
            return f"IN ({_IDS.format(len(lists) - 1)})"

        shaped = _ID_LIST.sub(hole, sql)
        with self._lock:
            shape = self._cache.get(shaped)
        if shape is None:
            shape = self._render(shaped)
            with self._lock:
                if len(self._cache) >= 512:
                    self._cache.clear()
                self._cache[shaped] = shape
        text = shape
        for i, ids in enumerate(lists):
            text = text.replace(_IDS.format(i), ids)
        return shape, text

    def _render(self, sql: str) -> str:
        tree = sqlglot.parse_one(sql, dialect="duckdb")
        used: dict[str, str] = {}
        for node in list(tree.find_all(exp.Table)):
            if not node.db:
                continue  # a CTE or subquery alias, not a store table
            name = f"{node.db}.{node.name}".lower()
            token = self._tokens[name] if name in self._selects else None
            if token is None:
                raise KeyError(f"{name} is not a table of this PostgreSQL source")
            used[token] = self._selects[name]
            alias = node.alias or node.name
            node.replace(exp.Table(this=exp.to_identifier(token), alias=exp.TableAlias(this=exp.to_identifier(alias))))
        for ident in tree.find_all(exp.Identifier):
            spelled = _spellings().get(ident.name.lower())
            if spelled is not None and not ident.quoted:
                ident.set("this", spelled)
                ident.set("quoted", True)
        for parts in list(tree.find_all(exp.TimestampFromParts)):
            for arg in ("year", "month", "day", "hour", "min"):
                if parts.args.get(arg) is not None:
                    parts.set(arg, exp.cast(parts.args[arg], "INT"))
            if parts.args.get("sec") is not None:
                parts.set("sec", exp.cast(parts.args["sec"], "DOUBLE"))
        for ordered in list(tree.find_all(exp.Ordered)):  # text sorts by bytes, as in DuckDB, whatever the collation
            term = ordered.this
            if isinstance(term, exp.Column) and term.name in _text_columns():
                ordered.set("this", exp.Collate(this=term.copy(), expression=exp.Identifier(this="C", quoted=True)))
        for i, sub in enumerate(tree.find_all(exp.Subquery)):
            if not sub.alias and isinstance(sub.parent, exp.From | exp.Join):
                sub.set("alias", exp.TableAlias(this=exp.to_identifier(f"_clinseek_s{i}")))  # PostgreSQL < 16 needs one
        tree = tree.transform(_unqualify)
        text = tree.sql(dialect="postgres")
        text = re.sub(r"%(?!\(\d+\)s)", "%%", text)  # psycopg reads every other % as a placeholder
        for token, select in used.items():
            text = text.replace(token, f"({select.replace('%', '%%')})")
        return text


def _unqualify(node: exp.Expression) -> exp.Expression:
    """``SELECT a, b FROM ... QUALIFY c`` -> ``SELECT a, b FROM (SELECT a, b, c AS keep FROM ...) WHERE keep``."""
    if not isinstance(node, exp.Select) or node.args.get("qualify") is None:
        return node
    select = node.copy()
    condition = select.args["qualify"].this
    select.set("qualify", None)
    names = []
    for i, projection in enumerate(select.expressions):
        name = projection.alias_or_name if isinstance(projection, exp.Alias | exp.Column) else ""
        if not name or name == "*":
            name = f"_c{i}"
            projection.replace(exp.alias_(projection.copy(), name, quoted=True))
        names.append(name)
    inner = select.copy()
    inner.select(exp.alias_(condition, _KEEP), copy=False)
    outer = exp.select(*(exp.column(n, table=_QUALIFIED, quoted=True) for n in names)).from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(_QUALIFIED)))
    ).where(exp.column(_KEEP, table=_QUALIFIED))
    for name, projection in zip(names, outer.expressions, strict=True):
        projection.replace(exp.alias_(projection.copy(), name, quoted=True))
    return outer
