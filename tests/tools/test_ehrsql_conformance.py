"""EHRSQL 2024 gold SQL (SQLite, as the organisers wrote it) runs as written in a sealed episode.

A sample of the valid split: the questions of three demo patients, over the organisers' view rebuilt
from the ingested demo (``_ehrsql``). Every reproducible question returns the gold answer through
``ehr.run_sql_query``; questions on ``chartevents`` (absent from the open demo) get a clear
error; questions about the population are classed cross-patient. The full train and valid run is
``benchmarks/ehrsql.py`` (figures in ``docs/sql.md``).
"""

from __future__ import annotations

import collections
import hashlib
from pathlib import Path

import pytest
from _ehrsql import Outcome, Recreation, load_split, run_in_episodes

SAMPLE_PATIENTS = 3
SAMPLE_QUESTIONS = 24


@pytest.fixture(scope="module")
def ehrsql(shared_data: Path) -> Path:
    path = shared_data / "samples" / "ehrsql-2024-mimic-iv-demo"
    if not (path / "valid" / "label.json").is_file():
        pytest.skip(f"EHRSQL 2024 sample not found at {path}")
    return path


@pytest.fixture(scope="module")
def sample(ehrsql: Path, demo_store: Path, shared_data: Path) -> tuple[Recreation, list[Outcome]]:
    items = load_split(ehrsql, "valid")
    per_patient = collections.Counter(s for it in items if len(it.subjects) == 1 for s in it.subjects)
    patients = sorted(per_patient, key=lambda s: (-per_patient[s], s))[:SAMPLE_PATIENTS]
    rec = Recreation(demo_store, shared_data / "mimic-iv-demo-2.2", subjects=patients)
    chosen = [it for it in items if it.subjects & set(patients) or (it.sql and not it.subjects)]
    chosen.sort(key=lambda it: hashlib.sha256(it.id.encode()).hexdigest())
    return rec, [rec.classify(it) for it in chosen]


def test_reproducible_gold_queries_return_the_gold_answer(sample: tuple[Recreation, list[Outcome]]) -> None:
    rec, outcomes = sample
    reproducible = [o for o in outcomes if o.kind == "reproducible"][:SAMPLE_QUESTIONS]
    assert len(reproducible) == SAMPLE_QUESTIONS
    ran = list(run_in_episodes(rec, reproducible))
    wrong = [(o.item.sql, o.error, o.answer, o.item.answer) for o in ran if o.answer != o.item.answer]
    assert not wrong, wrong
    assert any(o.rewritten for o in ran), "the sample should include SQLite the dialect layer translates"
    assert any(not o.rewritten for o in ran), "the sample should include SQL that runs as DuckDB unchanged"


def test_questions_on_absent_data_get_a_clear_error(sample: tuple[Recreation, list[Outcome]]) -> None:
    rec, outcomes = sample
    absent = [o for o in outcomes if o.kind == "data_absent"][:3]
    assert absent and all("chartevents" in o.reason for o in absent)
    for o in run_in_episodes(rec, absent, run_kind="data_absent"):
        assert o.answer is None and o.error is not None
        assert "unknown_table" in o.error and "chartevents" in o.error, o.error


def test_population_questions_are_cross_patient_with_a_reason(
    sample: tuple[Recreation, list[Outcome]],
) -> None:
    _, outcomes = sample
    cross = [o for o in outcomes if o.kind == "cross_patient"]
    assert cross and all(o.reason for o in cross)
    assert {"names no single patient"} <= {o.reason.split(":")[0] for o in cross}
