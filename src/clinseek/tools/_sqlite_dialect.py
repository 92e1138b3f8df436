"""SQL as models write it: SQLite-flavoured queries for ``ehr.run_sql_query``, translated to DuckDB.

The reference system gave each patient a SQLite database, and models (and EHRSQL's gold SQL) write
SQLite: ``datetime(x, 'start of year', '-1 year')``, ``strftime('%J', x)``, integer division,
bare columns beside aggregates. A query is read as SQLite when it is not valid DuckDB:

1. **Detected** (before anything runs): the DuckDB parse tree holds a construct DuckDB does not have
   (:func:`sqlite_forms`: ``datetime()``, ``time()``, ``julianday()``, ``unixepoch()``, ``iif()``,
   ``total()``, ``date()`` with modifiers, ``strftime`` with a SQLite-only specifier such as ``%J``
   or over a text literal, ``x IS 1``), or DuckDB's grammar rejects the text and SQLite's accepts it.
2. **Fallback**: DuckDB rejects a query while binding (e.g. a bare column beside an aggregate);
   ``ehr.run_sql_query`` then reads it as SQLite once (:class:`SqliteDialect` with ``force``).

Valid DuckDB SQL is never rewritten. A statement read as SQLite is translated as a whole with
SQLite's semantics (:func:`translate`): sqlglot's SQLite reader and DuckDB writer (``ifnull``,
``group_concat``, ``instr``, ``iif``, ``IS``, ``LIMIT a, b``, NULLs first in ascending order,
``x / 0`` is NULL) plus the rules here: the date/time functions with every modifier, ``strftime``
formats, text-to-number conversion in arithmetic, integer division, ``CAST`` truncation,
case-insensitive ``LIKE``, scalar ``max``/``min``, ``round``/``total``, and bare columns beside
aggregates (SQLite takes them from the row of the one ``min``/``max``, else from any row). SQLite's
``'now'`` is the episode's prediction time. The SQL guard checks the translated statement like any
other. Every refusal names the construct and its DuckDB form (:data:`DUCKDB_FORMS`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokenizer_core import Token
from sqlglot.tokens import TokenType

from ..episode import duckdb_syntax_error
from ..errors import ToolError

DUCKDB_FORMS: dict[str, str] = {
    "datetime": "datetime(x) -> CAST(x AS TIMESTAMP); datetime(x, '-1 day') -> x - INTERVAL 1 DAY",
    "date": "date(x, 'start of month') -> CAST(date_trunc('month', x) AS DATE)",
    "time": "time(x) -> CAST(x AS TIME)",
    "julianday": "julianday(x) -> epoch(x) / 86400 + 2440587.5 (DuckDB's julian(x) is 0.5 more; julian(a) - julian(b) is the same difference)",
    "unixepoch": "unixepoch(x) -> epoch(x)",
    "strftime": "strftime('%Y-%m', x) -> strftime(x, '%Y-%m'); strftime('%J', x) -> epoch(x) / 86400 + 2440587.5; strftime('%s', x) -> epoch(x)",
    "start of": "datetime(x, 'start of month') -> date_trunc('month', x) (also 'year', 'day')",
    "modifier": "datetime(x, '-1 year') -> x - INTERVAL 1 YEAR; '+3 days' -> x + INTERVAL 3 DAY",
    "weekday": "datetime(x, 'weekday 0') -> x + to_days((7 - dayofweek(x)) % 7)",
    "now": "'now' -> the prediction time (a TIMESTAMP literal)",
    "iif": "iif(c, a, b) -> CASE WHEN c THEN a ELSE b END",
    "total": "total(x) -> coalesce(sum(x), 0.0)",
    "ifnull": "ifnull(a, b) -> coalesce(a, b)",
    "group_concat": "group_concat(x, ';') or MySQL's GROUP_CONCAT(x SEPARATOR ', ') -> string_agg(x, ', ') (ordered: "
    "string_agg(x, ', ' ORDER BY x))",
    "is": "a IS b -> a IS NOT DISTINCT FROM b",
    "bare column": "a column beside an aggregate -> GROUP BY it, or any_value(col) / arg_max(col, y)",
    "integer division": "SQLite 7 / 2 = 3 -> DuckDB 7 // 2 (7 / 2 = 3.5)",
    "like": "SQLite LIKE ignores case -> DuckDB ILIKE",
    "scalar subquery": "x = (SELECT ...) gave several rows: x IN (SELECT ...), or one row with ORDER BY ... LIMIT 1 "
    "(SQLite silently took the first row)",
    "printf": "printf/format specifiers take their type: printf('%d', CAST(x AS BIGINT)), printf('%.1f', "
    "CAST(x AS DOUBLE)), printf('%s', CAST(x AS VARCHAR))",
    "text as number": "a text column used as a number -> TRY_CAST(x AS DOUBLE) (NULL where the text is not a "
    "number), e.g. sum(TRY_CAST(x AS DOUBLE)); lab results as numbers are in valuenum",
    "to_char": "to_char(x, 'YYYY-MM') is PostgreSQL -> DuckDB strftime(x, '%Y-%m') (YYYY %Y, MM %m, DD %d, HH24 %H, "
    "MI %M, SS %S, Mon %b, Day %A); a number as text: printf('%.2f', x)",
    "make_interval": "make_interval(days => 7) is PostgreSQL -> DuckDB INTERVAL 7 DAY (also HOUR, MINUTE, MONTH, "
    "YEAR), or to_days(n), to_hours(n), to_minutes(n) for a computed amount",
    "to_date": "to_date(text, 'YYYY-MM-DD') is PostgreSQL -> DuckDB CAST(strptime(text, '%Y-%m-%d') AS DATE), or "
    "CAST(text AS DATE)",
    "date_format": "DATE_FORMAT(x, '%Y-%m') is MySQL -> DuckDB strftime(x, '%Y-%m') (MySQL's %i minutes -> %M, "
    "%s seconds -> %S)",
    "unix_timestamp": "UNIX_TIMESTAMP(x) is MySQL -> DuckDB epoch(x)",
    "to_timestamp": "to_timestamp(text, 'YYYY-MM-DD HH24:MI') is PostgreSQL -> DuckDB strptime(text, '%Y-%m-%d %H:%M') "
    "(or CAST(text AS TIMESTAMP)); DuckDB's to_timestamp(n) reads epoch seconds",
    "datetime_diff": "DATETIME_DIFF(a, b, 'HOUR') with a quoted unit is mimic-code's PostgreSQL function (elapsed "
    "time, fractional) -> DuckDB epoch(a - b) / 3600 (/ 60 minutes, / 86400 days); BigQuery's DATETIME_DIFF(a, b, HOUR) "
    "counts the boundaries crossed -> date_diff('hour', b, a)",
    "numeric": "NUMERIC or DECIMAL without a precision is DECIMAL(18, 3) in DuckDB: every value is rounded to 3 "
    "decimals first (round(x::numeric, 2) of 47.1749 is 47.18; PostgreSQL keeps every digit) -> CAST(x AS DOUBLE), "
    "round(x, 2) of a DOUBLE, or DECIMAL(p, s) with the scale you mean",
    "offset": "x[OFFSET(n)] is BigQuery (counting from 0) -> DuckDB lists count from 1: x[n + 1] (x[ORDINAL(n)] -> "
    "x[n]); APPROX_QUANTILES(x, 100)[OFFSET(50)] -> quantile_cont(x, 0.5)",
    "timestampdiff": "TIMESTAMPDIFF(HOUR, a, b) is MySQL -> DuckDB date_sub('hour', a, b) (whole hours from a to b, "
    "as MySQL counts); date_diff('hour', a, b) counts the hour boundaries crossed",
    # other engines' forms DuckDB does not have (conf21b): the error names DuckDB's
    "week_diff": "a difference in weeks counts Sunday-week boundaries in BigQuery's DATE_DIFF/DATETIME_DIFF(a, b, WEEK) "
    "and T-SQL's DATEDIFF(week, b, a), where DuckDB's date_diff('week', b, a) counts whole 7-day spans -> DuckDB "
    "date_diff('day', date_trunc('week', b + INTERVAL 1 DAY), date_trunc('week', a + INTERVAL 1 DAY)) // 7 (ISO "
    "weeks from Monday: without the + INTERVAL 1 DAY); whole weeks: date_sub('week', b, a)",
    "top": "SELECT TOP n is T-SQL -> DuckDB LIMIT n at the end (SELECT hadm_id FROM admissions ORDER BY admittime "
    "LIMIT 5)",
    "rownum": "ROWNUM is Oracle -> DuckDB LIMIT n at the end (or row_number() OVER (ORDER BY ...))",
    "dateadd": "DATEADD(day, n, x) is T-SQL -> DuckDB x + INTERVAL (n) DAY, or x + to_days(n) (to_hours, to_minutes, "
    "to_months, to_years)",
    "datepart": "DATEPART(hour, x) is T-SQL -> DuckDB hour(x), or date_part('hour', x) with the unit quoted (T-SQL's "
    "weekday, Sunday = 1 -> dayofweek(x) + 1)",
    "isnull": "ISNULL(a, b) is T-SQL -> DuckDB coalesce(a, b); x IS NULL tests for NULL",
    "eomonth": "EOMONTH(x) is T-SQL -> DuckDB last_day(x)",
    "convert": "CONVERT(date, x) is T-SQL -> DuckDB CAST(x AS DATE); CONVERT(varchar, x, 120) -> strftime(x, "
    "'%Y-%m-%d %H:%M:%S')",
    "trunc": "TRUNC(x) of a date or time is Oracle -> DuckDB date_trunc('day', x) (TRUNC(x, 'MM') -> "
    "date_trunc('month', x)); trunc() here truncates numbers",
    "format_datetime": "FORMAT_DATETIME('%Y-%m', x) is BigQuery (also FORMAT_DATE, FORMAT_TIMESTAMP) -> DuckDB "
    "strftime(x, '%Y-%m')",
    "parse_date": "PARSE_DATE('%Y-%m-%d', text) is BigQuery -> DuckDB CAST(strptime(text, '%Y-%m-%d') AS DATE); "
    "PARSE_TIMESTAMP(format, text) -> strptime(text, format)",
    "date_trunc": "DATE_TRUNC(x, MONTH) is BigQuery -> DuckDB date_trunc('month', x) (the unit first, quoted)",
    "raw string": "r'...' is BigQuery's raw string -> DuckDB '...' without the r (DuckDB keeps a backslash as "
    "written: regexp_matches(x, '^\\d+'))",
    "div": "DIV(a, b) is BigQuery's integer division -> DuckDB a // b",
    "from_unixtime": "FROM_UNIXTIME(n) is MySQL -> DuckDB make_timestamp(CAST(n * 1000000 AS BIGINT)) (the episode's "
    "times have no time zone)",
}
"""SQLite construct -> its DuckDB form, quoted in every refusal and note (the model learns the dialect)."""

_SQLITE_FUNCTIONS = frozenset({"datetime", "time", "julianday", "unixepoch", "iif", "total", "timediff"})
"""Functions SQLite has and DuckDB does not: their presence marks a query as SQLite."""
_MAYBE_SQLITE = re.compile(
    r"\b(?:datetime|time|julianday|unixepoch|iif|total|timediff|date|strftime|time_to_str|format)\s*\("
    r"|\bis\s+(?!(?:not\s+)?(?:null|true|false|unknown|distinct)\b)",
    re.IGNORECASE,
)
"""Text every SQLite-only construct of :func:`sqlite_forms` needs: without it the tree is not walked
(a regular expression over the text costs microseconds; walking a large tree, about a millisecond)."""
_TIME_FUNCTIONS = frozenset({"datetime", "date", "time", "julianday", "unixepoch", "strftime"})
_DUCKDB_STRFTIME = frozenset("aAwudbBmyYHIpMSfgjUWVGcxXzZ%n")
"""Specifiers DuckDB's strftime knows (``%-d`` style no-padding flags aside)."""
_SAME_SPECS = frozenset("dHmMSjwWUuVGYIp%")
"""SQLite strftime specifiers DuckDB's strftime writes identically."""
_OTHER_MEANING_SPECS = frozenset("fg")
"""Specifiers both strftimes know with another meaning (SQLite %f: 'SS.SSS', %g: ISO year's 2 digits;
DuckDB %f: microseconds, %g: milliseconds): in SQLite's argument order (format first) they are SQLite."""
_PRINTF_SPEC = re.compile(r"%[-+ 0#,!]*(?:\d+|\*)?(?:\.(?:\d+|\*))?l{0,2}[dioxXufFeEgGcsqQwz]")
"""A printf conversion (SQLite's format() is printf(); DuckDB's format() takes {} and ignores them)."""
_SQLITE_SPECS = frozenset("deffFHIjJklmMpPRsSTuwWUVGgY%")
_NUMBER_SPECS = frozenset("dejklmHIMSsuwWUVGgYJf")
"""Specifiers that write a number (a format of one of them converts cleanly in arithmetic)."""
_UNITS = {"day": 86_400_000_000, "hour": 3_600_000_000, "minute": 60_000_000, "second": 1_000_000}
_MODIFIER = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+) +(day|hour|minute|second|month|year)s?$", re.I)
"""SQLite's '±NNN unit' modifier, as strictly as SQLite reads it (no space after the sign, none after the unit)."""
_CLOCK_SHIFT = re.compile(r"^\s*([+-]?)(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?\s*$")
_TIME_TEXT = re.compile(
    r"^\s*(?:(\d{4})-(\d{2})-(\d{2}))?(?:[ T]?(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?\s*(?:[zZ]|[+-]\d{2}:\d{2})?\s*$"
)
_JULIAN_EPOCH = 2440587.5
_DAY_US = 86_400_000_000
_DAY_MS = 86_400_000
_JULIAN_EPOCH_MS = 210_866_760_000_000
"""Milliseconds from the julian epoch to 1970-01-01 (2440587.5 days)."""


