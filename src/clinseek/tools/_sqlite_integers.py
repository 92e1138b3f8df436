"""SQLite's 64-bit integer arithmetic in a query read as SQLite (used by ``_sqlite_dialect``'s translation).

SQLite's integers are 64-bit: ``2147483647 + 1`` is 2147483648 and ``subject_id * hadm_id`` does not overflow, where
DuckDB computes an INTEGER (32-bit) column or literal in 32 bits and stops with "Overflow in multiplication of
INT32". An integer result beyond 64 bits is a REAL in SQLite (``9223372036854775807 + 1`` is 9.223372036854776e+18),
an integer literal beyond 64 bits too, and ``sum()`` of integers beyond 64 bits is SQLite's "integer overflow" error
(DuckDB's sum is a 128-bit integer: no error). Here:

- arithmetic of integer literals is computed as SQLite computes it (:func:`fold`), a REAL where it overflows;
- ``+``, ``-``, ``*`` of two integers the translation knows (literals, the registry's integer columns, counts, casts
  to INTEGER, arithmetic of those) is computed in 64 bits (:func:`widen`);
- ``sum()`` of integers beyond 64 bits is an error naming SQLite's (:func:`checked_sum`).

Not reproduced: a row whose 64-bit arithmetic overflows at run time gets DuckDB's overflow error (its hint says
SQLite's REAL and how to write it), not a REAL in a column of integers (a DuckDB column has one type); ``sum()``
whose running total leaves 64 bits in some order of the rows only is an error saying so (SQLite's answer depends
on the order it reads them, :func:`checked_sum`).
"""

from __future__ import annotations

import functools
import math
import re

from sqlglot import exp

from ..schema import tables

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
TRANSLATION_ERROR = "sqlite_error"
"""Meta key of an ``error()`` call the translation wrote (SQLite's own error): the guard refuses a model's ``error()``
(it is volatile in DuckDB's catalog), not this one, which no text can write."""


_INTEGER_TYPES = frozenset({"SMALLINT", "INTEGER", "BIGINT"})


def _bigint() -> exp.DataType:
    return exp.DataType(this=exp.DataType.Type.BIGINT)  # DataType.build("BIGINT") parses the text (~0.1 ms)


@functools.cache
def integer_columns() -> frozenset[str]:
    """Lower-case names of the columns that are integers in every registry table that has them (``subject_id``,
    ``hadm_id``, ``itemid``, ``anchor_age``, ...)."""
    kinds: dict[str, set[str]] = {}
    for table in tables():
        for column in table.columns:
            kinds.setdefault(column.name.lower(), set()).add(str(column.type))
    return frozenset(name for name, types in kinds.items() if types <= _INTEGER_TYPES)


def literal_integer(node: exp.Expr) -> int | None:
    """The value of an integer literal (``7``, ``-7``, ``(7)``); ``None`` for anything else."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node.meta.get("sqlite_literal"), int):  # folded already
        return node.meta["sqlite_literal"]
    if isinstance(node, exp.Neg):
        inner = literal_integer(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string and str(node.this).isdigit():
        return int(node.this)
    return None


def _number(value: int | float) -> exp.Expr:
    if isinstance(value, float):
        return exp.Literal.number(repr(value))  # '9.223372036854776e+18': a DOUBLE in DuckDB
    literal = exp.Literal.number(abs(value))
    out: exp.Expr = literal if value >= 0 else exp.Paren(this=exp.Neg(this=literal))
    out = exp.Cast(this=out, to=_bigint()) if not -(2**31) <= value < 2**31 else out
    out.meta["sqlite_literal"] = value
    return out


def fold(node: exp.Expr) -> exp.Expr | None:
    """``node`` (``+ - * / %`` of two integer literals, or an integer literal) computed as SQLite computes it: an
    integer within 64 bits, else the REAL of the same operation on doubles; ``x / 0`` and ``x % 0`` NULL; an integer
    literal beyond 64 bits a REAL. ``None`` when ``node`` is not such arithmetic (or needs no change)."""
    if isinstance(node, exp.Literal):
        value = literal_integer(node)
        if value is not None and value > _INT64_MAX and not (
            isinstance(node.parent, exp.Neg) and value == -_INT64_MIN
        ):  # SQLite reads -9223372036854775808 as the integer
            return _number(float(value))
        return None
    if isinstance(node, exp.Neg):
        value = literal_integer(node)  # -(-9223372036854775808) is a REAL in SQLite
        return None if value is None or _INT64_MIN < value <= _INT64_MAX else _number(
            value if value == _INT64_MIN else float(value))
    if not isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)) or _position_slot(node):
        return None
    a, b = literal_integer(node.this), literal_integer(node.expression)
    if a is None or b is None:
        return None
    if isinstance(node, (exp.Div, exp.Mod)) and b == 0:
        return exp.Null()
    exact = {
        exp.Add: lambda: a + b, exp.Sub: lambda: a - b, exp.Mul: lambda: a * b,
        exp.Div: lambda: abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1),  # toward zero
        exp.Mod: lambda: abs(a) % abs(b) * (1 if a >= 0 else -1),  # the sign of the dividend
    }[type(node)]()  # fmt: skip
    if _INT64_MIN <= exact <= _INT64_MAX:
        return _number(exact)
    real = {exp.Add: lambda: float(a) + float(b), exp.Sub: lambda: float(a) - float(b),
            exp.Mul: lambda: float(a) * float(b), exp.Div: lambda: float(a) / float(b)}[type(node)]()  # fmt: skip
    return _number(real)


def _position_slot(node: exp.Expr) -> bool:
    """``node`` is an ORDER BY or GROUP BY item (in parentheses or not): ``ORDER BY 1 + 1`` is a constant expression,
    ``ORDER BY 2`` a column's position, so it is not folded."""
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    return isinstance(parent, (exp.Ordered, exp.Group))


