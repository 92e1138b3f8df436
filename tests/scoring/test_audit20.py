"""Regressions of the session-20 scoring audit (/work/audit20): each test failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _scoring_helpers import write_jsonl

from clinseek.errors import ScoringError
from clinseek.scoring import read_expected, score_path


def _bench_folder(root: Path) -> tuple[list[dict], list[dict]]:
    """A benchmark folder with 4 text and 3 multimodal questions, and both benchmarks' runs answering all."""
    text_q = [dict(qid=f"t{i}", task="labevents", task_type="decision_making", label=["Glucose"],
                   candidates=["Glucose", "Sodium"]) for i in range(4)]
    mm_q = [dict(qid=f"m{i}", task="ehrxqa_image", label=[{"name": "yes"}]) for i in range(3)]
    bench = root / "bench"
    bench.mkdir(parents=True)
    (bench / "ClinSeek-Bench_text.json").write_text(json.dumps(text_q))
    (bench / "ClinSeek-Bench_multimodal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mm_q))
    for name, qs, answer in (("clinseek-bench-text", text_q, ["Glucose"]), ("clinseek-bench-multimodal", mm_q, ["yes"])):
        write_jsonl(root / "runs" / name / "agent" / "m" / "results.jsonl",
                    [dict(q, gold=q["label"], status="answered", answer=answer) for q in qs])
    return text_q, mm_q


def test_benchmark_folder_manifest_holds_each_run_to_its_own_benchmark(tmp_path: Path) -> None:
    # finding 1: the text run got the 3 multimodal questions as missing (n 7, F1 0.571) and the reverse
    _bench_folder(tmp_path)
    scored = score_path(tmp_path / "runs", expected=read_expected(tmp_path / "bench"), n_resamples=50)
    runs = {r.benchmark: r for r in scored.report.runs}
    text, mm = runs["clinseek-bench-text"], runs["clinseek-bench-multimodal"]
    assert (text.overall.n_questions, text.overall.n_missing, text.overall.f1) == (4, 0, 1.0)
    assert (mm.overall.n_questions, mm.overall.n_missing, mm.overall.f1) == (3, 0, 1.0)
    assert list(text.per_category) == ["laboratory_microbiology"]
    assert list(mm.per_category) == ["cxr_finding_presence"]
    assert scored.report.missing == {}


def test_benchmark_folder_manifest_still_counts_a_runs_own_missing_questions(tmp_path: Path) -> None:
    text_q, _ = _bench_folder(tmp_path)
    results = tmp_path / "runs" / "clinseek-bench-text" / "agent" / "m" / "results.jsonl"
    write_jsonl(results, [dict(q, gold=q["label"], status="answered", answer=["Glucose"]) for q in text_q[:3]])
    scored = score_path(tmp_path / "runs", expected=read_expected(tmp_path / "bench"), n_resamples=50)
    text = next(r for r in scored.report.runs if r.benchmark == "clinseek-bench-text")
    assert (text.overall.n_questions, text.overall.n_missing, text.overall.f1) == (4, 1, 0.75)
    assert scored.report.missing == {"clinseek-bench-text/agent/m": ["t3"]}


def test_benchmark_folder_whose_files_share_a_qid_is_refused(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    bench.mkdir()
    row = dict(qid="q0", task="labevents", task_type="decision_making", label=["Glucose"])
    (bench / "ClinSeek-Bench_text.json").write_text(json.dumps([row]))
    (bench / "ClinSeek-Bench_multimodal.jsonl").write_text(json.dumps(dict(qid="q0", task="ehrxqa_image",
                                                                            label=[{"name": "yes"}])) + "\n")
    with pytest.raises(ScoringError, match="qid q0 is in both"):
        read_expected(bench)
