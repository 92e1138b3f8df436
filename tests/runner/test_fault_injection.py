"""Fault injection: 200 questions with 20 % injected failures, and a run killed with SIGKILL then resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import anyio
from _runner_helpers import HashModel, curated_questions, expected_answer

from clinseek.runner import ModelSettings, RetryPolicy, RunOptions, RunSettings, read_results, run_benchmark

HERE = Path(__file__).parent
SETTINGS = RunSettings(model=ModelSettings(retry=RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.002)), run=RunOptions(concurrency=16))


def _results(out: Path) -> Path:
    return out / "clinseek-bench-text" / "curated" / "fake_hash" / "results.jsonl"


def _run(out: Path, model: HashModel, settings: RunSettings = SETTINGS):
    return anyio.run(lambda: run_benchmark(curated_questions(200), out / "no-store.duckdb", "curated", model, out,
                                           settings=settings))


def test_every_row_is_present_exactly_once_despite_failures(tmp_path: Path) -> None:
    model = HashModel(fail_rate=0.2, seed=11)
    summary = _run(tmp_path, model).runs[0]
    rows = read_results(_results(tmp_path)).rows
    assert model.failures >= 30  # ~20 % of the calls failed
    assert Counter(r.qid for r in rows) == {q.qid: 1 for q in curated_questions(200)}
    infra = [r for r in rows if r.status == "infra_error"]
    assert infra and summary.infra_errors == len(infra)
    assert {r.error_type for r in infra} <= {"RateLimited", "ProviderUnavailable", "RuntimeError"}
    assert all(r.answer is None and r.messages for r in infra)  # not scored; transcript kept

    resumed = _run(tmp_path, HashModel(fail_rate=0.0)).runs[0]  # infra errors are redone on resume
    rows = read_results(_results(tmp_path)).rows
    assert resumed.ran == len(infra) and resumed.infra_errors == 0
    assert Counter(r.qid for r in rows) == {q.qid: 1 for q in curated_questions(200)}
    assert all(r.status == "answered" for r in rows)


def test_a_killed_run_resumes_to_the_same_results(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    _run(reference, HashModel())
    want = {(r.qid, r.run_index, tuple(r.answer or ())) for r in read_results(_results(reference)).rows}

    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, str(HERE / "_kill_target.py"), str(killed), "0.05"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        path = _results(killed)
        if path.exists() and path.read_bytes().count(b"\n") >= 40:
            break
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = read_results(_results(killed)).rows
    assert 40 <= len(partial) < 200

    summary = _run(killed, HashModel()).runs[0]
    rows = read_results(_results(killed)).rows
    assert summary.resumed == len(partial) and summary.ran == 200 - len(partial)
    assert len(rows) == 200 and len({(r.qid, r.run_index) for r in rows}) == 200
    assert {(r.qid, r.run_index, tuple(r.answer or ())) for r in rows} == want
    assert all(r.answer == [expected_answer(r.messages[1]["content"])] for r in rows)
