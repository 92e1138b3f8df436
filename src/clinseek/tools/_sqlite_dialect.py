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
formats, text-to-number conversion in arithmetic and in ``CAST`` (the leading number), integer division,
64-bit integers (``_sqlite_integers``: a REAL beyond 64 bits, ``sum()``'s "integer overflow"),
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

from ..errors import ToolError
from ._sqlhints import DUCKDB_FORMS, GENERIC_FORM, function_name, hint_for, unparen
from ._sqlite_integers import checked_sum, fold, is_integer, numeric_constant, widen
from ._sqlite_names import SelectLists, select_lists, source_texts

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
            isinstance(node, exp.Anonymous) and function_name(node) in _SQLITE_FUNCTIONS
        ):
            found.append(f"{function_name(node) if isinstance(node, exp.Anonymous) else 'datetime'}()")
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
        out, self.translation = translate(sqlite_tree, self.prediction_time, sql)
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
        raise ToolError("sql_error", f"{forms[0]} is SQLite, not DuckDB: {hint_for(forms[0]) or GENERIC_FORM}")
    return None


def _parse_sqlite(sql: str) -> exp.Expr | None:
    parsed = sqlglot.parse(sql, read="sqlite")  # a comment after the last ';' is a Semicolon "statement"
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    return statements[0] if len(statements) == 1 else None


# -- translation ------------------------------------------------------------------------------------


def translate(
    tree: exp.Expr, prediction_time: dt.datetime | None, sql: str | None = None
) -> tuple[exp.Expr, Translation]:
    """Translate one statement parsed as SQLite into DuckDB with SQLite's semantics.

    ``sql``: the text ``tree`` was parsed from; SQLite names an unaliased output by its exact text there
    (:attr:`Translation.names`). Without it, by sqlglot's text of the expression.

    Returns:
        The DuckDB tree (generate it with ``dialect="duckdb"``) and what changed.

    Raises:
        ToolError: ``"sql_error"`` for a SQLite form that has no faithful translation (a computed
            modifier, an unknown modifier or format specifier, a malformed time literal), naming it
            and its DuckDB form; ``"clock"`` for ``'now'`` without a prediction time.
    """
    t = Translation()
    ctx = _Context(prediction_time, t)
    lists = select_lists(sql) if sql is not None else None
    names = _sqlite_names(tree, sql, lists)
    sources = [(s, _sqlite_names(s.this, sql, lists)) for s in tree.find_all(exp.Subquery, exp.CTE)
               if _named_source(s)]
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
    for source, inner in sources:
        _name_columns(source, inner)
    t.names = _renamed(tree, names)
    return tree, t


def _named_source(node: exp.Subquery | exp.CTE) -> bool:
    """``node`` is a table its query reads by its columns' names (a CTE, or a sub-query in FROM or JOIN) and no
    column list names them already."""
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return False
    return isinstance(node, exp.CTE) or isinstance(node.parent, (exp.From, exp.Join))


def _name_columns(source: exp.Subquery | exp.CTE, names: dict[int, str] | None) -> None:
    """Give a sub-query's (or CTE's) translated columns SQLite's names, where the outer query reads them
    (``SELECT hadm_id FROM (SELECT hadm_id, max(admittime) FROM admissions)``, ``t."count(*)"``), as the table's
    column list (``AS t(hadm_id, "max(admittime)")``): unlike an output alias, the sub-query's own WHERE and
    ORDER BY cannot read it (attack20)."""
    select = _first_select(source.this)
    renamed = _renamed(source.this, names)
    if select is None or not renamed:
        return
    columns = [new or e.output_name for new, e in zip(renamed, select.expressions, strict=True)]
    if not all(columns):
        return
    alias = source.args.get("alias")
    if not isinstance(alias, exp.TableAlias):
        alias = exp.TableAlias(this=exp.to_identifier("_sqlite"))  # SQLite lets a sub-query go unnamed
        source.set("alias", alias)
    alias.set("columns", [exp.to_identifier(c, quoted=True) for c in columns])


