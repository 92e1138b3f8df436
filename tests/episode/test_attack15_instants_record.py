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


def test_attack15_ingest_again_rewrites_stale_row_instants(demo_store, tmp_path, shared_data) -> None:
    """A store whose event index is current but whose row instants were recorded under another definition (the
    record written before this fix: ``parent_time`` alone) keeps them stale through a second ``ingest``: it
    rewrote the instants only with the event index. The stored instants are then never used (slower reads)."""
    import shutil

    import duckdb

    from clinseek.store import connect_store, ingest, valid_row_instants
    from clinseek.store._instants import ROW_INSTANTS

    out = tmp_path / "stale.duckdb"
    shutil.copyfile(demo_store, out)
    con = duckdb.connect(str(out))
    try:
        con.execute(f"UPDATE {ROW_INSTANTS} SET instant_sql = 'parent_time' WHERE kind = 'event_time' "
                    "AND table_name = 'hosp.procedures_icd'")
    finally:
        con.close()

    def valid() -> set[str]:
        c = connect_store(out)
        try:
            held = {f"{s}.{t}" for s, t in c.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()}
            return set(valid_row_instants(c, {t.qualified for t in tables()} & held, counts_hold=True))
        finally:
            c.close()

    assert "hosp.procedures_icd" not in valid()
    ingest(out=out, mimic_iv=shared_data / "mimic-iv-demo-2.2", ed=shared_data / "mimic-iv-ed-demo-2.2", progress=False)
    assert "hosp.procedures_icd" in valid()  # was still stale: the event index was current, nothing rewritten