def is_integer(node: exp.Expr) -> bool:
    """``node`` is an integer the translation knows: a literal, a registry integer column, ``count()``, a cast to an
    integer, or ``+ - * %`` / unary minus of such."""
    while isinstance(node, exp.Paren):
        node = node.this
    if node.meta.get("sqlite_integer") or isinstance(node, exp.Count) or literal_integer(node) is not None:
        return True
    if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
        return node.name.lower() in integer_columns()
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.is_type(*exp.DataType.INTEGER_TYPES)
    if isinstance(node, exp.Neg):
        return is_integer(node.this)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Mod)):
        return is_integer(node.this) and is_integer(node.expression)
    return False


def widen(node: exp.Add | exp.Sub | exp.Mul) -> None:
    """``a + b`` (``-``, ``*``) of two known integers computed in 64 bits (DuckDB computes two INTEGER operands in 32):
    ``CAST(7 AS BIGINT)`` for a literal, ``(a + CAST(0 AS BIGINT))`` otherwise (an integer becomes a BIGINT, and a
    column that is not one after all, a CTE's ``hadm_id`` computed by ``avg()``, keeps its value)."""
    if not (is_integer(node.this) and is_integer(node.expression)):
        return
    node.meta["sqlite_integer"] = True
    left = node.this
    inner = left.this if isinstance(left, exp.Paren) else left
    if inner.meta.get("sqlite_integer") or left.meta.get("sqlite_bigint") or (
        isinstance(left, exp.Cast) and left.to.is_type(exp.DataType.Type.BIGINT)
    ):  # a BIGINT already: widened arithmetic, the translation of CAST(x AS INTEGER)
        return
    bigint_zero = exp.Cast(this=exp.Literal.number(0), to=_bigint())
    if literal_integer(left) is not None:
        wide: exp.Expr = exp.Cast(this=left, to=_bigint())
    else:
        wide = exp.Paren(this=exp.Add(this=left, expression=bigint_zero))
        wide.meta["sqlite_bigint"] = True
    node.set("this", wide)


