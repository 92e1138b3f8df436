"""What the SQL tools say about a construct DuckDB does not have: its DuckDB form, and the error messages.

A model writes SQL for the engine it knows (SQLite, PostgreSQL, BigQuery, T-SQL, MySQL, Oracle). Every refusal
and every note of the SQL path names the construct and what to write in DuckDB instead (:data:`DUCKDB_FORMS`):
:func:`hint_for` finds the forms a text names (the SQL, a DuckDB error message, a construct's label),
:func:`hint_for_sql` those only the query's text shows, and :func:`parse_error`, :func:`unanalysable`,
:func:`unfaithful` and :func:`without_guess` word the messages of a query that does not parse, cannot be
analysed, or would run with another meaning. Used by the SQLite translator (``_sqlite_dialect``), other engines'
forms (``_sqlengines``), the guard (``_sqlguard``) and the SQL tool (``_ehr_sql``); it imports none of them.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from ..episode import duckdb_syntax_error

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
    "week_diff": "a difference in weeks counts Sunday-week boundaries in T-SQL's DATEDIFF(week, b, a) (and BigQuery's "
    "DATE_DIFF(a, b, WEEK)), where DuckDB's date_diff('week', b, a) counts whole 7-day spans -> DuckDB "
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
    "integer overflow": "an integer result beyond its type stops DuckDB with this error, where SQLite's integers are "
    "64-bit and beyond 64 bits turn into a REAL (9223372036854775807 + 1 is 9.223372036854776e+18) -> CAST(a AS "
    "BIGINT) * b (INTEGER columns and literals are 32 bits here), CAST(a AS DOUBLE) * b for a REAL",
    "int64 overflow": "a 64-bit integer result beyond 64 bits stops DuckDB with this error; SQLite's results beyond "
    "64 bits turn into a REAL instead (9223372036854775807 + 1 is 9.223372036854776e+18), only in the rows that "
    "overflow, and a DuckDB column has one type -> CAST(a AS DOUBLE) * b (SQLite: CAST(a AS REAL) * b) gives every "
    "row the REAL, SQLite's value in the rows that overflow (in the others the same number as a REAL, exact below "
    "2^53); sum(CAST(a AS DOUBLE) * b) for a sum of such products, as SQLite adds REALs",
    "from_unixtime": "FROM_UNIXTIME(n) is MySQL -> DuckDB make_timestamp(CAST(n * 1000000 AS BIGINT)) (the episode's "
    "times have no time zone)",
}
"""SQLite construct -> its DuckDB form, quoted in every refusal and note (the model learns the dialect)."""


def function_name(node: exp.Expr) -> str:
    """The lower-case SQL name of a function node (``datetime``); the node's key otherwise."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower() if isinstance(node, exp.Func) else node.key


def unparen(node: exp.Expr) -> exp.Expr:
    """``node`` without the parentheses around it."""
    while isinstance(node, exp.Paren):
        node = node.this
    return node


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
        "integer overflow": r"overflow in (?:addition|subtraction|multiplication|negation) of (?:u?int(?:8|16|32|128)|"
        r"uint64)\b",
        "int64 overflow": r"overflow in (?:addition|subtraction|multiplication|negation) of int64\b",
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
        DUCKDB_FORMS[key] + (_overflow_value(text) if key == "int64 overflow" and message else "")
        for key, pattern in _HINTS.items()
        if not (message and key == "is") and pattern.search(low)
    )


_OVERFLOW = re.compile(r"Overflow in (addition|subtraction|multiplication) of INT64 \((-?\d+) [-+*] (-?\d+)\)")


def _overflow_value(message: str) -> str:
    """The REAL SQLite gives the operation DuckDB's overflow ``message`` names (``(a * b)``: ``float(a) * float(b)``,
    SQLite's ``sqlite3AddInt64``/``sqlite3MulInt64`` fallback); "" when the message names none."""
    found = _OVERFLOW.search(message)
    if found is None:
        return ""
    kind, a, b = found.group(1), float(found.group(2)), float(found.group(3))
    value = {"addition": a + b, "subtraction": a - b, "multiplication": a * b}[kind]
    sign = {"addition": "+", "subtraction": "-", "multiplication": "*"}[kind]
    return f" (here SQLite gives {found.group(2)} {sign} {found.group(3)} the REAL {value!r})"


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


GENERIC_FORM = "write DuckDB SQL (e.g. x - INTERVAL 1 DAY, date_trunc('month', x), strftime(x, '%Y'))"


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
        return "the query could not be analysed; " + (hint_for(sql) or GENERIC_FORM)
    for node in reversed(list(tree.walk(bfs=False))):  # the innermost construct that fails
        if isinstance(node, exp.Func) and not isinstance(node, exp.Connector):
            try:
                node.sql(dialect="duckdb")
            except Exception:
                name = function_name(node)
                return f"{name}() as written here is not DuckDB SQL: {hint_for(name) or GENERIC_FORM}"
    return "the query could not be analysed; " + (hint_for(sql) or GENERIC_FORM)


def unfaithful(sql: str, err: Exception) -> str:
    """Why a query cannot run as written: sqlglot's DuckDB reading of a construct DuckDB does not have
    would drop part of it (``to_char(x, 'YYYY-MM')`` written back as ``CAST(x AS TEXT)``); the construct
    and its DuckDB form. The query is refused rather than run with another meaning."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(err)).strip()[:300]
    hint = hint_for(text, message=True) or hint_for(sql, message=True)
    said = f"this query cannot run as written (DuckDB has no such construct): {text}"
    return said + (f" ({hint})" if hint else "")
