"""attack16: pending lab rows of a specimen include tests added after its first results (a manual differential and
smear review after an abnormal automated blood count): their presence, values masked, tells the result (the MIMIC-IV
demo). Fixed (labpend16): while a row's result is pending, ``hosp.labevents`` keeps one row per specimen, its
``itemid`` (and so its dictionary label) and ``labevent_id`` NULL; the resulted rows' ``labevent_id`` are renumbered
``1..n`` (``Pending(("specimen_id",), renumber="labevent_id")`` in the registry).

Demo-wide (the store's rows): of 2,760 blood counts (WBC, itemid 51301), the 395 with a Bands row (51144, the
manual differential) had an abnormal WBC in 345 (87 %), the 2,365 without in 1,053 (45 %); the Bands result was
stored after the WBC result in 378 of 395 (medians 47-49 minutes later), so the manual review follows the automated count.

Case: 10002495, specimen 81358962 drawn 2141-05-22 21:23, WBC 36.8 (abnormal) stored 22:22, Bands 10 stored 22:43.
At 22:00 (nothing resulted) the episode shows 32 pending rows, among them Bands, Atypical Lymphocytes,
Metamyelocytes, Myelocytes, Platelet Smear, Poikilocytosis (the smear review).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import anyio
import duckdb
import pytest

from clinseek.bench import Question, render_curated
from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.tools import ToolContext, call_tool


def test_attack16_the_manual_differential_follows_an_abnormal_count(demo_store: Path) -> None:
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        rows = con.execute(
            "WITH w AS (SELECT specimen_id, min(storetime) AS st, bool_or(flag = 'abnormal') AS abnormal "
            "FROM hosp.labevents WHERE itemid = 51301 GROUP BY 1), b AS (SELECT specimen_id, min(storetime) AS st "
            "FROM hosp.labevents WHERE itemid = 51144 GROUP BY 1) SELECT b.specimen_id IS NOT NULL, count(*), "
            "count(*) FILTER (WHERE w.abnormal), count(*) FILTER (WHERE b.st > w.st) FROM w LEFT JOIN b USING "
            "(specimen_id) GROUP BY 1 ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    assert rows == [(False, 2365, 1053, 0), (True, 395, 345, 378)]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack16_no_test_added_after_the_first_result_shows_before_it(demo_reader: StoreReader, policy: str) -> None:
    with build_episode(demo_reader, EpisodeKey(10002495, datetime(2141, 5, 22, 22, 0), policy=policy)) as ep:
        pending = ep.execute(
            "SELECT itemid FROM labevents WHERE specimen_id = 81358962 AND valuenum IS NULL ORDER BY itemid"
        ).rows
    assert pending  # the count itself was ordered: its rows may show as pending
    # measured before the fix: 32 pending rows, Bands (51144) and the other manual-review items among them
    assert (51144,) not in pending
    assert pending == [(None,)]  # one row for the specimen, no test named


def _store_rows(store: Path, sql: str, params: list) -> list[tuple]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_a_later_specimen_resulted_while_an_earlier_is_pending_leaves_no_id_gap(demo_store: Path, demo_reader: StoreReader, policy: str) -> None:
    """10000032 at 2180-06-26 16:45: specimens 43662312 and 88191206 (drawn 16:10) are pending, 95744719 (drawn
    16:39) resulted at 16:40, and MIMIC's labevent_id follows the specimen time: the store ids of the later rows
    would count the pending specimens' rows."""
    cutoff = datetime(2180, 6, 26, 16, 45)
    pending_specimens = {43662312, 88191206}
    stored = _store_rows(
        demo_store,
        "SELECT specimen_id, count(*), bool_and(coalesce(storetime, charttime) < $2) FROM hosp.labevents "
        "WHERE subject_id = $1 AND charttime < $2 GROUP BY 1 HAVING specimen_id IN (43662312, 88191206, 95744719) "
        "OR bool_and(coalesce(storetime, charttime) < $2) ORDER BY 1",
        [10000032, cutoff],
    )
    by_specimen = {s: (n, done) for s, n, done in stored}
    assert {s for s, (_, done) in by_specimen.items() if not done} == pending_specimens
    assert by_specimen[43662312][0] + by_specimen[88191206][0] > 2  # several tests each in the store
    assert by_specimen[95744719][1]
    with build_episode(demo_reader, EpisodeKey(10000032, cutoff, policy=policy)) as ep:
        rows = ep.execute(
            "SELECT labevent_id, specimen_id, itemid, value, valuenum, storetime FROM labevents "
            "WHERE specimen_id IN (43662312, 88191206, 95744719)"
        ).rows
        ids = ep.execute(
            "SELECT count(*), count(labevent_id), min(labevent_id), max(labevent_id), count(DISTINCT labevent_id) "
            "FROM labevents"
        ).rows
    pending = [tuple(r) for r in rows if r[1] in pending_specimens]
    assert sorted(r[1] for r in pending) == sorted(pending_specimens)  # one row per pending specimen
    assert all(r[0] is None and r[2:] == (None, None, None, None) for r in pending)
    known = sum(n for n, done in by_specimen.values() if done)
    # dense 1..n over the resulted rows: no gap counts the pending rows
    assert [tuple(r) for r in ids] == [(known + len(pending_specimens), known, 1, known, known)]
    later = [r for r in rows if r[1] == 95744719]
    assert len(later) == by_specimen[95744719][0] and all(r[0] is not None and r[2] is not None for r in later)