@dataclass
class Translation:
    """What reading a statement as SQLite changed: ``(construct, DuckDB form)`` pairs, in order."""

    changes: list[tuple[str, str]] = field(default_factory=list)
    names: tuple[str | None, ...] = ()
    """SQLite's name of each output column whose DuckDB name differs (``None``: the same), in output order;
    empty when none differs or the outputs cannot be counted before running (a ``*``). The result's columns are
    renamed after the query ran (an alias in the SQL would let WHERE and ORDER BY read it: attack20)."""

    def add(self, construct: str, duckdb: str) -> None:
        if (construct, duckdb) not in self.changes:
            self.changes.append((construct, duckdb))

    def note(self) -> str:
        """The one line the tool result starts with when a query was translated."""
        shown = "; ".join(f"{c} -> {d}" for c, d in self.changes[:6])
        more = f"; and {len(self.changes) - 6} more" if len(self.changes) > 6 else ""
        return f"Note: read as SQLite and run as DuckDB ({shown or 'SQLite semantics'}{more})."


def _name(node: exp.Expr) -> str:
    """The lower-case SQL name of a function node (``datetime``); the node's key otherwise."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower() if isinstance(node, exp.Func) else node.key


_CANDIDATES = frozenset({exp.Datetime, exp.Time, exp.Date, exp.TimeToStr, exp.Is, exp.Anonymous, exp.Format})
"""Node types :func:`sqlite_forms` looks at (matched exactly: the walk is on every query's path)."""


def _candidates(tree: exp.Expr) -> Iterator[exp.Expr]:
    """The nodes of ``tree`` whose type is in :data:`_CANDIDATES` (a plain stack walk, ~4x ``Expr.walk``)."""
    stack: list[object] = [tree]
    while stack:
        node = stack.pop()
        if not isinstance(node, exp.Expr):
            continue
        if type(node) in _CANDIDATES:
            yield node
        for value in node.args.values():
            if type(value) is list:
                stack.extend(value)
            elif isinstance(value, exp.Expr):
                stack.append(value)


def sqlite_forms(tree: exp.Expr) -> list[str]:
    """SQLite-only constructs in a statement parsed as DuckDB (empty: nothing marks it as SQLite).

    Only constructs DuckDB rejects count, so a valid DuckDB statement is never read as SQLite.
    """
    found: list[str] = []
    for node in _candidates(tree):
        if isinstance(node, exp.Datetime) or (
            isinstance(node, exp.Anonymous) and _name(node) in _SQLITE_FUNCTIONS
        ):
            found.append(f"{_name(node) if isinstance(node, exp.Anonymous) else 'datetime'}()")
        elif isinstance(node, exp.Time) and not isinstance(node.parent, exp.Cast):
            found.append("time()")
        elif isinstance(node, exp.Date) and (node.args.get("zone") is not None or len(node.expressions) > 0):
            found.append("date() with modifiers")
        elif isinstance(node, exp.Date) and (node.this is None or _is_now(node.this)):
            found.append("date('now')")  # DuckDB reads date('now') as CAST('now' AS DATE), date() not at all
        elif isinstance(node, exp.Format) and _printf_format(node):
            found.append("format() with printf specifiers")
        elif isinstance(node, exp.TimeToStr) and _sqlite_strftime(node):
            found.append("strftime() in SQLite form")
        elif isinstance(node, exp.Is) and not isinstance(node.expression, (exp.Null, exp.Boolean)):
            found.append("IS between values")
    return found


def _is_now(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and node.is_string and str(node.this).strip().lower() == "now"


def _printf_format(node: exp.Format) -> bool:
    """``format('%d items', n)``: a printf format with arguments and no ``{}`` (DuckDB would ignore ``n``)."""
    fmt = node.this
    return (
        isinstance(fmt, exp.Literal) and fmt.is_string and "{" not in fmt.this
        and bool(node.expressions) and _PRINTF_SPEC.search(fmt.this) is not None
    )  # fmt: skip


def _sqlite_strftime(node: exp.TimeToStr) -> bool:
    """A DuckDB-parsed ``strftime`` that DuckDB rejects or reads otherwise: a SQLite-only specifier, format
    first over a text literal, or format first with a specifier DuckDB means otherwise (``%f``, ``%g``)."""
    first, second = node.this, node.args.get("format")
    for arg in (first, second):
        if isinstance(arg, exp.Literal) and arg.is_string and "%" in arg.this:
            specs = set(re.findall(r"%-?(.)", arg.this))
            if specs - _DUCKDB_STRFTIME:
                return True
            if arg is first and specs & _OTHER_MEANING_SPECS:
                return True
    return (
        isinstance(first, exp.Literal) and first.is_string and "%" in first.this
        and isinstance(second, exp.Literal) and second.is_string
    )  # fmt: skip


class SqliteDialect:
    """The SQL guard's dialect hook for one query: read it as SQLite when it is not DuckDB.

    Called by :func:`~clinseek.tools._sqlguard.guard_sql` with the DuckDB parse tree (``None``
    when DuckDB's grammar rejected the text) and the text; returns the translated tree, or
    ``None`` to keep the DuckDB reading. :attr:`translation` says what changed.

    Args:
        prediction_time: SQLite's ``'now'``; ``None`` refuses ``'now'``.
        force: read the text as SQLite even without a SQLite-only construct (the retry after
            DuckDB rejected the query while binding).
    """

    def __init__(self, prediction_time: dt.datetime | None, *, force: bool = False) -> None:
        self.prediction_time = prediction_time
        self.force = force
        self.translation: Translation | None = None

    def __call__(self, tree: exp.Expr | None, sql: str) -> exp.Expr | None:
        if tree is not None and not self.force and (not _MAYBE_SQLITE.search(sql) or not sqlite_forms(tree)):
            return None
        try:
            sqlite_tree = _parse_sqlite(sql)
        except (SqlglotError, RecursionError):
            if tree is None or self.force:
                return None  # SQLite's grammar rejects it too: the DuckDB reading (or its parse error) stands
            raise
        if sqlite_tree is None or _subscript_as_alias(sqlite_tree, sql):
            return None
        out, self.translation = translate(sqlite_tree, self.prediction_time)
        return out


_BIGQUERY_SUBSCRIPT = re.compile(r"^\s*(?:safe_)?(?:offset|ordinal)\s*\(.*\)\s*$", re.IGNORECASE | re.DOTALL)
_NUMBER_SUBSCRIPT = re.compile(r"^\s*[-+]?\d*\s*(?::\s*[-+]?\d*\s*)?$")


def _subscript_as_alias(tree: exp.Expr, sql: str) -> bool:
    """SQLite reads ``x[1]`` (a DuckDB list subscript) or ``x[OFFSET(1)]`` (BigQuery's) as ``x`` aliased by the
    bracketed text: read so, the subscript is silently gone (the whole list comes back). True for a DuckDB
    subscript (the DuckDB reading's own error stands); a BigQuery one is refused naming DuckDB's form."""
    for alias in tree.find_all(exp.Alias):
        name = alias.alias
        if not name or not re.search(r"\[\s*" + re.escape(name) + r"\s*\]", sql):
            continue
        if _BIGQUERY_SUBSCRIPT.match(name):
            raise ToolError("sql_error", f"[{name}]: {DUCKDB_FORMS['offset']}")
        if _NUMBER_SUBSCRIPT.match(name):
            return True
    return False


def refuse_sqlite_forms(tree: exp.Expr | None, sql: str) -> None:
    """The guard's default hook: a SQLite-only construct is refused with its DuckDB form.

    Raises:
        ToolError: ``"sql_error"`` naming the construct and the DuckDB equivalent.
    """
    if tree is None or not _MAYBE_SQLITE.search(sql):
        return None
    forms = sqlite_forms(tree)
    if forms:
        raise ToolError("sql_error", f"{forms[0]} is SQLite, not DuckDB: {hint_for(forms[0]) or _GENERIC}")
    return None


_NUMERIC_TYPE = r"(?:u?(?:tiny|small|big|huge)?int(?:eger)?\w*|decimal|double|float|numeric)"
_HINTS: dict[str, re.Pattern[str]] = {
    key: re.compile(pattern)
    for key, pattern in {
        "datetime": r"\bdatetime\b",
        "date": r"\bdate\s*\([^()]*,|\bdate\(\) with modifiers",
        "time": r"\btime\s*\(|name time\b",
        "julianday": r"\bjulianday\b",
        "unixepoch": r"\bunixepoch\b",
        "strftime": r"\bstrftime\b|%j\b|%s\b",
        "start of": r"'start of (?:day|month|year)'",
        "modifier": r"'[+-]?\d+(?:\.\d*)? (?:day|hour|minute|second|month|year)s?'",
        "weekday": r"'weekday \d'",
        "now": r"'now'",
        "iif": r"\biif\b",
        "total": r"\btotal\s*\(|name total\b",
        "ifnull": r"\bifnull\b",
        "group_concat": r"\bgroup_concat\b",
        "is": r"\bis between values\b|\bis\s+(?!(?:not\s+)?(?:null|true|false|unknown|distinct)\b)['\w]",
        "bare column": r"must appear in the group by clause|must be part of an aggregate",
        "scalar subquery": r"more than one row returned by a subquery",
        "printf": r'invalid type specifier "\w" for formatting a value',
        "to_char": r"\bto_?char\b",
        "make_interval": r"\bmake_?interval\b",
        "to_date": r"\bto_date\b",
        "date_format": r"\bdate_format\b",
        "unix_timestamp": r"\bunix_timestamp\b",
        "offset": r"\[\s*(?:safe_)?(?:offset|ordinal)\s*\(",
        "top": r"\bselect\s+(?:distinct\s+|all\s+)?top\s*\(?\s*\d",
        "rownum": r"\brownum\b",
        "dateadd": r"\bdateadd\s*\(",
        "datepart": r"\bdatepart\s*\(\s*[a-z]",
        "isnull": r"\bisnull\s*\(",
        "eomonth": r"\beomonth\s*\(",
        "convert": r"\bconvert\s*\(\s*(?:n?(?:var)?char|date|datetime2?|smalldatetime|time|int|integer|bigint|float|"
        r"real|decimal|numeric)\b",
        "trunc": r"'trunc\((?:timestamp|date)",
        "format_datetime": r"\bformat_(?:datetime|date|timestamp|time)\s*\(",
        "parse_date": r"\bparse_(?:datetime|date|timestamp|time)\s*\(",
        "date_trunc": r"\b(?:date|datetime|timestamp)_trunc\s*\([^,()]+,\s*(?:year|quarter|month|week|day|hour|minute|"
        r"second)\s*\)",
        "raw string": r"(?<![\w'])r'",
        "div": r"\bdiv\s*\(",
        "from_unixtime": r"\bfrom_unixtime\s*\(",
        "text as number": r"argument types '(?:[-+*/%^]|\w+)\((?:[^')]*,\s*)?varchar[,)]|cannot compare values of type (?:varchar and type "
        rf"{_NUMERIC_TYPE}|{_NUMERIC_TYPE} and type varchar)|could not convert string .{{0,80}} to {_NUMERIC_TYPE}",
    }.items()
}
"""When a text (SQL, an error message, a construct's label) names a SQLite form: its key in :data:`DUCKDB_FORMS`."""


def hint_for(text: str, *, message: bool = False) -> str:
    """The DuckDB forms of the SQLite constructs ``text`` mentions (SQL, a DuckDB error, a label); "" if none.

    ``message``: ``text`` is a DuckDB error message (English prose): ``is`` there is a verb ("an explicit
    cast is required"), not SQLite's ``a IS b`` (which is read as SQLite before anything runs).
    """
    low = text.lower()
    return "; ".join(
        DUCKDB_FORMS[key]
        for key, pattern in _HINTS.items()
        if not (message and key == "is") and pattern.search(low)
    )


_SQL_KEYS = ("offset", "top", "rownum", "dateadd", "datepart", "isnull", "eomonth", "convert", "format_datetime",
             "parse_date", "date_trunc", "raw string", "div", "from_unixtime")
"""Keys of :data:`_HINTS` for other engines' constructs that only the query's text shows."""


def hint_for_sql(sql: str) -> str:
    """The DuckDB forms of other engines' constructs that only the query's text shows (DuckDB's error names
    something else: ``x[OFFSET(1)]`` -> "syntax error at or near OFFSET", ``DATEPART(hour, x)`` -> "column hour not
    found", ``ISNULL(a, b)`` -> "did you mean isnan"); "" if none."""
    low = sql.lower()
    return "; ".join(DUCKDB_FORMS[key] for key in _SQL_KEYS if _HINTS[key].search(low))


_GUESS = re.compile(r'(with name (\w+) does not exist!)\s*Did you mean "[^"]*"\?')


def without_guess(message: str, sql: str) -> str:
    """DuckDB's message without its guess at a name (``ISNULL`` -> "Did you mean isnan?", ``TOP (5)`` -> "Did you
    mean list_dot_product?") when a hint names that construct and its DuckDB form (the hint says what to write)."""
    found = _GUESS.search(message)
    if found is None:
        return message
    name = found.group(2)
    if not (hint_for(f"{name}(") or hint_for_sql(f"{name}(") or re.search(rf"\b{re.escape(name)}\b",
                                                                         hint_for_sql(sql), re.IGNORECASE)):
        return message
    return message[:found.start()] + found.group(1) + message[found.end():]


_GENERIC = "write DuckDB SQL (e.g. x - INTERVAL 1 DAY, date_trunc('month', x), strftime(x, '%Y'))"


def parse_error(sql: str, err: Exception) -> str:
    """The message for SQL that does not parse: DuckDB's parser's words when its grammar rejects the text too
    (``syntax error at or near "SELEC"``: the token at fault), else sqlglot's text without Python class names;
    plus the DuckDB form of any SQLite construct the text names."""
    text = duckdb_syntax_error(sql)
    if text is None:
        text = re.sub(r"<class '(?:[\w.]+\.)?(\w+)'>", r"\1", str(err))
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)[:300]
    hint = hint_for(sql)
    return f"the query does not parse: {text}" + (f" ({hint})" if hint else "")


def unanalysable(sql: str) -> str:
    """Why sqlglot could not analyse or regenerate ``sql``: the construct it failed on and its DuckDB form."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except Exception:
        return "the query could not be analysed; " + (hint_for(sql) or _GENERIC)
    for node in reversed(list(tree.walk(bfs=False))):  # the innermost construct that fails
        if isinstance(node, exp.Func) and not isinstance(node, exp.Connector):
            try:
                node.sql(dialect="duckdb")
            except Exception:
                name = _name(node)
                return f"{name}() as written here is not DuckDB SQL: {hint_for(name) or _GENERIC}"
    return "the query could not be analysed; " + (hint_for(sql) or _GENERIC)


def unfaithful(sql: str, err: Exception) -> str:
    """Why a query cannot run as written: sqlglot's DuckDB reading of a construct DuckDB does not have
    would drop part of it (``to_char(x, 'YYYY-MM')`` written back as ``CAST(x AS TEXT)``); the construct
    and its DuckDB form. The query is refused rather than run with another meaning."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(err)).strip()[:300]
    hint = hint_for(text, message=True) or hint_for(sql, message=True)
    said = f"this query cannot run as written (DuckDB has no such construct): {text}"
    return said + (f" ({hint})" if hint else "")


_DUCKDB_INTERVAL_UNITS = frozenset(
    f"{unit}{plural}"
    for unit in ("YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "QUARTER",
                 "DECADE")
    for plural in ("", "S")
) | {"CENTURY", "CENTURIES", "MILLENNIUM", "MILLENNIA"}
"""Units DuckDB's grammar reads after ``INTERVAL 'n'`` (any other word there is a column alias)."""
_INTERVAL_ABBREVIATIONS = {
    "MON": "MONTH", "MONS": "MONTH", "HR": "HOUR", "HRS": "HOUR", "MIN": "MINUTE", "MINS": "MINUTE",
    "SEC": "SECOND", "SECS": "SECOND", "YR": "YEAR", "YRS": "YEAR", "MSEC": "MILLISECOND", "MSECS": "MILLISECOND",
    "USEC": "MICROSECOND", "USECS": "MICROSECOND",
}
"""PostgreSQL's abbreviations (DuckDB's interval text reads them too) -> the unit DuckDB's grammar knows."""


def keep_meaning(node: exp.Expr) -> None:
    """Undo what sqlglot's DuckDB reading and writing would change in ``node`` (called on every node of the
    final tree, in the guard):

    - ``INTERVAL '30 mins'`` (valid DuckDB; '1 mon' is how PostgreSQL prints a month) is split by sqlglot
      into ``INTERVAL '30' MINS``, which DuckDB reads as one second aliased ``MINS``: a literal amount
      goes back into the interval text, a computed one (``INTERVAL (n) MINS``) gets DuckDB's unit name;
    - ``DATE_ADD('2100-01-01 10:30:00', INTERVAL 2 HOUR)`` (MySQL; DuckDB's own ``date_add`` refuses
      text): sqlglot writes the text as ``CAST(... AS DATE)``, which drops its time (02:00, not 12:30);
      a text literal with a time of day is cast to TIMESTAMP instead (MySQL's meaning).
    """
    if isinstance(node, exp.Interval):
        unit = node.args.get("unit")
        if isinstance(unit, exp.Var) and unit.name.upper() not in _DUCKDB_INTERVAL_UNITS:
            amount = node.this
            if isinstance(amount, exp.Literal):
                node.set("this", exp.Literal.string(f"{amount.this} {unit.name.lower()}"))
                node.set("unit", None)
            elif unit.name.upper() in _INTERVAL_ABBREVIATIONS:
                node.set("unit", exp.var(_INTERVAL_ABBREVIATIONS[unit.name.upper()]))
    elif isinstance(node, (exp.DateAdd, exp.DateSub)):
        value = node.this
        if isinstance(value, exp.Literal) and value.is_string and re.search(r"\d:\d\d", value.this):
            node.set("this", exp.Cast(this=value, to=exp.DataType.build("TIMESTAMP")))
        elif _is_date(value) and _whole_days(node.expression) and node.parent is not None and not (
            isinstance(node.parent, exp.Cast) and node.parent.to.is_type(exp.DataType.Type.DATE)
        ):  # MySQL and BigQuery: DATE_SUB(DATE '2100-01-03', INTERVAL 2 DAY) is a DATE (DuckDB: a TIMESTAMP)
            wrapper = exp.Cast(to=exp.DataType.build("DATE"))
            node.replace(wrapper)
            wrapper.set("this", node)
    elif isinstance(node, exp.SimilarTo) and isinstance(node.expression, exp.Literal) and node.expression.is_string:
        pattern = node.expression.this
        if _SQL_WILDCARD.search(_outside_brackets(pattern)):
            node.set("expression", exp.Literal.string(_similar_regex(pattern)))
    elif isinstance(node, exp.DataType) and node.this == exp.DataType.Type.USERDEFINED:
        kind = str(node.args.get("kind") or "").upper()
        if kind in _BIGQUERY_FLOATS:  # BigQuery's FLOAT64 is DuckDB's DOUBLE (before: "did you mean int64")
            node.set("this", _BIGQUERY_FLOATS[kind])
            node.set("kind", None)
    elif isinstance(node, (exp.Like, exp.ILike)) and isinstance(node.expression, (exp.Any, exp.All)):
        _like_any(node)
    elif isinstance(node, exp.TimestampDiff) and isinstance(unit := node.args.get("unit"), exp.Var) and (
        unit.name.upper() in _WHOLE_UNITS
        and not (isinstance(node.this, exp.Column) and node.this.name.upper() in _DUCKDB_INTERVAL_UNITS)
    ):  # BigQuery's TIMESTAMP_DIFF(a, b, HOUR) counts whole hours (sqlglot writes date_diff: boundaries crossed);
        # MySQL's TIMESTAMPDIFF(HOUR, a, b) (HOUR read as a column) is refused by the guard
        node.replace(exp.Anonymous(this="date_sub", expressions=[
            exp.Literal.string(unit.name.lower()), node.expression.copy(), node.this.copy()]))


_BIGQUERY_FLOATS = {"FLOAT64": exp.DataType.Type.DOUBLE, "FLOAT32": exp.DataType.Type.FLOAT}
_WHOLE_UNITS = frozenset({"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY"})
"""The units of BigQuery's TIMESTAMP_DIFF (a DAY is 24 hours), counted whole as DuckDB's date_sub counts them."""


def _like_any(node: exp.Like | exp.ILike) -> None:
    """PostgreSQL's ``x ILIKE ANY(ARRAY['a%', 'b%'])`` (sqlglot writes ``x ILIKE ['a%', 'b%']``, which DuckDB
    refuses) as ``(x ILIKE 'a%' OR x ILIKE 'b%')``; ``ALL`` with ``AND``. Only a literal list of patterns."""
    quantified = node.expression
    values = _unparen(quantified.this)
    if not isinstance(values, exp.Array) or not values.expressions:
        return
    parts: list[exp.Expr] = [type(node)(this=node.this.copy(), expression=v.copy()) for v in values.expressions]
    joined = parts[0]
    for part in parts[1:]:
        joined = (exp.Or if isinstance(quantified, exp.Any) else exp.And)(this=joined, expression=part)
    node.replace(exp.Paren(this=joined))


_SQL_WILDCARD = re.compile(r"(?<!\\)[%_]")
_DAY_UNITS = frozenset({"DAY", "DAYS", "WEEK", "WEEKS", "MONTH", "MONTHS", "YEAR", "YEARS", "QUARTER", "QUARTERS"})


def _is_date(node: exp.Expr) -> bool:
    node = _unparen(node)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.is_type(exp.DataType.Type.DATE)
    return isinstance(node, (exp.Date, exp.TsOrDsToDate, exp.CurrentDate))


def _whole_days(node: exp.Expr | None) -> bool:
    """``node`` is an interval of whole days, weeks, months or years (``INTERVAL 2 DAY``, ``INTERVAL '2 days'``)."""
    if not isinstance(node, exp.Interval):
        return False
    unit = node.args.get("unit")
    if unit is not None:
        return unit.name.upper() in _DAY_UNITS and isinstance(node.this, exp.Literal)
    return isinstance(node.this, exp.Literal) and re.fullmatch(
        r"\s*[-+]?\d+\s+(?:day|week|month|year|quarter)s?\s*", node.this.name, re.IGNORECASE
    ) is not None


def _outside_brackets(pattern: str) -> str:
    return re.sub(r"\[[^\]]*\]", "", pattern)


def _similar_regex(pattern: str) -> str:
    """SQL's ``SIMILAR TO`` pattern as the regular expression DuckDB's ``SIMILAR TO`` matches: ``%`` any text,
    ``_`` any character, ``.`` ``^`` ``$`` themselves, ``\\x`` the character x; bracket expressions and ``| * + ?
    {m,n} ( )`` as written (PostgreSQL's ``similar_to_escape``)."""
    out: list[str] = []
    i, depth = 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if depth:
            out.append(ch)
            depth = 0 if ch == "]" and out[-2:-1] != ["["] else depth
        elif ch == "[":
            out.append(ch)
            depth = 1
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        elif ch in ".^$":
            out.append("\\" + ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def other_engine_forms(tree: exp.Expr, sql: str) -> None:
    """Refuse what DuckDB would run with another meaning than the engine it was written for, where the parse
    tree no longer tells the forms apart (the text's tokens do):

    - ``DATETIME_DIFF(a, b, 'HOUR')`` with a quoted unit is mimic-code's PostgreSQL function (elapsed time,
      fractional); sqlglot reads it as BigQuery's ``DATETIME_DIFF(a, b, HOUR)``, the boundaries crossed;
    - ``x::numeric`` / ``CAST(x AS DECIMAL)`` without a precision is DuckDB's ``DECIMAL(18, 3)``: values are
      rounded to 3 decimals (PostgreSQL keeps every digit, MySQL and SQL Server round to an integer).

    It also gives BigQuery's ``SAFE_CAST`` of text to an integer BigQuery's meaning (:func:`_safe_cast`) and refuses
    a difference in weeks written for BigQuery or T-SQL (:func:`_week_difference`).

    Raises:
        ToolError: ``"sql_error"`` naming the construct and its DuckDB forms.
    """
    if not _OTHER_ENGINE_TEXT.search(sql):
        return
    _week_difference(sql)
    _safe_cast(tree, sql)
    if not re.search(r"datetime_diff|numeric|decimal", sql, re.IGNORECASE):
        return
    diff = any(isinstance(n, exp.DatetimeDiff) for n in tree.find_all(exp.DatetimeDiff))
    decimal = any(
        n.is_type(exp.DataType.Type.DECIMAL) and [p.name for p in n.expressions] == ["18", "3"]
        for n in tree.find_all(exp.DataType)
    )
    if not (diff or decimal):
        return
    try:
        tokens = sqlglot.Dialect.get_or_raise("duckdb").tokenize(sql)
    except SqlglotError:
        return
    for i, token in enumerate(tokens):
        after = tokens[i + 1].token_type if i + 1 < len(tokens) else None
        before = tokens[i - 1].token_type if i else None
        if decimal and token.token_type == TokenType.DECIMAL and after != TokenType.L_PAREN and before in (
            TokenType.DCOLON, TokenType.ALIAS
        ):
            raise ToolError("sql_error", f"{token.text}: {DUCKDB_FORMS['numeric']}")
        if diff and token.token_type == TokenType.VAR and token.text.upper() == "DATETIME_DIFF" and (
            after == TokenType.L_PAREN
        ):
            depth, last = 0, None
            for inner in tokens[i + 1:]:
                depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(inner.token_type, 0)
                if depth == 0:
                    break
                last = inner
            if last is not None and last.token_type == TokenType.STRING:
                raise ToolError("sql_error", f"DATETIME_DIFF(..., '{last.text}'): {DUCKDB_FORMS['datetime_diff']}")


_OTHER_ENGINE_TEXT = re.compile(r"datetime_diff|numeric|decimal|safe_cast|date_?diff", re.IGNORECASE)
"""Text :func:`other_engine_forms` needs before it looks at the tree or the tokens."""
_WEEK_DIFF = re.compile(r"\b(?:date_?diff|datetime_diff)\s*\((?:.|\n)*?\b(?:iso)?(?:week|wk|ww)\b", re.IGNORECASE)
_WEEK_UNITS = frozenset({"WEEK", "WK", "WW", "ISOWEEK", "ISOWK", "ISOWW"})
_DIFF_FUNCTIONS = frozenset({"DATEDIFF", "DATE_DIFF", "DATETIME_DIFF"})


def _week_difference(sql: str) -> None:
    """Refuse a difference in weeks with an unquoted unit: BigQuery's ``DATE_DIFF(a, b, WEEK)`` /
    ``DATETIME_DIFF(a, b, WEEK)`` and T-SQL's ``DATEDIFF(week, b, a)`` count Sunday-week boundaries (Saturday to
    Sunday is 1), sqlglot writes DuckDB's ``date_diff('week', b, a)``, whole 7-day spans (0). DuckDB's own
    ``date_diff('week', ...)`` (the unit quoted) keeps its meaning."""
    if not _WEEK_DIFF.search(sql):
        return
    try:
        tokens = sqlglot.Dialect.get_or_raise("duckdb").tokenize(sql)
    except SqlglotError:
        return
    for i, token in enumerate(tokens[:-1]):
        if token.text.upper() not in _DIFF_FUNCTIONS or tokens[i + 1].token_type != TokenType.L_PAREN:
            continue
        args: list[list[Token]] = [[]]
        depth = 0
        for inner in tokens[i + 1:]:
            depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(inner.token_type, 0)
            if depth == 0:
                break
            if depth == 1 and inner.token_type == TokenType.COMMA:
                args.append([])
            elif not (depth == 1 and inner.token_type == TokenType.L_PAREN and not args[-1]):
                args[-1].append(inner)
        units = [a[0] for a in (args[0], args[-1]) if a and a[0].token_type != TokenType.STRING]
        if any(u.text.upper() in _WEEK_UNITS for u in units):
            raise ToolError("sql_error", f"{token.text}(..., week): {DUCKDB_FORMS['week_diff']}")


_BIGQUERY_INTEGER = r"\s*[+-]?(?:0[xX][0-9a-fA-F]+|[0-9]+)\s*"


def _safe_cast(tree: exp.Expr, sql: str) -> None:
    """BigQuery's ``SAFE_CAST(x AS INT64)`` of text: NULL unless the text is an integer (or hex) literal, where
    DuckDB's ``TRY_CAST`` reads '1.5' as 2. sqlglot reads SAFE_CAST and TRY_CAST alike, so this applies when every
    ``TRY_CAST`` of the tree was written ``SAFE_CAST``; a number keeps its rounding (BigQuery rounds half away from
    zero, as DuckDB does)."""
    written = len(re.findall(r"\bsafe_cast\s*\(", sql, re.IGNORECASE))
    if not written:
        return
    casts = list(tree.find_all(exp.TryCast))
    if len(casts) != written:
        return
    for cast in casts:
        if not cast.to.is_type(*exp.DataType.INTEGER_TYPES):
            continue
        value = cast.this
        text = exp.Cast(this=value.copy(), to=exp.DataType.build("VARCHAR"))
        not_integer = exp.and_(
            exp.EQ(this=exp.Anonymous(this="typeof", expressions=[value.copy()]), expression=exp.Literal.string("VARCHAR")),
            exp.Not(this=exp.Anonymous(this="regexp_full_match", expressions=[text, exp.Literal.string(_BIGQUERY_INTEGER)])),
        )
        cast.set("this", exp.Case(ifs=[exp.If(this=not_integer, true=exp.Null())], default=value))


def _parse_sqlite(sql: str) -> exp.Expr | None:
    parsed = sqlglot.parse(sql, read="sqlite")  # a comment after the last ';' is a Semicolon "statement"
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    return statements[0] if len(statements) == 1 else None


# -- translation ------------------------------------------------------------------------------------


def translate(tree: exp.Expr, prediction_time: dt.datetime | None) -> tuple[exp.Expr, Translation]:
    """Translate one statement parsed as SQLite into DuckDB with SQLite's semantics.

    Returns:
        The DuckDB tree (generate it with ``dialect="duckdb"``) and what changed.

    Raises:
        ToolError: ``"sql_error"`` for a SQLite form that has no faithful translation (a computed
            modifier, an unknown modifier or format specifier, a malformed time literal), naming it
            and its DuckDB form; ``"clock"`` for ``'now'`` without a prediction time.
    """
    t = Translation()
    ctx = _Context(prediction_time, t)
    names = _sqlite_names(tree)
    for node in reversed(list(tree.walk(bfs=False))):  # children before their parents
        new = ctx.rewrite(node)
        if new is not None and new is not node:
            if node is tree:
                tree = new
            else:
                node.replace(new)
    for select in list(tree.find_all(exp.Select)):
        _bare_columns(select, t)
    for limit in list(tree.find_all(exp.Limit)):
        amount = _constant_text(limit.expression) if isinstance(limit.expression, exp.Expr) else None
        if amount is not None and re.fullmatch(r"\s*-\d+\s*", amount):  # SQLite: a negative LIMIT is none
            limit.pop()
            t.add("LIMIT -1", "no LIMIT (OFFSET alone)")
    t.names = _renamed(tree, names)
    return tree, t


def _first_select(tree: exp.Expr) -> exp.Select | None:
    """The select whose outputs name a statement's columns (the leftmost of a UNION)."""
    while isinstance(tree, exp.SetOperation):
        tree = tree.this
    return tree if isinstance(tree, exp.Select) else None


def _sqlite_names(tree: exp.Expr) -> dict[int, str] | None:
    """SQLite's name of each unaliased output of the statement, by position: a column's name, else its expression's
    text (function names in lower case, as models write them); ``None`` when an output is a ``*`` (the result's
    columns are then not the select's outputs one by one)."""
    select = _first_select(tree)
    if select is None or any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
                             for e in select.expressions):
        return None
    return {i: e.name if isinstance(e, exp.Column) else e.sql(dialect="sqlite", normalize_functions="lower")
            for i, e in enumerate(select.expressions) if not isinstance(e, exp.Alias)}


def _renamed(tree: exp.Expr, names: dict[int, str] | None) -> tuple[str | None, ...]:
    """:attr:`Translation.names` of the translated ``tree``: SQLite's name where the translated output lost it
    (a model reads ``julianday('now') - julianday(admittime)`` as its column, not the epoch arithmetic that
    computes it; a bare column beside ``max()`` stays ``hadm_id``, not ``arg_max_null(hadm_id, admittime)``)."""
    select = _first_select(tree)
    if select is None or not names:
        return ()
    outputs = select.expressions
    out = tuple(names.get(i) if not isinstance(e, exp.Alias) and e.output_name != names.get(i) else None
                for i, e in enumerate(outputs))
    return out if any(out) else ()


class _Context:
    def __init__(self, now: dt.datetime | None, t: Translation) -> None:
        self.now = now
        self.t = t

    def rewrite(self, node: exp.Expr) -> exp.Expr | None:
        if isinstance(node, exp.Anonymous) and _name(node) in _TIME_FUNCTIONS:
            return self.time_function(_name(node), list(node.expressions), node)
        if isinstance(node, exp.Date) and not isinstance(node.parent, exp.Cast):
            return self.time_function("date", [] if node.this is None else [node.this], node)
        if isinstance(node, exp.Format) and not (
            isinstance(node.this, exp.Literal) and "{" in node.this.this
        ):
            self.t.add("format(...)", "printf(...) (SQLite's format is printf)")
            return _printf([node.this, *node.expressions])
        if isinstance(node, exp.Anonymous) and _name(node) == "printf" and node.expressions:
            return _printf(list(node.expressions))
        if isinstance(node, exp.TimeToStr) and isinstance(node.this, exp.TsOrDsToTimestamp):
            value = node.this.this
            args = [] if isinstance(value, exp.CurrentTimestamp) else [value]
            return self.time_function("strftime", [node.args["format"], *args], node)
        if isinstance(node, exp.Anonymous) and _name(node) == "total":
            self.t.add("total(x)", "coalesce(sum(x), 0.0)")
            return exp.Coalesce(
                this=exp.Cast(this=exp.Sum(this=node.expressions[0]), to=exp.DataType.build("DOUBLE")),
                expressions=[exp.Literal.number("0.0")],
            )
        if isinstance(node, exp.Paren) and "sqlite_number" in node.this.meta:
            node.meta["sqlite_number"] = node.this.meta["sqlite_number"]
            return None
        if isinstance(node, (*_COMPARISONS, exp.Between)):
            self.compared_as_text(node)
            return None
        if isinstance(node, exp.Div):
            return self.division(node)
        if isinstance(node, exp.Mod):
            return exp.Mod(this=_p(_number(node.this)), expression=_nonzero(_number(node.expression)))
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
            node.set("this", _number(node.this))
            node.set("expression", _number(node.expression))
            return None
        if isinstance(node, exp.Neg):
            node.set("this", _p(_number(node.this)))
            return None
        if isinstance(node, (exp.Cast, exp.TryCast)):
            return self.cast(node)
        if isinstance(node, _TEXT_FUNCTIONS):
            node.set("this", _text(node.this))  # SQLite's text functions read any value as its text
            return None
        if isinstance(node, exp.Like):
            self.t.add("LIKE", "ILIKE (SQLite's LIKE ignores case)")
            return exp.ILike(
                this=_text(node.this), expression=node.expression, negate=node.args.get("negate")
            )
        if isinstance(node, exp.Round):
            node.set("this", exp.Cast(this=_number(node.this), to=exp.DataType.build("DOUBLE")))
            return None
        return None

    def compared_as_text(self, node: exp.Expr) -> None:
        """A comparison with SQLite's date text (``date()``, ``strftime()``, a literal 'YYYY-MM-DD...'), or of
        ``datetime()``/``time()`` with a text literal, compares text, as SQLite does: a time at midnight is
        after its date ('2100-01-01 00:00:00' > '2100-01-01'), not equal to it as DuckDB's TIMESTAMP-vs-DATE
        comparison has it, and ``datetime(x) > '2100'`` is true rather than a conversion error."""
        keys = ["this", "expression"] if not isinstance(node, exp.Between) else ["this", "low", "high"]
        sides = [node.args.get(k) for k in keys]
        texts = [isinstance(side, exp.Expr) and _time_text(side) for side in sides]
        timed = [isinstance(side, exp.Expr) and bool(_unparen(side).meta.get("sqlite_time")) for side in sides]
        literal = [isinstance(side, exp.Literal) and side.is_string for side in sides]
        if not any(texts) and not (any(timed) and any(literal)):  # datetime(x) > '2100' compares text too
            return None
        if all(isinstance(side, exp.Literal) for side in sides):
            return None
        for key, side in zip(keys, sides, strict=True):
            if isinstance(side, exp.Expr):
                node.set(key, _text(side))
        self.t.add("a time compared with date text", "CAST(x AS VARCHAR) on both sides (SQLite compares the text)")
        return None

    # -- arithmetic and casts --

    def division(self, node: exp.Div) -> exp.Expr:
        self.t.add("a / b", "a // b when both are integers (SQLite's integer division), NULL for b = 0")
        return exp.IntDiv(this=_p(_number(node.this)), expression=_nonzero(_number(node.expression)))

    def cast(self, node: exp.Cast | exp.TryCast) -> exp.Expr | None:
        to = node.args["to"]
        if not isinstance(to, exp.DataType):
            return None
        if to.is_type(*exp.DataType.INTEGER_TYPES):
            self.t.add("CAST(x AS INTEGER)", "CAST(trunc(x) AS BIGINT) (SQLite truncates toward zero)")
            number = exp.TryCast(this=_number(node.this), to=exp.DataType.build("DOUBLE"))
            return exp.Cast(
                this=exp.Anonymous(this="trunc", expressions=[number]), to=exp.DataType.build("BIGINT")
            )
        if to.is_type(*exp.DataType.REAL_TYPES, exp.DataType.Type.DECIMAL):
            return exp.TryCast(this=_number(node.this), to=exp.DataType.build("DOUBLE"))
        return None

    # -- date and time --

    def time_function(self, name: str, args: list[exp.Expr], node: exp.Expr) -> exp.Expr:
        fmt: str | None = None
        if name == "strftime":
            if not args:
                raise ToolError("sql_error", "strftime() needs a format: " + DUCKDB_FORMS["strftime"])
            fmt = _constant_text(args[0])
            if fmt is None:
                raise ToolError(
                    "sql_error",
                    f"strftime({_short(args[0])}, ...): the format must be literal text; "
                    + DUCKDB_FORMS["strftime"],
                )
            args = args[1:]
        value = args[0] if args else exp.Literal.string("now")
        modifiers = [self.modifier_text(name, m) for m in args[1:]]
        ts = self.time_value(name, value, modifiers)
        if name in ("datetime", "date", "time"):
            kind = {"datetime": "TIMESTAMP", "date": "DATE", "time": "TIME"}[name]
            self.t.add(f"{name}(...)", f"a {kind}")
            if name != "date" and not {m.strip().lower() for m in modifiers} & {"subsec", "subsecond"}:
                ts = exp.Anonymous(this="date_trunc", expressions=[exp.Literal.string("second"), ts])
            out = ts if isinstance(ts, exp.TryCast) and ts.to.is_type(kind) else exp.TryCast(
                this=ts, to=exp.DataType.build(kind)
            )
            # SQLite's date() is text 'YYYY-MM-DD', datetime() and time() text too (see compared_as_text)
            out.meta["sqlite_time_text" if name == "date" else "sqlite_time"] = True
            return out
        if name == "julianday":
            self.t.add("julianday(x)", "epoch(x) / 86400 + 2440587.5")
            return _julian(ts)
        if name == "unixepoch":
            self.t.add("unixepoch(x)", "epoch(x)")
            return _epoch_seconds(ts)
        assert fmt is not None
        return self.strftime(fmt, ts)

    def modifier_text(self, name: str, node: exp.Expr) -> str:
        text = _constant_text(node)
        if text is None:
            raise ToolError(
                "sql_error",
                f"{name}(): the modifier {_short(node)} must be literal text such as '-7 days'; for a computed "
                "amount write DuckDB: x + to_days(n), x + to_hours(n), x + to_months(n)",
            )
        return text

    def time_value(self, name: str, value: exp.Expr, modifiers: list[str]) -> exp.Expr:
        """A TIMESTAMP expression for a SQLite time value with its modifiers applied in order."""
        mods = [m.lower() for m in modifiers]
        numeric = _is_numeric(value)
        if mods and mods[0] in ("unixepoch", "julianday", "auto"):
            kind = mods.pop(0)
            if kind == "auto":
                raise ToolError(
                    "sql_error",
                    f"{name}(x, 'auto'): say 'unixepoch' or 'julianday'; DuckDB: make_timestamp(x * 1000000)",
                )
            ts = _from_epoch(value) if kind == "unixepoch" else _from_julian(value)
            self.t.add(f"'{kind}'", "make_timestamp(microseconds)")
        elif numeric:
            ts = _from_julian(value)
            self.t.add("a julian day number", "make_timestamp(CAST((x - 2440587.5) * 86400000000 AS BIGINT))")
        elif isinstance(value, exp.Literal) and value.is_string:
            ts = self.literal_time(name, value.this)
        elif isinstance(value, exp.Null):
            return exp.Cast(this=exp.Null(), to=exp.DataType.build("TIMESTAMP"))
        else:
            ts = exp.TryCast(this=value, to=exp.DataType.build("TIMESTAMP"))
        month_shift: tuple[exp.Expr, int, float] | None = None
        for i, mod in enumerate(mods):
            base = ts
            mod = mod.strip() if not _MODIFIER.match(mod.strip()) else mod
            if mod in ("localtime", "utc", "subsec", "subsecond", "ceiling"):
                if mod in ("localtime", "utc"):
                    self.t.add(f"'{mod}'", "nothing: the episode's times have no time zone")
                continue
            if mod == "floor":
                if month_shift is None:
                    raise ToolError("sql_error", f"{name}(): 'floor' must follow a month or year modifier")
                shifted_base, months, frac = month_shift
                ts = _add_months(shifted_base, months, clamp=True, fraction_days=frac)
                self.t.add("'floor'", "x + INTERVAL n MONTH (DuckDB clamps to the month's last day)")
                continue
            month_shift = None
            if mod.startswith("start of "):
                unit = mod.removeprefix("start of ").strip()
                if unit not in ("day", "month", "year"):
                    raise ToolError(
                        "sql_error",
                        f"{name}(): unknown modifier '{modifiers[i]}'; " + DUCKDB_FORMS["start of"],
                    )
                ts = exp.Anonymous(this="date_trunc", expressions=[exp.Literal.string(unit), ts])
                self.t.add(f"'start of {unit}'", f"date_trunc('{unit}', x)")
                continue
            if mod.startswith("weekday"):
                day = mod.removeprefix("weekday").strip()
                if not re.fullmatch(r"[0-6]", day):
                    raise ToolError(
                        "sql_error",
                        f"{name}(): 'weekday N' needs N from 0 (Sunday) to 6; " + DUCKDB_FORMS["weekday"],
                    )
                ahead = exp.Mod(
                    this=exp.Paren(this=exp.Sub(
                        this=exp.Literal.number(int(day) + 7),
                        expression=exp.Anonymous(this="dayofweek", expressions=[ts]),
                    )),
                    expression=exp.Literal.number(7),
                )  # fmt: skip
                ts = exp.Add(this=ts, expression=exp.Anonymous(this="to_days", expressions=[ahead]))
                self.t.add(f"'weekday {day}'", f"x + to_days(({int(day) + 7} - dayofweek(x)) % 7)")
                continue
            match = _MODIFIER.match(mod)
            if match:
                sign = -1 if match.group(1) == "-" else 1
                amount, unit = float(match.group(2)) * sign, match.group(3)
                if unit in ("month", "year"):
                    months = int(amount) * (12 if unit == "year" else 1)
                    frac = (amount - int(amount)) * (365.0 if unit == "year" else 30.0)
                    ts = _add_months(base, months, clamp=False, fraction_days=frac)
                    month_shift = (base, months, frac)
                    self.t.add(
                        f"'{match.group(1)}N {unit}'",
                        f"x + INTERVAL N {unit.upper()} (SQLite rolls an overflowing day into the next month)",
                    )
                else:
                    ts = _add_micros(ts, amount * _UNITS[unit])
                    self.t.add(f"'{match.group(1)}N {unit}'", f"x + INTERVAL N {unit.upper()}")
                continue
            match = _CLOCK_SHIFT.match(mod)
            if match:
                sign = -1 if match.group(1) == "-" else 1
                seconds = int(match.group(2)) * 3600 + int(match.group(3)) * 60 + float(match.group(4) or 0)
                ts = _add_micros(ts, sign * seconds * 1_000_000)
                self.t.add("'±HH:MM'", "x + INTERVAL 'HH:MM' HOUR TO MINUTE")
                continue
            raise ToolError(
                "sql_error",
                f"{name}(): unknown or unsupported modifier '{modifiers[i]}' (SQLite would return NULL); DuckDB: "
                + DUCKDB_FORMS["modifier"],
            )
        return ts

    def literal_time(self, name: str, text: str) -> exp.Expr:
        if text.strip().lower() == "now":
            if self.now is None:
                raise ToolError(
                    "clock",
                    f"{name}('now'): 'now' is the prediction time, and this call has none; write the time",
                )
            stamp = self.now.isoformat(sep=" ")
            self.t.add("'now'", f"TIMESTAMP '{stamp}' (the prediction time)")
            return _timestamp(stamp)
        match = _TIME_TEXT.match(text)
        if not match or not (match.group(1) or match.group(4)):
            raise ToolError(
                "sql_error",
                f"{name}('{text[:40]}'): not a time SQLite reads (YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], HH:MM[:SS], 'now')",
            )
        y, mo, d, h, mi, s, frac = match.groups()
        try:
            value = dt.datetime(
                int(y or 2000), int(mo or 1), int(d or 1), int(h or 0), int(mi or 0), int(s or 0),
                round(float(frac or 0) * 1_000_000),
            )  # fmt: skip
        except ValueError:
            raise ToolError("sql_error", f"{name}('{text[:40]}'): not a valid date") from None
        return _timestamp(value.isoformat(sep=" "))

    def strftime(self, fmt: str, ts: exp.Expr) -> exp.Expr:
        """``strftime`` with SQLite's specifiers as DuckDB text (marked with its number form for arithmetic)."""
        parts: list[exp.Expr] = []
        duck = ""

        def flush() -> None:
            nonlocal duck
            if duck:
                parts.append(exp.Anonymous(this="strftime", expressions=[ts, exp.Literal.string(duck)]))
                duck = ""

        specs = re.findall(r"%.|[^%]+|%$", fmt)
        for piece in specs:
            if not piece.startswith("%"):
                duck += piece
                continue
            spec = piece[1:]
            if spec not in _SQLITE_SPECS:
                raise ToolError(
                    "sql_error",
                    f"strftime('{fmt}'): SQLite has no specifier %{spec}; " + DUCKDB_FORMS["strftime"],
                )
            if spec in _SAME_SPECS:
                duck += piece
            elif spec in "FRT":
                duck += {"F": "%Y-%m-%d", "R": "%H:%M", "T": "%H:%M:%S"}[spec]
            elif spec == "f":
                duck += "%S.%g"
            else:
                flush()
                parts.append(_spec_text(spec, ts))
                self.t.add(f"strftime('%{spec}')", _SPEC_FORMS[spec])
        flush()
        if not parts:
            text: exp.Expr = exp.Literal.string("")
        else:
            text = parts[0]
            for p in parts[1:]:
                text = exp.DPipe(this=text, expression=p, safe=True)
            text = _p(text)
        self.t.add("strftime(format, x)", "strftime(x, format)")
        text.meta["sqlite_number"] = _strftime_number(specs, text, ts)
        if fmt.startswith(("%Y-", "%F")):  # date text ('2100-01-31...'); '%j', '%Y' alone compare as numbers
            text.meta["sqlite_time_text"] = True
        return text


_PRINTF_KINDS = {**dict.fromkeys("sqQwz", "VARCHAR"), **dict.fromkeys("dioxXu", "BIGINT"),
                 **dict.fromkeys("fFeEgG", "DOUBLE")}  # fmt: skip


def _printf(args: list[exp.Expr]) -> exp.Expr:
    """SQLite's ``printf(format, ...)`` in DuckDB: each argument converted as SQLite's printf reads it for
    its specifier (DuckDB's printf refuses ``%s`` of a number, ``%f`` of an integer, ``%d`` of a real or
    text): text for ``%s``, an integer truncated toward zero for ``%d``, a real for ``%f``; NULL is ''
    or 0 as in SQLite. A format that is not literal text is left as written."""
    fmt = _constant_text(args[0])
    if fmt is None:
        return exp.Anonymous(this="printf", expressions=args)
    specs = [m.group(1) for m in re.finditer(r"%[-+ 0#,!]*(?:\d+|\*)?(?:\.(?:\d+|\*))?l{0,2}(.)", fmt)]
    out = [args[0]]
    values = iter(args[1:])
    for spec in specs:
        if spec == "%":
            continue
        value = next(values, None)
        if value is None:
            break
        kind = _PRINTF_KINDS.get(spec)
        if kind == "VARCHAR":
            value = exp.Coalesce(this=_text(value), expressions=[exp.Literal.string("")])
        elif kind == "BIGINT":
            number = exp.TryCast(this=_number(value), to=exp.DataType.build("DOUBLE"))
            value = exp.Coalesce(
                this=exp.Cast(
                    this=exp.Anonymous(this="trunc", expressions=[number]), to=exp.DataType.build("BIGINT")
                ),
                expressions=[exp.Literal.number(0)],
            )
        elif kind == "DOUBLE":
            value = exp.Coalesce(
                this=exp.TryCast(this=_number(value), to=exp.DataType.build("DOUBLE")),
                expressions=[exp.Literal.number("0.0")],
            )
        out.append(value)
    out.extend(values)
    return exp.Anonymous(this="printf", expressions=out)


_SPEC_FORMS = {
    "J": "epoch(x) / 86400 + 2440587.5",
    "s": "epoch(x)",
    "e": "day(x)",
    "k": "hour(x)",
    "l": "hour(x) on a 12-hour clock",
    "P": "lower(strftime(x, '%p'))",
    "g": "strftime(x, '%G') % 100",
}


def _spec_text(spec: str, ts: exp.Expr) -> exp.Expr:
    def text(e: exp.Expr) -> exp.Expr:
        return exp.Cast(this=e, to=exp.DataType.build("VARCHAR"))

    def padded(e: exp.Expr, width: int, pad: str) -> exp.Expr:
        return exp.Anonymous(
            this="lpad", expressions=[text(e), exp.Literal.number(width), exp.Literal.string(pad)]
        )

    def strf(f: str) -> exp.Expr:
        return exp.Anonymous(this="strftime", expressions=[ts, exp.Literal.string(f)])

    if spec == "J":
        return exp.Anonymous(this="printf", expressions=[exp.Literal.string("%.16g"), _julian(ts)])
    if spec == "s":
        return text(_epoch_seconds(ts))
    if spec == "e":
        return padded(exp.Anonymous(this="day", expressions=[ts]), 2, " ")
    if spec == "k":
        return padded(exp.Anonymous(this="hour", expressions=[ts]), 2, " ")
    if spec == "l":
        return exp.Anonymous(
            this="lpad", expressions=[strf("%-I"), exp.Literal.number(2), exp.Literal.string(" ")]
        )
    if spec == "P":
        return exp.Lower(this=strf("%p"))
    if spec == "g":
        return exp.Anonymous(this="right", expressions=[strf("%G"), exp.Literal.number(2)])
    raise AssertionError(spec)


def _strftime_number(pieces: list[str], text: exp.Expr, ts: exp.Expr) -> exp.Expr:
    """The number SQLite reads from a ``strftime`` result in arithmetic: its leading digits (an integer,
    or a real when a decimal point and digits follow), 0 when it starts with anything else."""
    if pieces == ["%J"]:
        return _julian(ts)
    if pieces == ["%s"]:
        return _epoch_seconds(ts)
    digits, real = 0, False
    for i, piece in enumerate(pieces):
        spec = piece[1:] if piece.startswith("%") and len(piece) == 2 else None
        if spec is not None and spec in _NUMBER_SPECS:
            digits += 1
            real = real or spec in "Jf"
            continue
        if spec is None and piece[0].isdigit():
            digits += 1
            continue
        if (
            spec is None
            and piece.startswith(".")
            and digits
            and (
                piece[1:2].isdigit()
                or (len(piece) == 1 and i + 1 < len(pieces) and pieces[i + 1][1:] in _NUMBER_SPECS)
            )
        ):
            real = True
        break
    if not digits:
        return exp.Case(ifs=[exp.If(this=exp.Not(this=exp.Is(this=text.copy(), expression=exp.Null())),
                                    true=exp.Literal.number(0))])  # fmt: skip
    pattern = r"^[-+]?\d+(\.\d+)?" if real else r"^[-+]?\d+"
    found = exp.Anonymous(this="regexp_extract", expressions=[text.copy(), exp.Literal.string(pattern)])
    return exp.TryCast(this=found, to=exp.DataType.build("DOUBLE" if real else "BIGINT"))


def _p(node: exp.Expr) -> exp.Expr:
    """``node`` in parentheses when it is an operator (sqlglot prints trees as built, without precedence)."""
    return (
        exp.Paren(this=node)
        if isinstance(node, (exp.Binary, exp.Unary)) and not isinstance(node, exp.Paren)
        else node
    )


def _julian(ts: exp.Expr) -> exp.Expr:
    """SQLite's julian day: whole milliseconds since the julian epoch divided by a day's milliseconds."""
    ms = exp.Add(
        this=exp.Anonymous(this="epoch_ms", expressions=[ts]), expression=exp.Literal.number(_JULIAN_EPOCH_MS)
    )
    return _p(exp.Div(this=exp.Paren(this=ms), expression=exp.Literal.number(f"{_DAY_MS}.0")))


def _epoch_seconds(ts: exp.Expr) -> exp.Expr:
    return exp.Cast(
        this=exp.Floor(this=exp.Anonymous(this="epoch", expressions=[ts])), to=exp.DataType.build("BIGINT")
    )


def _timestamp(text: str) -> exp.Expr:
    return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("TIMESTAMP"))


