"""The SQL guard of ``ehr.run_sql_query``: exactly one read-only query over the episode's tables.

Decisions come from sqlglot's parse tree, never from keyword screening (STYLE rule 13). The
guard is the first wall; the sealed episode (no attached store, external access off,
configuration locked, a timer) is the second.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError, UnsupportedError

from .._suggest import did_you_mean
from ..episode import session_names, volatile_names
from ..errors import ToolError
from ._clock import reads_clock
from ._sqlengines import ClinseekDuckDB, keep_meaning, other_engine_forms
from ._sqlhints import DUCKDB_FORMS, parse_error, unanalysable, unfaithful
from ._sqlite_dialect import GuardHook, refuse_sqlite_forms
from ._sqlite_integers import TRANSLATION_ERROR
from ._sqlsize import check_value_builders

Resolver = Callable[[str | None, str], tuple[str, str] | None]
"""Maps (schema or None, table name) to the (schema, table) it names in the episode, or None."""

MAX_SQL_CHARS = 20_000
"""Longest SQL text the guard analyses; longer queries are refused as ``bad_argument``."""

_TABLE_FUNCTIONS_OK = frozenset({"unnest", "range", "generate_series", "json_each", "json_tree"})
_DENY_EXACT = frozenset(
    {
        "glob",
        "getenv",
        "current_setting",
        "query",
        "query_table",
        "sniff_csv",
        "which_secret",
        "sql_auto_complete",
        "checkpoint",
        "force_checkpoint",
        "load_extension",
        "install_extension",
        "set_config",
        "pg_read_file",
        "pg_ls_dir",
    }
)
_DENY_PREFIX = (
    "read_",
    "duckdb_",
    "pragma_",
    "parquet_",
    "sqlite_",
    "postgres_",
    "mysql_",
    "iceberg_",
    "delta_",
    "json_execute",
    "http_",
    "s3_",
)
_DENY_SUFFIX = ("_scan", "_metadata", "_schema")
_CATALOG_SCHEMAS = frozenset({"information_schema", "pg_catalog", "sys", "performance_schema", "mysql"})
"""Schemas that are some engine's catalog (SQL standard, PostgreSQL, SQL Server, MySQL)."""
_CATALOG_PREFIXES = ("sqlite_", "pg_", "duckdb_", "pragma_")
_CATALOG_TABLES = frozenset({
    "all_tables", "user_tables", "dba_tables", "all_tab_columns", "user_tab_columns", "dba_tab_columns",
    "sysobjects", "syscolumns", "systables", "table_info",
})
_CATALOG_STATEMENTS = frozenset({"PRAGMA", "SHOW", "DESCRIBE", "DESC"})


def catalog_hint(db: str | None, name: str) -> str | None:
    """For a table (or table function) of some engine's catalog (``sqlite_master``, ``information_schema.tables``,
    ``pg_catalog.pg_tables``, ``duckdb_tables()``, ``pragma_table_info()``...): the tool that answers what it
    would (``ehr.get_column_names`` for a column catalog, ``ehr.get_table_names`` otherwise); else ``None``."""
    db, name = (db or "").lower(), name.lower()
    if not (db in _CATALOG_SCHEMAS or name.startswith(_CATALOG_PREFIXES) or name in _CATALOG_TABLES):
        return None
    if "column" in name or name in ("pg_attribute", "table_info", "pragma_table_info"):
        return "call ehr.get_column_names (table_name=...) for a table's columns (ehr.get_table_names for the tables)"
    return "call ehr.get_table_names for this episode's tables (ehr.get_column_names for a table's columns)"
