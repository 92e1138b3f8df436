"""Table-driven per-sample scoring with hand-computed expected values."""

from __future__ import annotations

from typing import Any

import pytest
from _scoring_helpers import score_input

from clinseek.scoring import score_sample

RISK: dict[str, Any] = {
    "task": "ED_Hospitalization",
    "task_type": "risk_prediction",
    "candidates": ["yes", "no"],
}
DEC: dict[str, Any] = {"task": "labevents", "task_type": "decision_making"}
MM_RAD: dict[str, Any] = {"task": "medmod_radiology", "task_type": "multimodal"}
MM_X: dict[str, Any] = {"task": "ehrxqa_image", "task_type": "multimodal"}
MM_PHEN: dict[str, Any] = {"task": "medmod_phenotyping", "task_type": "multimodal"}
T = 2 / 3

# (id, row fields, expected (precision, recall, f1, exact_match), expected route, expected status)
CASES: list[tuple[str, dict[str, Any], tuple[float, float, float, float], str, str]] = [
    # binary risk prediction
    ("binary-right", {**RISK, "gold": "yes", "answer": ["yes"]}, (1, 1, 1, 1), "binary", "answered"),
    ("binary-wrong", {**RISK, "gold": "yes", "answer": ["no"]}, (0, 0, 0, 0), "binary", "answered"),
    (
        "binary-both-labels",
        {**RISK, "gold": "yes", "answer": ["yes", "no"]},
        (0, 0, 0, 0),
        "binary",
        "answered",
    ),
    ("binary-case-space", {**RISK, "gold": "no", "answer": ["  NO\t"]}, (1, 1, 1, 1), "binary", "answered"),
    (
        "binary-duplicates",
        {**RISK, "gold": "yes", "answer": ["yes", "Yes", " yes"]},
        (1, 1, 1, 1),
        "binary",
        "answered",
    ),
    ("binary-invalid", {**RISK, "gold": "yes", "answer": ["maybe"]}, (0, 0, 0, 0), "binary", "answered"),
    ("binary-empty-list", {**RISK, "gold": "yes", "answer": []}, (0, 0, 0, 0), "binary", "no_answer"),
    (
        "binary-blank-items",
        {**RISK, "gold": "yes", "answer": ["", "  "]},
        (0, 0, 0, 0),
        "binary",
        "no_answer",
    ),
    (
        "binary-no-answer",
        {**RISK, "gold": "yes", "answer": None, "status": "no_answer"},
        (0, 0, 0, 0),
        "binary",
        "no_answer",
    ),
    ("binary-list-gold", {**RISK, "gold": ["no"], "answer": ["no"]}, (1, 1, 1, 1), "binary", "answered"),
    (
        "decision-yes-no-candidates",
        {**DEC, "candidates": ["Yes", "No"], "gold": ["yes"], "answer": ["yes", "no"]},
        (0, 0, 0, 0),
        "binary",
        "answered",
    ),
    # multi-label decision making
    (
        "set-partial",
        {**DEC, "gold": ["A", "B", "C"], "answer": ["A", "B", "D"]},
        (T, T, T, 0),
        "set",
        "answered",
    ),
    ("set-subset", {**DEC, "gold": ["A", "B"], "answer": ["A"]}, (1, 0.5, T, 0), "set", "answered"),
    (
        "set-superset",
        {**DEC, "gold": ["A"], "answer": ["A", "B", "C", "D"]},
        (0.25, 1, 0.4, 0),
        "set",
        "answered",
    ),
    (
        "set-exact-case-space",
        {**DEC, "gold": ["Glucose", "Potassium"], "answer": ["glucose ", "POTASSIUM"]},
        (1, 1, 1, 1),
        "set",
        "answered",
    ),
    (
        "set-inner-whitespace",
        {**DEC, "gold": ["Red Blood Cells"], "answer": ["red   blood\ncells"]},
        (1, 1, 1, 1),
        "set",
        "answered",
    ),
    (
        "set-duplicates",
        {**DEC, "gold": ["A", "B"], "answer": ["A", "a", " A "]},
        (1, 0.5, T, 0),
        "set",
        "answered",
    ),
    ("set-disjoint", {**DEC, "gold": ["A", "B"], "answer": ["C"]}, (0, 0, 0, 0), "set", "answered"),
    (
        "set-nfkc",
        {**DEC, "gold": ["Vitamin D"], "answer": ["ｖｉｔａｍｉｎ\u3000Ｄ"]},
        (1, 1, 1, 1),
        "set",
        "answered",
    ),
    ("set-empty", {**DEC, "gold": ["A"], "answer": []}, (0, 0, 0, 0), "set", "no_answer"),
    (
        "dict-atc-name",
        {
            **DEC,
            "task": "prescriptions_atc",
            "gold": [{"name": "Aspirin", "atc_name": "B01AC06"}, {"name": "Heparin", "atc_name": "B01AB01"}],
            "answer": ["b01ac06"],
        },
        (1, 0.5, T, 0),
        "set",
        "answered",
    ),
    (
        "dict-name",
        {
            **DEC,
            "gold": [{"name": "Aspirin"}, {"name": "Heparin"}],
            "answer": [{"name": "heparin"}, "aspirin"],
        },
        (1, 1, 1, 1),
        "set",
        "answered",
    ),
    (
        "alias-and-name-count-once",
        {
            **DEC,
            "gold": [{"name": "Aspirin", "atc_name": "B01AC06"}, {"name": "Heparin"}],
            "answer": ["Aspirin", "b01ac06"],
        },
        (1, 0.5, T, 0),
        "set",
        "answered",
    ),
    (
        "gold-aliases-field",
        {**DEC, "gold": ["Aspirin"], "gold_aliases": [["ASA"]], "answer": ["asa"]},
        (1, 1, 1, 1),
        "set",
        "answered",
    ),
    (
        "invalid-answer-lowers-precision",
        {**DEC, "gold": ["A"], "answer": ["A"], "invalid_answer": ["Z"]},
        (0.5, 1, T, 0),
        "set",
        "answered",
    ),
    (
        "invalid-answer-breaks-binary",
        {**RISK, "gold": "yes", "answer": ["yes"], "invalid_answer": ["maybe"]},
        (0, 0, 0, 0),
        "binary",
        "answered",
    ),
    (
        "binary-answer-type-declared",
        {**RISK, "answer_type": "binary", "gold": "no", "answer": ["no"]},
        (1, 1, 1, 1),
        "binary",
        "answered",
    ),
    (
        "infra-error",
        {**DEC, "gold": ["A"], "answer": None, "status": "infra_error"},
        (0, 0, 0, 0),
        "set",
        "infra_error",
    ),
    # multimodal single answers
    ("mm-yes", {**MM_X, "gold": [{"name": "yes"}], "answer": ["Yes."]}, (1, 1, 1, 1), "yes_no", "answered"),
    (
        "mm-yes-true",
        {**MM_X, "gold": [{"name": "yes"}], "answer": ["true"]},
        (1, 1, 1, 1),
        "yes_no",
        "answered",
    ),
    (
        "mm-yes-and-no",
        {**MM_X, "gold": [{"name": "no"}], "answer": ["yes", "no"]},
        (0, 0, 0, 0),
        "yes_no",
        "answered",
    ),
    (
        "mm-yes-hedge",
        {**MM_X, "gold": [{"name": "no"}], "answer": ["probably not"]},
        (0, 0, 0, 0),
        "yes_no",
        "answered",
    ),
    (
        "mm-count-word",
        {**MM_X, "gold": [{"name": "2", "value": 2}], "answer": ["two"]},
        (1, 1, 1, 1),
        "count",
        "answered",
    ),
    (
        "mm-count-units",
        {**MM_X, "gold": [{"name": "2", "value": 2}], "answer": ["2 studies"]},
        (1, 1, 1, 1),
        "count",
        "answered",
    ),
    ("mm-count-wrong", {**MM_X, "gold": ["2"], "answer": ["3"]}, (0, 0, 0, 0), "count", "answered"),
    ("mm-count-two-values", {**MM_X, "gold": ["2"], "answer": ["2", "3"]}, (0, 0, 0, 0), "count", "answered"),
    (
        "mm-count-same-value",
        {**MM_X, "gold": ["2"], "answer": ["2", "two"]},
        (1, 1, 1, 1),
        "count",
        "answered",
    ),
    (
        "mm-datetime-minute",
        {**MM_X, "gold": ["2105-08-03 21:00:00"], "answer": ["2105-08-03 21:00"]},
        (1, 1, 1, 1),
        "datetime",
        "answered",
    ),
    (
        "mm-datetime-too-coarse",
        {**MM_X, "gold": ["2105-08-03 21:00:00"], "answer": ["2105-08-03"]},
        (0, 0, 0, 0),
        "datetime",
        "answered",
    ),
    (
        "mm-datetime-wrong-minute",
        {**MM_X, "gold": ["2105-08-03 21:00:00"], "answer": ["2105-08-03T21:05"]},
        (0, 0, 0, 0),
        "datetime",
        "answered",
    ),
    (
        "mm-date-gold",
        {**MM_X, "gold": ["2105-08-03"], "answer": ["2105-08-03 10:12:00"]},
        (1, 1, 1, 1),
        "datetime",
        "answered",
    ),
    (
        "mm-date-words",
        {**MM_X, "gold": ["2105-08-03"], "answer": ["August 3, 2105"]},
        (1, 1, 1, 1),
        "datetime",
        "answered",
    ),
    (
        "mm-seconds-gold",
        {**MM_X, "gold": ["2105-08-03 21:00:30"], "answer": ["2105-08-03 21:00"]},
        (0, 0, 0, 0),
        "datetime",
        "answered",
    ),
    ("mm-id", {**MM_X, "gold": ["51234567"], "answer": ["051234567"]}, (1, 1, 1, 1), "id", "answered"),
    ("mm-id-wrong", {**MM_X, "gold": ["51234567"], "answer": ["51234568"]}, (0, 0, 0, 0), "id", "answered"),
    (
        "mm-name-chexpert-synonym",
        {**MM_RAD, "gold": [{"name": "Cardiomegaly"}], "answer": ["enlarged heart"]},
        (1, 1, 1, 1),
        "name",
        "answered",
    ),
    (
        "mm-name-ehrxqa-plural",
        {**MM_X, "gold": ["pleural effusion"], "answer": ["Pleural Effusions"]},
        (1, 1, 1, 1),
        "name",
        "answered",
    ),
    (
        "mm-name-adjacent",
        {**MM_X, "gold": ["pleural effusion"], "answer": ["atelectasis"]},
        (0, 0, 0, 0),
        "name",
        "answered",
    ),
    (
        "mm-name-out-of-vocab",
        {**MM_X, "gold": ["Widget"], "answer": ["widget"]},
        (1, 1, 1, 1),
        "name",
        "answered",
    ),
    (
        "mm-yes-lead-word",
        {**MM_X, "gold": ["yes"], "answer": ["Yes, an effusion is present"]},
        (1, 1, 1, 1),
        "yes_no",
        "answered",
    ),
    (
        "mm-no-lead-word",
        {**MM_X, "gold": ["no"], "answer": ["No, there is no pneumothorax"]},
        (1, 1, 1, 1),
        "yes_no",
        "answered",
    ),
    (
        "mm-mixed-polarity",
        {**MM_X, "gold": ["yes"], "answer": ["yes and no"]},
        (0, 0, 0, 0),
        "yes_no",
        "answered",
    ),
    ("mm-gold-one-as-count", {**MM_X, "gold": ["1"], "answer": ["one"]}, (1, 1, 1, 1), "yes_no", "answered"),
    ("mm-gold-one-as-yes", {**MM_X, "gold": ["1"], "answer": ["yes"]}, (1, 1, 1, 1), "yes_no", "answered"),
    ("mm-gold-zero-wrong", {**MM_X, "gold": ["0"], "answer": ["2"]}, (0, 0, 0, 0), "yes_no", "answered"),
    (
        "mm-declared-type",
        {**MM_X, "answer_type": "count", "gold": ["3"], "answer": ["three"]},
        (1, 1, 1, 1),
        "count",
        "answered",
    ),
    # multimodal multi-answer: set F1 after closed-vocabulary mapping
    (
        "mm-set-phenotypes",
        {**MM_PHEN, "gold": ["Essential hypertension", "Shock"], "answer": ["hypertension", "sepsis"]},
        (0.5, 0.5, 0.5, 0),
        "set",
        "answered",
    ),
    (
        "mm-set-chexpert",
        {**MM_RAD, "gold": ["Edema", "Pleural Effusion"], "answer": ["pulmonary edema", "effusion"]},
        (1, 1, 1, 1),
        "set",
        "answered",
    ),
    (
        "mm-list-type-single-gold",
        {**MM_PHEN, "answer_type": "list", "gold": ["Shock"], "answer": ["shock", "sepsis"]},
        (0, 0, 0, 0),
        "name",
        "answered",
    ),
]


@pytest.mark.parametrize(
    ("fields", "expected", "route", "status"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_per_sample_metrics(
    fields: dict[str, Any], expected: tuple[float, ...], route: str, status: str
) -> None:
    score = score_sample(score_input(**fields))
    got = (score.precision, score.recall, score.f1, score.exact_match)
    assert got == pytest.approx(expected)
    assert (score.route, score.status) == (route, status)


def test_infra_error_is_not_scored_unless_asked() -> None:
    row = score_input(status="infra_error", answer=None)
    assert score_sample(row).scored is False
    assert score_sample(row, score_infra_errors=True).scored is True


def test_no_answer_is_scored_as_zero() -> None:
    score = score_sample(score_input(status="no_answer", answer=None))
    assert (score.scored, score.f1) == (True, 0.0)


def test_multimodal_set_reports_raw_f1_beside_the_mapped_one() -> None:
    score = score_sample(
        score_input(**MM_PHEN, gold=["Essential hypertension", "Shock"], answer=["hypertension", "shock"])
    )
    assert score.f1 == pytest.approx(1.0)
    assert score.f1_raw == pytest.approx(0.5)
