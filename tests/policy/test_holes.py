"""The four leakage holes (future encounter ids, pending-culture row counts, ICU values stored
after the cutoff) and the exact-boundary rule for values, on the store of ``holes.py``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import Episode, EpisodeKey, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY, get_policy
from clinseek.schema import encounter_masks, get_table, tables

from .holes import (
    AT_T,
    ED_FUTURE,
    ED_PAST,
    ICU_PAST,
    LATE_SPECIMEN,
    PAST,
    PENDING_SPECIMEN,
    RESULTED_SPECIMEN,
    S,
    T,
    build_holes_store,
    ts,
)


@pytest.fixture(scope="module")
def holes_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_holes_store(tmp_path_factory.mktemp("holes") / "holes.duckdb")


@pytest.fixture(scope="module")
def text_ep(holes_store: Path) -> Iterator[Episode]:
    with build_episode(holes_store, EpisodeKey(S, T, TEXT_POLICY)) as ep:
        yield ep


@pytest.fixture(scope="module")
def mm_ep(holes_store: Path) -> Iterator[Episode]:
    with build_episode(holes_store, EpisodeKey(S, T, MM_POLICY)) as ep:
        yield ep


def rows(ep: Episode, sql: str) -> list[tuple[object, ...]]:
    result = ep.execute(sql, max_rows=1000)
    assert not result.truncated
    return result.rows


# --- 1. future admissions through hadm_id -------------------------------------------------------


def test_transfer_before_a_future_admission_hides_its_hadm_id(text_ep: Episode) -> None:
    assert rows(text_ep, "SELECT transfer_id, hadm_id FROM transfers ORDER BY transfer_id") == [
        (1, PAST),
        (2, None),
        (3, None),
    ]


def test_lab_and_order_before_a_future_admission_hide_its_hadm_id(text_ep: Episode) -> None:
    # numbered by the instant each row's result is shown: the past admission's lab was resulted first
    assert rows(text_ep, "SELECT labevent_id, hadm_id FROM labevents ORDER BY 1") == [
        (1, PAST),
        (2, None),
        (3, None),
    ]
    # attack21: MIMIC keeps orders only for hospitalizations, so an order is not shown before its admission starts
    # (shown with its hadm_id NULL it still told that the admission was coming)
    assert rows(text_ep, "SELECT hadm_id FROM poe") == []
    assert rows(text_ep, "SELECT hadm_id FROM edstays WHERE stay_id = 500") == [(None,)]


def test_no_visible_hadm_id_names_an_invisible_admission(text_ep: Episode) -> None:
    seen = {r[0] for r in rows(text_ep, "SELECT hadm_id FROM admissions")}
    assert seen == {PAST}
    for table in tables():
        if "hadm_id" in table.column_names and table.visibility == "event" and table.module != "cxr":
            ids = {r[0] for r in rows(text_ep, f"SELECT DISTINCT hadm_id FROM {table.qualified}")}
            assert ids <= seen | {None}, table.qualified


def test_every_patient_table_with_an_encounter_id_is_covered_by_the_generic_rule() -> None:
    for table in tables():
        masked = {c for m in table.masks for c in m.columns}
        if table.visibility == "event" and "hadm_id" in table.column_names:
            assert table.qualified == "hosp.admissions" or "hadm_id" in masked, table.qualified
        if table.visibility == "event" and "stay_id" in table.column_names and table.module in ("icu", "ed"):
            assert table.name in ("icustays", "edstays") or "stay_id" in masked, table.qualified
    assert encounter_masks(get_table("hosp.admissions")) == ()


# --- 2. future ICU / ED stays through stay_id ---------------------------------------------------


def test_icu_rows_before_a_future_icu_stay_hide_its_stay_id(text_ep: Episode) -> None:
    # the running infusion (stored 10:05, before its ICU stay at 14:00) belongs to admission FUTURE (17:00): ICU rows
    # are kept only for hospitalizations, so it is not shown before that admission starts (attack25; before it was
    # shown with stay_id and hadm_id NULL, which told that an admission was coming, as attack21's orders did)
    assert rows(text_ep, "SELECT stay_id, hadm_id, originalrate, rate FROM inputevents ORDER BY starttime") == [
        (ICU_PAST, PAST, None, None),
    ]
    assert {r[0] for r in rows(text_ep, "SELECT stay_id FROM icustays")} == {ICU_PAST}


def test_ed_rows_before_their_ed_stay_are_hidden_until_it_starts(text_ep: Episode) -> None:
    """A vital sign charted before its ED stay's intime was shown with the stay_id masked (it told that an ED visit
    was coming); since attack21 it is known from the stay's intime."""
    assert rows(text_ep, "SELECT stay_id, heartrate FROM vitalsign ORDER BY charttime") == [(ED_PAST, 90.0)]
    assert ED_FUTURE not in {r[0] for r in rows(text_ep, "SELECT stay_id FROM edstays")}


