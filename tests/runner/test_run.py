"""run_benchmark end to end: layout, manifest, rows the scorer reads, resume, more runs, bad rows."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from clinseek.agent import PROMPT_VERSION
from clinseek.runner import RunOptions, RunSettings, read_results, run_benchmark

SETTINGS = RunSettings(run=RunOptions(concurrency=4))


def _run(questions, store: Path, mode: str, model: str, out: Path, settings: RunSettings = SETTINGS):
    return anyio.run(lambda: run_benchmark(questions, store, mode, model, out, settings=settings))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def text_questions(synthetic_runs):
    return [q for q in synthetic_runs[1] if q.benchmark == "clinseek-bench-text"]


def _folder(out: Path, mode: str, model: str = "baseline_evidence", bench: str = "clinseek-bench-text") -> Path:
    return out / bench / mode / model


def test_layout_and_manifest(synthetic_runs, text_questions) -> None:
    out, _, summaries = synthetic_runs
    assert [(r.benchmark, r.mode) for r in summaries["baseline:evidence"].runs] == [
        ("clinseek-bench-text", "agent"), ("clinseek-bench-text", "curated"),
        ("clinseek-bench-mm", "agent"), ("clinseek-bench-mm", "curated"),
    ]
    for mode in ("agent", "curated"):
        manifest = json.loads((_folder(out, mode) / "run_manifest.json").read_text())
        assert manifest["model"] == "baseline:evidence" and manifest["prompt_version"] == PROMPT_VERSION
        assert manifest["policy_versions"] and manifest["seed"] == 0
        assert manifest["code_version"] and len(manifest["config_hash"]) == 64
        assert manifest["budget"]["max_turns"] == 40 and "sql_timeout_s" in manifest["limits"]
        rows = read_results(_folder(out, mode) / "results.jsonl").rows
        assert sorted(r.qid for r in rows) == sorted(q.qid for q in text_questions)


def test_agent_rows_record_real_tool_calls_usage_and_timings(synthetic_runs) -> None:
    out, _, _ = synthetic_runs
    row = next(r for r in read_results(_folder(out, "agent") / "results.jsonl").rows if r.task_type == "risk_prediction")
    assert row.completed and row.stop_reason == "finish_tool_call" and row.turns == 3
    assert set(row.tool_calls) == {"ehr.load_ehr", "ehr.run_sql_query", "ehr.finish"}
    assert all(t.elapsed_s >= 0 for t in row.tools) and len(row.calls) == 3
    assert row.cost_usd == 0.0 and row.latency_s > 0 and row.session_id.startswith(row.qid)
    assistant = [m for m in row.messages if m["role"] == "assistant"]
    assert assistant[0]["tool_calls"][0]["name"] == "ehr.load_ehr"  # structured, not text
    assert "label" not in row.manifest and row.gold  # gold is a field, never in the trajectory
    assert "base64" not in json.dumps(row.messages)


def test_rows_are_read_by_the_scorer(synthetic_runs, text_questions) -> None:
    from clinseek.scoring import read_results as read_for_scoring

    out, _, _ = synthetic_runs
    inputs = read_for_scoring(_folder(out, "agent") / "results.jsonl")
    assert len(inputs) == len(text_questions) and {i.mode for i in inputs} == {"agent"}
    mm = read_for_scoring(_folder(out, "agent", bench="clinseek-bench-mm") / "results.jsonl")
    assert mm and all(i.answer_type for i in mm)


def test_a_rerun_resumes_without_duplicates(synthetic_runs, text_questions, synthetic_store: Path) -> None:
    out, _, _ = synthetic_runs
    path = _folder(out, "agent") / "results.jsonl"
    before = path.read_bytes()
    again = _run(text_questions, synthetic_store, "agent", "baseline:evidence", out).runs[0]
    assert again.ran == 0 and again.resumed == len(text_questions)
    assert path.read_bytes() == before


def test_more_runs_per_question_adds_only_the_new_runs(text_questions, synthetic_store: Path, tmp_path: Path) -> None:
    qs = [q for q in text_questions if q.task_type == "risk_prediction"][:2]
    _run(qs, synthetic_store, "agent", "baseline:null", tmp_path)
    more = _run(qs, synthetic_store, "agent", "baseline:null", tmp_path, RunSettings(run=RunOptions(runs_per_question=2))).runs[0]
    rows = read_results(_folder(tmp_path, "agent", "baseline_null") / "results.jsonl").rows
    assert more.ran == 2 and sorted((r.qid, r.run_index) for r in rows) == sorted((q.qid, i) for q in qs for i in (0, 1))


def test_a_rerun_with_other_settings_names_what_differs(text_questions, synthetic_store: Path, tmp_path: Path) -> None:
    from clinseek.errors import ClinseekError

    qs = [q for q in text_questions if q.task_type == "risk_prediction"][:1]
    _run(qs, synthetic_store, "agent", "baseline:null", tmp_path)
    with pytest.raises(ClinseekError, match=r"another run configuration .*differs: seed 0 -> 1"):
        _run(qs, synthetic_store, "agent", "baseline:null", tmp_path, RunSettings(run=RunOptions(seed=1)))


def test_an_unknown_subject_is_an_infra_error_row_not_a_crash(text_questions, synthetic_store: Path, tmp_path: Path) -> None:
    ghost = text_questions[0].model_copy(update={"qid": "ghost", "subject_id": 1})
    summary = _run([ghost, text_questions[1]], synthetic_store, "agent", "baseline:null", tmp_path).runs[0]
    rows = {r.qid: r for r in read_results(Path(summary.out_dir) / "results.jsonl").rows}
    assert rows["ghost"].status == "infra_error" and rows["ghost"].error_type
    assert rows[text_questions[1].qid].status == "answered"


def test_a_missing_store_fails_fast(text_questions, tmp_path: Path) -> None:
    from clinseek.errors import ClinseekError

    with pytest.raises(ClinseekError, match="no such store"):
        _run(text_questions, tmp_path / "missing.duckdb", "agent", "baseline:null", tmp_path)
    assert not (tmp_path / "clinseek-bench-text").exists()
