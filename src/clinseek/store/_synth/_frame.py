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
    """Collects blocks of rows (each a set of equal-length columns) and concatenates them once.

    Scalars are kept as ``(value, count)`` runs and expanded with one ``np.repeat`` per run of
    consecutive scalar blocks, so adding many one-row blocks stays cheap.
    """

    def __init__(self) -> None:
        self._cols: dict[str, list[Any]] = {}
        self._sizes: list[int] = []
        self.n = 0

    def add(self, n: int, **cols: Any) -> None:
        """Add ``n`` rows; a scalar value is repeated ``n`` times."""
        if n <= 0:
            return
        block = len(self._sizes)
        for name, value in cols.items():
            if isinstance(value, list | tuple):
                value = np.array(value, dtype=object)
            if isinstance(value, np.ndarray) and len(value) != n:
                raise ValueError(f"column {name}: {len(value)} values for {n} rows")
            parts = self._cols.get(name)
            if parts is None:
                parts = self._cols[name] = [_Missing] * block
            elif len(parts) < block:
                parts.extend([_Missing] * (block - len(parts)))
            parts.append(value)
        self._sizes.append(n)
        self.n += n

    def frame(self) -> Frame:
        """The concatenated columns (missing columns of a block are NULL)."""
        blocks = len(self._sizes)
        out: Frame = {}
        for name, parts in self._cols.items():
            if len(parts) < blocks:
                parts = parts + [_Missing] * (blocks - len(parts))
            out[name] = _concat_parts(parts, self._sizes)
        return out


class _MissingType:
    pass


_Missing = _MissingType()


def _concat_parts(parts: list[Any], sizes: list[int]) -> np.ndarray:
    pieces: list[np.ndarray] = []
    run_values: list[Any] = []
    run_counts: list[int] = []

    def flush() -> None:
        if run_values:
            pieces.append(np.repeat(_scalars(run_values), run_counts))
            run_values.clear()
            run_counts.clear()

    for part, n in zip(parts, sizes, strict=True):
        if isinstance(part, np.ndarray):
            flush()
            pieces.append(part)
        else:
            run_values.append(None if part is _Missing else part)
            run_counts.append(n)
    flush()
    if len(pieces) == 1:
        return pieces[0]
    if any(p.dtype == object for p in pieces):
        pieces = [p if p.dtype == object else p.astype(object) for p in pieces]
    return np.concatenate(pieces)


def _scalars(values: list[Any]) -> np.ndarray:
    if all(v is None for v in values):
        return np.full(len(values), np.nan)
    if any(v is None or isinstance(v, str) for v in values):
        if all(v is None or isinstance(v, str) for v in values):
            return np.array(values, dtype=object)
        if all(v is None or isinstance(v, int | float | np.integer | np.floating) for v in values):
            return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
        return np.array(values, dtype=object)
    if all(isinstance(v, int | np.integer | bool | np.bool_) for v in values):
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=np.float64)


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
