"""run_benchmark end to end on a benchmark built from the MIMIC-IV demo: baselines, layout, manifest, resume."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from clinseek.agent import PROMPT_VERSION
from clinseek.runner import RunSettings, read_results, run_benchmark

SETTINGS = RunSettings(concurrency=4)


def _run(questions, store: Path, mode: str, model: str, out: Path, settings: RunSettings = SETTINGS):
    return anyio.run(lambda: run_benchmark(questions, store, mode, model, out, settings=settings))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def evidence_run(demo_bench, demo_store: Path, tmp_path_factory: pytest.TempPathFactory):
    _, questions = demo_bench
    out = tmp_path_factory.mktemp("runs")
    summary = _run(questions, demo_store, "both", "baseline:evidence", out)
    return out, questions, summary


def test_layout_and_manifest(evidence_run) -> None:
    out, questions, summary = evidence_run
    assert [r.mode for r in summary.runs] == ["agent", "curated"]
    for mode in ("agent", "curated"):
        folder = out / "clinseek-bench-text" / mode / "baseline_evidence"
        manifest = json.loads((folder / "run_manifest.json").read_text())
        assert manifest["model"] == "baseline:evidence" and manifest["prompt_version"] == PROMPT_VERSION
        assert manifest["policy_versions"] == ["clinseek-text-v1"] and manifest["seed"] == 0
        assert manifest["code_version"] and len(manifest["config_hash"]) == 64
        assert manifest["budget"]["max_turns"] == 40 and "sql_timeout_s" in manifest["limits"]
        rows = read_results(folder / "results.jsonl").rows
        assert sorted(r.qid for r in rows) == sorted(q.qid for q in questions)
        assert all(r.status != "infra_error" for r in rows), [r.error for r in rows if r.error]


def test_agent_rows_record_real_tool_calls_usage_and_timings(evidence_run) -> None:
    out, _, _ = evidence_run
    rows = read_results(out / "clinseek-bench-text" / "agent" / "baseline_evidence" / "results.jsonl").rows
    row = rows[0]
    assert row.completed and row.stop_reason == "finish_tool_call" and row.turns == 3
    assert set(row.tool_calls) == {"ehr.load_ehr", "ehr.run_sql_query", "ehr.finish"}
    assert all(t.elapsed_s >= 0 for t in row.tools) and len(row.calls) == 3
    assert row.cost_usd == 0.0 and row.latency_s > 0 and row.session_id.startswith(row.qid)
    assistant = [m for m in row.messages if m["role"] == "assistant"]
    assert assistant[0]["tool_calls"][0]["name"] == "ehr.load_ehr"  # structured, not text
    assert "label" not in row.manifest and row.gold  # gold is a field, never in the trajectory


def test_rows_are_read_by_the_scorer(evidence_run) -> None:
    from clinseek.scoring import read_results as read_for_scoring

    out, questions, _ = evidence_run
    inputs = read_for_scoring(out / "clinseek-bench-text" / "agent" / "baseline_evidence" / "results.jsonl")
    assert len(inputs) == len(questions) and {i.mode for i in inputs} == {"agent"}


def test_a_rerun_resumes_without_duplicates(evidence_run, demo_store: Path) -> None:
    out, questions, _ = evidence_run
    path = out / "clinseek-bench-text" / "agent" / "baseline_evidence" / "results.jsonl"
    before = path.read_bytes()
    again = _run(questions, demo_store, "agent", "baseline:evidence", out).runs[0]
    assert again.ran == 0 and again.resumed == len(questions)
    assert path.read_bytes() == before


def test_more_runs_per_question_adds_only_the_new_runs(demo_bench, demo_store: Path, tmp_path: Path) -> None:
    _, questions = demo_bench
    qs = questions[:3]
    _run(qs, demo_store, "curated", "baseline:null", tmp_path)
    more = _run(qs, demo_store, "curated", "baseline:null", tmp_path, RunSettings(runs_per_question=2)).runs[0]
    rows = read_results(tmp_path / "clinseek-bench-text" / "curated" / "baseline_null" / "results.jsonl").rows
    assert more.ran == 3 and sorted((r.qid, r.run_index) for r in rows) == sorted((q.qid, i) for q in qs for i in (0, 1))


def test_evidence_beats_null_on_decision_making(evidence_run, demo_store: Path) -> None:
    out, questions, _ = evidence_run
    decision = [q for q in questions if q.task_type == "decision_making"]
    _run(decision, demo_store, "agent", "baseline:null", out)

    def hits(model: str) -> int:
        rows = read_results(out / "clinseek-bench-text" / "agent" / model / "results.jsonl").rows
        gold = {q.qid: {g.casefold() for g in q.label} for q in decision}
        return sum(bool(set(map(str.casefold, r.answer or [])) & gold[r.qid]) for r in rows if r.qid in gold)

    assert hits("baseline_null") == 0 and hits("baseline_evidence") >= 2


def test_an_unknown_subject_is_an_infra_error_row_not_a_crash(demo_bench, demo_store: Path, tmp_path: Path) -> None:
    _, questions = demo_bench
    ghost = questions[0].model_copy(update={"qid": "ghost", "subject_id": 1})
    summary = _run([ghost, questions[1]], demo_store, "agent", "baseline:null", tmp_path).runs[0]
    rows = {r.qid: r for r in read_results(Path(summary.out_dir) / "results.jsonl").rows}
    assert rows["ghost"].status == "infra_error" and rows["ghost"].error_type
    assert rows[questions[1].qid].status == "answered"
