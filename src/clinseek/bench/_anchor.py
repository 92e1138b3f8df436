"""Anchors (patient, cutoff, encounter) and the build context the per-task builders share."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

import duckdb

from ._future import FutureReader

ONE_SECOND = dt.timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where and when one question is asked.

    Attributes:
        subject_id: the patient.
        prediction_time: the cutoff (naive MIMIC clock).
        hadm_id: the admission the question is about, when the question may name it.
        target_hadm_id / target_stay_id: encounters whose codes are the answer (hidden).
        info: store facts used only to locate label rows (start times, linked ids); never written.
    """

    subject_id: int
    prediction_time: dt.datetime
    hadm_id: int | None = None
    stay_id: int | None = None
    target_hadm_id: int | None = None
    target_stay_id: int | None = None
    info: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Drawn:
    """One built question before it is written: anchor, gold items, candidates."""

    anchor: Anchor
    label: tuple[str, ...]


@dataclass(slots=True)
class BuildContext:
    """What a task builder needs: the store connection, the label reader and a seeded RNG.

    Attributes:
        con: read-only store connection.
        future: the label reader (``future_select`` only).
        present: qualified names of the store's tables.
        rng: this task's random generator (seeded from the build seed and the task name).
        per_task: questions wanted.
        pool: anchors examined at most (bounds the work on a full MIMIC-IV store).
    """

    con: duckdb.DuckDBPyConnection
    future: FutureReader
    present: frozenset[str]
    rng: random.Random
    per_task: int
    pool: int

    def has(self, *tables: str) -> bool:
        """True when every table is in the store."""
        return all(t in self.present for t in tables)

    def query(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        """Rows of a store query as dicts (used to *choose* anchors, never for label content)."""
        cur = self.con.execute(sql, params or [])
        names = [d[0] for d in cur.description or ()]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def shuffled(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``rows`` in a seeded random order, cut to the anchor pool size."""
        rows = sorted(rows, key=lambda r: tuple(str(v) for v in r.values()))
        self.rng.shuffle(rows)
        return rows[: self.pool]
