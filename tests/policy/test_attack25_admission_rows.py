"""attack25: rows MIMIC-IV keeps only for hospitalizations, timed before their admission's admittime.

``hosp.services`` holds only hospitalizations (``hadm_id`` is never NULL), ``hosp.transfers`` holds ED visits
whether the patient is admitted or sent home but every other row (eventtype ``admit``, ``transfer``) only for an
admission, and every ``icu`` row names an admission. A same-day surgical admission starts hours after the patient
arrives: the pre-operative 'admit' row (Discharge Lounge) and the first service (CSURG, NSURG, TSURG, ...) are
timed at the arrival, up to 10.8 h before the admittime (20 of the demo's 275 admissions, none through the ED).
Shown from their own times, their hadm_id NULL until the admission starts, they said, with no admission in the
episode, that the patient would be admitted, and for which surgery: such a row with a NULL hadm_id exists only
then (100 % precision). attack21 found the same for poe, pharmacy and prescriptions.

Case: 10013049 has no admission before 22675517 (admittime 2114-06-20 10:15). Before the fix, at 05:00 the episode
had no admission, but a transfers row ('admit', 'Discharge Lounge', intime 02:41:44) and a services row
(curr_service 'CSURG', 02:41:44), both hadm_id NULL; at 10:00 the CVICU transfer of 09:32:58 as well.

Fixed: a services row is known no earlier than its admission's admittime (``greatest(transfertime, admittime)``),
and so is every transfers row but an ED visit's (``greatest(intime, admittime)``) and an ICU chart row (its attack17
time, and not before the admittime: no demo row, the crafted holes store's infusion stored before its ICU stay).

ICU stays (icu25): two of these patients reach the ICU from the OR before the admittime (10004457 36 min, 10013049
42 min). ``icu.icustays`` showed the stay from its intime, hadm_id NULL, with no admission in the episode (and its
ICU 'transfer' row hidden: inconsistent too). An ICU stay now starts, for the policy, at the later of its intime and
its admission's admittime (``clinseek.schema.ICU_STAY_START``, the encounter ``icu.stay_id`` of ``ENCOUNTER_IDS``):
its row, its id in every icu table (the encounter mask) and the visible stay ids (the policy's encounter statements,
the event index's encounter ids) all follow that one instant. A store ingested before (stay timed by its intime,
masks recorded by the old SQL) is read with the policy's joins for those tables and gives the same rows.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import anyio
import duckdb
import pytest

from clinseek.bench import render_text_timeline
from clinseek.episode import Episode, EpisodeKey, StoreReader, build_episode, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import encounter_mask
from clinseek.store import EVENT_INDEX, ROW_INSTANTS
from clinseek.tools import Limits, ToolContext, call_tool

_EARLY = (
    "SELECT a.subject_id, a.hadm_id, a.admittime, min(r.at) FROM hosp.admissions a JOIN ({rows}) r USING (hadm_id) "
    "WHERE r.at < a.admittime GROUP BY ALL ORDER BY 1, 3"
)
_ROWS = (
    "SELECT hadm_id, transfertime AS at FROM hosp.services UNION ALL "
    "SELECT hadm_id, intime FROM hosp.transfers WHERE eventtype <> 'ED' UNION ALL "
    "SELECT hadm_id, intime FROM icu.icustays"
)
STAYS_BEFORE_ADMISSION = [(10004457, 23251352), (10013049, 22675517)]
"""Admissions whose ICU stay's intime is before their admittime (36 and 42 min)."""
_CHARTED = ("icu.inputevents", "icu.ingredientevents", "icu.outputevents", "icu.datetimeevents",
            "icu.procedureevents")
"""The icu tables charted in a stay (their ``stay_id`` masked until the stay starts)."""
_ICU = ("icu.icustays", *_CHARTED)


