"""Candidate tables with dictionary columns enter a sealed episode only when they cannot carry patient data."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pyarrow as pa
import pytest

from clinseek.episode import EpisodeError, EpisodeKey, build_episode
from clinseek.tools import ToolContext, call_tool
from policy.crafted import S, T

CCS = pa.table({
    "candidate": ["Congestive heart failure; nonhypertensive", "Congestive heart failure; nonhypertensive", "Septicemia"],
    "icd_code": ["4280", "I5023", "A419"],
    "icd_version": [9, 10, 10],
    "long_title": ["Congestive heart failure, unspecified", "Acute on chronic systolic heart failure", "Sepsis, unspecified"],
})


@pytest.mark.parametrize(("extra", "match"), [
    ({"subject_id": pa.array([1, 2, 3])}, "'subject_id' names a patient"),
    ({"hadm_id": pa.array([1, 2, 3])}, "'hadm_id' names a patient"),
    ({"note_id": pa.array(["a", "b", "c"])}, "'note_id' names a patient"),
    ({"charttime": pa.array([dt.datetime(2150, 1, 1)] * 3)}, "'charttime' has type timestamp"),
    ({"chartdate": pa.array([dt.date(2150, 1, 1)] * 3)}, "'chartdate' has type date"),
    ({"Bad Name": pa.array(["a", "b", "c"])}, "'Bad Name' is not a lower-case identifier"),
])
def test_tables_that_could_carry_patient_data_are_refused(small_store: Path, extra: dict[str, pa.Array],
                                                          match: str) -> None:
    table = CCS
    for name, values in extra.items():
        table = table.append_column(name, values)
    with pytest.raises(EpisodeError, match=match):
        build_episode(small_store, EpisodeKey(S, T), candidates={"diagnoses_ccs": table})


def test_table_without_candidate_column_is_refused(small_store: Path) -> None:
    with pytest.raises(EpisodeError, match="no 'candidate' column"):
        build_episode(small_store, EpisodeKey(S, T), candidates={"x": CCS.drop_columns(["candidate"])})


def test_dictionary_columns_are_kept_and_searched(small_store: Path) -> None:
    with build_episode(small_store, EpisodeKey(S, T), candidates={"diagnoses_ccs": CCS}) as ep:
        assert ep.execute("SELECT count(*) FROM diagnoses_ccs_candidates WHERE icd_version = 10").rows == [(2,)]
        ctx = ToolContext(episode=ep)
        columns = anyio.run(call_tool, ctx, "ehr.get_column_names", {"table_name": "diagnoses_ccs_candidates"})
        found = anyio.run(call_tool, ctx, "ehr.get_candidates_by_keyword",
                          {"table_name": "diagnoses_ccs_candidates", "keyword": "systolic"})
    assert columns.data["columns"] == ["candidate", "icd_code", "icd_version", "long_title"]
    assert found.ok and "Congestive heart failure; nonhypertensive" in found.content and "Septicemia" not in found.content