def checked_sum(node: exp.Expr) -> exp.Expr:
    """``node`` (``sum(x)``, or a window over it) with SQLite's "integer overflow" error where a sum of integers
    leaves 64 bits (DuckDB's sum of integers is a HUGEINT: no error); a sum of reals is unchanged.

    SQLite adds the rows in the order it reads them and fails as soon as the running total leaves 64 bits, so a sum
    whose total fits can still fail in one order and not in another (2^62, 2^62, -2^62 fails; 2^62, -2^62, 2^62 is
    2^62). Where the order of the rows is not the query's (an aggregate, a window without ORDER BY), such a sum is an
    error saying so: its positive values add up beyond 64 bits, or its negative ones (DuckDB's order is not
    SQLite's, so neither answer can be claimed). A window with ORDER BY adds in that order: each row's running total
    is checked."""
    value = node.copy()
    overflow = exp.Literal.string("integer overflow: SQLite's sum() of integers beyond 64 bits is this error; total(x) "
                                  "or sum(CAST(x AS REAL)) adds them as REALs")

    def error(message: exp.Expr) -> exp.Expr:
        call = exp.Anonymous(this="error", expressions=[message])
        call.meta[TRANSLATION_ERROR] = True  # the guard lets this error() through (not the model's)
        return call

    def outside(total: exp.Expr) -> exp.Expr:
        return exp.Not(this=exp.Between(this=total, low=exp.Literal.number(_INT64_MIN),
                                        high=exp.Literal.number(_INT64_MAX)))  # fmt: skip

    huge = exp.EQ(this=exp.Anonymous(this="typeof", expressions=[value.copy()]), expression=exp.Literal.string("HUGEINT"))
    if isinstance(node, exp.Window) and node.args.get("order"):
        return exp.Case(ifs=[exp.If(this=exp.And(this=huge, expression=outside(value.copy())), true=error(overflow))],
                        default=value)
    # one condition for both (a total beyond 64 bits has its positive or its negative part beyond them too): each
    # WHEN and each error() costs DuckDB about 0.3 ms to bind, more than the extra aggregate over a patient's rows
    positive = _positive_part(value)
    either = exp.Or(this=exp.GT(this=positive, expression=exp.Literal.number(_INT64_MAX)),
                    expression=exp.LT(this=exp.Sub(this=value.copy(), expression=positive.copy()),
                                      expression=exp.Literal.number(_INT64_MIN)))
    by_order = exp.Literal.string(
        "integer overflow or not, by the order of the rows: SQLite's sum() fails as soon as its running total of "
        "integers leaves 64 bits, and these values' positive (or negative) ones add up beyond 64 bits, their total "
        "does not: SQLite's answer depends on the order it reads the rows; total(x) or sum(CAST(x AS REAL)) adds "
        "them as REALs in any order")  # fmt: skip
    which = exp.Case(ifs=[exp.If(this=outside(value.copy()), true=overflow)], default=by_order)
    return exp.Case(ifs=[exp.If(this=exp.And(this=huge, expression=exp.Paren(this=either)), true=error(which))],
                    default=value)


def _positive_part(value: exp.Expr) -> exp.Expr:
    """``value`` (a copy of ``sum(x)``, its FILTER and OVER) summing only ``x``'s positive values: ``greatest(x, 0)``
    (a CASE adding a HUGEINT zero cost twice as much; DISTINCT keeps every positive value)."""
    positive = value.copy()
    core = positive
    while isinstance(core, (exp.Window, exp.Filter)):
        core = core.this
    holder = core.this if isinstance(core.this, exp.Distinct) else None
    x = holder.expressions[0] if holder is not None else core.this
    part = exp.Anonymous(this="greatest", expressions=[x.copy(), exp.Literal.number(0)])  # written as is (a NULL x: 0)
    if holder is not None:
        holder.set("expressions", [part])
    else:
        core.set("this", part)
    return positive


_REAL_TEXT = re.compile(r"[ \t\n\v\f\r]*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)")
_SAME_AS_INT = 2**51
"""SQLite's ``sqlite3RealSameAsInt``: a REAL with an integral value within +-2^51 is stored as that integer."""


def numeric_text(text: str) -> int | float:
    """``CAST(text AS NUMERIC)`` as SQLite computes it (``sqlite3VdbeMemNumerify``): the longest leading number after
    white space; an INTEGER when it is written as one (digits, no '.' or exponent, junk after it allowed) and fits 64
    bits, else a REAL, which is an INTEGER when its value is integral within +-2^51 ('1e3' -> 1000, '3.0' -> 3,
    '1e18' -> 1e18, '9223372036854775808' -> 9.223372036854776e+18); 0 when there is no number ('abc', '0x10')."""
    found = _REAL_TEXT.match(text)
    if found is None:
        return 0
    prefix = found.group(1)
    if re.fullmatch(r"[-+]?[0-9]+", prefix) and _INT64_MIN <= int(prefix) <= _INT64_MAX:
        return int(prefix)
    real = float(prefix)
    if math.isfinite(real) and real == int(real) and -_SAME_AS_INT <= int(real) < _SAME_AS_INT:
        return int(real)
    return real


def numeric_constant(value: exp.Expr) -> exp.Expr | None:
    """``CAST(value AS NUMERIC)`` of a literal, computed as SQLite computes it (:func:`numeric_text` for text; an
    integer stays an integer, a real a REAL); ``None`` when ``value`` is not a literal."""
    inner = value
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.Literal) and inner.is_string:
        number = numeric_text(inner.this)
        return _number(number) if isinstance(number, int) else _real(number)
    whole = literal_integer(inner)
    if whole is not None:
        return _number(whole)
    if isinstance(inner, exp.Literal):
        return _real(float(inner.this))
    return None


def _real(value: float) -> exp.Expr:
    """A DOUBLE literal (DuckDB reads ``1.5`` as a DECIMAL; ``inf`` is only a DOUBLE's text)."""
    literal = exp.Literal.number(repr(value)) if math.isfinite(value) else exp.Literal.string(repr(value))
    return exp.Cast(this=literal, to=exp.DataType(this=exp.DataType.Type.DOUBLE))