# --- 3. pending cultures and their row count ----------------------------------------------------


def test_pending_culture_collapses_to_one_row_per_specimen_and_test(text_ep: Episode) -> None:
    got = rows(text_ep, "SELECT micro_specimen_id, count(*) FROM microbiologyevents GROUP BY 1 ORDER BY 1")
    assert got == [(RESULTED_SPECIMEN, 2), (PENDING_SPECIMEN, 1), (LATE_SPECIMEN, 1)]
    assert rows(
        text_ep,
        f"SELECT microevent_id, org_name, ab_name FROM microbiologyevents WHERE micro_specimen_id = {PENDING_SPECIMEN}",
    ) == [(None, None, None)]


def test_microevent_ids_are_dense_and_reveal_no_gap(text_ep: Episode) -> None:
    got = rows(
        text_ep,
        "SELECT microevent_id, micro_specimen_id FROM microbiologyevents "
        "WHERE microevent_id IS NOT NULL ORDER BY microevent_id",
    )
    assert got == [(1, RESULTED_SPECIMEN), (2, RESULTED_SPECIMEN), (3, LATE_SPECIMEN)]


def test_resulted_culture_keeps_every_row(holes_store: Path) -> None:
    with build_episode(holes_store, EpisodeKey(S, ts("06-12 00:00"))) as ep:
        got = rows(ep, "SELECT microevent_id, ab_name FROM microbiologyevents ORDER BY microevent_id")
    assert [r[0] for r in got] == [1, 2, 3, 4, 5, 6]
    assert {"OXACILLIN", "VANCOMYCIN", "CLINDAMYCIN"} <= {r[1] for r in got}


def test_future_select_still_gives_raw_rows_and_ids(holes_store: Path) -> None:
    key = EpisodeKey(S, ts("06-09 12:00"))
    sql, params = get_policy(TEXT_POLICY).future_select(get_table("hosp.microbiologyevents"), key) or ("", [])
    con = duckdb.connect(str(holes_store), read_only=True)
    try:
        got = con.execute(sql, params).fetchall()
    finally:
        con.close()
    assert [r[0] for r in got] == [102, 103, 104]


# --- 4. ICU values stored after the cutoff ------------------------------------------------------


def test_datetimeevents_value_stored_after_cutoff_is_null(text_ep: Episode) -> None:
    assert rows(text_ep, "SELECT itemid, value, valueuom FROM datetimeevents") == [(225754, None, None)]


def test_outputevents_value_stored_after_cutoff_is_null(text_ep: Episode) -> None:
    assert rows(text_ep, "SELECT value, valueuom FROM outputevents") == [(None, None)]


def test_procedure_ended_before_cutoff_but_stored_after_hides_its_duration(text_ep: Episode) -> None:
    assert rows(text_ep, "SELECT itemid, endtime, value FROM procedureevents ORDER BY itemid") == [
        (225792, None, None),
        (225794, ts("06-10 10:00"), 7000.0),
    ]


# --- 5. the exact boundary, both versions -------------------------------------------------------


def test_values_exactly_at_cutoff_are_null_under_strict_policy(text_ep: Episode) -> None:
    assert rows(text_ep, "SELECT outtime FROM transfers WHERE transfer_id = 3") == [(None,)]
    assert rows(text_ep, "SELECT hadm_id FROM labevents WHERE valuenum = 1.1") == [(None,)]
    assert rows(text_ep, "SELECT valuenum, warning FROM chartevents ORDER BY charttime") == [
        (90.0, None),
        (None, None),
    ]


def test_values_exactly_at_cutoff_are_shown_under_inclusive_policy(mm_ep: Episode) -> None:
    assert rows(mm_ep, "SELECT outtime FROM transfers WHERE transfer_id = 3") == [(T,)]
    assert rows(mm_ep, "SELECT hadm_id FROM labevents WHERE valuenum = 1.1") == [(AT_T,)]
    assert rows(mm_ep, "SELECT valuenum, warning FROM chartevents ORDER BY charttime") == [
        (90.0, None),
        (95.0, 1),
    ]
    assert {r[0] for r in rows(mm_ep, "SELECT hadm_id FROM admissions")} == {PAST, AT_T}
