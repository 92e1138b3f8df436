"""SQL written for other engines (PostgreSQL, BigQuery, MySQL, T-SQL) that DuckDB would run with another meaning.

sqlglot reads such SQL as DuckDB and writes it back; where the DuckDB text would mean something else, the guard
(``_sqlguard``) either gives it the meaning of the engine it was written for (:func:`keep_meaning`, on every node
of the final tree: interval units, ``DATE_ADD`` of text, ``SIMILAR TO``, BigQuery's ``FLOAT64`` and
``TIMESTAMP_DIFF``, PostgreSQL's ``LIKE ANY``) or refuses it naming the DuckDB form (:func:`other_engine_forms`:
PostgreSQL's quoted ``DATETIME_DIFF`` unit, ``NUMERIC`` without a precision, differences in weeks; it also gives
BigQuery's ``SAFE_CAST`` of text to an integer BigQuery's meaning, and ``EXTRACT(DAYOFWEEK / WEEK FROM x)`` in a
query written for BigQuery, :func:`bigquery_marker`, BigQuery's numbering). SQLite is the SQLite translator's
(``_sqlite_dialect``); this module does not import it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.errors import SqlglotError
from sqlglot.tokenizer_core import Token
from sqlglot.tokens import TokenType

from ..errors import ToolError
from ._sqlhints import DUCKDB_FORMS, unparen

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


_DIFF_PARTS = frozenset({"NANOSECOND", "MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "ISOWEEK",
                         "MONTH", "QUARTER", "YEAR", "ISOYEAR"})  # fmt: skip
"""The date parts of BigQuery's ``DATE_DIFF`` and ``DATETIME_DIFF`` (besides ``WEEK(<WEEKDAY>)``)."""
_WEEKDAYS = ("SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY")
_DUCKDB_PARTS = frozenset(p.lower() for p in _DUCKDB_INTERVAL_UNITS) | {"isoyear", "week", "weeks"}


def _bare_part(node: exp.Expr | None) -> tuple[str, str | None] | None:
    """``(part, weekday)`` when ``node`` is a bare BigQuery date part (``DAY``, ``WEEK(MONDAY)``): an unquoted word the
    DuckDB reading takes for a column; ``None`` otherwise."""
    if isinstance(node, exp.Week) and isinstance(day := node.this, exp.Column) and not day.table and (
        day.name.upper() in _WEEKDAYS and not day.this.quoted
    ):
        return "WEEK", day.name.upper()
    if isinstance(node, exp.Column) and not node.table and isinstance(node.this, exp.Identifier) and (
        not node.this.quoted and node.name.upper() in _DIFF_PARTS
    ):
        return node.name.upper(), None
    return None


def _bigquery_diff(default: Callable[[list[exp.Expr]], exp.Expr]) -> Callable[[list[exp.Expr]], exp.Expr]:
    """The reading of ``DATE_DIFF`` / ``DATETIME_DIFF``: BigQuery's ``(end, start, PART)`` (a bare part last) as BigQuery
    counts (:func:`_boundaries`); anything else as ``default`` reads it (DuckDB's ``date_diff('day', start, end)``,
    mimic-code's ``DATETIME_DIFF(a, b, 'HOUR')``, which the guard refuses)."""
    def build(args: list[exp.Expr]) -> exp.Expr:
        part = _bare_part(args[2]) if len(args) == 3 else None
        first = args[0] if args else None
        if part is None or (isinstance(first, exp.Literal) and first.is_string and first.name.lower() in _DUCKDB_PARTS):
            return default(args)
        return _boundaries(args[0], args[1], *part)
    return build


