"""Compact rendering of rows for the model: pipe-separated, no padding, every cut announced."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from operator import attrgetter, eq, itemgetter, methodcaller
from typing import Any

from ._limits import Limits
from ._result import ToolResult

_NOTICE_ROOM = 400  # characters kept free for the closing notice
_NONE = type(None)
_DATETIME = dt.datetime
_SECOND, _MICROSECOND, _DAY = attrgetter("second"), attrgetter("microsecond"), itemgetter(slice(None, 10))
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])?")

Narrow = str | Callable[[int], str]
"""How to ask for fewer rows: a fixed text, or one made from how many rows the output shows."""


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences (colours, underlines): a model never sees them."""
    return _ANSI.sub("", text) if "\x1b" in text else text
MAX_ECHO_CHARS = 200
"""Most characters of a model-supplied argument echoed back in a title or an error message."""


def echo(value: object) -> str:
    """``repr(value)`` cut to :data:`MAX_ECHO_CHARS` characters with a ``…[+N chars]`` marker."""
    text = repr(value)
    if len(text) <= MAX_ECHO_CHARS:
        return text
    return f"{text[:MAX_ECHO_CHARS]}…[+{len(text) - MAX_ECHO_CHARS} chars]"


@dataclass(frozen=True, slots=True)
class Rows:
    """Rows to render.

    Attributes:
        columns: column names.
        rows: the rows fetched (at most ``Limits.max_rows``).
        total: how many rows exist in all, or ``None`` when only "more than shown" is known.
        truncated: more rows existed than were fetched.
        unit: what one row is, for the counts in the text ("row", "value", "candidate").
    """

    columns: tuple[str, ...]
    rows: Sequence[tuple[Any, ...]]
    total: int | None
    truncated: bool
    unit: str = "row"


def format_value(value: Any, max_chars: int) -> str:
    """One value as compact text: NULL is empty, timestamps ``YYYY-MM-DD HH:MM:SS``, floats
    to 10 significant digits without a trailing ``.0``; ``|``, ``\\`` and newlines escaped; long
    text cut with a ``…[+N chars]`` marker."""
    kind = type(value)
    if kind is str:
        return _format_text(value, max_chars)
    if value is None:
        return ""
    if kind is int:
        return str(value)
    if kind is float:
        return "NaN" if math.isnan(value) else f"{value:.10g}"
    if kind is dt.datetime:
        return str(value.isoformat(sep=" "))
    if kind is bool:
        return "true" if value else "false"
    if isinstance(value, (dt.date, Decimal, int, float)):
        return str(value)
    return _format_text(str(value), max_chars)


def _format_text(text: str, max_chars: int) -> str:
    if "|" in text or "\\" in text or "\n" in text or "\r" in text:
        text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "\\n")
    if len(text) > max_chars:
        return f"{text[:max_chars]}…[+{len(text) - max_chars} chars]"
    return text


def render_rows(title: str | None, rows: Rows, limits: Limits, *, narrow: Narrow) -> tuple[str, bool]:
    """Render ``rows`` as ``col|col`` lines under ``title``; returns (text, truncated).

    With a ``title`` the text starts with ``<title>: <N rows>``; without one (``ehr.run_sql_query``) it
    starts with the header (an empty result is then ``No rows.``). Columns that are NULL in every shown
    row are listed once (``NULL in all rows shown: ...``) and, when there are several rows, columns with
    the same value in every shown row once (``same in all rows shown: subject_id=..., ...``), each only
    when that is shorter than keeping them in the grid; the grid holds the rest. A timestamp column is
    written to the minute when every time in it is on a whole minute, and a time on the same date as the
    one in the row just above shows only its time of day (``2150-01-02 03:04`` then ``07:15``). When rows
    were cut (row cap or character cap) the text ends with a notice giving the total (when known) and
    ``narrow``, the way to ask for fewer rows (a callable gets how many rows the output shows: the next
    page starts there).
    """
    if not rows.rows:
        return (f"{title}: no rows." if title is not None else "No rows."), False
    cap = limits.max_cell_chars
    if len(rows.rows) == 1 and rows.rows[0].count(None) != len(rows.rows[0]):  # one row with a value
        return _render_one(title, rows, cap, narrow)
    return _render_grid(title, rows, limits, narrow)


