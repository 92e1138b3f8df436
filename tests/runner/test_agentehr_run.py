"""AgentEHR-Bench end to end on the MIMIC-IV demo: real candidate tables in every episode, the evidence baseline
answers from them, and the Table 3 view of ``clinseek score`` (console, summary.md, the report's table)."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinseek.bench import build_benchmark, load_questions, question_candidates
from clinseek.cli import app
from clinseek.reporting._tables import agentehr_table
from clinseek.runner import read_results
from clinseek.scoring import AGENTEHR_BENCHMARKS, score_path, table3_rows

TABLE3 = ["diagnoses_ccs", "labevents", "microbiologyevents", "procedures_ccs", "transfers"]


@pytest.fixture(scope="module")
def agentehr_bench(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("agentehr_run") / "bench"
    build_benchmark(demo_store, out=out, per_task=4, seed=3, benchmark="agentehr")
    return out


@pytest.fixture(scope="module")
def agentehr_runs(agentehr_bench: Path, demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("agentehr_results")
    done = CliRunner().invoke(app, [
        "run", "--bench", str(agentehr_bench), "--store", str(demo_store), "--model", "baseline:evidence",
        "--out", str(out), "--concurrency", "4", "--no-progress",
    ])
    assert done.exit_code == 0, done.output
    return out


def test_evidence_baseline_answers_from_the_episode_candidate_tables(
    agentehr_runs: Path, agentehr_bench: Path, demo_store: Path
) -> None:
    rows = read_results(agentehr_runs / "agentehr-bench" / "agent" / "baseline_evidence" / "results.jsonl").rows
    questions = {q.qid: q for q in load_questions(agentehr_bench)}
    assert len(rows) == len(questions) == 24
    for row in rows:
        tool_results = [m for m in row.messages if m.get("role") == "tool"]
        assert not any(m.get("is_error") for m in tool_results), (row.qid, tool_results)
        assert not any("does not exist" in m.get("content", "") for m in tool_results), row.qid
        table = question_candidates(questions[row.qid], demo_store)
        names = set(next(iter(table.values())).column("candidate").to_pylist())  # type: ignore[union-attr]
        assert set(row.answer) <= names, (row.qid, set(row.answer) - names)
    answered = Counter(r.task for r in rows if r.status == "answered")
    assert {t for t in answered if answered[t] >= 2} >= {"labevents", "microbiologyevents", "transfers", "prescriptions"}


def test_table3_view_in_score_summary_and_report(agentehr_runs: Path, tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["score", str(agentehr_runs), "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert "AgentEHR-Bench (Table 3)" in done.output
    report = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    run = report["runs"][0]
    rows = table3_rows(score_path(agentehr_runs).report.runs)
    assert len(rows) == 1 and rows[0].benchmark in AGENTEHR_BENCHMARKS
    per_task = {t: run["per_task"][t]["f1"] for t in TABLE3}
    assert rows[0].f1["prescriptions"] == run["per_task"]["prescriptions"]["f1"]
    assert rows[0].average == pytest.approx(sum(per_task.values()) / 5)
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "## AgentEHR-Bench (the paper's Table 3)" in summary
    assert f"| {100 * rows[0].average:.1f} |" in summary
    html = agentehr_table(score_path(agentehr_runs).report.runs)
    assert 'data-col="average"' in html and f">{100 * rows[0].average:.1f}<" in html


def test_table3_average_needs_all_five_tasks(agentehr_runs: Path, tmp_path: Path) -> None:
    source = agentehr_runs / "agentehr-bench" / "agent" / "baseline_evidence"
    target = tmp_path / "agentehr-bench" / "agent" / "baseline_evidence"
    target.mkdir(parents=True)
    kept = [line for line in (source / "results.jsonl").read_text(encoding="utf-8").splitlines()
            if json.loads(line)["task"] != "transfers"]
    (target / "results.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    (target / "run_manifest.json").write_bytes((source / "run_manifest.json").read_bytes())
    row, = table3_rows(score_path(tmp_path).report.runs)
    assert row.f1["transfers"] is None and row.average is None


def test_run_with_agentehr_candidate_db(agentehr_bench: Path, demo_store: Path, tmp_path: Path) -> None:
    db = tmp_path / "MIMICIVAgentBench" / "database" / "candidate_table.db"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE transfers_candidates (candidate TEXT PRIMARY KEY)")
    con.executemany("INSERT INTO transfers_candidates VALUES (?)", [("Emergency Department",), ("Medicine",)])
    con.commit()
    con.close()
    out = tmp_path / "out"
    done = CliRunner().invoke(app, [
        "run", "--bench", str(agentehr_bench), "--store", str(demo_store), "--model", "baseline:evidence",
        "--out", str(out), "--tasks", "transfers", "--candidate-tables", str(db.parent.parent), "--no-progress",
    ])
    assert done.exit_code == 0, done.output
    rows = read_results(out / "agentehr-bench" / "agent" / "baseline_evidence" / "results.jsonl").rows
    assert rows and all(set(r.answer) <= {"Emergency Department", "Medicine"} for r in rows)
    bad = CliRunner().invoke(app, [
        "run", "--bench", str(agentehr_bench), "--store", str(demo_store), "--model", "baseline:evidence",
        "--out", str(tmp_path / "out2"), "--candidate-tables", str(tmp_path / "nowhere"), "--no-progress",
    ])
    assert bad.exit_code != 0 and "database/candidate_table.db" in str(bad.exception)