def _boundaries(end: exp.Expr, start: exp.Expr, part: str, weekday: str | None) -> exp.Expr:
    """BigQuery's ``DATE_DIFF(end, start, part)`` (and ``DATETIME_DIFF``): the ``part`` boundaries from ``start`` to
    ``end``, negative when ``end`` is earlier (date_functions: "the number of unit boundaries between two DATE values";
    DuckDB's ``date_diff(part, start, end)`` counts them so); ``WEEK`` weeks begin on Sunday, ``WEEK(<WEEKDAY>)`` on that
    day, ``ISOWEEK`` on Monday (DuckDB's ``date_diff('week', ...)`` counts whole 7-day spans instead), ``NANOSECOND``
    a thousand per microsecond (DuckDB has none)."""
    def diff(unit: str, a: exp.Expr, b: exp.Expr) -> exp.Expr:
        return exp.Anonymous(this="date_diff", expressions=[exp.Literal.string(unit), a, b])

    if part == "NANOSECOND":
        return exp.Paren(this=exp.Mul(this=diff("microsecond", start, end), expression=exp.Literal.number(1000)))
    if part not in ("WEEK", "ISOWEEK"):
        return diff(part.lower(), start, end)
    shift = (1 - _WEEKDAYS.index(weekday or ("MONDAY" if part == "ISOWEEK" else "SUNDAY"))) % 7

    def week_start(value: exp.Expr) -> exp.Expr:  # DuckDB's weeks begin on Monday: the weekday moved onto Monday
        moved: exp.Expr = exp.Cast(this=value, to=exp.DataType.build("TIMESTAMP"))
        if shift:
            moved = exp.Add(this=moved, expression=exp.Interval(this=exp.Literal.string(str(shift)),
                                                                unit=exp.Var(this="DAY")))
        return exp.Anonymous(this="date_trunc", expressions=[exp.Literal.string("week"), moved])

    return exp.Paren(this=exp.IntDiv(this=diff("day", week_start(start), week_start(end)),
                                     expression=exp.Literal.number(7)))


class ClinseekDuckDB(DuckDB):
    """DuckDB as the SQL guard reads a query: sqlglot's DuckDB reading, except BigQuery's ``DATE_DIFF(end, start, DAY)``
    and ``DATETIME_DIFF`` with a bare date part (sqlglot's DuckDB reader takes ``end`` for DuckDB's quoted unit and
    the part for a column, a binder error), read as BigQuery counts (:func:`_boundaries`)."""

    class Parser(DuckDB.Parser):
        FUNCTIONS: ClassVar[dict[str, Callable[..., exp.Expr]]] = {
            **DuckDB.Parser.FUNCTIONS,
            "DATE_DIFF": _bigquery_diff(DuckDB.Parser.FUNCTIONS["DATE_DIFF"]),
            "DATETIME_DIFF": _bigquery_diff(exp.DatetimeDiff.from_arg_list),
        }


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
    elif isinstance(node, exp.TimestampDiff) and isinstance(unit := node.args.get("unit"), (exp.Var, exp.Week)) and (
        not (isinstance(node.this, exp.Column) and node.this.name.upper() in _DUCKDB_INTERVAL_UNITS)
    ):  # BigQuery's TIMESTAMP_DIFF(a, b, HOUR) counts whole hours (sqlglot writes date_diff: boundaries crossed);
        # MySQL's TIMESTAMPDIFF(HOUR, a, b) (HOUR read as a column) is refused by the guard
        part = unit.name.upper() if isinstance(unit, exp.Var) else "WEEK"
        if part not in _WHOLE_UNITS and part != "NANOSECOND":
            written = unit.sql()
            whole_units = "" if "WEEK" in part else f"; whole {part.lower()}s elapsed: DuckDB date_sub('{part.lower()}', b, a)"
            raise ToolError("sql_error", f"TIMESTAMP_DIFF(a, b, {written}): BigQuery's TIMESTAMP_DIFF takes NANOSECOND "
                            f"to DAY only (a DAY is 24 hours) and refuses {written}; DATETIME_DIFF(a, b, {written}) counts "
                            f"the {written} boundaries from b to a (read here as BigQuery counts them){whole_units}")
        whole: exp.Expr = exp.Anonymous(this="date_sub", expressions=[
            exp.Literal.string("microsecond" if part == "NANOSECOND" else part.lower()), node.expression.copy(),
            node.this.copy()])  # fmt: skip
        if part == "NANOSECOND":
            whole = exp.Paren(this=exp.Mul(this=whole, expression=exp.Literal.number(1000)))
        node.replace(whole)


_BIGQUERY_FLOATS = {"FLOAT64": exp.DataType.Type.DOUBLE, "FLOAT32": exp.DataType.Type.FLOAT}
_WHOLE_UNITS = frozenset({"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY"})
"""The units of BigQuery's TIMESTAMP_DIFF (a DAY is 24 hours), counted whole as DuckDB's date_sub counts them."""


