"""Refusing SQL functions that build huge values from small inputs (``range(1e9)``, ``repeat``).

DuckDB cannot interrupt the construction of one huge value (a billion-element list, a gigabyte
string) in time, and such a value can exceed the episode's memory limit before the timer fires.
The guard therefore refuses these functions when their size arguments are literals above a cap
or are not literals at all; ``printf``/``format`` need a literal format whose widths and
precisions are within the cap (``printf('%999999999d', 1)`` builds a gigabyte string outside the
memory limit). Residual risk (docs/tools.md): huge values built by chains of bounded steps
(``repeat`` of a ``repeat`` output inside ``string_agg`` over many rows) are bounded only by the
timer and the memory limit.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import NoReturn

from sqlglot import exp

from ..errors import ToolError

MAX_SERIES_SPAN = 1_000_000
"""Most elements a ``range``/``generate_series`` (scalar or table) may produce."""
MAX_BUILT_SIZE = 100_000
"""Largest literal size (characters, elements, rows, width) other value builders may take."""

_SIZE_ARGS: dict[str, tuple[int, ...]] = {
    # function name -> 0-based positions of its size arguments (DuckDB function reference)
    "repeat": (1,),
    "repeat_row": (),  # its size is the num_rows= named argument
    "lpad": (1,),
    "rpad": (1,),
    "list_resize": (1,),
    "array_resize": (1,),
    "bar": (3,),
    "array_fill": (1,),
}
_FORMATS = {"printf": "printf", "format": "fmt"}
"""DuckDB's formatting functions: ``printf`` (C printf syntax) and ``format`` (fmt/Python syntax)."""
_PRINTF_SPEC = re.compile(r"%[-+ #0]*(\*|\d*)(?:\.(\*|\d*))?")
"""A printf conversion's flags, width and precision (``%-08.3f``, ``%*d``); ``%%`` removed first."""
_FMT_FIELD = re.compile(r"\{([^{}]*)\}")
"""A fmt replacement field (``{:>10}``, ``{0:.3f}``); ``{{``/``}}`` removed first."""
_SECONDS = {
    "microsecond": 1e-6, "millisecond": 1e-3, "second": 1, "minute": 60, "hour": 3600,
    "day": 86400, "week": 604800, "month": 2_592_000, "year": 31_536_000,
}  # fmt: skip


def check_value_builders(node: exp.Expr, name: str) -> None:
    """Refuse ``node`` (a function called ``name``) if it may build a huge value.

    Raises:
        ToolError: ``"too_large"`` naming the function and the cap.
    """
    if isinstance(node, exp.GenerateSeries):
        _check_series(node)
        return
    if name in _FORMATS:
        _check_format(node, name)
        return
    if isinstance(node, exp.Pad):
        name = "lpad" if node.args.get("is_left") else "rpad"
    if name not in _SIZE_ARGS:
        return
    if name == "repeat_row":
        sizes = [e.expression for e in node.expressions if isinstance(e, exp.EQ)]
        if not sizes:
            sizes = [exp.Null()]
    else:
        sizes = [_arg(node, i) for i in _SIZE_ARGS[name]]
    for size in sizes:
        value = _number(size)
        if value is None or abs(value) > MAX_BUILT_SIZE:
            raise ToolError(
                "too_large",
                f"{name}() may build a huge value: its size argument must be a number literal of at "
                f"most {MAX_BUILT_SIZE:,} (got {_short(size)})",
            )


def _check_format(node: exp.Expr, name: str) -> None:
    """Widths and precisions of a ``printf``/``format`` literal format: numbers up to the cap, none dynamic."""
    fmt = _arg(node, 0)
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        _refuse_format(name, f"its format must be a string literal (got {_short(fmt)})")
    text = str(fmt.this)
    if _FORMATS[name] == "printf":
        sizes = [g for m in _PRINTF_SPEC.finditer(text.replace("%%", "")) for g in m.groups() if g]
    else:
        fields = text.replace("{{", "").replace("}}", "")
        if re.search(r"\{[^{}]*\{", fields):
            sizes = ["*"]  # a nested field: a width or precision taken from an argument
        else:
            sizes = [n for m in _FMT_FIELD.finditer(fields) for n in re.findall(r"\d+", m[1].partition(":")[2])]
    for size in sizes:
        if size == "*":
            _refuse_format(name, "widths and precisions must be written in the format, not passed as arguments")
        elif int(size) > MAX_BUILT_SIZE:
            _refuse_format(name, f"widths and precisions may be at most {MAX_BUILT_SIZE:,} (got {int(size):,})")


def _refuse_format(name: str, why: str) -> NoReturn:
    raise ToolError("too_large", f"{name}() may build a huge value: {why}")


def _arg(node: exp.Expr, index: int) -> exp.Expression | None:
    if isinstance(node, exp.Anonymous):
        args = node.expressions
    elif isinstance(node, exp.Repeat):
        args = [node.this, node.args.get("times")]
    elif isinstance(node, exp.Pad):
        args = [node.this, node.expression]
    else:
        args = [node.this, *node.expressions]
    return args[index] if index < len(args) else None


def _check_series(node: exp.GenerateSeries) -> None:
    start, end, step = node.args.get("start"), node.args.get("end"), node.args.get("step")
    span = _numeric_span(start, end, step)
    if span is None:
        span = _time_span(start, end, step)
    if span is None or span > MAX_SERIES_SPAN:
        got = "arguments that are not literals" if span is None else f"{span:,.0f} elements"
        raise ToolError(
            "too_large",
            f"range()/generate_series() may produce at most {MAX_SERIES_SPAN:,} elements and needs "
            f"literal bounds (got {got}); filter the episode's tables instead",
        )


def _numeric_span(
    start: exp.Expression | None, end: exp.Expression | None, step: exp.Expression | None
) -> float | None:
    lo = 0.0 if start is None else _number(start)
    hi, by = _number(end), 1.0 if step is None else _number(step)
    if lo is None or hi is None or by is None:
        return None
    return abs(hi - lo) / abs(by) if by else float("inf")


def _time_span(
    start: exp.Expression | None, end: exp.Expression | None, step: exp.Expression | None
) -> float | None:
    lo, hi, by = _time(start), _time(end), _interval_s(step)
    if lo is None or hi is None or by is None:
        return None
    return abs((hi - lo).total_seconds()) / by if by else float("inf")


def _number(node: exp.Expression | None) -> float | None:
    if isinstance(node, exp.Paren):
        return _number(node.this)
    if isinstance(node, exp.Neg):
        inner = _number(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return float(node.this)
        except ValueError:
            return None
    return None


def _time(node: exp.Expression | None) -> dt.datetime | None:
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        try:
            return dt.datetime.fromisoformat(node.this.this)
        except ValueError:
            return None
    return None


def _interval_s(node: exp.Expression | None) -> float | None:
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        return None
    match = re.fullmatch(r"\s*(-?[\d.]+)\s*([a-z]*)\s*", str(node.this.this).lower())
    unit = (node.text("unit") or (match.group(2) if match else "")).lower().rstrip("s")
    if match is None or unit not in _SECONDS:
        return None
    return abs(float(match.group(1))) * _SECONDS[unit]


def _short(node: exp.Expression | None) -> str:
    text = "nothing" if node is None else node.sql(dialect="duckdb")
    return text if len(text) <= 80 else f"{text[:80]}…"
