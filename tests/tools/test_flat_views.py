"""The record tools' flat statements give byte-for-byte what the sub-query views gave.

Every record tool (and ``ehr.get_unique_values``) runs twice on the same episode: once as shipped, once on
the views pinned in ``_oracle_views.py`` (each table read through a sub-query listing every column again,
the event time as ``v._event_time``). Text, structured data and the truncation flag must be equal, errors
included, for every visible table of demo and synthetic episodes (dictionaries, parent times, derived
times, dictionary labels), windows (everything, the latest half, one instant, none), keyword and value
searches on every column type, and row and character caps (paging notices, totals counted).
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import _oracle_views
import pytest
from _tool_cases import store_fixture, tool_outcome

from clinseek.episode import EpisodeKey, build_episode, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table
from clinseek.store import connect_store
from clinseek.tools import Limits, ToolContext, _ehr_meta, _ehr_records, get_tool

FULL = Limits()
SMALL = Limits(max_rows=3, max_tool_chars=1_500, max_unique_values=2)
"""Row, character and distinct-value caps hit: the totals are counted and the paging notices written."""

DEMO_SUBJECT = 10026406
"""A demo patient with two admissions, ED stays, an ICU stay, OMR and microbiology rows."""


def _keys(store: Path, n: int, seed: int) -> list[EpisodeKey]:
    """``n`` keys on admissions with rows on both sides of the cutoff (both policies, one at discharge)."""
    con = connect_store(store)
    try:
        adm = con.execute(
            "SELECT subject_id, admittime, dischtime FROM hosp.admissions WHERE dischtime > admittime "
            "ORDER BY subject_id, hadm_id"
        ).fetchall()
    finally:
        con.close()
    if n == 0:  # the demo patient's every row: one second after the last discharge
        return [EpisodeKey(DEMO_SUBJECT, max(d for s, _, d in adm if s == DEMO_SUBJECT) + dt.timedelta(seconds=1))]
    rng = random.Random(seed)
    keys = []
    for i, (subject, admit, disch) in enumerate(rng.sample(adm, n)):
        cutoff = disch if i == 1 else (admit + (disch - admit) * rng.random()).replace(microsecond=0)
        keys.append(EpisodeKey(int(subject), cutoff, MM_POLICY if i % 2 else TEXT_POLICY))
    return keys


def _both(ep: Any, name: str, args: dict[str, str], limits: Limits) -> None:
    ctx = ToolContext(ep, limits)
    flat = tool_outcome(ctx, name, args)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_ehr_records, "table_view", _oracle_views.oracle_view)
        patch.setattr(_ehr_meta, "table_view", _oracle_views.oracle_view)
        pinned = tool_outcome(ctx, name, args)
    assert flat == pinned, (ep.key, name, args, limits)


def _calls(ep: Any, table: str) -> list[tuple[str, dict[str, str], Limits]]:
    """The record-tool calls checked on ``table`` with their limits: arguments taken from its own rows."""
    calls: list[tuple[str, dict[str, str], Limits]] = []
    times = ep.event_times(table)
    sample = ToolContext(ep, Limits(max_rows=50))
    if times is not None and len(times):
        first, mid, last = (times[i].as_py() for i in (0, len(times) // 2, len(times) - 1))
        for start, end, limits in ((first, last + dt.timedelta(seconds=1), SMALL), (mid, last, FULL),
                                   (first - dt.timedelta(days=400), first, SMALL)):
            calls.append(("ehr.get_records_by_time", {"table_name": table, "start_time": str(start), "end_time": str(end)}, limits))
        calls.append(("ehr.get_latest_records", {"table_name": table}, SMALL))
        data = get_tool("ehr.get_records_by_time").fn(sample, table_name=table, start_time=str(mid),
                                                      end_time=str(last + dt.timedelta(seconds=1))).data
    else:
        calls.append(("ehr.get_records_by_time", {"table_name": table, "start_time": "2100-01-01", "end_time": "2200-01-01"}, SMALL))
        data = get_tool("ehr.get_records_by_keyword").fn(sample, table_name=table, keyword="1").data
    columns, rows = data["columns"], data["rows"]
    own = set(get_table(table).column_names)
    picked: dict[object, int] = {}  # one column per value type, and the first joined label
    for i, column in enumerate(columns):
        value = next((r[i] for r in rows if r[i] is not None), None)
        kind = "label" if column not in own else type(value)
        if value is not None and kind not in picked:
            picked[kind] = i
    for kind, i in picked.items():
        value = next(r[i] for r in rows if r[i] is not None)
        text = value.isoformat(sep=" ") if isinstance(value, dt.datetime) else str(value)
        if kind in ("label", str):
            calls.append(("ehr.get_unique_values", {"table_name": table, "column_name": columns[i]}, SMALL))
        calls.append(("ehr.get_records_by_value", {"table_name": table, "column_name": columns[i], "value": text}, SMALL))
        if isinstance(value, str) and value.strip():
            calls.append(("ehr.get_records_by_keyword", {"table_name": table, "keyword": value.strip()[:4].upper()}, SMALL))
        elif isinstance(value, int):
            calls.append(("ehr.get_records_by_keyword", {"table_name": table, "keyword": str(value)[-2:]}, SMALL))
    return calls


@pytest.mark.parametrize(
    ("which", "keys", "modules"),  # keys 0: the demo patient at its last discharge
    [("demo_store", 0, ("hosp", "icu", "ed")), ("synthetic_store", 2, ("note", "cxr"))],
)
def test_every_record_tool_gives_what_the_sub_query_views_gave(
    which: str, keys: int, modules: tuple[str, ...], request: pytest.FixtureRequest
) -> None:
    store = store_fixture(request, which)
    checked = set()
    with open_store_reader(store) as reader:
        for key in _keys(store, keys, seed=22):
            with build_episode(reader, key) as ep:
                for table, n in sorted(ep.table_counts().items()):
                    if not n or table.split(".")[0] not in modules or n > 10_000:  # the ICD and HCPCS dictionaries: slow
                        continue
                    for name, args, limits in _calls(ep, table):
                        _both(ep, name, args, limits)
                    checked.add(table)
    expected = {
        "demo_store": {"hosp.labevents", "hosp.diagnoses_icd", "hosp.microbiologyevents", "hosp.omr", "hosp.d_labitems",
                       "icu.inputevents", "ed.edstays", "ed.triage"},
        "synthetic_store": {"note.discharge", "note.discharge_detail", "note.radiology", "note.radiology_detail"},
    }[which]  # labels, parent times, derived times, dictionaries
    assert expected <= checked, sorted(expected - checked)