def _like_any(node: exp.Like | exp.ILike) -> None:
    """PostgreSQL's ``x ILIKE ANY(ARRAY['a%', 'b%'])`` (sqlglot writes ``x ILIKE ['a%', 'b%']``, which DuckDB
    refuses) as ``(x ILIKE 'a%' OR x ILIKE 'b%')``; ``ALL`` with ``AND``. Only a literal list of patterns."""
    quantified = node.expression
    values = unparen(quantified.this)
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
    node = unparen(node)
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

    It also gives BigQuery's ``SAFE_CAST`` and ``CAST`` to an integer BigQuery's meaning (:func:`_bigquery_casts`), and
    ``EXTRACT(DAYOFWEEK / WEEK FROM x)`` in a query written for BigQuery (:func:`_bigquery_date_parts`), and refuses a
    difference in weeks written for BigQuery or T-SQL (:func:`_week_difference`).

    Raises:
        ToolError: ``"sql_error"`` naming the construct and its DuckDB forms.
    """
    if _EXTRACT_WEEKDAY.search(sql):
        _bigquery_date_parts(tree, sql)
    _bigquery_casts(tree, sql)
    if not _OTHER_ENGINE_TEXT.search(sql):
        return
    _week_difference(sql)
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


_OTHER_ENGINE_TEXT = re.compile(r"datetime_diff|numeric|decimal|date_?diff", re.IGNORECASE)
"""Text :func:`other_engine_forms` needs before it looks at the tree or the tokens."""
_WEEK_DIFF = re.compile(r"\b(?:date_?diff|datetime_diff)\s*\((?:.|\n)*?\b(?:iso)?(?:week|wk|ww)\b", re.IGNORECASE)
_WEEK_UNITS = frozenset({"WEEK", "WK", "WW", "ISOWEEK", "ISOWK", "ISOWW"})
_DIFF_FUNCTIONS = frozenset({"DATEDIFF", "DATE_DIFF", "DATETIME_DIFF"})


def _week_difference(sql: str) -> None:
    """Refuse a difference in weeks with an unquoted unit first: T-SQL's ``DATEDIFF(week, b, a)`` counts Sunday-week
    boundaries (Saturday to Sunday is 1), sqlglot writes DuckDB's ``date_diff('week', b, a)``, whole 7-day spans (0).
    DuckDB's own ``date_diff('week', ...)`` (the unit quoted) keeps its meaning; BigQuery's ``DATE_DIFF(a, b, WEEK)``
    (the unit last) is read as BigQuery counts (:class:`ClinseekDuckDB`)."""
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
        units = [a[0] for a in args[:1] if len(args) == 3 and a and a[0].token_type != TokenType.STRING]
        if any(u.text.upper() in _WEEK_UNITS for u in units):
            raise ToolError("sql_error", f"{token.text}(..., week): {DUCKDB_FORMS['week_diff']}")


_ASCII_SPACE = r"[ \t\n\v\f\r]*"
_BIGQUERY_DECIMAL = rf"^{_ASCII_SPACE}([+-]?[0-9]+){_ASCII_SPACE}$"
_BIGQUERY_HEX = rf"^ *([+-]?0[xX][0-9a-fA-F]+){_ASCII_SPACE}$"
"""The texts BigQuery casts to INT64 (ZetaSQL's ``StringToNumeric``): decimal digits with a sign and ASCII white
space around them (``absl::SimpleAtoi``), or a hex number with a sign after spaces only (``-0x1F`` is -31)."""


def _bigquery_casts(tree: exp.Expr, sql: str) -> None:
    """BigQuery's ``SAFE_CAST(x AS INT64)`` and, in a query written for BigQuery (:func:`bigquery_marker`; ``INT64``
    is such a construct), its ``CAST(x AS INT64)``, as BigQuery converts: text by :data:`_BIGQUERY_DECIMAL` and
    :data:`_BIGQUERY_HEX` (DuckDB's casts read '1.5' as 2, '1e2' as 100, '1_000' as 1000 and refuse '-0x1F'), a
    FLOAT64 rounded half away from zero (DuckDB's cast of a DOUBLE rounds half to even: 2.5 -> 2, BigQuery 3), to
    INT64 whatever integer alias is written (BigQuery's INTEGER, INT, SMALLINT are INT64). Where BigQuery fails,
    ``SAFE_CAST`` is NULL and ``CAST`` an error saying so (before: DuckDB's value). sqlglot reads SAFE_CAST and TRY_CAST
    alike, and writes other casts of its own, so each applies when the tree holds exactly the integer casts of that
    kind the text writes."""
    if not _BIGQUERY_TEXT.search(sql):  # a regular expression first: this is on every query's path
        return
    written = _integer_casts(sql)
    if not any(written.values()):
        return
    casts = [(node, "SAFE_CAST" if type(node) is exp.TryCast else "CAST") for node in tree.find_all(exp.Cast)
             if node.to.is_type(*exp.DataType.INTEGER_TYPES)]  # TryCast is a Cast; outer ones first
    kinds = {kind for kind in written
             if written[kind] and written[kind] == sum(k == kind for _, k in casts)
             and (kind == "SAFE_CAST" or bigquery_marker(sql) is not None)}
    for cast, kind in reversed(casts):  # an inner cast first: an outer one copies its value
        if kind not in kinds:
            continue
        value = cast.this
        if unparen(value).meta.get("bigquery_int64"):  # already an INT64: no text to read
            cast.replace((exp.TryCast if kind == "SAFE_CAST" else exp.Cast)(this=value, to=exp.DataType.build("BIGINT")))
            continue
        if sum(1 for _ in value.walk()) > _MAX_CAST_NODES:  # each cast copies its value ~10 times
            raise ToolError("sql_error", f"{kind}(... AS INT64) nested in casts too deeply to read as BigQuery; "
                            "DuckDB: TRY_CAST(x AS BIGINT) (reads '1.5' as 2)")
        new = _bigquery_cast(value, safe=kind == "SAFE_CAST")
        new.meta["bigquery_int64"] = True
        cast.replace(new)


_MAX_CAST_NODES = 2_000
_INTEGER_NAMES = frozenset({"INT64", "INT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "BYTEINT", "INT8", "INT4",
                            "INT2", "HUGEINT", "INT128"})  # fmt: skip


@functools.lru_cache(maxsize=256)
def _integer_casts(sql: str) -> dict[str, int]:
    """How many ``CAST(... AS <integer type>)`` and ``SAFE_CAST(...)`` the text writes (from its tokens)."""
    counts = {"CAST": 0, "SAFE_CAST": 0}
    if not re.search(r"\b(?:safe_)?cast\s*\(", sql, re.IGNORECASE):
        return counts
    try:
        tokens = sqlglot.Dialect.get_or_raise("duckdb").tokenize(sql)
    except SqlglotError:
        return counts
    for i, token in enumerate(tokens[:-1]):
        kind = token.text.upper()
        if kind not in counts or tokens[i + 1].token_type != TokenType.L_PAREN:
            continue
        last = _last_argument(tokens, i + 1)
        after_as = [t for j, t in enumerate(last) if j and last[j - 1].token_type == TokenType.ALIAS]
        if after_as and after_as[-1].text.upper() in _INTEGER_NAMES:
            counts[kind] += 1
    return counts


_BIGQUERY_FLOAT_TYPES = ("DOUBLE", "FLOAT")


def _bigquery_cast(value: exp.Expr, *, safe: bool) -> exp.Expr:
    """``value`` to INT64 as BigQuery's ``SAFE_CAST`` (``safe``) or ``CAST`` converts it (:func:`_bigquery_casts`)."""
    def typed(kinds: tuple[str, ...]) -> exp.Expr:
        return exp.In(this=exp.Anonymous(this="typeof", expressions=[value.copy()]),
                      expressions=[exp.Literal.string(k) for k in kinds])

    cast = exp.TryCast if safe else exp.Cast
    bigint = exp.DataType.build("BIGINT")
    text = exp.Cast(this=value.copy(), to=exp.DataType.build("VARCHAR"))
    from_text: exp.Expr = exp.TryCast(this=_bigquery_integer(text), to=bigint.copy())
    if not safe:
        failed = exp.Anonymous(this="error", expressions=[exp.DPipe(
            this=exp.DPipe(this=exp.Literal.string("CAST(x AS INT64): BigQuery reads no INT64 in the text '"),
                           expression=text.copy(), safe=True),
            expression=exp.Literal.string("' (it reads decimal digits, or a hex number such as -0x1F, with a sign and "
                                          "spaces around: this CAST is an error there; SAFE_CAST(x AS INT64) is NULL)"),
            safe=True)])  # fmt: skip
        from_text = exp.Case(ifs=[exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()), true=exp.Null())],
                             default=exp.Coalesce(this=from_text, expressions=[failed]))
    rounded = exp.Anonymous(this="round", expressions=[exp.TryCast(this=value.copy(), to=exp.DataType.build("DOUBLE"))])
    return exp.Case(ifs=[exp.If(this=typed(("VARCHAR",)), true=from_text),
                         exp.If(this=typed(_BIGQUERY_FLOAT_TYPES), true=cast(this=rounded, to=bigint.copy()))],
                    default=cast(this=value.copy(), to=bigint.copy()))


def _bigquery_integer(text: exp.Expr) -> exp.Expr:
    """The BIGINT BigQuery reads from ``text``, NULL where it reads none or it is out of INT64's range."""
    def part(pattern: str) -> exp.Expr:
        return exp.Anonymous(this="regexp_extract", expressions=[
            text.copy(), exp.Literal.string(pattern), exp.Literal.number(1)])  # fmt: skip

    decimal, hexadecimal = part(_BIGQUERY_DECIMAL), part(_BIGQUERY_HEX)
    magnitude = exp.TryCast(this=exp.Anonymous(this="ltrim", expressions=[hexadecimal.copy(), exp.Literal.string("+-")]),
                            to=exp.DataType.build("HUGEINT"))  # DuckDB reads '0x1F' (not '-0x1F')
    signed = exp.Case(ifs=[exp.If(this=exp.Like(this=hexadecimal.copy(), expression=exp.Literal.string("-%")),
                                  true=exp.Neg(this=magnitude.copy()))], default=magnitude)
    return exp.Case(ifs=[
        exp.If(this=exp.NEQ(this=decimal.copy(), expression=exp.Literal.string("")),
               true=exp.TryCast(this=decimal, to=exp.DataType.build("BIGINT"))),
        exp.If(this=exp.NEQ(this=hexadecimal, expression=exp.Literal.string("")),
               true=exp.TryCast(this=signed, to=exp.DataType.build("BIGINT"))),
    ])  # fmt: skip


_EXTRACT_WEEKDAY = re.compile(r"\bextract\s*\(\s*(?:dayofweek|week)\b", re.IGNORECASE)
"""Text :func:`_bigquery_date_parts` needs: a date part BigQuery numbers otherwise than DuckDB."""
_BIGQUERY_NAMES = frozenset({
    "SAFE_CAST", "INT64", "FLOAT64", "BIGNUMERIC", "FORMAT_DATE", "FORMAT_DATETIME", "FORMAT_TIMESTAMP", "PARSE_DATE",
    "PARSE_DATETIME", "PARSE_TIMESTAMP", "TIMESTAMP_DIFF", "TIMESTAMP_ADD", "TIMESTAMP_SUB", "TIMESTAMP_TRUNC",
    "DATETIME_ADD", "DATETIME_SUB", "DATETIME_TRUNC", "CURRENT_DATETIME", "SAFE_OFFSET", "SAFE_ORDINAL",
})  # fmt: skip
"""Names only BigQuery has among the engines models write for (DuckDB has none of them)."""
_BIGQUERY_TEXT = re.compile(r"\b(?:" + "|".join(sorted(n.lower() for n in _BIGQUERY_NAMES)) + r"|date_diff|datetime_diff|"
                            r"date_trunc|offset|ordinal)\b", re.IGNORECASE)
"""Text :func:`bigquery_marker` needs before it reads the tokens."""
_BARE_UNIT_FUNCTIONS = frozenset({"DATE_DIFF", "DATETIME_DIFF", "DATE_TRUNC"})
"""Functions DuckDB has too, BigQuery's when the unit is a bare word after the value (``DATE_DIFF(a, b, DAY)``;
DuckDB's ``date_diff('day', b, a)`` quotes it, first)."""


@functools.lru_cache(maxsize=256)
def bigquery_marker(sql: str) -> str | None:
    """The construct that shows ``sql`` was written for BigQuery (:data:`_BIGQUERY_NAMES`, ``x[OFFSET(n)]``, a bare unit
    last in :data:`_BARE_UNIT_FUNCTIONS`), from its tokens (not its strings or comments); ``None`` if none."""
    if not _BIGQUERY_TEXT.search(sql):
        return None
    try:
        tokens = sqlglot.Dialect.get_or_raise("duckdb").tokenize(sql)
    except SqlglotError:
        return None
    for i, token in enumerate(tokens):
        name = token.text.upper()
        if token.token_type == TokenType.STRING:
            continue
        if name in _BIGQUERY_NAMES:
            return name
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if name in ("OFFSET", "ORDINAL") and i and tokens[i - 1].token_type == TokenType.L_BRACKET and (
            after is not None and after.token_type == TokenType.L_PAREN
        ):
            return f"[{name}(n)]"
        if name in _BARE_UNIT_FUNCTIONS and after is not None and after.token_type == TokenType.L_PAREN:
            last = _last_argument(tokens, i + 1)
            if len(last) == 1 and last[0].token_type != TokenType.STRING and last[0].text.upper() in _DATE_PARTS:
                return f"{token.text}(..., {last[0].text})"
    return None


_DATE_PARTS = frozenset({"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "DAYOFWEEK", "DAYOFYEAR",
                         "WEEK", "ISOWEEK", "MONTH", "QUARTER", "YEAR", "ISOYEAR"})  # fmt: skip


def _last_argument(tokens: list[Token], open_paren: int) -> list[Token]:
    """The tokens of the last argument of the call whose ``(`` is ``tokens[open_paren]``."""
    depth, last = 1, []
    for token in tokens[open_paren + 1:]:
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if depth == 0:
            break
        if depth == 1 and token.token_type == TokenType.COMMA:
            last = []
        else:
            last.append(token)
    return last


_BIGQUERY_WEEKS = {"SUNDAY": "%U", "MONDAY": "%W"}
"""BigQuery's ``WEEK(<day>)``: weeks starting on that day, days before the year's first one in week 0 (strftime)."""


def _bigquery_date_parts(tree: exp.Expr, sql: str) -> None:
    """In a query written for BigQuery (:func:`bigquery_marker`), ``EXTRACT`` of the date parts BigQuery numbers
    otherwise than DuckDB, as BigQuery numbers them (``EXTRACT(DAYOFWEEK FROM x)``: BigQuery 1-7 from Sunday, DuckDB
    0-6; ``WEEK``: BigQuery's Sunday weeks from 0, DuckDB's ISO week; ``WEEK(MONDAY)``). A query valid as DuckDB
    (no BigQuery construct) keeps DuckDB's numbering, as does ``dayofweek(x)`` (DuckDB's function; BigQuery has
    none) and a query read as SQLite (SQLite has neither; its ``strftime('%w', x)`` is DuckDB's 0-6 too).

    Raises:
        ToolError: ``"sql_error"`` for ``WEEK(<day>)`` other than Sunday and Monday, naming the DuckDB form.
    """
    extracts = [e for e in tree.find_all(exp.Extract)
                if isinstance(e.this, exp.Week) or e.this.name.upper() in ("DAYOFWEEK", "WEEK")]
    if not extracts or re.search(r"\bextract\s*\(\s*dow\b", sql, re.IGNORECASE):
        return  # PostgreSQL's DOW (sqlglot reads it as DAYOFWEEK) is DuckDB's numbering
    marker = bigquery_marker(sql)
    if marker is None:
        return
    for node in extracts:
        value = node.expression.copy()
        if isinstance(node.this, exp.Week):
            day = node.this.this.name.upper()
            if day not in _BIGQUERY_WEEKS:
                raise ToolError("sql_error", f"EXTRACT(WEEK({day}) FROM x) is BigQuery ({marker}): DuckDB has weeks "
                                "from Sunday (CAST(strftime(x, '%U') AS BIGINT)) and Monday (strftime(x, '%W'))")
            fmt = _BIGQUERY_WEEKS[day]
        elif node.this.name.upper() == "WEEK":
            fmt = _BIGQUERY_WEEKS["SUNDAY"]
        else:
            node.replace(exp.Paren(this=exp.Add(this=node.copy(), expression=exp.Literal.number(1))))
            continue
        node.replace(exp.Cast(this=exp.Anonymous(this="strftime", expressions=[value, exp.Literal.string(fmt)]),
                              to=exp.DataType.build("BIGINT")))