def _first_select(tree: exp.Expr) -> exp.Select | None:
    """The select whose outputs name a statement's columns (the leftmost of a UNION)."""
    while isinstance(tree, exp.SetOperation):
        tree = tree.this
    return tree if isinstance(tree, exp.Select) else None


def _sqlite_names(tree: exp.Expr, sql: str | None, lists: SelectLists | None) -> dict[int, str] | None:
    """SQLite's name of each unaliased output of the statement, by position: a column's name (``t.b``, ``(b)`` ->
    ``b``), else its expression's exact text in ``sql`` (:func:`~._sqlite_names.source_texts`; sqlglot's text with
    function names in lower case where it cannot be placed); ``None`` when an output is a ``*`` (the result's
    columns are then not the select's outputs one by one)."""
    select = _first_select(tree)
    if select is None or any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
                             for e in select.expressions):
        return None
    texts = source_texts(select, sql, lists) if sql is not None and lists else [None] * len(select.expressions)
    return {i: unparen(e).name if isinstance(unparen(e), exp.Column)
            else text or e.sql(dialect="sqlite", normalize_functions="lower")
            for i, (e, text) in enumerate(zip(select.expressions, texts, strict=True)) if not isinstance(e, exp.Alias)}


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


def _aggregate_core(node: exp.Expr) -> exp.Expr:
    """The aggregate of ``agg(x) FILTER (WHERE ...) OVER (...)`` (``node`` without its window and filter)."""
    while isinstance(node, (exp.Window, exp.Filter)):
        node = node.this
    return node


def _aggregate_top(node: exp.Expr) -> bool:
    """``node`` is a whole aggregate call: not the aggregate or filter inside a ``FILTER`` or ``OVER`` of it."""
    return not (isinstance(node.parent, (exp.Filter, exp.Window)) and node.arg_key == "this")


class _Context:
    def __init__(self, now: dt.datetime | None, t: Translation) -> None:
        self.now = now
        self.t = t

    def rewrite(self, node: exp.Expr) -> exp.Expr | None:
        if isinstance(node, (exp.Literal, exp.Neg, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)):
            folded = fold(node)  # integer literals as SQLite computes them (a REAL beyond 64 bits)
            if folded is not None:
                return folded
        if isinstance(node, (exp.Sum, exp.Filter, exp.Window)) and _aggregate_top(node):
            core = _aggregate_core(node)
            if core.meta.get("sqlite_total"):  # total(x) FILTER (...) OVER (...): a REAL, 0.0 for none
                return exp.Coalesce(this=exp.Cast(this=node.copy(), to=exp.DataType.build("DOUBLE")),
                                    expressions=[exp.Literal.number("0.0")])
            if isinstance(core, exp.Sum):
                return checked_sum(node)  # SQLite's "integer overflow" beyond 64 bits
        if isinstance(node, exp.Anonymous) and function_name(node) in _TIME_FUNCTIONS:
            return self.time_function(function_name(node), list(node.expressions), node)
        if isinstance(node, exp.Date) and not isinstance(node.parent, exp.Cast):
            return self.time_function("date", [] if node.this is None else [node.this], node)
        if isinstance(node, exp.Format) and not (
            isinstance(node.this, exp.Literal) and "{" in node.this.this
        ):
            self.t.add("format(...)", "printf(...) (SQLite's format is printf)")
            return _printf([node.this, *node.expressions])
        if isinstance(node, exp.Anonymous) and function_name(node) == "printf" and node.expressions:
            return _printf(list(node.expressions))
        if isinstance(node, exp.TimeToStr) and isinstance(node.this, exp.TsOrDsToTimestamp):
            value = node.this.this
            args = [] if isinstance(value, exp.CurrentTimestamp) else [value]
            return self.time_function("strftime", [node.args["format"], *args], node)
        if isinstance(node, exp.Anonymous) and function_name(node) == "total":
            self.t.add("total(x)", "coalesce(sum(x), 0.0)")
            total = exp.Sum(this=node.expressions[0])
            total.meta["sqlite_total"] = True  # its FILTER or OVER, visited next, puts coalesce() around them
            return total if isinstance(node.parent, (exp.Filter, exp.Window)) else exp.Coalesce(
                this=exp.Cast(this=total, to=exp.DataType.build("DOUBLE")), expressions=[exp.Literal.number("0.0")])
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
            widen(node)  # SQLite's integers are 64-bit (DuckDB's INTEGER columns and literals, 32)
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
        timed = [isinstance(side, exp.Expr) and bool(unparen(side).meta.get("sqlite_time")) for side in sides]
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
            self.t.add("CAST(x AS INTEGER)", "CAST(trunc(x) AS BIGINT) (SQLite truncates toward zero; text: its "
                       "leading integer, '2e2' -> 2, 'abc' -> 0)")
            out = _sqlite_integer(_number(node.this))
            out.meta["sqlite_integer"] = True
            return out
        if to.is_type(exp.DataType.Type.DECIMAL):  # NUMERIC, DECIMAL(p, s): SQLite's NUMERIC affinity
            self.t.add("CAST(x AS NUMERIC)", "an INTEGER where x is one, else a DOUBLE (SQLite: an INTEGER where the "
                       "text's number is integral, a REAL otherwise)")
            value = _number(node.this)
            constant = numeric_constant(value)
            if constant is not None:
                return constant
            if is_integer(value):  # an integer stays the integer (every digit)
                out: exp.Expr = exp.Cast(this=value, to=exp.DataType.build("BIGINT"))
                out.meta["sqlite_integer"] = True
                return out
            return _sqlite_real(value, unsigned_zero=True)
        if to.is_type(*exp.DataType.REAL_TYPES):
            return _sqlite_real(_number(node.this))
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
            value = exp.Coalesce(this=_sqlite_integer(_number(value)), expressions=[exp.Literal.number(0)])
        elif kind == "DOUBLE":
            real = exp.Coalesce(this=_sqlite_real(_number(value)), expressions=[exp.Literal.number("0.0")])
            value = exp.Add(this=real, expression=exp.Literal.number("0.0"))  # -0.0 + 0.0: SQLite writes no '-0'
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