def _render_grid(title: str | None, rows: Rows, limits: Limits, narrow: Narrow) -> tuple[str, bool]:
    """:func:`render_rows` of one or more rows: columns formatted and split (uniform ones listed once), then the grid
    up to the character budget."""
    cap = limits.max_cell_chars
    columns = list(zip(*rows.rows, strict=True))
    cells = [_format_column(values, cap) for values in columns]
    keep, same, nulls = _split_columns(rows.columns, columns, cells)
    lines = [f"{title}: {_count(rows)}"] if title is not None else []
    if same:
        lines.append("same in all rows shown: " + ", ".join(f"{rows.columns[i]}={cells[i][0]}" for i in same))
    if nulls:
        lines.append(f"NULL in all rows shown: {', '.join(rows.columns[i] for i in nulls)}")
    if not keep:  # every column NULL: say so instead of printing blank lines
        n = len(rows.rows)
        lines.append(f"({n} {rows.unit}{'s' if n != 1 else ''}, all values NULL)")
        cut = rows.truncated
        if cut:
            lines.append(_notice(n, rows, narrow, chars_cut=False))
        return "\n".join(lines), cut
    _date_beside(columns, cells, keep)
    lines.append(_headers([rows.columns[i] for i in keep]))
    budget = limits.max_tool_chars - _NOTICE_ROOM - sum(len(x) + 1 for x in lines)
    grid = [cells[i] for i in keep]
    body = list(map("|".join, zip(*grid, strict=True))) if len(grid) > 1 else grid[0]
    if sum(map(len, body)) + len(body) <= budget:  # every row fits
        lines += body
        shown = len(body)
    else:
        shown = 0
        for line in body:
            budget -= len(line) + 1
            if budget < 0 and shown:
                break
            lines.append(line)
            shown += 1
    cut = rows.truncated or shown < len(rows.rows)
    if cut:
        lines.append(_notice(shown, rows, narrow, chars_cut=shown < len(rows.rows)))
    return "\n".join(lines), cut


def _render_one(title: str | None, rows: Rows, cap: int, narrow: Narrow) -> tuple[str, bool]:
    """:func:`render_rows` of a single row with a non-NULL value (a count, a maximum, one record): the same text
    without the column split, which never lists a column of one row apart (a NULL listed once saves nothing; a
    row of NULLs only takes the general path). The header and the row always fit (the first row is never cut)."""
    cells = [_format_times((v,))[0] if type(v) is dt.datetime else format_value(v, cap) for v in rows.rows[0]]
    lines = [f"{title}: {_count(rows)}"] if title is not None else []
    lines.append(_headers(rows.columns))
    lines.append("|".join(cells))
    if rows.truncated:
        lines.append(_notice(1, rows, narrow, chars_cut=False))
    return "\n".join(lines), rows.truncated


def _format_column(values: tuple[Any, ...], cap: int) -> list[str]:
    """The cells of one column, formatted as :func:`format_value` does (timestamps as :func:`_format_times`).

    A column of one kind (NULLs aside) is formatted in one pass: text that needs no escape and no cut as it is
    (checked on the column at once), integers with ``str``, floats as :func:`format_value` writes them.
    """
    kinds = set(map(type, values))
    nulls = _NONE in kinds
    if nulls:
        kinds.discard(_NONE)
    if len(kinds) == 1:
        kind = kinds.pop()
        if kind is str:
            present = [v for v in values if v is not None] if nulls else values
            joined = "".join(present)
            if "|" in joined or "\\" in joined or "\n" in joined or "\r" in joined or max(map(len, present)) > cap:
                return ["" if v is None else _format_text(v, cap) for v in values]
            return ["" if v is None else v for v in values] if nulls else list(values)
        if kind is dt.datetime:
            return _format_times(values)
        if kind is int:
            return ["" if v is None else str(v) for v in values] if nulls else list(map(str, values))
        if kind is float:
            return ["" if v is None else "NaN" if v != v else f"{v:.10g}" for v in values]
    return [format_value(v, cap) for v in values]


def _format_times(values: tuple[dt.datetime | None, ...]) -> list[str]:
    """A timestamp column: to the minute when every time is on a whole minute (else to the second, or finer
    when a time has a fraction); a time on the same date as the one in the row just above shows only its time
    of day."""
    if None not in values:  # in one pass per step (C loops); each time's date against the one above
        spec = "auto" if any(map(_SECOND, values)) or any(map(_MICROSECOND, values)) else "minutes"
        texts = list(map(methodcaller("isoformat", " ", spec), values))
        days = list(map(_DAY, texts))
        if not any(map(eq, days, days[1:])):
            return texts
        out = texts[:1]
        later = zip(days, days[1:], texts[1:], strict=False)  # each row but the first, with the date above it
        out += [text[11:] if day == above else text for above, day, text in later]
        return out
    minutes = not any(v is not None and (v.second or v.microsecond) for v in values)
    spec = "minutes" if minutes else "auto"
    out = []
    above = ""
    for value in values:
        if value is None:
            out.append("")
            above = ""
            continue
        text = value.isoformat(" ", spec)
        day = text[:10]
        out.append(text[11:] if day == above else text)
        above = day
    return out


