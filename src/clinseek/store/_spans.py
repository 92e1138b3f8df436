"""Each patient's record span: the first and the last instant of anything the store holds about them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path

import duckdb

from ..schema import STUDY_TIME_SQL, Table
from ._damage import damage_error, is_damage
from ._duck import open_store

RecordSpan = tuple[dt.datetime | None, dt.datetime | None]
"""``(first, last)`` instant of a patient's record; ``(None, None)`` for a patient with no date or time."""


def _instants(table: Table) -> tuple[list[str], list[str]]:
    """SQL for the earliest and latest instant each value of ``table`` stands for (a DATE: its day)."""
    lows, highs = [], []
    for col in table.columns:
        ref = f't."{col.name}"'
        if col.type == "TIMESTAMP":
            lows.append(ref)
            highs.append(ref)
        elif col.type == "DATE":
            lows.append(f"CAST({ref} AS TIMESTAMP)")
            highs.append(f"CAST({ref} AS TIMESTAMP) + INTERVAL 1 DAY")
    if table.qualified == "cxr.metadata":
        lows.append(STUDY_TIME_SQL)
        highs.append(STUDY_TIME_SQL)
    return lows, highs


def record_spans(store: Path, subject_ids: Iterable[int]) -> dict[int, RecordSpan]:
    """``(first, last)`` instant of each patient's record, for the ``subject_ids`` the store holds.

    First and last over every date and time value of every patient table present (event times,
    end times, store times, ``dod``; a DATE counts from its start to its end, a CXR study at its
    StudyDate + StudyTime). A patient in ``hosp.patients`` with no date or time anywhere gets
    ``(None, None)``; a subject the store does not hold is absent from the result.

    Raises:
        StoreError: the store cannot be opened or read (missing, truncated, damaged).
    """
    wanted = sorted(set(subject_ids))
    handle = open_store(store)
    parts = []
    for table in handle.present_tables():
        if not table.is_patient_table or table.visibility == "never":
            continue
        lows, highs = _instants(table)
        low = f"least({', '.join(lows)})" if lows else "CAST(NULL AS TIMESTAMP)"
        high = f"greatest({', '.join(highs)})" if highs else "CAST(NULL AS TIMESTAMP)"
        parts.append(
            f"SELECT t.subject_id, min({low}) AS lo, max({high}) AS hi FROM {table.qualified} t "
            "WHERE t.subject_id IN (SELECT unnest($1::BIGINT[])) GROUP BY t.subject_id"
        )
    if not parts or not wanted:
        return {}
    sql = f"SELECT subject_id, min(lo), max(hi) FROM ({' UNION ALL '.join(parts)}) GROUP BY subject_id"
    con = handle.connect()
    try:
        rows = con.execute(sql, [wanted]).fetchall()
    except duckdb.Error as err:
        if is_damage(err):
            raise damage_error(store, err) from err
        raise
    finally:
        con.close()
    return {int(s): (lo, hi) for s, lo, hi in rows}
