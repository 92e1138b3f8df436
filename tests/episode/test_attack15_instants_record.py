"""attack15: a store's recorded row instants must name what they were computed from.

The store keeps an inherited event time per row (``_clinseek_event_time``) and records it as
``('event_time', table.event_time.expr, column)``; a reader uses the column while the record equals what the
registry asks. For a table that inherits its time, ``expr`` is the placeholder ``parent_time``: the parent's
expression (``ParentTime.time``) was not part of the record. Session 15 changed exactly that for
hosp.procedures_icd / hosp.hcpcsevents (``t.dischtime`` -> the later of discharge and the day after the last
coded event; attack15: NULL without a discharge time): a store ingested under one definition was read under
the other with the stored times of the first (the record ``('event_time', 'parent_time', ...)`` is the same
for both, and the same as diagnoses_icd's).
"""

from __future__ import annotations

from dataclasses import replace

from clinseek.schema import ParentTime, get_table, tables
from clinseek.store._instants import _records, stored_instants

_PRESENT = {t.qualified for t in tables()}


def _record(table) -> set[tuple[str, str, str]]:
    instants = stored_instants(table, _PRESENT)
    assert instants is not None and instants.event_time is not None
    return _records(table, instants)


def test_attack15_the_record_changes_with_the_parent_time() -> None:
    procedures = get_table("hosp.procedures_icd")
    assert procedures.event_time is not None and procedures.event_time.parent is not None
    earlier = replace(
        procedures,
        event_time=replace(procedures.event_time, parent=ParentTime("hosp.admissions", ("hadm_id",), "t.dischtime")),
    )
    assert _record(procedures) != _record(earlier)  # was equal: {('event_time', 'parent_time', ...), known_at...}


def test_attack15_tables_with_different_parent_times_record_different_event_times() -> None:
    seen: dict[frozenset, str] = {}
    for table in tables():
        instants = stored_instants(table, _PRESENT)
        if instants is None or instants.event_time is None or table.event_time is None:
            continue
        rec = frozenset(r[1] for r in _records(table, instants) if r[0] == "event_time")
        parent = table.event_time.parent
        what = f"{table.event_time.expr} | {parent}"
        assert seen.setdefault(rec, what) == what, (table.qualified, rec)
