"""The label builder's inverse (``future_select``) on the same crafted rows, and the partition it makes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from clinseek.policy import MM_POLICY, TEXT_POLICY, EpisodeKey, get_policy
from clinseek.schema import get_table, tables

from .crafted import DONE, ED_CLOSED, ED_OPEN, OPEN, S, T, d


@pytest.fixture(scope="module")
def store_con(crafted_store: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(str(crafted_store), read_only=True)
    yield con
    con.close()


def future(con: duckdb.DuckDBPyConnection, key: EpisodeKey, name: str) -> list[tuple[Any, ...]]:
    query = get_policy(key.policy).future_select(get_table(name), key)
    assert query is not None
    return con.execute(*query).fetchall()


def visible(con: duckdb.DuckDBPyConnection, key: EpisodeKey, name: str) -> list[tuple[Any, ...]]:
    query = get_policy(key.policy).visible_select(get_table(name), key)
    assert query is not None
    return con.execute(*query).fetchall()


def test_future_labs_are_at_or_after_cutoff_and_unmasked(store_con: duckdb.DuckDBPyConnection) -> None:
    key = EpisodeKey(S, T)
    cols = get_table("hosp.labevents").column_names
    got = {
        r[cols.index("labevent_id")]: r[cols.index("valuenum")]
        for r in future(store_con, key, "hosp.labevents")
    }
    assert got == {3: 1.3, 4: 2.9}


def test_inclusive_policy_moves_the_boundary_row_out_of_the_future(
    store_con: duckdb.DuckDBPyConnection,
) -> None:
    rows = future(store_con, EpisodeKey(S, T, MM_POLICY), "hosp.labevents")
    assert [r[0] for r in rows] == [4]


def test_future_includes_open_admission_codes_and_target_codes(store_con: duckdb.DuckDBPyConnection) -> None:
    plain = future(store_con, EpisodeKey(S, T), "hosp.diagnoses_icd")
    assert {(r[1], r[3]) for r in plain} == {(OPEN, "A419")}
    targeted = future(store_con, EpisodeKey(S, T, target_hadm_id=DONE), "hosp.diagnoses_icd")
    assert {(r[1], r[3]) for r in targeted} == {(OPEN, "A419"), (DONE, "I10"), (DONE, "E119")}


def test_future_ed_diagnosis_of_open_stay(store_con: duckdb.DuckDBPyConnection) -> None:
    rows = future(store_con, EpisodeKey(S, T, target_stay_id=ED_CLOSED), "ed.diagnosis")
    assert sorted(r[1] for r in rows) == [ED_CLOSED, ED_OPEN]


def test_future_admission_rows_carry_the_outcome(store_con: duckdb.DuckDBPyConnection) -> None:
    cols = get_table("hosp.admissions").column_names
    rows = future(store_con, EpisodeKey(S, T), "hosp.admissions")
    assert {r[cols.index("hadm_id")] for r in rows} == {102, 104}


def test_patients_inverse_gives_the_unmasked_row(store_con: duckdb.DuckDBPyConnection) -> None:
    assert future(store_con, EpisodeKey(S, T), "hosp.patients")[0][-1] == d("06-10")


def test_label_sources_are_whole_in_the_inverse(store_con: duckdb.DuckDBPyConnection) -> None:
    assert len(future(store_con, EpisodeKey(S, T), "cxr.chexpert")) == 1
    assert get_policy(TEXT_POLICY).visible_select(get_table("cxr.chexpert"), EpisodeKey(S, T)) is None


def test_dictionaries_have_no_inverse() -> None:
    assert get_policy(TEXT_POLICY).future_select(get_table("hosp.d_labitems"), EpisodeKey(S, T)) is None


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
@pytest.mark.parametrize("target", [{}, {"target_hadm_id": DONE, "target_stay_id": ED_CLOSED}])
def test_visible_and_future_partition_every_event_table(
    store_con: duckdb.DuckDBPyConnection, policy: str, target: dict[str, int]
) -> None:
    key = EpisodeKey(S, T, policy, **target)
    for table in tables():
        if table.visibility != "event" or (table.module == "cxr"):
            continue
        pk = [table.column_names.index(c) for c in table.column_names if c in ("subject_id", *table.key)]
        total = store_con.execute(
            f"SELECT count(*) FROM {table.qualified} WHERE subject_id = ?", [S]
        ).fetchall()
        seen = visible(store_con, key, table.qualified)
        hidden = future(store_con, key, table.qualified)
        assert len(seen) + len(hidden) == total[0][0], table.qualified
        if table.key and not {c.column for c in table.renumbered} & set(table.key):  # renumbered ids: not the store's
            assert not {tuple(r[i] for i in pk) for r in seen} & {tuple(r[i] for i in pk) for r in hidden}


def test_policy_of_another_version_is_refused() -> None:
    from clinseek.errors import PolicyError

    with pytest.raises(PolicyError, match="use get_policy"):
        get_policy(TEXT_POLICY).visible_select(get_table("hosp.labevents"), EpisodeKey(S, T, MM_POLICY))
