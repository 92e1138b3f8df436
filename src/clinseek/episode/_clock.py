"""Which functions of the installed DuckDB read the wall clock, derived from its own catalog.

An episode's cutoff is the question's ``prediction_time``; a function whose result depends on
the real current time (or on the process start, or a time-based random id) would tell the
model today's date and make ``now()`` arithmetic silently wrong. The guard of
``ehr.run_sql_query`` refuses every name :func:`clock_names` gives; it is derived from the DuckDB
that runs the episodes, not from a hand-kept list, so a DuckDB upgrade that adds such a function
is covered. The guard's other questions to the installed DuckDB live here too: which functions cannot repeat
(:func:`volatile_names`) and what its parser says of a text it rejects (:func:`duckdb_syntax_error`).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

import duckdb

SQL_DATETIME_VALUES = ("current_date", "current_time", "current_timestamp", "localtime", "localtimestamp")
"""The SQL standard's datetime value functions (written without parentheses); DuckDB also binds
each as a quoted identifier (``"current_date"``) when no column has that name."""

TIME_BASED_UUID_VERSIONS = (1, 6, 7)
"""RFC 9562 UUID versions that embed a timestamp."""

_TEMPORAL = re.compile(r"^(DATE|TIME|TIMESTAMP)\b")
_WORD = re.compile(r"[a-z_][a-z0-9_]*")


@dataclass(frozen=True, slots=True)
class ClockNames:
    """Lower-case names that read the wall clock in the installed DuckDB.

    Attributes:
        functions: functions and macros, in call form (``now()``, ``uuidv7()``, ``ago(...)``).
        values: names DuckDB binds without parentheses, bare or quoted (``current_date``).
        duckdb_version: the DuckDB they were derived from.
    """

    functions: frozenset[str]
    values: frozenset[str]
    duckdb_version: str


_LOCK = threading.Lock()
_FOUND: list[ClockNames] = []


def clock_names() -> ClockNames:
    """The clock-reading names of the installed DuckDB (computed once per process, well under a second;
    threads that ask at once wait for the one computation).

    Derived from ``duckdb_functions()`` of a fresh in-memory database:

    - scalar functions with no parameters whose stability is not ``CONSISTENT`` and whose result
      is a date or time (``now``, ``today``, ``get_current_timestamp``, ``transaction_timestamp``, ...);
    - volatile no-parameter functions returning a UUID whose version embeds a timestamp
      (:data:`TIME_BASED_UUID_VERSIONS`; ``uuidv7``), asked of DuckDB with ``uuid_extract_version``;
    - macros whose definition calls any of these or names a clock value, to a fixed point
      (``ago``, ``pg_postmaster_start_time``, ...);
    - the names DuckDB binds without parentheses (the SQL standard's datetime value functions, and
      any no-parameter function or macro it binds as a bare identifier) whose value is a date or time.

    One-argument ``age(x)`` (``current_date - x``) is refused by the guard on top of these.
    """
    if not _FOUND:
        with _LOCK:
            if not _FOUND:
                _FOUND.append(_derive())
    return _FOUND[0]


@lru_cache(maxsize=1)
def volatile_names() -> frozenset[str]:
    """Lower-case names of the functions and macros of the installed DuckDB whose value may differ from call to call
    with the same arguments: ``duckdb_functions()`` stability ``VOLATILE`` (``random``, ``uuid``, ``setseed``,
    ``current_query_id``, ``nextval``, ...), every name of :func:`session_names`, and every macro that calls one of
    them. Computed once per process.
    """
    volatile, session, macros = _stability()
    names = set(volatile | session)
    _close_over_macros(names, set(), macros)
    return frozenset(names)


@lru_cache(maxsize=1)
def session_names() -> frozenset[str]:
    """The scalar functions without parameters that the installed DuckDB does not mark ``CONSISTENT`` and does not
    mark ``VOLATILE`` either: their value is the database session's, not the data's (``txid_current``: a
    transaction counter that keeps counting across the episodes a reused sealed database served;
    ``current_database``, ``current_schema``, ...; the clock's are refused as ``clock`` before), and every macro
    that calls one of them. Computed once per process.
    """
    _, session, macros = _stability()
    names = set(session)
    _close_over_macros(names, set(), macros)
    return frozenset(names)


@lru_cache(maxsize=1)
def _stability() -> tuple[frozenset[str], frozenset[str], list[tuple[str, str]]]:
    """``(VOLATILE functions, parameterless scalars neither CONSISTENT nor VOLATILE, [(macro, definition)])``."""
    con = duckdb.connect(":memory:")
    try:
        rows = con.execute(
            "SELECT DISTINCT lower(function_name), function_type, stability, macro_definition, "
            "len(parameters) = 0 FROM duckdb_functions()"
        ).fetchall()
    finally:
        con.close()
    volatile = frozenset(name for name, _, stability, _, _ in rows if stability == "VOLATILE")
    session = frozenset(name for name, kind, stability, _, bare in rows
                        if kind == "scalar" and bare and stability not in ("CONSISTENT", "VOLATILE")) - volatile
    return volatile, session, [(n, d.lower()) for n, kind, _, d, _ in rows if kind == "macro" and d]


def _derive() -> ClockNames:
    con = duckdb.connect(":memory:")
    try:
        rows = con.execute(
            "SELECT DISTINCT lower(function_name), function_type, len(parameters), return_type, stability, "
            "macro_definition FROM duckdb_functions()"
        ).fetchall()
        functions: set[str] = set()
        for name, kind, params, returns, stability, _ in rows:
            if kind != "scalar" or params or stability == "CONSISTENT":
                continue
            if _TEMPORAL.match(returns or ""):
                functions.add(name)
            elif returns == "UUID" and stability == "VOLATILE" and _time_based_uuid(con, name):
                functions.add(name)
        no_params = {name for name, _, params, *_ in rows if not params}
        values = {v for v in (*SQL_DATETIME_VALUES, *sorted(no_params)) if _bare_clock_value(con, v)}
        macros = [(name, definition.lower()) for name, kind, _, _, _, definition in rows if kind == "macro" and definition]
        _close_over_macros(functions, values, macros)
        return ClockNames(frozenset(functions), frozenset(values), duckdb.__version__)
    finally:
        con.close()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _time_based_uuid(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    try:
        found = con.execute(f"SELECT uuid_extract_version({_quote(name)}())").fetchone()
    except duckdb.Error:
        return False
    return found is not None and found[0] in TIME_BASED_UUID_VERSIONS


def _bare_clock_value(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether DuckDB binds ``name`` without parentheses to a date or time (no FROM: no column can match)."""
    try:
        found = con.execute(f"SELECT typeof({_quote(name)})").fetchone()
    except duckdb.Error:
        return False
    return found is not None and bool(_TEMPORAL.match(str(found[0])))


def _close_over_macros(functions: set[str], values: set[str], macros: list[tuple[str, str]]) -> None:
    """Add every macro whose definition mentions a clock name, until nothing changes.

    A word match is conservative: a macro whose definition merely contains such a word in a
    string is refused too.
    """
    changed = True
    while changed:
        changed = False
        for name, definition in macros:
            if name not in functions and set(_WORD.findall(definition)) & (functions | values):
                functions.add(name)
                changed = True


_PARSER = threading.local()


PARSER_MAX_CHARS = 2_000
"""Longest text :func:`duckdb_syntax_error` gives DuckDB's parser."""
PARSER_MAX_DEPTH = 64
"""Deepest bracket nesting it gives DuckDB's parser: the parse holds the interpreter lock and its time grows
with the cube of the depth (1.4 ms at 64 levels, 44 ms at 256, minutes at 20,000: attack20)."""


def _depth(sql: str) -> int:
    """The deepest nesting of ``()``, ``[]`` and ``{}`` in ``sql`` (brackets inside strings counted too)."""
    depth = deepest = 0
    for char in sql:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth = max(0, depth - 1)
    return deepest


def duckdb_syntax_error(sql: str) -> str | None:
    """DuckDB's parser error for ``sql``: its first line, then the line of the query it points at and its caret
    (parsed only, never run; one empty in-memory database per thread that meets a syntax error); ``None`` when
    DuckDB's grammar accepts the text, or when the text is longer than :data:`PARSER_MAX_CHARS` or nests
    brackets deeper than :data:`PARSER_MAX_DEPTH` (not parsed: the caller keeps its own message)."""
    if len(sql) > PARSER_MAX_CHARS or _depth(sql) > PARSER_MAX_DEPTH:
        return None
    con = getattr(_PARSER, "con", None)
    if con is None:
        con = _PARSER.con = duckdb.connect(":memory:", config={"threads": 1, "enable_external_access": False})
    try:
        con.extract_statements(sql)
    except duckdb.ParserException as err:
        lines = [line for line in str(err).strip().splitlines() if line.strip()]
        if not lines:
            return None
        return "\n".join([lines[0].removeprefix("Parser Error: ")[:300], *(line[:300] for line in lines[1:3])])
    except duckdb.Error:
        return None
    return None
