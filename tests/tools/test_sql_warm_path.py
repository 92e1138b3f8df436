"""The warm ``ehr.run_sql_query`` path (session 13, sqlpy13) gives exactly what the general path gave.

Two fast paths are checked against independent oracles:

- the renderer's one-pass column formatting, the header checked on the joined line, the grid checked against the
  character budget at once and ``count()`` before the uniform-column check: against ``_reference_render``, the
  session-12 renderer copied here (per-value :func:`format_value`, one loop per timestamp column, ``all()`` per
  column, a row-by-row budget loop), on random results of many value kinds, 0/1/2/3/200/201 rows, NULLs, NaN,
  long and escaped text, every cut;
- :meth:`Episode.execute` in one frame and the tool on a real episode: rows, cut, totals and text against DuckDB's
  own full result of the same statement, rendered by the reference renderer into a validated ``ToolResult``.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import uuid
from decimal import Decimal
from typing import Any

import pytest

from clinseek.tools import Limits, ToolContext, ToolResult, _render, get_tool
from clinseek.tools._render import Rows, render_rows

# ---------------------------------------------------------------- the session-12 renderer (the oracle)


def _reference_render(title: str | None, rows: Rows, limits: Limits, narrow: Any) -> tuple[str, bool]:
    if not rows.rows:
        return (f"{title}: no rows." if title is not None else "No rows."), False
    cap = limits.max_cell_chars
    if len(rows.rows) == 1 and any(v is not None for v in rows.rows[0]):
        cells = [_ref_times((v,))[0] if type(v) is dt.datetime else _render.format_value(v, cap) for v in rows.rows[0]]
        lines = [f"{title}: {_render._count(rows)}"] if title is not None else []
        lines.append("|".join([_render._header(name) for name in rows.columns]))
        lines.append("|".join(cells))
        if rows.truncated:
            lines.append(_render._notice(1, rows, narrow, chars_cut=False))
        return "\n".join(lines), rows.truncated
    columns = list(zip(*rows.rows, strict=True))
    cells = [_ref_column(values, cap) for values in columns]
    keep, same, nulls = _ref_split(rows.columns, columns, cells)
    lines = [f"{title}: {_render._count(rows)}"] if title is not None else []
    if same:
        lines.append("same in all rows shown: " + ", ".join(f"{rows.columns[i]}={cells[i][0]}" for i in same))
    if nulls:
        lines.append(f"NULL in all rows shown: {', '.join(rows.columns[i] for i in nulls)}")
    if not keep:
        n = len(rows.rows)
        lines.append(f"({n} {rows.unit}{'s' if n != 1 else ''}, all values NULL)")
        if rows.truncated:
            lines.append(_render._notice(n, rows, narrow, chars_cut=False))
        return "\n".join(lines), rows.truncated
    _ref_date_beside(columns, cells, keep)
    lines.append("|".join([_render._header(rows.columns[i]) for i in keep]))
    budget = limits.max_tool_chars - _render._NOTICE_ROOM - sum(len(x) + 1 for x in lines)
    grid = [cells[i] for i in keep]
    shown = 0
    for line in map("|".join, zip(*grid, strict=True)) if len(grid) > 1 else grid[0]:
        budget -= len(line) + 1
        if budget < 0 and shown:
            break
        lines.append(line)
        shown += 1
    cut = rows.truncated or shown < len(rows.rows)
    if cut:
        lines.append(_render._notice(shown, rows, narrow, chars_cut=shown < len(rows.rows)))
    return "\n".join(lines), cut


def _ref_date_beside(columns: list[tuple[Any, ...]], cells: list[list[str]], keep: list[int]) -> None:
    """Session 21 (newcomer21): a time shown without its date gets it back when the row's nearest timestamp to its
    left has another date (read left to right, ``05-08 08:00|22:00`` said 05-08 22:00 for 05-07 22:00)."""
    for row in range(len(columns[0]) if columns else 0):
        left = None
        for i in keep:
            value = columns[i][row]
            if not isinstance(value, dt.datetime) or not any(isinstance(v, dt.datetime) for v in columns[i]):
                continue
            day = value.date().isoformat()
            if left is not None and day != left and cells[i][row][:10] != day:
                cells[i][row] = day + " " + cells[i][row]
            left = day


def _ref_column(values: tuple[Any, ...], cap: int) -> list[str]:
    kinds = {type(v) for v in values} - {type(None)}
    if kinds == {dt.datetime}:
        return _ref_times(values)
    return [_render.format_value(v, cap) for v in values]


def _ref_times(values: tuple[Any, ...]) -> list[str]:
    minutes = not any(v is not None and (v.second or v.microsecond) for v in values)
    out: list[str] = []
    above = ""
    for value in values:
        if value is None:
            out.append("")
            above = ""
            continue
        text = value.isoformat(" ", "minutes") if minutes else value.isoformat(" ")
        out.append(text[11:] if text[:10] == above else text)
        above = text[:10]
    return out


def _ref_split(names: tuple[str, ...], columns: list[tuple[Any, ...]], cells: list[list[str]]) -> tuple[
        list[int], list[int], list[int]]:
    n = len(columns[0]) if columns else 0
    keep: list[int] = []
    same: list[tuple[int, int]] = []
    nulls: list[tuple[int, int]] = []
    for i, name in enumerate(names):
        values = columns[i]
        value = values[0]
        if n > 1:
            kind = type(value)
            if not all(v == value and type(v) is kind for v in values):
                keep.append(i)
                continue
        if value is None:
            nulls.append((i, (n + len(name) + 1) - (len(name) + 2)))
        elif n > 1:
            width = len(cells[i][0])
            same.append((i, (n * (width + 1) + len(name) + 1) - (len(name) + width + 3)))
        else:
            keep.append(i)
    if not same and not nulls:
        return keep, [], []
    if len(nulls) == len(names):
        return [], [], [i for i, _ in nulls]
    listed_same = [i for i, saved in same if saved > 0] if sum(max(s, 0) for _, s in same) > _render._SAME else []
    listed_nulls = [i for i, saved in nulls if saved > 0] if sum(max(s, 0) for _, s in nulls) > _render._NULLS else []
    keep = sorted({*keep, *(i for i, _ in same if i not in listed_same), *(i for i, _ in nulls if i not in listed_nulls)})
    if not keep:
        keep, listed_same = listed_same[:1], listed_same[1:]
    return keep, listed_same, listed_nulls


# ---------------------------------------------------------------- random results

_NAN = math.nan
_KINDS: dict[str, list[Any]] = {
    "int": [0, -1, 7, 2**63 - 1, -(2**63), 10**30, 136],
    "float": [0.0, -0.0, 1.5, 0.1 + 0.2, 1e300, -1e-300, _NAN, math.inf, -math.inf, 7.0, 1.1],
    "text": ["", " ", "x", "mg/dL", "a|b", "back\\slash", "two\nlines\r\n", "ünïcødé 🧪", "z" * 300, "|" * 5,
             "HYDROmorphone (Dilaudid)", "Administered"],
    "time": [dt.datetime(2150, 1, 2, 3, 4), dt.datetime(2150, 1, 2, 7, 15), dt.datetime(2150, 1, 3),
             dt.datetime(2150, 1, 2, 3, 4, 5), dt.datetime(2150, 1, 2, 3, 4, 5, 678), dt.datetime(999, 1, 2, 3, 4),
             dt.datetime(2150, 1, 2, 3, 4, tzinfo=dt.UTC), dt.datetime.max, dt.datetime.min],
    "minute": [dt.datetime(2150, 1, 2, 3, 4), dt.datetime(2150, 1, 2, 7, 15), dt.datetime(2150, 1, 3, 0, 1),
               dt.datetime(2151, 6, 30, 23, 59)],
    "other": [True, False, Decimal("12.3400"), Decimal("-0.000001"), dt.date(2150, 1, 2), dt.time(12, 30),
              dt.timedelta(days=2, seconds=5), b"\x00\xff", [1, None, 3], {"k": "v"}, uuid.UUID(int=7)],
}
_ALL = [v for values in _KINDS.values() for v in values]
_NAMES = ["n", "a|b", "line\nbreak", "subject_id", "valuenum", "ünï", "x" * 40, "charttime", "back\\slash"]


def _column(rng: random.Random, n: int) -> list[Any]:
    style = rng.random()
    if style < 0.15:  # uniform: one value in every row (NULL included)
        value = rng.choice([None, *_ALL])
        return [value] * n
    pool = _ALL if style < 0.3 else _KINDS[rng.choice(list(_KINDS))]  # mixed kinds, or one kind
    nulls = rng.choice([0.0, 0.0, 0.2, 0.9])
    if rng.random() < 0.3:  # a few distinct values repeated (same dates in a row, equal values)
        pool = rng.sample(pool, min(len(pool), 2))
    column = [None if rng.random() < nulls else rng.choice(pool) for _ in range(n)]
    if rng.random() < 0.3 and column and all(isinstance(v, dt.datetime) or v is None for v in column):
        column.sort(key=lambda v: (v is None, v.replace(tzinfo=None) if v is not None else dt.datetime.min))
    return column


def _cases(seed: int, count: int) -> list[tuple[str | None, Rows, Limits, Any]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        n = rng.choice([1, 1, 2, 2, 3, 5, 10, 200, 201])
        width = rng.randint(1, 6)
        columns = [_column(rng, n) for _ in range(width)]
        rows = [tuple(column[i] for column in columns) for i in range(n)]
        names = tuple(rng.choice(_NAMES) + str(i) for i in range(width))
        truncated = rng.random() < 0.3
        total = rng.choice([None, n, n + 5, 10_000]) if truncated else rng.choice([None, n])
        limits = Limits(max_cell_chars=rng.choice([1, 5, 40, 1_000]),
                        max_tool_chars=rng.choice([1, 100, 600, 2_000, 16_000]))
        title = rng.choice([None, "hosp.labevents latest", "t"])
        narrow = rng.choice(["filter further.", lambda shown: f"ask from row {shown}."])
        cases.append((title, Rows(names, rows, total, truncated, unit=rng.choice(["row", "value"])), limits, narrow))
    return cases


@pytest.mark.parametrize("seed", range(8))
def test_the_renderer_gives_the_session_12_text_for_any_result(seed: int) -> None:
    for title, rows, limits, narrow in _cases(seed, 400):
        assert render_rows(title, rows, limits, narrow=narrow) == _reference_render(title, rows, limits, narrow), rows


def test_the_renderer_gives_the_session_12_text_at_the_edges() -> None:
    stamps = [dt.datetime(2150, 1, 2, 3, 4), dt.datetime(2150, 1, 2, 5, 6), None, dt.datetime(2150, 1, 2, 5, 6),
              dt.datetime(2150, 1, 3, 0, 0, 1)]
    nan_twice = float("nan")
    edges: list[list[tuple[Any, ...]]] = [
        [],
        [(None,)], [(None, None)], [(1, None)], [(None, "x")],
        [(nan_twice,), (nan_twice,)],  # one NaN object twice: never "the same in all rows"
        [(1,), (True,)], [(1,), (1.0,)], [(0,), (False,)],  # equal values of other kinds: not uniform
        [(v,) for v in stamps], [(v,) for v in stamps[:2]], [(v, v) for v in stamps],
        [("a",), (None,), ("b|c",)], [("x" * 50,), ("y",)], [(1, "same"), (2, "same"), (3, "same")],
        [(i, "same", None) for i in range(201)], [(i, f"r{i}") for i in range(200)],
        [(1 if i % 2 else True, i) for i in range(40)], [(1 if i % 2 else 1.0, i) for i in range(40)],
        [(nan_twice, i) for i in range(40)], [("same", i) for i in range(40)],  # long enough to list a column apart
    ]
    for body in edges:
        width = len(body[0]) if body else 2
        for names in (tuple(f"c{i}" for i in range(width)), tuple(f"c|{i}" for i in range(width)),
                      tuple(f"c\n{i}" for i in range(width))):
            for limits in (Limits(), Limits(max_cell_chars=3, max_tool_chars=450), Limits(max_tool_chars=1)):
                for truncated, total in ((False, len(body)), (True, None), (True, 999)):
                    rows = Rows(names, body, total, truncated)
                    for title in (None, "T"):
                        assert render_rows(title, rows, limits, narrow="x") == _reference_render(title, rows, limits,
                                                                                                 "x")


# ---------------------------------------------------------------- the tool on a real episode


def _value_sql(n: int) -> str:
    """``n`` rows of many kinds, NULLs and long text among them (over ``range``: any row count)."""
    return (
        "SELECT i, CASE WHEN i % 3 = 0 THEN NULL ELSE i * 1.5 END AS x, CAST(i AS DOUBLE) / 7 AS f, "
        "CASE WHEN i % 4 = 1 THEN repeat('ab|', 400) WHEN i % 4 = 2 THEN NULL ELSE 'v' || i END AS t, "
        "TIMESTAMP '2150-01-02 03:04' + to_minutes(CAST(i * 97 AS BIGINT)) AS ts, "
        "CASE WHEN i % 5 = 0 THEN TIMESTAMP '2150-01-02 03:04:05.25' END AS ts2, DATE '2150-01-02' + CAST(i AS INTEGER) AS d, "
        "i % 2 = 0 AS b, CAST(i AS DECIMAL(10, 2)) AS dec, 'same' AS s, NULL AS nothing, "
        f"CASE WHEN i = 1 THEN 'nan'::DOUBLE END AS nanny FROM range({n}) t(i) ORDER BY i"
    )


@pytest.mark.parametrize("n", [0, 1, 2, 3, 200, 201, 450])
@pytest.mark.parametrize("limits", [Limits(), Limits(max_rows=2, max_cell_chars=30), Limits(max_tool_chars=1_500)])
def test_the_tool_gives_the_general_paths_result(episode: Any, n: int, limits: Limits) -> None:
    """Rows, cut, totals, types and text as DuckDB's full result rendered by the session-12 renderer gives them."""
    from clinseek.tools._ehr_sql import _next_page

    ctx = ToolContext(episode=episode, limits=limits)
    fn = get_tool("ehr.run_sql_query").fn
    for sql in (_value_sql(n), f"SELECT count(*) AS n FROM range({n})", f"SELECT max(i) AS m FROM range({n}) t(i)"):
        for _ in range(2):  # the first call and a warm one (kept parse, kept shape, kept verdict)
            got = fn(ctx, sql_query=sql)
            cur = episode._con.execute(sql)
            every = cur.fetchall()
            columns = tuple(d[0] for d in cur.description)
            types = [str(d[1]) for d in cur.description]
            shown = every[: limits.max_rows]
            cut = len(every) > limits.max_rows
            if not every:
                expected = ToolResult(ok=True, content="The query ran and returned no rows.",
                                      data={"columns": list(columns), "types": types, "rows": [], "row_count": 0})
            else:
                text, text_cut = _reference_render(None, Rows(columns, shown, len(every), cut), limits,
                                                   lambda k, s=sql: _next_page(ctx, s, k))
                expected = ToolResult(ok=True, content=text, truncated=text_cut,
                                      data={"columns": list(columns), "rows": [list(r) for r in shown],
                                            "row_count": len(every), "types": types})
            assert got.model_dump_json() == expected.model_dump_json()
            assert got.model_fields_set == expected.model_fields_set


def test_a_time_beside_a_time_of_another_date_keeps_its_date() -> None:
    """newcomer21: prescriptions' ``starttime|stoptime`` showed ``2180-05-08 08:00|22:00`` for a stop time of
    2180-05-07 22:00 (its date was the row above's in its column): read left to right, 05-08 22:00."""
    d = dt.datetime
    rows = Rows(("drug", "starttime", "stoptime"),
                [("a", d(2180, 5, 7, 8), d(2180, 5, 7, 20)), ("b", d(2180, 5, 8, 8), d(2180, 5, 7, 22)),
                 ("c", d(2180, 5, 8, 9), d(2180, 5, 8, 23)), ("d", d(2180, 5, 8, 10), d(2180, 5, 8, 23, 30))], 4, False)
    text, _ = render_rows(None, rows, Limits(), narrow=None)
    assert text.splitlines() == ["drug|starttime|stoptime", "a|2180-05-07 08:00|2180-05-07 20:00",
                                 "b|2180-05-08 08:00|2180-05-07 22:00", "c|09:00|2180-05-08 23:00", "d|10:00|23:30"]