_TIME_UNITS = frozenset(
    {"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}
)
_SQLGLOT_VOLATILE = frozenset({"rand"})
"""sqlglot's names of volatile functions whose DuckDB names differ (``random()`` parses as ``Rand``)."""


def _volatile(name: str) -> bool:
    """Whether the function ``name`` may give another value on every call (DuckDB's catalog, :func:`volatile_names`)."""
    return name in _SQLGLOT_VOLATILE or name in volatile_names()
_FORBIDDEN_NODES = tuple(
    getattr(exp, n)
    for n in (
        "Into",
        "Command",
        "Pragma",
        "Set",
        "Create",
        "Insert",
        "Update",
        "Delete",
        "Drop",
        "Alter",
        "Copy",
        "Attach",
        "Detach",
        "Use",
        "Describe",
        "Install",
        "Merge",
        "Summarize",
        "TruncateTable",
        "Export",
        "LoadData",
    )
    if hasattr(exp, n)
)


def function_name(node: exp.Func) -> str:
    """The lower-case SQL name of a function node (``read_csv``, ``getenv``)."""
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def _denied(name: str) -> bool:
    return name in _DENY_EXACT or name.startswith(_DENY_PREFIX) or name.endswith(_DENY_SUFFIX)


@dataclass(frozen=True, slots=True)
class GuardedQuery:
    """A query the guard let through.

    Attributes:
        sql: the DuckDB SQL to run (the checked parse tree, written out; table names qualified).
        tables: the qualified names (``hosp.labevents``) of every episode table the query reads, from the
            same parse tree: the episode loads exactly these before running it.
    """

    sql: str
    tables: frozenset[str]


def guard_sql(
    sql: str,
    resolve: Resolver,
    *,
    available: str,
    prediction_time: dt.datetime | None = None,
    dialect: GuardHook | None = None,
) -> str:
    """Check that ``sql`` is one read-only query over known tables; the DuckDB SQL to run.

    :func:`check_sql`'s ``sql`` (same arguments, same refusals).
    """
    return check_sql(sql, resolve, available=available, prediction_time=prediction_time, dialect=dialect).sql


def check_sql(
    sql: str,
    resolve: Resolver,
    *,
    available: str,
    prediction_time: dt.datetime | None = None,
    dialect: GuardHook | None = None,
) -> GuardedQuery:
    """Check that ``sql`` is one read-only query over known tables; the DuckDB SQL to run and the tables it reads.

    Table names are rewritten to their qualified form (``labevents`` -> ``hosp.labevents``).
    Any failure to parse or analyse the text (sqlglot errors, ``RecursionError`` on deeply
    nested expressions, anything else the analysis raises) is a ``"sql_syntax"`` error, never
    an exception that ends the run.

    Args:
        sql: the model's SQL text (DuckDB dialect), at most :data:`MAX_SQL_CHARS` characters.
        resolve: maps a table reference to its qualified (schema, table) in the episode.
        available: the available table names, quoted in the error for unknown tables.
        prediction_time: the episode's prediction time (naive MIMIC clock), quoted when the
            query asks for the wall clock (``now()``, ``current_date``, ...).
        dialect: called with the DuckDB parse tree (``None`` when DuckDB's grammar rejects the text)
            and the text; returns the statement to check instead (e.g. SQLite translated, see
            :class:`~clinseek.tools._sqlite_dialect.SqliteDialect`) or ``None``. Default: SQLite-only
            constructs are refused, naming their DuckDB form. The returned statement is checked.

    Raises:
        ToolError: ``"bad_argument"`` (longer than :data:`MAX_SQL_CHARS`), ``"sql_syntax"``
            (does not parse or cannot be analysed), ``"one_statement"`` (none or several),
            ``"read_only"`` (not a SELECT/WITH/UNION query, or contains DDL/DML/SET/PRAGMA/
            ATTACH/COPY/INSTALL/INTO), ``"forbidden_function"`` (file, URL, catalog or setting
            readers), ``"clock"`` (every function, macro and value of the installed DuckDB that
            reads the real clock — ``now()``, ``current_timestamp``, ``uuidv7()``, ``ago()``, ... —
            and one-argument ``age()``: :func:`clinseek.episode.clock_names`), ``"too_large"`` (value builders such as
            ``range``/``generate_series``/``repeat``/``lpad`` with sizes over the caps or not
            literal), ``"not_repeatable"`` (a sample without a seed, and every function the installed
            DuckDB marks volatile — ``random()``, ``uuid()``, ``setseed()``, ``nextval()``, ... — or whose value
            without arguments is the session's — ``txid_current()``, ... —
            :func:`clinseek.episode.volatile_names`: the same text must give the same rows), ``"unknown_table"`` (a table not in this episode).
    """
    if len(sql) > MAX_SQL_CHARS:
        raise ToolError(
            "bad_argument", f"the query is {len(sql):,} characters; at most {MAX_SQL_CHARS:,} are accepted"
        )
    try:
        with _quiet_sqlglot():
            return _guard(sql, resolve, available, prediction_time, dialect or refuse_sqlite_forms)
    except ToolError:
        raise
    except RecursionError:
        raise ToolError("sql_syntax", "the query is nested too deeply to analyse; simplify it") from None
    except SqlglotError as err:
        raise ToolError("sql_syntax", parse_error(sql, err)) from None
    except Exception:  # sqlglot failed on a construct: name it (never a Python exception class)
        raise ToolError("sql_syntax", unanalysable(sql)) from None


@contextmanager
def _quiet_sqlglot() -> Iterator[None]:
    """Silence sqlglot's logger (e.g. "Falling back to parsing as a 'Command'") while guarding."""
    logger = logging.getLogger("sqlglot")
    previous = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = previous


def _guard(
    sql: str, resolve: Resolver, available: str, prediction_time: dt.datetime | None, dialect: GuardHook
) -> GuardedQuery:
    try:
        # a comment after the last ';' comes back as a Semicolon "statement" holding only the comment
        parsed = sqlglot.parse(sql, read=ClinseekDuckDB)
        statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    except SqlglotError:
        translated = dialect(None, sql)
        if translated is None:
            raise
        statements = [translated]
    else:
        if len(statements) == 1:
            statements = [dialect(statements[0], sql) or statements[0]]
    if len(statements) != 1:
        raise ToolError("one_statement", f"send exactly one SELECT query (got {len(statements)} statements)")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        first = sql.strip().split(None, 1)[0].upper()
        hint = f"; {catalog_hint(None, 'pg_tables' if first == 'SHOW' else 'table_info')}" if first in _CATALOG_STATEMENTS else ""
        raise ToolError("read_only", f"only read-only queries (SELECT/WITH) run here, not {first[:40]}{hint}")
    query = cast(exp.Expression, tree)
    _check_nodes(query, prediction_time)
    other_engine_forms(query, sql)
    read = _qualify_tables(query, resolve, available)
    # RAISE: a construct sqlglot would write back without part of it (to_char's format) is refused, not run;
    # the tree is ours and done with: no copy (~0.35 ms)
    try:
        text = query.sql(dialect="duckdb", copy=False, unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as err:
        raise ToolError("sql_error", unfaithful(sql, err)) from None
    return GuardedQuery(text, frozenset(read))


def _check_nodes(tree: exp.Expression, prediction_time: dt.datetime | None) -> None:
    for node in tree.walk():
        keep_meaning(node)
        clock = reads_clock(node, function_name(node) if isinstance(node, exp.Func) else None)
        if clock is not None:
            _refuse_clock(clock, prediction_time)
        if isinstance(node, exp.Func):
            check_value_builders(node, function_name(node))
        if isinstance(node, _FORBIDDEN_NODES):
            raise ToolError(
                "read_only", f"{node.key.upper()} is not allowed; only read-only queries run here"
            )
        if isinstance(node, exp.MakeInterval) and any(isinstance(v, exp.Kwarg) for v in node.args.values()):
            # sqlglot reads make_interval(days => 7) with 7 in the years slot: INTERVAL '7 year'
            raise ToolError(
                "sql_error", f"make_interval() with named arguments: {DUCKDB_FORMS['make_interval']}"
            )
        if isinstance(node, exp.TimestampDiff) and isinstance(node.this, exp.Column) and (
            node.this.name.upper() in _TIME_UNITS
        ):  # MySQL's TIMESTAMPDIFF(HOUR, a, b): sqlglot reads HOUR as a column and b as the unit
            unit = node.this.name.lower()
            form = DUCKDB_FORMS["timestampdiff"].replace("HOUR", unit.upper()).replace("'hour'", f"'{unit}'")
            raise ToolError("sql_error", form.replace("whole hours", f"whole {unit}s").replace(" hour ", f" {unit} "))
        if isinstance(node, exp.UnixToTime) and isinstance(scale := node.args.get("scale"), exp.Literal) and (
            scale.is_string
        ):  # PostgreSQL's to_timestamp(text, format): sqlglot reads the format as the epoch's scale
            raise ToolError("sql_error", DUCKDB_FORMS["to_timestamp"])
        if isinstance(node, exp.TableSample) and not node.args.get("seed"):
            raise ToolError(
                "not_repeatable",
                "a sample without a seed draws other rows on every call; give one: "
                "USING SAMPLE 10 PERCENT (bernoulli, 42) or TABLESAMPLE reservoir(20 ROWS) REPEATABLE (42)",
            )
        if isinstance(node, exp.Func) and function_name(node) in session_names():
            raise ToolError(
                "not_repeatable",
                f"{function_name(node)}() reads the database session (its transactions, its catalog), not this "
                "episode's data, and may answer otherwise in another episode: it is not available",
            )
        if isinstance(node, exp.Func) and _volatile(function_name(node)) and not node.meta.get(TRANSLATION_ERROR):
            raise ToolError(
                "not_repeatable",
                f"{function_name(node)}() may give another value (or do something) on every call; the same question "
                "must get the same answer: order by a column (e.g. ORDER BY hash(<key>)) or sample with a seed",
            )
        if isinstance(node, exp.Func) and _denied(function_name(node)):
            hint = catalog_hint(None, function_name(node))
            raise ToolError(
                "forbidden_function",
                f"function {function_name(node)}() is not available: queries may read only this "
                "episode's tables (no files, URLs, settings or catalogs)" + (f"; {hint}" if hint else ""),
            )


def _refuse_clock(what: str, prediction_time: dt.datetime | None) -> None:
    when = f"TIMESTAMP '{prediction_time.isoformat(sep=' ')}'" if prediction_time else "the prediction time"
    raise ToolError(
        "clock",
        f"{what[:60]} reads the real clock, not this patient's time; "
        f"'now' is the prediction time: use {when} instead",
    )


def _ctes_in_scope(node: exp.Expression) -> set[str]:
    """Lower-case names of the CTEs a table reference at ``node`` can mean (the WITH clauses around it)."""
    names: set[str] = set()
    parent = node.parent
    while parent is not None:
        with_ = parent.args.get("with") or parent.args.get("with_")
        if isinstance(with_, exp.With):
            names.update(cte.alias_or_name.lower() for cte in with_.expressions)
        parent = parent.parent
    return names


def _qualify_tables(tree: exp.Expression, resolve: Resolver, available: str) -> set[str]:
    """Qualify every table of the tree in place; the qualified names read (CTEs and table functions aside)."""
    read: set[str] = set()
    for table in list(tree.find_all(exp.Table)):
        if isinstance(table.this, exp.Func):
            name = function_name(table.this)
            if name not in _TABLE_FUNCTIONS_OK:
                raise ToolError(
                    "forbidden_function",
                    f"table function {name}() is not available; allowed: {', '.join(sorted(_TABLE_FUNCTIONS_OK))}",
                )
            continue
        if not isinstance(table.this, exp.Identifier):
            raise ToolError("unknown_table", f"unsupported table reference {table.sql(dialect='duckdb')!r}")
        if table.catalog:
            raise ToolError("unknown_table", f"{table.sql(dialect='duckdb')}: no other database is reachable")
        db, name = table.db or None, table.name
        if db is None and name.lower() in _ctes_in_scope(table):
            continue
        target = resolve(db.lower() if db else None, name.lower())
        if target is None:
            shown = f"{db}.{name}" if db else name
            catalog = catalog_hint(db, name)
            if catalog:
                raise ToolError("unknown_table", f"{shown!r} is a database catalog, not a table of this episode: "
                                                 f"{catalog}; available: {available}")
            hint = did_you_mean(name, [n.rpartition(".")[2] for n in available.split(", ")])
            raise ToolError("unknown_table", f"no table {shown!r} in this episode{hint}; available: {available}")
        table.set("db", exp.to_identifier(target[0]))
        table.set("this", exp.to_identifier(target[1]))
        read.add(f"{target[0]}.{target[1]}")
    return read
