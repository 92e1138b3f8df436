"""Cases for the tool tests: a (patient, cutoff) picked from a real store."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clinseek.errors import ToolError
from clinseek.store import connect_store
from clinseek.tools import ToolContext, get_tool

CANDIDATES = {
    "diagnoses_ccs": [
        "Congestive heart failure; nonhypertensive",
        "Acute renal failure",
        "Pneumonia (except that caused by tuberculosis or sexually transmitted disease)",
        "Septicemia (except in labor)",
        "Essential hypertension",
    ]
}


@dataclass(frozen=True)
class Case:
    """A (patient, cutoff) with an admission open at the cutoff and an earlier one when possible."""

    store: Path
    subject_id: int
    prediction_time: dt.datetime
    open_hadm_id: int


def pick_case(store: Path) -> Case:
    """The admission with the most lab rows; cutoff halfway through it (so it is open)."""
    con = connect_store(store)
    try:
        row = con.execute(
            "SELECT a.subject_id, a.hadm_id, a.admittime, a.dischtime, "
            "(SELECT count(*) FROM hosp.labevents l WHERE l.hadm_id = a.hadm_id) AS n "
            "FROM hosp.admissions a WHERE a.dischtime > a.admittime + INTERVAL 2 DAY "
            "ORDER BY n DESC, a.hadm_id LIMIT 1"
        ).fetchall()[0]
    finally:
        con.close()
    subject, hadm, admit, disch, _ = row
    cutoff = (admit + (disch - admit) / 2).replace(microsecond=0)
    return Case(store, int(subject), cutoff, int(hadm))


def store_fixture(request: pytest.FixtureRequest, name: str) -> Path:
    """The store fixture ``name``; skips while the synthetic generator has not landed."""
    try:
        return Path(request.getfixturevalue(name))
    except ImportError as err:  # clinseek.store.synthesize not there yet
        pytest.skip(f"{name} unavailable: {err}")


def tool_outcome(ctx: ToolContext, name: str, args: dict[str, str]) -> tuple[Any, ...]:
    """What a tool call gives, comparable across episodes: ``(ok, content, data, truncated)``, or
    ``("error", kind, message)`` for a :class:`ToolError`."""
    try:
        result = get_tool(name).fn(ctx, **args)
    except ToolError as err:
        return ("error", err.kind, err.message)
    return (result.ok, result.content, result.data, result.truncated)
