"""``--tasks`` and ``--limit``: a limit is a stratified subset (every task, both task types), never the
first K rows of the manifest (which are all risk prediction in ClinSeek-Bench-Text)."""

from __future__ import annotations

import datetime as dt

import pytest

from clinseek.bench import Question, select_questions
from clinseek.errors import RegistryError

RISK = ["ED_Hospitalization", "ICU_Mortality_1day", "ICU_Mortality_2day", "Inpatient_Mortality",
        "LengthOfStay_3day", "Readmission_30day"]
DECISION = ["labevents", "prescriptions", "diagnoses_icd", "transfers"]


def _question(i: int, task: str, risk: bool) -> Question:
    return Question(
        qid=f"q{i:03d}", benchmark="clinseek-bench-text", source="clinseek-build", task=task,
        task_type="risk_prediction" if risk else "decision_making", category="c", subject_id=1000 + i,
        prediction_time=dt.datetime(2150, 1, 1, 8), policy="clinseek-text-v1",
        candidates=("yes", "no") if risk else ("a", "b"), label=("yes",) if risk else ("a",),
        curated_text="-", instruction="Please predict.",
    )


@pytest.fixture
def manifest() -> list[Question]:
    """3 questions per task, risk tasks first, as a built text manifest is ordered."""
    names = [(t, True) for t in RISK] + [(t, False) for t in DECISION]
    return [_question(3 * k + j, task, risk) for k, (task, risk) in enumerate(names) for j in range(3)]


def test_a_limit_spreads_over_task_types_and_tasks(manifest: list[Question]) -> None:
    four = select_questions(manifest, limit=4)
    assert [q.task_type for q in four].count("decision_making") == 2
    assert len({q.task for q in four}) == 4
    ten = select_questions(manifest, limit=10)
    assert {q.task for q in ten} == set(RISK + DECISION)  # one of each task before a second of any
    assert set(map(id, four)) <= set(map(id, ten))  # a larger limit keeps a smaller one's questions
    assert ten == [q for q in manifest if q in ten]  # manifest order
    assert select_questions(manifest, limit=100) == manifest


def test_tasks_filter_then_limit(manifest: list[Question]) -> None:
    chosen = select_questions(manifest, tasks=["labevents", "Readmission_30day"], limit=3)
    assert len(chosen) == 3 and {q.task for q in chosen} == {"labevents", "Readmission_30day"}


def test_a_task_that_is_not_in_the_benchmark_names_the_closest(manifest: list[Question]) -> None:
    with pytest.raises(RegistryError, match=r"'ICU_Mortality_1'.*did you mean 'ICU_Mortality_1day'"):
        select_questions(manifest, tasks=["ICU_Mortality_1"])
    with pytest.raises(RegistryError, match=r"'chartevents'.*: not a task of this benchmark \(its tasks: ED_Hosp"):
        select_questions(manifest, tasks=["chartevents"])
