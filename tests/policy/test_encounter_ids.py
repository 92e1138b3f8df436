"""Precomputed encounter ids (``encounter_selects`` -> ``visible_select(encounters=...)``) change nothing."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from clinseek.policy import MM_POLICY, TEXT_POLICY, EpisodeKey, get_policy
from clinseek.schema import tables

from .crafted import DONE, OTHER, S, T, ts


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
@pytest.mark.parametrize("subject", [S, OTHER])
@pytest.mark.parametrize("cutoff", [T, T - timedelta(days=3), ts("06-01 00:00"), T + timedelta(days=30)])
def test_listed_ids_give_the_same_rows_as_the_subquery(
    crafted_store: Path, policy: str, subject: int, cutoff: datetime
) -> None:
    pol = get_policy(policy)
    key = EpisodeKey(subject, cutoff, policy, target_hadm_id=DONE)
    with duckdb.connect(str(crafted_store), read_only=True) as con:
        encounters = {
            owner: [r[0] for r in con.execute(*query).fetchall()]
            for owner, query in pol.encounter_selects(key).items()
        }
        assert set(encounters) == {"hosp.admissions", "icu.icustays", "ed.edstays"}
        listed_any = False
        for table in tables():
            plain = pol.visible_select(table, key)
            if plain is None:
                continue
            listed = pol.visible_select(table, key, encounters=encounters)
            assert listed is not None
            listed_any |= " IN (" in listed[0] or "false" in listed[0]
            assert "min(e." not in listed[0], table.qualified
            assert sorted(map(repr, con.execute(*listed).fetchall())) == sorted(
                map(repr, con.execute(*plain).fetchall())
            ), table.qualified
        assert listed_any


def test_an_absent_owner_is_not_listed_and_keeps_ids_null() -> None:
    pol = get_policy(TEXT_POLICY)
    assert set(pol.encounter_selects(EpisodeKey(S, T), present={"hosp.admissions"})) == {"hosp.admissions"}
