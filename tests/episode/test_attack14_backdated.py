"""leak14b: back-dated prescriptions and pharmacy orders are known once entered into the pharmacy system.

570 of the demo's 18,087 prescriptions (71 patients) were entered (``hosp.pharmacy.entertime``, through
``pharmacy_id``) more than an hour after their ``starttime``, up to 4 days later; 529 pharmacy rows likewise. The
registry now times a pharmacy order at ``greatest(starttime, entertime)`` and a prescription at the later of its
starttime and its pharmacy order's time (a ``ParentTime``), so every path follows: the SQL tables, the counts,
the event times and timelines the tools and Curated Input read, the references to the order
(``emar.pharmacy_id``, ``emar_detail.pharmacy_id``), the store's stored instants and event index.

Administrations charted before their order is known stay visible (decided, not tested as a leak): 1,728 demo
``emar`` rows (64 patients) are charted before their pharmacy order is visible (152 before its entertime; 235 before
their ``poe`` order's ordertime), up to 2.25 days. An administration is an observation of its own time: the nurse
gave (or charted not giving) the drug then, so its row and ``medication`` say nothing the charting did not; what
the order alone would tell stays hidden until the order is visible (``pharmacy_id``, ``poe_id`` are ``reference``
columns) and what the nurse documented later until ``storetime`` (``event_txt``, the ``emar_detail`` doses).

The first test checks the whole class over the store (every row, every patient, through the instants the policy
compares); the others follow one back-dated order through every episode path, hidden before its entry and shown
after it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table, tables
from clinseek.store import connect_store, valid_row_instants


def _registry_times(con: object, table: str) -> str:
    """SQL: (pharmacy_id, the instant the policy shows the row at) for every row of ``table``, through the
    store's stored instants when it keeps them (what the policy compares), else the registry's own expression."""
    present = {f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()}  # type: ignore[attr-defined]
    stored = valid_row_instants(con, {t.qualified for t in tables() if t.qualified in present}, counts_hold=True)
    instants = stored.get(table)
    et = get_table(table).event_time
    assert et is not None
    if instants is not None and instants.event_time is not None:
        return f'SELECT t.pharmacy_id, t.starttime, t."{instants.event_time}" AS shown FROM {table} t'
    return f"SELECT t.pharmacy_id, t.starttime, {et.row_sql('t')} AS shown FROM {table} t"


def test_attack14_no_prescription_or_pharmacy_row_is_shown_before_its_entry(demo_store: Path) -> None:
    """Store-wide: every prescription and pharmacy row is shown no earlier than its pharmacy order's entertime
    and its own starttime (the rows that moved are counted, so the probe straddles the back-dated ones)."""
    con = connect_store(demo_store)
    try:
        for table, backdated in (("hosp.prescriptions", 570), ("hosp.pharmacy", 529)):
            early, moved, total = con.execute(
                f"SELECT count(*) FILTER (WHERE r.shown < p.entertime OR r.shown < r.starttime OR r.shown IS NULL), "
                f"count(*) FILTER (WHERE p.entertime > r.starttime + INTERVAL 1 HOUR AND r.shown = p.entertime), "
                f"count(*) FROM ({_registry_times(con, table)}) r JOIN hosp.pharmacy p USING (pharmacy_id)"
            ).fetchall()[0]
            assert total > 15_000, table
            assert early == 0, f"{table}: {early} rows shown before their pharmacy order was entered"
            assert moved == backdated, table
    finally:
        con.close()


# Fluconazole for 10003400: starttime 2137-08-12 10:00, entered into the pharmacy system 2137-08-16 10:08
_SUBJECT, _START = 10003400, datetime(2137, 8, 12, 10, 0)


def _order(store: Path) -> tuple[int, datetime, int, int]:
    con = connect_store(store)
    try:
        found = con.execute(
            "SELECT p.pharmacy_id, p.entertime, (SELECT count(*) FROM hosp.prescriptions r "
            "WHERE r.pharmacy_id = p.pharmacy_id), (SELECT count(*) FROM hosp.emar e WHERE e.pharmacy_id = "
            "p.pharmacy_id AND e.charttime < p.entertime) FROM hosp.pharmacy p WHERE p.subject_id = ? "
            "AND p.starttime = ? AND p.medication ILIKE 'fluconazole%'",
            [_SUBJECT, _START],
        ).fetchall()
    finally:
        con.close()
    assert len(found) == 1
    return found[0]


def _paths(ep: object, pharmacy_id: int) -> dict[str, int]:
    """How many times each episode path shows the order."""
    seen: dict[str, int] = {}
    for table in ("prescriptions", "pharmacy", "emar", "emar_detail"):
        seen[f"sql {table}"] = ep.execute(  # type: ignore[attr-defined]
            f"SELECT count(*) FROM {table} WHERE pharmacy_id = {pharmacy_id}"
        ).rows[0][0]
    for table in ("prescriptions", "pharmacy"):
        found = ep.timeline_rows(table)  # type: ignore[attr-defined]
        at = found.columns.index("pharmacy_id")
        seen[f"timeline {table}"] = sum(1 for r in found.rows if r[at] == pharmacy_id)
    return seen


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack14_a_backdated_order_is_hidden_on_every_path_until_entered(demo_store: Path, demo_reader: StoreReader, policy: str) -> None:
    pharmacy_id, entered, n_rx, charted_before = _order(demo_store)
    assert entered - _START > timedelta(days=4) and n_rx >= 1
    before = EpisodeKey(_SUBJECT, entered - timedelta(seconds=1), policy=policy)
    with build_episode(demo_reader, before) as ep:
        seen = _paths(ep, pharmacy_id)
        times = {name: ep.event_times(name) for name in ("prescriptions", "pharmacy")}
        counts = ep.table_counts()
    # an administration charted before the entry shows (it happened); its pharmacy_id does not
    assert seen == {
        "sql prescriptions": 0, "sql pharmacy": 0, "sql emar": 0, "sql emar_detail": 0,
        "timeline prescriptions": 0, "timeline pharmacy": 0,
    }
    for name, found in times.items():
        assert found is not None and len(found) == counts[f"hosp.{name}"]
        assert max(found.to_pylist()) < before.prediction_time, name
    after = EpisodeKey(_SUBJECT, entered + timedelta(seconds=1), policy=policy)
    with build_episode(demo_reader, after) as ep:
        seen = _paths(ep, pharmacy_id)
    assert seen["sql prescriptions"] == n_rx and seen["sql pharmacy"] == 1, seen
    assert seen["timeline prescriptions"] == n_rx and seen["timeline pharmacy"] == 1, seen
    assert seen["sql emar"] >= charted_before, seen


def test_attack14_a_required_table_never_waits_for_an_optional_parent() -> None:
    """A table timed by a parent shows no row without that parent table: a required table (prescriptions) with an
    optional parent would vanish silently from a store that lacks the parent, so its parent is required too."""
    orphans = [
        (t.qualified, t.event_time.parent.table)
        for t in tables()
        if t.required and t.event_time is not None and t.event_time.parent is not None
        and not get_table(t.event_time.parent.table).required
    ]
    assert orphans == []
    assert get_table("hosp.pharmacy").required