def _from_julian(value: exp.Expr) -> exp.Expr:
    """A julian day number as SQLite reads it: rounded to whole milliseconds."""
    ms = exp.Cast(
        this=exp.Anonymous(this="round", expressions=[
            exp.Mul(this=_p(_number(value)), expression=exp.Literal.number(f"{_DAY_MS}.0"))
        ]),
        to=exp.DataType.build("BIGINT"),
    )  # fmt: skip
    micros = exp.Mul(
        this=exp.Paren(this=exp.Sub(this=ms, expression=exp.Literal.number(_JULIAN_EPOCH_MS))),
        expression=exp.Literal.number(1000),
    )
    return _make_timestamp(micros)


def _from_epoch(value: exp.Expr) -> exp.Expr:
    return _make_timestamp(exp.Mul(this=_p(_number(value)), expression=exp.Literal.number(1_000_000)))


def _make_timestamp(micros: exp.Expr) -> exp.Expr:
    whole = exp.Cast(this=exp.Anonymous(this="round", expressions=[micros]), to=exp.DataType.build("BIGINT"))
    return exp.Anonymous(this="make_timestamp", expressions=[whole])  # a function call: no parentheses needed


def _add_micros(ts: exp.Expr, micros: float) -> exp.Expr:
    if micros == 0:
        return ts
    amount = round(micros)
    for unit, size in (
        ("day", _DAY_US),
        ("hour", 3_600_000_000),
        ("minute", 60_000_000),
        ("second", 1_000_000),
    ):
        if amount % size == 0:
            interval = exp.Interval(
                this=exp.Literal.string(str(amount // size)), unit=exp.Var(this=unit.upper())
            )
            return exp.Add(this=ts, expression=interval)
    return exp.Add(
        this=ts, expression=exp.Anonymous(this="to_microseconds", expressions=[exp.Literal.number(amount)])
    )


def _add_months(ts: exp.Expr, months: int, *, clamp: bool, fraction_days: float) -> exp.Expr:
    """``ts`` plus whole months: clamped to the month's end (DuckDB, SQLite's 'floor') or, as SQLite by
    default, the day counted on from the first of the target month (2001-03-31 + 1 month = 2001-05-01)."""
    out: exp.Expr = ts
    if months and clamp:
        out = exp.Add(
            this=ts, expression=exp.Interval(this=exp.Literal.string(str(months)), unit=exp.Var(this="MONTH"))
        )
    elif months:
        first = exp.Anonymous(this="date_trunc", expressions=[exp.Literal.string("month"), ts])
        moved = exp.Add(
            this=first,
            expression=exp.Interval(this=exp.Literal.string(str(months)), unit=exp.Var(this="MONTH")),
        )
        out = exp.Add(this=moved, expression=exp.Paren(this=exp.Sub(this=ts, expression=first.copy())))
    return _add_micros(out, fraction_days * _DAY_US)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_DATE_TEXT = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _time_text(node: exp.Expr) -> bool:
    """``node`` is SQLite time text a TIMESTAMP would compare otherwise: ``date()``, ``strftime()``, 'YYYY-MM-DD...'."""
    while isinstance(node, exp.Paren):
        node = node.this
    if node.meta.get("sqlite_time_text"):
        return True
    return isinstance(node, exp.Literal) and node.is_string and _DATE_TEXT.match(str(node.this)) is not None


_TEXT_FUNCTIONS = (exp.Substring, exp.StrPosition, exp.Length, exp.Replace, exp.Lower, exp.Upper, exp.Trim)


def _text(node: exp.Expr) -> exp.Expr:
    """``node`` as SQLite's text functions read it: its text (a TIMESTAMP as 'YYYY-MM-DD HH:MM:SS')."""
    if isinstance(node, exp.Literal) and node.is_string:
        return node
    if isinstance(node, exp.Cast) and node.to.is_type(*exp.DataType.TEXT_TYPES):
        return node
    return exp.Cast(this=node, to=exp.DataType.build("VARCHAR"))


def _nonzero(node: exp.Expr) -> exp.Expr:
    return exp.Nullif(this=node, expression=exp.Literal.number(0))


def _number(node: exp.Expr) -> exp.Expr:
    """``node`` as SQLite uses it in arithmetic: text from a SQLite function becomes its leading number."""
    exact = node.meta.get("sqlite_number")
    return _p(exact) if isinstance(exact, exp.Expr) else node


def _is_numeric(node: exp.Expr) -> bool:
    if isinstance(node, exp.Paren):
        return _is_numeric(node.this)
    if isinstance(node, exp.Literal):
        return not node.is_string
    if isinstance(node, exp.Neg):
        return _is_numeric(node.this)
    return isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv)) or (
        isinstance(node, exp.Anonymous) and _name(node) == "epoch_us"
    )


