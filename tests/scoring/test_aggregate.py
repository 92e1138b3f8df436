"""Aggregation: repetitions, no-answer and infra-error accounting, micro and macro means, usage."""

from __future__ import annotations

import pytest
from _scoring_helpers import score_input

from clinseek.scoring import score_questions, summarize_run, t_interval

RISK = {"task": "ICU_Mortality_1day", "task_type": "risk_prediction", "category": "Mortality", "gold": "yes"}
LAB = {"task": "labevents", "task_type": "decision_making", "category": "Laboratory & microbiology", "gold": ["A", "B", "C"]}


def _rows():  # type: ignore[no-untyped-def]
    return [
        score_input(
            qid="q1",
            run_index=0,
            answer=["yes"],
            tool_calls={"ehr.run_sql_query": 2},
            turns=3,
            usage={"input_tokens": 100, "output_tokens": 10},
            cost_usd=0.5,
            latency_s=2.0,
            **RISK,
        ),
        score_input(qid="q1", run_index=1, status="infra_error", answer=None, latency_s=4.0, **RISK),
        score_input(
            qid="q2", status="no_answer", answer=None, tool_calls={"ehr.load_ehr": 1}, turns=1, **RISK
        ),
        score_input(qid="q3", answer=["A", "B", "D"], turns=2, **LAB),
        score_input(qid="q4", status="infra_error", answer=None, **LAB),
    ]


def test_micro_and_macro_means_exclude_unscored_infra_errors() -> None:
    questions = score_questions(_rows())
    run = summarize_run(questions)
    o = run.overall
    assert (o.n_questions, o.n_runs, o.n_answered, o.n_no_answer, o.n_infra_error) == (3, 5, 2, 1, 2)
    assert o.f1 == pytest.approx((1 + 0 + 2 / 3) / 3)
    assert run.macro_f1_over_categories == pytest.approx(((1 + 0) / 2 + 2 / 3) / 2)
    # the paper's per-cell t-interval: F1s (1, 0, 2/3): mean 5/9, sd = sqrt(7/27), t_{0.975, 2} = 4.302653
    radius = 4.302653 * (7 / 27) ** 0.5 / 3**0.5
    assert t_interval([1, 0, 2 / 3]) == pytest.approx((5 / 9 - radius, 5 / 9 + radius), abs=1e-5)
    assert o.f1_ci_t is None  # n = 3 < T_MIN_N: that interval, [-70.1, 181.2], says nothing
    assert run.per_category["laboratory_microbiology"].f1_ci_t is None  # one question
    assert run.per_task_type["risk_prediction"].f1 == pytest.approx(0.5)
    assert run.per_category["laboratory_microbiology"].n_questions == 1 and run.per_category["laboratory_microbiology"].n_infra_error == 1
    assert run.per_task["labevents"].precision == pytest.approx(2 / 3)


def test_infra_errors_count_as_zero_when_asked() -> None:
    run = summarize_run(score_questions(_rows(), score_infra_errors=True))
    assert run.overall.n_questions == 4
    assert run.overall.f1 == pytest.approx((0.5 + 0 + 2 / 3 + 0) / 4)


def test_expected_questions_without_results_score_zero() -> None:
    expected = [score_input(qid="q5", **LAB)]
    questions = score_questions(_rows(), expected=expected)
    missing = [q for q in questions if q.qid == "q5"]
    assert len(missing) == 1 and missing[0].status == "missing" and missing[0].f1 == 0.0
    run = summarize_run(questions)
    assert run.overall.n_missing == 1 and run.overall.n_questions == 4
    assert run.overall.f1 == pytest.approx((1 + 0 + 2 / 3 + 0) / 4)


def test_usage_statistics() -> None:
    usage = summarize_run(score_questions(_rows())).usage
    assert usage.n_runs == 5
    assert usage.tool_calls_by_name == {"ehr.load_ehr": 1, "ehr.run_sql_query": 2}
    assert usage.tool_calls_mean == pytest.approx(3 / 5)
    assert usage.turns_mean == pytest.approx((3 + 1 + 2) / 3)
    assert (usage.input_tokens_total, usage.output_tokens_total, usage.cached_tokens_total) == (100, 10, None)
    assert (usage.cost_usd_total, usage.n_cost_reported) == (0.5, 1)
    assert usage.latency_s_mean == pytest.approx(3.0)


def test_summarize_run_refuses_mixed_runs() -> None:
    questions = score_questions([score_input(qid="a", **LAB), score_input(qid="b", mode="curated", **LAB)])
    with pytest.raises(ValueError, match="exactly one run key"):
        summarize_run(questions)