_SQLITE_SPACE = r"^[ \t\n\v\f\r]*"
"""The white space SQLite skips before a number in text (``sqlite3Isspace``)."""
_INTEGER_PREFIX = _SQLITE_SPACE + r"([-+]?[0-9]+)"
_REAL_PREFIX = _SQLITE_SPACE + r"([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
_AS_TEXT = ("VARCHAR", "DATE", "TIMESTAMP", "TIME")
"""DuckDB types of values SQLite holds as text (its times are text: CAST('2100-01-31 10:00:00' AS INTEGER) is 2100)."""
_BIGINT_MIN, _BIGINT_MAX = "-9223372036854775808", "9223372036854775807"
_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
                  "UHUGEINT")
"""DuckDB's integer types: converted to SQLite's integer exactly, not through a DOUBLE (2^53 + 1 stays odd)."""


def _text_typed(value: exp.Expr) -> exp.Expr:
    """``typeof(value)`` is one of :data:`_AS_TEXT` (DuckDB folds it per type)."""
    return _typed(value, _AS_TEXT)


def _typed(value: exp.Expr, kinds: tuple[str, ...]) -> exp.Expr:
    """``typeof(value)`` is one of ``kinds`` (DuckDB folds it per type)."""
    return exp.In(this=exp.Anonymous(this="typeof", expressions=[value.copy()]),
                  expressions=[exp.Literal.string(k) for k in kinds])


def _clamped(number: exp.Expr, sign: exp.Expr) -> exp.Expr:
    """``TRY_CAST(number AS BIGINT)``, or SQLite's clamp to the 64-bit range when it overflows (by ``sign``'s
    condition for the negative end); NULL stays NULL."""
    overflow = exp.Case(ifs=[exp.If(this=sign, true=exp.Literal.number(_BIGINT_MIN)),
                             exp.If(this=exp.Not(this=exp.Is(this=number.copy(), expression=exp.Null())),
                                    true=exp.Literal.number(_BIGINT_MAX))])
    value = exp.Coalesce(this=exp.TryCast(this=number, to=exp.DataType.build("BIGINT")), expressions=[overflow])
    return exp.Cast(this=value, to=exp.DataType.build("BIGINT"))


