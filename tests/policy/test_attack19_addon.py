"""attack19: a test the lab adds to a specimen after its first results shows, before it is ordered, as a pending row.

A lab row is visible from its specimen time (``charttime``), its result masked until ``storetime``; pending rows
collapse to one per ``specimen_id``. A test added to an already resulted specimen (a clinician's add-on, a reflex
after an abnormal automated count) carries the specimen's time, so at a cutoff between the specimen's first results
and the add-on's order the specimen shows one pending row that exists only because of something after the cutoff
(demo: 10012853, specimen 97373195, liver tests added on at 21:46 to a panel resulted at 08:40; 10002495, specimen
81358962, a manual differential after the automated CBC). The collapse hides which tests and how many, not whether
one is pending.

Fixed in session 19: a collapse group with a resulted row shows no pending row (the policy's windows, the store's
kept columns and event index, ``clinseek.store._collapse.kept_intervals``).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import TEXT_POLICY

from .crafted import write_store

S = 1
DRAWN = datetime(2175, 4, 7, 6, 55)
CUTOFF = datetime(2175, 4, 7, 12, 0)


def _lab(labevent_id: int, itemid: int, storetime: datetime, value: float) -> dict[str, Any]:
    return dict(labevent_id=labevent_id, subject_id=S, specimen_id=97373195, itemid=itemid, charttime=DRAWN,
                storetime=storetime, value=str(value), valuenum=value, valueuom="mg/dL", priority="ROUTINE")


PANEL = [_lab(1, 50912, datetime(2175, 4, 7, 8, 40), 0.9), _lab(2, 50983, datetime(2175, 4, 7, 8, 40), 146.0)]
ADD_ON = [_lab(3, 50861, datetime(2175, 4, 7, 22, 26), 35.0)]  # ordered 21:46, after the cutoff


def _seen(tmp_path: Path, name: str, labs: list[dict[str, Any]]) -> tuple[list[tuple[Any, ...]], dict[str, int]]:
    rows = {"hosp.patients": [dict(subject_id=S, gender="F", anchor_age=60, anchor_year=2170)], "hosp.labevents": labs}
    store = write_store(tmp_path / f"{name}.duckdb", rows, "tests/policy/test_attack19_addon.py")
    with build_episode(store, EpisodeKey(S, CUTOFF, TEXT_POLICY)) as ep:
        shown = ep.execute("SELECT labevent_id, itemid, storetime, valuenum FROM hosp.labevents "
                           "ORDER BY labevent_id NULLS LAST").rows
        return shown, ep.table_counts()


def test_attack19_an_add_on_ordered_after_the_cutoff_leaves_no_trace(tmp_path: Path) -> None:
    assert _seen(tmp_path, "with_add_on", [*PANEL, *ADD_ON]) == _seen(tmp_path, "without", PANEL)


def test_attack19_the_demo_s_add_on_and_reflex_specimens_show_only_their_results(
    demo_reader: StoreReader,
) -> None:
    """The attack's two demo cases: liver tests added on at 21:46 to 10012853's panel resulted at 08:40 (specimen
    97373195, cutoff 12:00), and 10002495's manual differential after the automated CBC (specimen 81358962, one
    second after the CBC's results): each specimen shows its resulted rows and no pending one."""
    cases = ((10012853, datetime(2175, 4, 7, 12, 0), 97373195, 11), (10002495, datetime(2141, 5, 22, 22, 22, 1), 81358962, 10))
    for subject_id, cutoff, specimen_id, resulted in cases:
        with build_episode(demo_reader, EpisodeKey(subject_id, cutoff, TEXT_POLICY)) as ep:
            rows = ep.execute(f"SELECT labevent_id, valuenum FROM hosp.labevents WHERE specimen_id = {specimen_id}").rows
        assert len(rows) == resulted and all(labevent_id is not None for labevent_id, _ in rows), (subject_id, rows)
