"""The demo's pipeline on real input: the open MIMIC-IV demo (ingested by the ``demo_store`` fixture).

Benchmark (a handful of tasks, 2 questions each) → ``baseline:evidence`` and ``baseline:null`` in
agent and curated mode → scores and paired tables, through the same ``run_demo`` as ``clinseek demo``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import anyio
import pytest

from clinseek.bench import load_questions, validate_benchmark
from clinseek.demo import DEMO_MODELS, DemoResult, DemoSettings, run_demo
from clinseek.runner import read_results
from clinseek.scoring import QuestionScore

TASKS = ["Inpatient_Mortality", "ED_Hospitalization", "LengthOfStay_3day", "labevents", "prescriptions",
         "diagnoses_icd", "transfers", "next_event", "cxr_finding_presence"]
"""Risk and decision tasks the demo data supports, and one multimodal category it cannot (no MIMIC-CXR)."""
PER_TASK = 2


@pytest.fixture(scope="module")
def real(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    out = tmp_path_factory.mktemp("pipeline_real") / "out"
    settings = DemoSettings(per_task=PER_TASK, seed=11, concurrency=4, n_resamples=500)
    return anyio.run(lambda: run_demo(out, settings=settings, store=demo_store, tasks=TASKS))


def _rows(result: DemoResult):
    return [row for path in sorted(result.runs.rglob("results.jsonl")) for row in read_results(path).rows]


def test_the_benchmark_comes_from_the_given_store_and_validates_against_it(real: DemoResult, demo_store: Path) -> None:
    assert real.store == demo_store and not (real.out / "store.duckdb").exists()
    assert real.build.store_info["kind"] != "synthetic"
    text_tasks = [t for t in TASKS if t != "cxr_finding_presence"]
    assert all(real.build.counts[t] == PER_TASK for t in text_tasks), real.build.counts
    assert real.build.counts["cxr_finding_presence"] == 0 and "cxr_finding_presence" in real.build.skipped
    assert real.questions == PER_TASK * len(text_tasks) == len(load_questions(real.bench))
    report = validate_benchmark(real.bench, store=demo_store)
    assert report.ok, report.problems


def test_every_question_is_run_and_scored_in_every_model_and_mode(real: DemoResult) -> None:
    rows = _rows(real)
    assert Counter((r.model, r.mode) for r in rows) == {
        (m, mode): real.questions for m in DEMO_MODELS for mode in ("agent", "curated")
    }
    statuses = Counter(r.status for r in rows)
    assert statuses["infra_error"] == 0 and statuses["answered"] + statuses["no_answer"] == len(rows)
    scored = [QuestionScore.model_validate_json(line)
              for line in (real.scores / "per_question.jsonl").read_text().splitlines()]
    assert len(scored) == len(rows) and all(q.scored for q in scored)
    by_run = {(r.mode, r.model): r.overall for r in real.report.runs}
    for (model, mode), n in Counter((r.model, r.mode) for r in rows).items():
        overall = by_run[(mode, model)]
        answered = sum(1 for r in rows if (r.model, r.mode, r.status) == (model, mode, "answered"))
        assert overall.n_questions == n and overall.n_no_answer == n - answered and overall.n_infra_error == 0


def test_status_counts_follow_the_baselines_rules(real: DemoResult) -> None:
    rows = _rows(real)
    null = [r for r in rows if r.model == "baseline:null"]
    assert all(r.answer == ["no"] for r in null if r.task_type == "risk_prediction")
    assert all(r.status == "no_answer" for r in null if r.task_type == "decision_making")
    evidence = [r for r in rows if r.model == "baseline:evidence"]
    assert all(r.status == "answered" for r in evidence if r.task_type == "risk_prediction")
    agent = [r for r in evidence if r.mode == "agent"]
    assert all(r.tool_calls.get("ehr.load_ehr") == 1 and r.tool_calls.get("ehr.finish") == 1 for r in agent)


def test_summary_files_and_paired_tables_exist(real: DemoResult) -> None:
    for name in ("per_question.jsonl", "summary.json", "summary.md"):
        assert (real.scores / name).is_file()
    pairs = {(c.a, c.b) for c in real.report.paired}
    text = "clinseek-bench-text"
    assert (f"{text}/agent/baseline:evidence", f"{text}/agent/baseline:null") in pairs
    assert (f"{text}/agent/baseline:evidence", f"{text}/curated/baseline:evidence") in pairs
    assert all(r.benchmark == text for r in real.report.runs)  # no multimodal rows without CXR data
    for run in real.report.runs:
        assert 0.0 <= run.overall.f1 <= 1.0
        assert set(run.per_task_type) == {"risk_prediction", "decision_making"}
