"""attack15: no surface shows a store counter or id of hosp.poe / hosp.emar (the MIMIC-IV demo).

For episodes whose visible rows carry original counters above the number of visible rows (so an original id
cannot be mistaken for a renumbered one), every text a model can get is searched for those original ids: the
episode's SQL (every table naming them), the EHR tools (run_sql_query, latest records, keyword search, event
counts), the timelines (bounded windows too) and the Curated Input text.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import duckdb
import pytest

from clinseek.bench import render_text_timeline
from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.tools import Limits, ToolContext, call_tool

_CASES = [(10005866, datetime(2148, 3, 18)), (10039708, datetime(2140, 2, 4)), (10000032, datetime(2180, 5, 7, 4))]
_NAMING = ("poe", "poe_detail", "prescriptions", "pharmacy", "emar", "emar_detail")


def _original_only(store: Path, subject: int, cutoff: datetime) -> set[str]:
    """Original ids of visible owner rows whose counter is above the number of visible rows (never shown)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        rows: list[tuple[str, int]] = []
        most = 0
        for table, ident, counter, time in (("poe", "poe_id", "poe_seq", "ordertime"),
                                            ("emar", "emar_id", "emar_seq", "charttime")):
            found = con.execute(
                f"SELECT {ident}, {counter} FROM hosp.{table} WHERE subject_id = ? AND {time} <= ?", [subject, cutoff]
            ).fetchall()
            rows += found
            most = max(most, len(found))
        # poe and emar ids share the form <subject>-<n>: above every renumbered value of either
        return {i for i, c in rows if c > most + 1}
    finally:
        con.close()


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
@pytest.mark.parametrize(("subject", "cutoff"), _CASES)
def test_attack15_no_surface_shows_an_original_id(demo_store: Path, demo_reader: StoreReader, subject: int, cutoff: datetime, policy: str) -> None:
    hidden = _original_only(demo_store, subject, cutoff)
    assert len(hidden) >= 5
    shown: list[str] = []
    with build_episode(demo_reader, EpisodeKey(subject, cutoff, policy=policy)) as ep:
        for name in _NAMING:
            r = ep.execute(f"SELECT * FROM {name}")
            shown.append(repr(r.rows))
            shown.append(repr(ep.timeline_rows(name).rows))
            shown.append(repr(ep.timeline_rows(name, since=cutoff - timedelta(hours=12), until=cutoff).rows))
        ctx = ToolContext(ep, Limits())
        calls: list[tuple[str, dict[str, Any]]] = [
            ("ehr.get_event_counts_by_time", {"start_time": "1900-01-01", "end_time": "2400-01-01"}),
        ]
        for name in _NAMING:
            calls += [
                ("ehr.run_sql_query", {"sql_query": f"SELECT * FROM {name} ORDER BY 1 DESC"}),
                ("ehr.get_latest_records", {"table_name": f"hosp.{name}"}),
                ("ehr.get_records_by_keyword", {"table_name": f"hosp.{name}", "keyword": f"{subject}-"}),
            ]
        for tool, args in calls:
            result = anyio.run(call_tool, ctx, tool, args)
            assert result.error_kind is None, (tool, args, result.content)  # a refused call shows nothing to search
            shown += [result.content, repr(result.data)]
        shown.append(render_text_timeline(ep, budget_tokens=64_000).text)
    text = "\n".join(shown)
    found = {i for i in hidden if re.search(rf"(?<![0-9]){re.escape(i)}(?![0-9])", text)}
    assert not found, sorted(found)[:10]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
@pytest.mark.parametrize(("subject", "cutoff"), _CASES)
def test_attack15_same_visible_rows_same_numbers(demo_store: Path, demo_reader: StoreReader, subject: int, cutoff: datetime, policy: str) -> None:
    """Two cutoffs with no poe / emar event between them (just after the last event before ``cutoff`` and just
    before the next one) give the same ids and counters, row for row."""
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        last, following = con.execute(
            "SELECT max(t) FILTER (WHERE t < $2), min(t) FILTER (WHERE t > $2) FROM (SELECT ordertime AS t FROM "
            "hosp.poe WHERE subject_id = $1 UNION ALL SELECT charttime FROM hosp.emar WHERE subject_id = $1)",
            [subject, cutoff],
        ).fetchone()
    finally:
        con.close()
    assert following - last > timedelta(seconds=3)
    seen = []
    for at in (last + timedelta(seconds=1), following - timedelta(seconds=1)):
        with build_episode(demo_reader, EpisodeKey(subject, at, policy=policy)) as ep:
            ids = {name: ep.execute(f"SELECT {cols} FROM {name} ORDER BY ALL").rows for name, cols in _IDS.items()}
            # tables with times of their own: the id each row names, for the rows both episodes show
            for name in ("prescriptions", "pharmacy"):
                ids[name] = dict(ep.execute(f"SELECT pharmacy_id, poe_id FROM {name} ORDER BY ALL").rows)
            seen.append(ids)
    assert {k: v for k, v in seen[0].items() if k not in ("prescriptions", "pharmacy")} == {
        k: v for k, v in seen[1].items() if k not in ("prescriptions", "pharmacy")
    }
    for name in ("prescriptions", "pharmacy"):
        both = seen[0][name].keys() & seen[1][name].keys()
        assert both and {k: seen[0][name][k] for k in both} == {k: seen[1][name][k] for k in both}


_IDS = {
    "poe": "poe_id, poe_seq, ordertime, discontinue_of_poe_id, discontinued_by_poe_id",
    "poe_detail": "poe_id, poe_seq, field_name",
    "emar": "emar_id, emar_seq, charttime, poe_id",
    "emar_detail": "emar_id, emar_seq, parent_field_ordinal",
}
