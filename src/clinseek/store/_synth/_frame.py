"""Columnar accumulators shared by the generators.

A *frame* is ``dict[column name, numpy array | pyarrow array]`` of equal lengths. Conventions
(the writer in :mod:`._writer` converts them to the registry types):

- times (TIMESTAMP and DATE columns) are float64 **seconds since 1970-01-01** on MIMIC's shifted
  clock, NaN = NULL (DATE columns are floored to the day);
- integers that may be NULL are float64 with NaN; strings are object arrays with ``None`` = NULL.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Frame = dict[str, Any]

MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0
NAN = float("nan")


class Rows:
    """Collects blocks of rows (each a set of equal-length columns) and concatenates them once."""

    def __init__(self) -> None:
        self._blocks: list[tuple[int, dict[str, Any]]] = []
        self.n = 0

    def add(self, n: int, **cols: Any) -> None:
        """Add ``n`` rows; a scalar value is repeated ``n`` times."""
        if n <= 0:
            return
        block: dict[str, Any] = {}
        for name, value in cols.items():
            if isinstance(value, np.ndarray):
                if len(value) != n:
                    raise ValueError(f"column {name}: {len(value)} values for {n} rows")
                block[name] = value
            elif isinstance(value, list | tuple):
                if len(value) != n:
                    raise ValueError(f"column {name}: {len(value)} values for {n} rows")
                block[name] = np.array(value, dtype=object)
            else:
                block[name] = _repeat(value, n)
        self._blocks.append((n, block))
        self.n += n

    def frame(self) -> Frame:
        """The concatenated columns (missing columns of a block are NULL)."""
        names: dict[str, None] = {}
        for _, block in self._blocks:
            names.update(dict.fromkeys(block))
        out: Frame = {}
        for name in names:
            parts = [block.get(name) for _, block in self._blocks]
            if any(p is None for p in parts):
                parts = [
                    p if p is not None else np.full(n, None, dtype=object)
                    for (n, _), p in zip(self._blocks, parts, strict=True)
                ]
            out[name] = np.concatenate(parts) if parts else np.array([], dtype=object)
        return out


def _repeat(value: Any, n: int) -> np.ndarray:
    if value is None or isinstance(value, str):
        return np.full(n, value, dtype=object)
    if isinstance(value, float):
        return np.full(n, value, dtype=np.float64)
    if isinstance(value, bool | np.bool_):
        return np.full(n, int(value), dtype=np.int64)
    if isinstance(value, int | np.integer):
        return np.full(n, int(value), dtype=np.int64)
    return np.full(n, value, dtype=np.float64)


def frame_len(frame: Frame) -> int:
    """Number of rows in a frame (0 for an empty frame)."""
    for value in frame.values():
        return len(value)
    return 0


def grid(start: float, end: float, step: float, rng: np.random.Generator, jitter: float = 0.0) -> np.ndarray:
    """Times from ``start`` to before ``end`` every ``step`` seconds, each moved by up to ``jitter`` seconds.

    Times are rounded to the minute and kept inside ``[start, end)``.
    """
    if end <= start:
        return np.array([], dtype=np.float64)
    times = np.arange(start, end, step, dtype=np.float64)
    if jitter:
        times = times + rng.uniform(0, jitter, len(times))
    times = np.floor(times / MINUTE) * MINUTE
    return times[(times >= start) & (times < end)]