def _sqlite_integer(value: exp.Expr) -> exp.Expr:
    """``value`` converted to an integer as SQLite's ``CAST(x AS INTEGER)`` (and ``printf('%d')``) convert it: a
    real truncated toward zero, an integer as it is (every digit: not through a DOUBLE, which keeps 53 bits); text
    (and a time, text in SQLite) by its longest leading integer after white space, 0 when there is none ('2e2' -> 2,
    '1.9' -> 1, ' 7 ' -> 7, '-0x1F' -> 0, 'abc' -> 0); beyond the 64-bit range, its nearest end; NULL stays NULL."""
    digits = exp.Anonymous(this="regexp_extract", expressions=[
        exp.Cast(this=value.copy(), to=exp.DataType.build("VARCHAR")),
        exp.Literal.string(_INTEGER_PREFIX), exp.Literal.number(1)])  # fmt: skip
    from_text = exp.Case(
        ifs=[exp.If(this=exp.EQ(this=digits.copy(), expression=exp.Literal.string("")), true=exp.Literal.number(0))],
        default=_clamped(digits, exp.Like(this=digits.copy(), expression=exp.Literal.string("-%"))),
    )
    number = exp.Anonymous(this="trunc", expressions=[exp.TryCast(this=value.copy(), to=exp.DataType.build("DOUBLE"))])
    from_number = _clamped(number, exp.LT(this=number.copy(), expression=exp.Literal.number(0)))
    whole = exp.TryCast(this=value.copy(), to=exp.DataType.build("HUGEINT"))  # every digit (a DOUBLE keeps 53 bits)
    from_integer = _clamped(whole, exp.LT(this=whole.copy(), expression=exp.Literal.number(0)))
    return exp.Case(ifs=[exp.If(this=_text_typed(value), true=from_text),
                         exp.If(this=_typed(value, _INTEGER_TYPES), true=from_integer)], default=from_number)


def _sqlite_real(value: exp.Expr, *, unsigned_zero: bool = False) -> exp.Expr:
    """``value`` converted to a real as SQLite's ``CAST(x AS REAL)`` converts it: text (and a time) by its longest
    leading real number after white space, 0.0 when there is none ('12abc' -> 12.0, '2e2' -> 200.0, '<0.5' -> 0.0);
    a number as itself; NULL stays NULL. ``unsigned_zero``: text '-0.0' is 0.0 (``CAST(x AS NUMERIC)``: SQLite's
    integer 0)."""
    digits = exp.Anonymous(this="regexp_extract", expressions=[
        exp.Cast(this=value.copy(), to=exp.DataType.build("VARCHAR")),
        exp.Literal.string(_REAL_PREFIX), exp.Literal.number(1)])  # fmt: skip
    from_text = exp.Case(
        ifs=[exp.If(this=exp.EQ(this=digits.copy(), expression=exp.Literal.string("")),
                    true=exp.Literal.number("0.0"))],
        default=exp.TryCast(this=digits, to=exp.DataType.build("DOUBLE")),
    )  # fmt: skip
    if unsigned_zero:  # -0.0 + 0.0 is 0.0
        from_text = exp.Add(this=exp.Paren(this=from_text), expression=exp.Literal.number("0.0"))
    from_number = exp.TryCast(this=value.copy(), to=exp.DataType.build("DOUBLE"))
    return exp.Case(ifs=[exp.If(this=_text_typed(value), true=from_text)], default=from_number)


def _is_numeric(node: exp.Expr) -> bool:
    if isinstance(node, exp.Paren):
        return _is_numeric(node.this)
    if isinstance(node, exp.Literal):
        return not node.is_string
    if isinstance(node, exp.Neg):
        return _is_numeric(node.this)
    return isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv)) or (
        isinstance(node, exp.Anonymous) and function_name(node) == "epoch_us"
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
        if isinstance(node, (exp.Subquery, exp.Select, exp.Union, exp.Window, exp.AggFunc, exp.Filter)):
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