def _date_beside(columns: list[tuple[Any, ...]], cells: list[list[str]], keep: list[int]) -> None:
    """Give a time shown without its date (:func:`_format_times`: the date of the row above in its column) its date
    back when the nearest timestamp to its left in the row has another date: read left to right,
    ``2180-05-08 08:00|22:00`` says 05-08 22:00 where the stop time was 05-07 22:00 (newcomer21). In place, on the
    shown columns ``keep``; nothing to do below two timestamp columns or when no later one was shortened."""
    stamps = [i for i in keep if _DATETIME in set(map(type, columns[i]))]
    if len(stamps) < 2 or not any(0 < len(cell) < 16 for i in stamps[1:] for cell in cells[i]):
        return  # a shortened time is at most 15 characters (HH:MM:SS.ffffff), a dated one at least 16
    for row in range(len(columns[0])):
        left = None
        for i in stamps:
            value = columns[i][row]
            if type(value) is not dt.datetime:
                continue
            day = value.date().isoformat()
            if left is not None and day != left and not cells[i][row].startswith(day):
                cells[i][row] = f"{day} {cells[i][row]}"
            left = day


def _headers(names: Sequence[str]) -> str:
    """The header line: the names joined by ``|``, each escaped as :func:`_header` does (checked on the line at once)."""
    line = "|".join(names)
    if "\n" in line or line.count("|") != len(names) - 1:
        return "|".join([_header(name) for name in names])
    return line


def _header(name: str) -> str:
    return name.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n") if ("|" in name or "\n" in name) else name


_SAME = len("same in all rows shown: ") + 1
_NULLS = len("NULL in all rows shown: ") + 1


def _split_columns(
    names: tuple[str, ...], columns: list[tuple[Any, ...]], cells: list[list[str]]
) -> tuple[list[int], list[int], list[int]]:
    """Column indexes: (shown in the grid, same non-NULL value in every row, NULL in every row).

    A uniform column leaves the grid only when listing it once is shorter: its cells (a value and a
    separator per row) and its header cost more than ``name=value, `` on the shared line, that line's
    prefix counted once per group.
    """
    n = len(columns[0]) if columns else 0
    keep: list[int] = []
    same: list[tuple[int, int]] = []  # (index, characters saved)
    nulls: list[tuple[int, int]] = []
    for i, name in enumerate(names):
        values = columns[i]
        value = values[0]
        if n > 1:  # one row: its values are trivially uniform (and a NaN, unequal to itself, is not NULL either)
            kind = type(value)  # count() first (in C; it takes an identical value as equal, so all() decides)
            if values.count(value) != n or not all(v == value and type(v) is kind for v in values):
                keep.append(i)
                continue
        if value is None:
            nulls.append((i, (n + len(name) + 1) - (len(name) + 2)))
        elif n > 1:
            width = len(cells[i][0])
            same.append((i, (n * (width + 1) + len(name) + 1) - (len(name) + width + 3)))
        else:
            keep.append(i)
    if not same and not nulls:  # no uniform column: the grid is every column, in order
        return keep, [], []
    if len(nulls) == len(names):  # every column NULL: the caller says so in one line
        return [], [], [i for i, _ in nulls]
    listed_same = [i for i, saved in same if saved > 0] if sum(max(s, 0) for _, s in same) > _SAME else []
    listed_nulls = [i for i, saved in nulls if saved > 0] if sum(max(s, 0) for _, s in nulls) > _NULLS else []
    keep = sorted({*keep, *(i for i, _ in same if i not in listed_same), *(i for i, _ in nulls if i not in listed_nulls)})
    if not keep:  # keep at least one column in the grid so the rows stay visible
        keep, listed_same = listed_same[:1], listed_same[1:]
    return keep, listed_same, listed_nulls


def _count(rows: Rows) -> str:
    n = rows.total if rows.total is not None else len(rows.rows)
    text = f"{n} {rows.unit}{'s' if n != 1 else ''}"
    return f"more than {text}" if rows.total is None and rows.truncated else text


def _notice(shown: int, rows: Rows, narrow: Narrow, *, chars_cut: bool) -> str:
    total = str(rows.total) if rows.total is not None else f"more than {len(rows.rows)}"
    why = "the output character limit" if chars_cut else "the row limit"
    how = narrow(shown) if callable(narrow) else narrow
    return f"[TRUNCATED: showing the first {shown} of {total} {rows.unit}s ({why}). To see the rest, {how}]"


def table_result(title: str | None, rows: Rows, limits: Limits, *, narrow: Narrow) -> ToolResult:
    """A successful :class:`ToolResult` holding ``rows`` rendered and as structured data."""
    text, cut = render_rows(title, rows, limits, narrow=narrow)
    data = {
        "columns": list(rows.columns),
        "rows": [list(r) for r in rows.rows],
        "row_count": rows.total,
    }
    return ToolResult(ok=True, content=text, data=data, truncated=cut)


def cap_text(text: str, limits: Limits, *, narrow: str) -> tuple[str, bool]:
    """Cut free text at ``max_tool_chars`` (at a line boundary when possible), with a notice."""
    if len(text) <= limits.max_tool_chars:
        return text, False
    head = text[: limits.max_tool_chars - _NOTICE_ROOM]
    head = head[: head.rfind("\n")] if "\n" in head else head
    return f"{head}\n[TRUNCATED: output cut at {len(head)} of {len(text)} characters. {narrow}]", True
