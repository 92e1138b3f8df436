"""Attack (session 12, sqlwarm12): a one-row result rendered without the column split gives the grid's text.

``render_rows`` of a single row with a non-NULL value takes a short path (``_render_one``); its text and
truncation flag must equal what the general grid gives for the same row, whatever the values (NULLs beside
values, NaN, infinities, huge and negative numbers, decimals, booleans, dates, timestamps on a whole minute or
not, time zones, intervals, bytes, lists, unicode, pipes, backslashes, newlines, text over the cell cap), the
title, the totals, the notice and a character budget smaller than the row. On a branch without the short path
the grid is ``render_rows`` itself (the test then checks nothing new, and holds).
"""

from __future__ import annotations

import datetime as dt
import math
import random
import uuid
from decimal import Decimal
from typing import Any

import pytest

from clinseek.tools import _render
from clinseek.tools._limits import Limits
from clinseek.tools._render import Rows, render_rows

_VALUES: list[Any] = [
    None, 0, -1, 2**63 - 1, -(2**63), 10**30, 1.5, -0.0, 0.1 + 0.2, 1e300, -1e-300, math.nan, math.inf, -math.inf,
    Decimal("12.3400"), Decimal("-0.000001"), True, False, "", " ", "x", "a|b", "back\\slash", "two\nlines\r\n",
    "ünïcødé 🧪 检查", "z" * 2_000, "|" * 50, dt.date(2150, 1, 2), dt.datetime(2150, 1, 2, 3, 4),
    dt.datetime(2150, 1, 2, 3, 4, 5), dt.datetime(2150, 1, 2, 3, 4, 5, 678), dt.datetime(2150, 1, 2, tzinfo=dt.UTC),
    dt.time(12, 30), dt.timedelta(days=2, seconds=5), b"\x00\xff", [1, None, 3], {"k": "v"},
    uuid.UUID(int=7), dt.datetime.max, dt.datetime.min,
]

_NAMES = ["n", "a|b", "line\nbreak", "subject_id", "valuenum", "ünï", "x" * 40, "charttime"]


def _grid(title: str | None, rows: Rows, limits: Limits, narrow: Any) -> tuple[str, bool]:
    grid = getattr(_render, "_render_grid", None)
    if grid is None:
        return render_rows(title, rows, limits, narrow=narrow)
    out: tuple[str, bool] = grid(title, rows, limits, narrow)
    return out


def _cases(seed: int, n: int) -> list[tuple[str | None, Rows, Limits, Any]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        width = rng.randint(1, 6)
        row = tuple(rng.choice(_VALUES) for _ in range(width))
        if all(v is None for v in row):
            row = (1, *row[1:])
        names = tuple(rng.choice(_NAMES) + str(i) for i in range(width))
        truncated = rng.random() < 0.3
        total = rng.choice([None, 1, 5, 10_000]) if truncated else rng.choice([None, 1])
        rows = Rows(names, [row], total, truncated, unit=rng.choice(["row", "value"]))
        limits = Limits(max_cell_chars=rng.choice([1, 5, 40, 1_000]), max_tool_chars=rng.choice([1, 50, 300, 16_000]))
        title = rng.choice([None, "hosp.labevents latest", "t"])
        narrow = rng.choice(["filter further.", lambda shown: f"ask from row {shown}."])
        cases.append((title, rows, limits, narrow))
    return cases


@pytest.mark.parametrize("seed", range(4))
def test_one_row_renders_as_the_grid_renders_it(seed: int) -> None:
    differ = []
    for title, rows, limits, narrow in _cases(seed, 500):
        got = render_rows(title, rows, limits, narrow=narrow)
        want = _grid(title, rows, limits, narrow)
        if got != want:
            differ.append((rows.rows[0], got, want))
    assert not differ, differ[:3]


def test_one_row_of_each_value_alone_and_beside_a_null() -> None:
    limits = Limits()
    for value in _VALUES:
        if value is None:
            continue
        for row in ((value,), (value, None), (None, value), (value, value)):
            rows = Rows(tuple(f"c{i}" for i in range(len(row))), [row], 1, False)
            for title in (None, "t"):
                assert render_rows(title, rows, limits, narrow="x") == _grid(title, rows, limits, "x"), row
