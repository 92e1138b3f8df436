"""Both offline baselines, both modes, end to end on a benchmark built from the synthetic store."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinseek.runner import read_results


@pytest.fixture(scope="module")
def runs(synthetic_runs):
    out, questions, _ = synthetic_runs
    return out, questions


def _rows(out: Path, benchmark: str, mode: str, model: str):
    path = out / benchmark / mode / model / "results.jsonl"
    return read_results(path).rows if path.exists() else []


@pytest.mark.parametrize("mode", ["agent", "curated"])
@pytest.mark.parametrize("model", ["baseline_null", "baseline_evidence"])
def test_every_question_has_one_row_and_no_infra_error(runs, mode: str, model: str) -> None:
    out, questions = runs
    rows = _rows(out, "clinseek-bench-text", mode, model) + _rows(out, "clinseek-bench-mm", mode, model)
    assert sorted(r.qid for r in rows) == sorted(q.qid for q in questions)
    assert [r for r in rows if r.status == "infra_error"] == []


def test_the_evidence_baseline_seeks_evidence_with_real_tool_calls(runs) -> None:
    out, _ = runs
    rows = _rows(out, "clinseek-bench-text", "agent", "baseline_evidence")
    risk = [r for r in rows if r.task_type == "risk_prediction"]
    assert all(r.tool_calls.get("ehr.run_sql_query") == 6 and r.tool_calls.get("ehr.load_ehr") == 1 for r in risk)
    decision = [r for r in rows if r.task_type == "decision_making" and r.task != "next_event"]
    assert all(r.tool_calls.get("ehr.run_sql_query") == 1 for r in decision)
    assert all(t.ok for r in rows for t in r.tools), [(r.task, t) for r in rows for t in r.tools if not t.ok]


def test_evidence_beats_null_on_decision_making(runs) -> None:
    out, questions = runs
    gold = {q.qid: {g.casefold() for g in q.label} for q in questions if q.task_type == "decision_making"}

    def hits(model: str, mode: str) -> int:
        rows = _rows(out, "clinseek-bench-text", mode, model)
        return sum(bool({a.casefold() for a in r.answer or []} & gold[r.qid]) for r in rows if r.qid in gold)

    assert hits("baseline_null", "agent") == 0
    assert hits("baseline_evidence", "agent") >= 2


def test_concurrent_runs_each_see_only_their_own_patient(runs) -> None:
    out, _ = runs
    rows = _rows(out, "clinseek-bench-text", "agent", "baseline_evidence")
    rows += _rows(out, "clinseek-bench-mm", "agent", "baseline_evidence")
    for row in rows:
        loaded = next(m["content"] for m in row.messages if m["role"] == "tool")
        assert f"subject_id {row.subject_id}," in loaded
        others = {r.subject_id for r in rows} - {row.subject_id}
        assert not any(f"subject_id {s}," in loaded for s in others)