def _store(store: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_attack25_services_and_unit_stays_are_kept_only_for_admissions(demo_store: Path) -> None:
    found = _store(
        demo_store,
        "SELECT (SELECT count(*) FILTER (WHERE hadm_id IS NULL) FROM hosp.services), "
        "(SELECT count(*) FILTER (WHERE hadm_id IS NULL) FROM hosp.transfers WHERE eventtype <> 'ED'), "
        "(SELECT count(*) FILTER (WHERE hadm_id IS NULL) FROM hosp.transfers WHERE eventtype = 'ED')",
    )
    assert found == [(0, 0, 54)]  # ED visits that end at home are kept; nothing else without an admission
    icu = " UNION ALL ".join(f"SELECT count(*) FILTER (WHERE hadm_id IS NULL) FROM {t}" for t in _ICU)
    assert _store(demo_store, icu) == [(0,)] * len(_ICU)
    stays = _store(demo_store, _EARLY.format(rows="SELECT hadm_id, intime AS at FROM icu.icustays"))
    assert [(s, h) for s, h, _, _ in stays] == STAYS_BEFORE_ADMISSION
    early = _store(demo_store, _EARLY.format(rows=_ROWS))
    assert len(early) == 20
    assert max(adm - first for _, _, adm, first in early) == timedelta(hours=10, minutes=45, seconds=33)


def _hospital_only_without_admission(ep: Episode) -> list[tuple]:
    """Rows of a table kept only for hospitalizations shown without their admission (hadm_id NULL): none may exist."""
    icu = " UNION ALL ".join(f"SELECT '{t}', NULL FROM {t} WHERE hadm_id IS NULL" for t in _ICU)
    return ep.execute(
        "SELECT 'services', transfertime FROM hosp.services WHERE hadm_id IS NULL UNION ALL "
        "SELECT 'transfers', intime FROM hosp.transfers WHERE hadm_id IS NULL AND upper(eventtype) <> 'ED' "
        f"UNION ALL {icu}",
        tables=["hosp.services", "hosp.transfers", *_ICU],
        max_rows=100,
    ).rows


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack25_no_row_tells_of_an_admission_before_it_starts(
    demo_store: Path, demo_reader: StoreReader, policy: str
) -> None:
    early = _store(demo_store, _EARLY.format(rows=_ROWS))
    for subject, _hadm, admittime, first in early:
        for cutoff in (first + timedelta(seconds=1), admittime - timedelta(seconds=1)):
            with build_episode(demo_reader, EpisodeKey(subject, cutoff, policy)) as ep:
                assert _hospital_only_without_admission(ep) == [], (subject, cutoff)
                admitted = ep.execute("SELECT count(*) FROM hosp.admissions WHERE admittime >= ?", [first],
                                      tables=["hosp.admissions"]).rows
                assert admitted == [(0,)], (subject, cutoff)


def test_attack25_case_10013049_before_and_after_its_admittime(demo_reader: StoreReader) -> None:
    before = datetime(2114, 6, 20, 10, 15)  # the admittime itself: not visible under the text policy
    with build_episode(demo_reader, EpisodeKey(10013049, before), queries=False) as ep:  # what Curated Input reads
        text = render_text_timeline(ep).text
    assert "CSURG" not in text and "Discharge Lounge" not in text and "CVICU" not in text, text[:600]
    with build_episode(demo_reader, EpisodeKey(10013049, before)) as ep:
        for table in ("hosp.admissions", "hosp.services", "hosp.transfers", "icu.icustays"):
            assert ep.execute(f"SELECT count(*) FROM {table}", tables=[table]).rows == [(0,)], table
    with build_episode(demo_reader, EpisodeKey(10013049, before + timedelta(seconds=1))) as ep:
        services = ep.execute("SELECT hadm_id, transfertime, curr_service FROM hosp.services",
                              tables=["hosp.services"]).rows
        assert services == [(22675517, datetime(2114, 6, 20, 2, 41, 44), "CSURG")]
        units = ep.execute("SELECT hadm_id, eventtype, careunit, outtime FROM hosp.transfers ORDER BY intime",
                           tables=["hosp.transfers"]).rows
        assert units == [
            (22675517, "admit", "Discharge Lounge", datetime(2114, 6, 20, 9, 32, 58)),
            (22675517, "transfer", "Cardiac Vascular Intensive Care Unit (CVICU)", None),
        ]
        stays = ep.execute("SELECT stay_id, hadm_id, intime FROM icu.icustays", tables=["icu.icustays"]).rows
        assert stays == [(35679826, 22675517, datetime(2114, 6, 20, 9, 32, 58))]


def _stays(store: Path) -> list[tuple]:
    """``(subject_id, stay_id, intime, admittime)`` of the ICU stays that start before their admission."""
    return _store(store, "SELECT i.subject_id, i.stay_id, i.intime, a.admittime FROM icu.icustays i "
                         "JOIN hosp.admissions a USING (hadm_id) WHERE i.intime < a.admittime ORDER BY 1")


def _seen(ep: Episode, stay_id: int) -> dict[str, object]:
    """Everything that tells of the ICU stay ``stay_id``: its row through the SQL tool, the record tools, Curated
    Input's timeline and the inventory, and its CVICU transfers row (the same unit stay: shown with it)."""
    ctx = ToolContext(ep, Limits())

    def tool(name: str, args: dict[str, object]) -> object:
        result = anyio.run(call_tool, ctx, name, args)
        assert result.ok, result.content
        return result.data

    sql = tool("ehr.run_sql_query", {"sql_query": f"SELECT stay_id, hadm_id FROM icu.icustays WHERE stay_id = {stay_id}"})
    latest = tool("ehr.get_latest_records", {"table_name": "icu.icustays"})
    counts = tool("ehr.get_event_counts_by_time", {"start_time": "1900-01-01", "end_time": "2400-01-01"})
    assert isinstance(sql, dict) and isinstance(latest, dict) and isinstance(counts, dict)
    unit = ep.execute("SELECT count(*) FROM hosp.transfers WHERE eventtype = 'transfer' AND careunit LIKE '%ICU%'",
                      tables=["hosp.transfers"]).rows[0][0]
    return {
        "sql": [tuple(r) for r in sql["rows"]],
        "latest": [r[2] for r in latest["rows"]],
        "counts": counts["counts"].get("icu.icustays", 0),
        "inventory": ep.table_counts()["icu.icustays"],
        "unit": unit,
    }


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_icu25_an_icu_stay_starts_at_its_admission(demo_store: Path, demo_reader: StoreReader, policy: str) -> None:
    stays = _stays(demo_store)
    assert [(s, i) for s, i, _, _ in stays] == [(10004457, 31494479), (10013049, 35679826)]
    for subject, stay_id, intime, admittime in stays:
        hidden = [intime, intime + timedelta(seconds=1), admittime - timedelta(seconds=1)]
        shown = [admittime + timedelta(seconds=1)]
        (shown if policy == MM_POLICY else hidden).append(admittime)  # the admittime itself: the policy's operator
        for cutoff in [*hidden, *shown]:
            with build_episode(demo_reader, EpisodeKey(subject, cutoff, policy)) as ep:
                seen = _seen(ep, stay_id)
                admissions = ep.execute("SELECT count(*) FROM hosp.admissions WHERE admittime >= ?", [intime],
                                        tables=["hosp.admissions"]).rows[0][0]
            if cutoff in hidden:
                assert (seen, admissions) == ({"sql": [], "latest": [], "counts": 0, "inventory": 0, "unit": 0}, 0), (
                    subject, cutoff)
            else:
                assert seen["sql"] == [(stay_id, seen["sql"][0][1])] and seen["sql"][0][1] is not None, (subject, cutoff)
                assert stay_id in seen["latest"] and seen["counts"] >= 1 and seen["inventory"] >= 1, (subject, cutoff)
                assert seen["unit"] >= 1 and admissions == 1, (subject, cutoff)  # the ICU transfers row with it
        before, after = (EpisodeKey(subject, t, policy) for t in (admittime - timedelta(seconds=1), shown[-1]))
        with build_episode(demo_reader, before, queries=False) as ep:
            assert "Intensive Care Unit" not in render_text_timeline(ep).text  # Curated Input
        with build_episode(demo_reader, after, queries=False) as ep:
            assert "Intensive Care Unit" in render_text_timeline(ep).text


def test_icu25_the_stay_id_mask_follows_the_stays_start(demo_store: Path) -> None:
    """An icu table's ``stay_id`` waits for the same instant as the stay's row: its admittime here, not its intime."""
    owner, mask = encounter_mask("icu", "stay_id") or ("", None)
    assert owner == "icu.icustays" and mask is not None and mask.known_at is not None
    for subject, stay_id, _intime, admittime in _stays(demo_store):
        for table in _CHARTED:
            found = _store(demo_store, f"SELECT DISTINCT {mask.known_at} FROM {table} t WHERE t.stay_id = {stay_id}")
            assert found == [(admittime,)], (subject, table)


def _as_ingested_before(store: Path) -> None:
    """``store``'s derived data as the previous registry wrote it: the ICU stay timed by its intime in the event index,
    no stored event time for it, and every icu table's stay_id mask instant recorded (and stored) as the stay's intime."""
    old_mask = "(SELECT min(e.intime) FROM icu.icustays e WHERE e.stay_id = t.stay_id)"
    _, mask = encounter_mask("icu", "stay_id") or ("", None)
    assert mask is not None
    with duckdb.connect(str(store)) as con:
        con.execute(f"UPDATE {EVENT_INDEX} SET event_time = (SELECT i.intime FROM icu.icustays i WHERE i.stay_id = "
                    f"{EVENT_INDEX}.encounter_id) WHERE table_name = 'icu.icustays'")
        con.execute("UPDATE clinseek_meta.event_index_definitions SET definition = ? WHERE table_name = 'icu.icustays'",
                    [repr(("CAST(t.intime AS TIMESTAMP)", "", None, "stay_id", None))])
        con.execute(f"DELETE FROM {ROW_INSTANTS} WHERE table_name = 'icu.icustays' AND kind = 'event_time'")
        masks = con.execute(f"SELECT table_name, column_name FROM {ROW_INSTANTS} WHERE instant_sql = ?",
                            [mask.known_at]).fetchall()
        assert sorted(t for t, _ in masks) == sorted(_CHARTED)
        for table, column in masks:
            con.execute(f'UPDATE {table} t SET "{column}" = {old_mask}')
            con.execute(f"UPDATE {ROW_INSTANTS} SET instant_sql = ? WHERE table_name = ? AND column_name = ?",
                        [old_mask, table, column])


def test_icu25_a_store_ingested_before_is_read_with_joins_and_gives_the_same_rows(
    demo_store: Path, tmp_path: Path
) -> None:
    older = tmp_path / "older.duckdb"
    shutil.copy(demo_store, older)
    _as_ingested_before(older)
    tables = [*_ICU, "hosp.transfers", "hosp.admissions"]
    with open_store_reader(older) as reader, open_store_reader(demo_store) as current:
        assert "icu.icustays" not in reader.indexed and "icu.icustays" in current.indexed
        assert not set(_ICU) & set(reader.instants) and set(_CHARTED) <= set(current.instants)
        for subject, _stay_id, intime, admittime in _stays(demo_store):
            for policy in (TEXT_POLICY, MM_POLICY):
                for cutoff in (intime + timedelta(minutes=1), admittime, admittime + timedelta(hours=6)):
                    key = EpisodeKey(subject, cutoff, policy)
                    with build_episode(reader, key) as ep, build_episode(current, key) as want:
                        assert ep.table_counts() == want.table_counts(), (subject, cutoff, policy)
                        for table in tables:
                            sql = f"SELECT * FROM {table} ORDER BY ALL"
                            got = ep.execute(sql, tables=[table], max_rows=10**5).rows
                            assert got == want.execute(sql, tables=[table], max_rows=10**5).rows, (table, cutoff)