def _constant_text(node: exp.Expr) -> str | None:
    """The text of a literal or of a concatenation of literals (``'-' || 7 || ' days'``); else None."""
    if isinstance(node, exp.Literal):
        return str(node.this)
    if isinstance(node, exp.Paren):
        return _constant_text(node.this)
    if isinstance(node, exp.Neg):
        inner = _constant_text(node.this)
        return None if inner is None else f"-{inner}"
    if isinstance(node, exp.DPipe):
        left, right = _constant_text(node.this), _constant_text(node.expression)
        return None if left is None or right is None else left + right
    return None


def _short(node: exp.Expr) -> str:
    text = node.sql(dialect="sqlite")
    return text if len(text) <= 60 else text[:60] + "…"


# -- bare columns beside aggregates -------------------------------------------------------------------


def _scope_nodes(root: exp.Expr) -> Iterator[exp.Expr]:
    """Nodes of ``root`` that belong to its own query level (not inside a sub-query, window or aggregate)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, (exp.Subquery, exp.Select, exp.Union, exp.Window, exp.AggFunc)):
            continue
        yield node
        stack.extend(node.iter_expressions())


def _aggregates(select: exp.Select) -> list[exp.AggFunc]:
    found = []
    roots = [*select.expressions, select.args.get("having"), select.args.get("order")]
    for root in roots:
        if root is None:
            continue
        stack = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, (exp.Subquery, exp.Select, exp.Window)):
                continue
            if isinstance(node, exp.AggFunc):
                found.append(node)
                continue
            stack.extend(node.iter_expressions())
    return found


def _bare_columns(select: exp.Select, t: Translation) -> None:
    """Wrap columns that are neither grouped nor aggregated as SQLite reads them (``arg_max_null``/``any_value``)."""
    aggs = _aggregates(select)
    group = select.args.get("group")
    if not aggs and group is None:
        return
    outputs = {e.alias_or_name.lower(): e.unalias() for e in select.expressions if isinstance(e, exp.Alias)}
    keys: set[str] = set()
    for key in group.expressions if group is not None else []:
        if (
            isinstance(key, exp.Literal)
            and not key.is_string
            and 1 <= int(key.this) <= len(select.expressions)
        ):
            key = select.expressions[int(key.this) - 1].unalias()
        elif isinstance(key, exp.Column) and not key.table and key.name.lower() in outputs:
            key = outputs[key.name.lower()]
        keys.add(key.sql(dialect="duckdb").lower())
    extremes = [a for a in aggs if isinstance(a, (exp.Max, exp.Min)) and not a.expressions]
    sources = {s.alias_or_name.lower() for s in _sources(select)}

    def grouped(col: exp.Expr, root: exp.Expr) -> bool:
        node: exp.Expr | None = col
        while node is not None:
            if node.sql(dialect="duckdb").lower() in keys:
                return True
            if node is root:
                return False
            node = node.parent
        return False

    def wrap(root: exp.Expr, *, order: bool) -> None:
        for col in [n for n in _scope_nodes(root) if isinstance(n, exp.Column)]:
            if isinstance(col.this, exp.Star):
                continue
            if col.table and col.table.lower() not in sources:
                continue  # a column of an outer query
            if order and not col.table and col.name.lower() in outputs:
                continue  # an output alias
            if grouped(col, root):
                continue
            if len(extremes) == 1:
                # the _null forms: SQLite gives the value of the extreme's row, NULL too (arg_max skips NULLs)
                fn = "arg_max_null" if isinstance(extremes[0], exp.Max) else "arg_min_null"
                new: exp.Expr = exp.Anonymous(this=fn, expressions=[col.copy(), extremes[0].this.copy()])
                t.add("a bare column beside max()/min()", f"{fn}(col, x)")
            else:
                new = exp.AnyValue(this=col.copy())
                t.add("a bare column beside an aggregate", "any_value(col) (or GROUP BY col)")
            col.replace(new)

    for e in select.expressions:
        wrap(e, order=False)
    if select.args.get("having") is not None:
        wrap(select.args["having"], order=False)
    if select.args.get("order") is not None:
        wrap(select.args["order"], order=True)


def _sources(select: exp.Select) -> list[exp.Expr]:
    out: list[exp.Expr] = []
    from_ = select.args.get("from") or select.args.get("from_")
    if from_ is not None:
        out.append(from_.this)
    for join in select.args.get("joins") or []:
        out.append(join.this)
    return out


GuardHook = Callable[[exp.Expr | None, str], exp.Expr | None]
"""What :func:`~clinseek.tools._sqlguard.guard_sql` calls after parsing: (DuckDB tree or None, text) -> tree or None."""