def _question(subject_id: int, cutoff: datetime, policy: str) -> Question:
    base = {
        "benchmark": "clinseek-bench-text", "source": "clinseek-build", "task": "Inpatient_Mortality", "qid": "q",
        "task_type": "risk_prediction", "category": "mortality", "subject_id": subject_id, "prediction_time": cutoff,
        "policy": policy, "label": ("no",), "candidates": ("yes", "no"),
    }
    if policy == MM_POLICY:
        base.update(benchmark="clinseek-bench-mm", task="Image_Report_Finding", task_type="multimodal",
                    category="imaging", question_text="Is there a pleural effusion?")
    return Question.model_validate(base)


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_event_counts_and_curated_input_name_no_pending_test(demo_store: Path, demo_reader: StoreReader, policy: str) -> None:
    """10002495 at 2141-05-22 22:00: no lab result known yet, 4 specimens pending (56 tests, Bands among them; the episode showed all 56 before the fix)."""
    cutoff = datetime(2141, 5, 22, 22, 0)
    labels = [r[0] for r in _store_rows(
        demo_store,
        "SELECT DISTINCT d.label FROM hosp.labevents t JOIN hosp.d_labitems d USING (itemid) "
        "WHERE t.subject_id = $1 AND t.charttime < $2 ORDER BY 1", [10002495, cutoff],
    )]
    specimens = _store_rows(
        demo_store,
        "SELECT count(DISTINCT specimen_id), count(*), bool_or(coalesce(storetime, charttime) < $2) "
        "FROM hosp.labevents WHERE subject_id = $1 AND charttime < $2", [10002495, cutoff],
    )
    assert specimens == [(4, 56, False)] and "Bands" in labels and len(labels) == 56
    with build_episode(demo_reader, EpisodeKey(10002495, cutoff, policy=policy)) as ep:
        counts = anyio.run(
            call_tool, ToolContext(ep), "ehr.get_event_counts_by_time",
            {"start_time": "1800-01-01", "end_time": str(cutoff)},
        )
    assert counts.data["counts"]["hosp.labevents"] == 4  # specimens, not tests
    text = render_curated(_question(10002495, cutoff, policy), demo_store).text
    assert "Labevents" in text or "labevents" in text  # the pending specimens are shown
    for label in labels:
        assert label not in counts.content
        assert f"label: {label};" not in text and f",{label}," not in text and f'"{label}"' not in text, label
    for reflex in ("Bands", "Atypical Lymphocytes", "Metamyelocytes", "Myelocytes", "Poikilocytosis", "Platelet Smear"):
        assert reflex not in text
