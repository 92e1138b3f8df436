"""The reader accepts the rows the runner actually writes (``clinseek.runner.ResultRow``)."""

from __future__ import annotations

from pathlib import Path

from clinseek.runner import ResultRow
from clinseek.scoring import read_score_inputs, score_questions, summarize_run


def _row(qid: str, **fields: object) -> ResultRow:
    base: dict[str, object] = dict(
        qid=qid,
        run_index=0,
        session_id=f"{qid}__run_0__abcdef12",
        benchmark="synthetic",
        task="ICU_Mortality_1day",
        task_type="risk_prediction",
        category=None,
        mode="agent",
        model="baseline:evidence",
        config_hash="abcdef1234",
        prompt_version="p1",
        policy_version="v1",
        status="answered",
        completed=True,
        stop_reason="finish_tool_call",
        answer=["yes"],
        gold=["yes"],
        answer_type="binary",
        candidates=["yes", "no"],
        usage={"input_tokens": 50, "output_tokens": 7, "cached_input_tokens": 20},
        cost_usd=None,
        latency_s=0.5,
        turns=2,
        tool_calls={"ehr.finish": 1},
    )
    base.update(fields)
    return ResultRow.model_validate(base)


def test_runner_rows_are_read_and_scored(tmp_path: Path) -> None:
    rows = [
        _row("a"),
        _row("b", answer=["yes"], invalid_answer=["maybe"]),
        _row(
            "c",
            task="labevents",
            task_type="decision_making",
            category="Lab_Microbiology_orders",
            answer_type="set",
            candidates=[],
            gold=["Glucose", "Sodium"],
            answer=["Glucose"],
        ),
        _row(
            "d",
            status="infra_error",
            completed=False,
            stop_reason="exception",
            answer=None,
            error="RateLimited: 429",
            error_type="RateLimited",
        ),
    ]
    path = tmp_path / "synthetic" / "agent" / "baseline_evidence" / "results.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    inputs = read_score_inputs(path)
    assert [(i.qid, i.category, i.usage.cached_tokens) for i in inputs][:1] == [
        ("a", "mortality", 20)
    ]
    assert inputs[1].answer == ["yes", "maybe"]
    run = summarize_run(score_questions(inputs))
    assert run.model == "baseline:evidence"
    assert run.per_task["ICU_Mortality_1day"].f1 == 0.5  # "a" right, "b" broke the single-label rule
    assert run.per_task["labevents"].f1 == 2 / 3
    assert run.overall.n_infra_error == 1 and run.overall.n_questions == 3
