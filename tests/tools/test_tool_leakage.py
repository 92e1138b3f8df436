"""Tool-level leakage audit: for random (patient, cutoff) pairs on the ingested MIMIC-IV demo and the
synthetic store, every value every tool returns was known before the cutoff (_leak_audit.py says how)."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

import anyio
import pytest
from _leak_audit import AUDIT_LIMITS, PAIRS_PER_STORE, Auditor, audit_cases, audit_episode, masked_in_store
from _tool_cases import CANDIDATES, store_fixture

from clinseek.policy import MM_POLICY
from clinseek.tools import ToolContext, ToolResult, call_tool


@pytest.mark.parametrize("store_name", ["demo_store", "synthetic_store"])
def test_no_tool_shows_anything_unknown_at_the_cutoff(
    store_name: str, request: pytest.FixtureRequest
) -> None:
    from clinseek.episode import EpisodeKey, build_episode, open_store_reader

    store = store_fixture(request, store_name)
    audited = 0
    with open_store_reader(store) as reader:  # one reader for every episode, as a run builds them
        for case in audit_cases(store, PAIRS_PER_STORE, seed=2024):
            key = EpisodeKey(**case)
            op = "<=" if key.policy == MM_POLICY else "<"
            auditor = Auditor(key, masked_in_store(store, key, op))
            with build_episode(reader, key, candidates=CANDIDATES) as ep:
                ctx = ToolContext(ep, AUDIT_LIMITS, CANDIDATES)
                anyio.run(audit_episode, functools.partial(call_tool, ctx), ep.table_counts(), auditor)
            audited += auditor.checked_rows
    assert audited > 100, "the audit looked at too few rows to mean anything"


def test_the_auditor_catches_leaks() -> None:
    from clinseek.episode import EpisodeKey

    key = EpisodeKey(7, dt.datetime(2150, 1, 2), target_hadm_id=70)
    auditor = Auditor(key, {"hosp.admissions": {(71,): {"dischtime"}}})

    def rows(*row: Any) -> ToolResult:
        cols = ["subject_id", "hadm_id", "admittime", "dischtime"]
        return ToolResult(ok=True, content="", data={"columns": cols, "rows": [list(row)]})

    auditor.check("hosp.admissions", rows(7, 72, dt.datetime(2150, 1, 1), None), "fine")
    for bad in (
        rows(8, 72, dt.datetime(2150, 1, 1), None),  # another patient
        rows(7, 72, dt.datetime(2150, 1, 2), None),  # at the cutoff (strict policy)
        rows(7, 71, dt.datetime(2150, 1, 1), dt.datetime(2150, 1, 1, 5)),  # masked value shown
    ):
        with pytest.raises(AssertionError):
            auditor.check("hosp.admissions", bad, "leak")
    with pytest.raises(AssertionError):
        dx = ToolResult(ok=True, content="", data={"columns": ["subject_id", "hadm_id"], "rows": [[7, 70]]})
        auditor.check("hosp.diagnoses_icd", dx, "target code")
    assert not auditor.known(dt.date(2150, 1, 1))  # a date is known at the end of its day
