"""Scoring throughput: reading, per-sample scoring, aggregation and the paired bootstrap.

Writes a synthetic agent run and a curated run of N questions per mode (a ClinSeek-Bench-like
mix: 40 % binary, 45 % multi-label, 15 % multimodal single answers, 3 repetitions), then times
``score_path`` (read + score + summaries + agent − curated comparison with B resamples) and the
bootstrap alone. Run: ``.venv/bin/python benchmarks/scoring.py [--questions 1800] [--resamples 10000]``.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from clinseek.scoring import paired_bootstrap_ci, score_path

LABS = [f"Lab {i}" for i in range(60)]


def _row(qid: int, mode: str, run: int, rng: random.Random) -> dict[str, object]:
    kind = qid % 20
    if kind < 8:
        gold: list[str] = [rng.choice(["yes", "no"])]
        answer = (
            gold if rng.random() < (0.7 if mode == "agent" else 0.6) else [rng.choice(["yes", "no", "maybe"])]
        )
        task, task_type = "ICU_Mortality_1day", "risk_prediction"
    elif kind < 17:
        gold = rng.sample(LABS, 5)
        answer = gold[:3] + rng.sample(LABS, 2 if mode == "agent" else 4)
        task, task_type = "labevents", "decision_making"
    else:
        gold = [str(rng.randint(0, 5))]
        answer = [rng.choice([gold[0], "two", "3 studies"])]
        task, task_type = "ehrxqa_image", "multimodal"
    return {
        "qid": f"q{qid}",
        "run_index": run,
        "task": task,
        "task_type": task_type,
        "category": task,
        "status": "answered",
        "gold": gold,
        "answer": answer,
        "tool_calls": {"ehr.run_sql_query": 3},
        "turns": 5,
        "usage": {"input_tokens": 12_000, "output_tokens": 800},
        "cost_usd": 0.02,
        "latency_s": 14.0,
    }


def _write(root: Path, questions: int, runs: int) -> int:
    rng = random.Random(0)
    n = 0
    for mode in ("agent", "curated"):
        path = root / "bench" / mode / "model" / "results.jsonl"
        path.parent.mkdir(parents=True)
        with path.open("w") as handle:
            for qid in range(questions):
                for run in range(runs):
                    handle.write(json.dumps(_row(qid, mode, run, rng)) + "\n")
                    n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=1800)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = _write(Path(tmp), args.questions, args.runs)
        start = time.perf_counter()
        scored = score_path(tmp, n_resamples=args.resamples, seed=0)
        elapsed = time.perf_counter() - start
    overall = scored.report.paired[0].groups[0]
    n_groups = len(scored.report.paired[0].groups)
    print(
        f"score_path: {rows} rows ({args.questions} questions x {args.runs} runs x 2 modes), "
        f"{n_groups} paired groups x {args.resamples} resamples: {elapsed:.2f} s ({rows / elapsed:,.0f} rows/s)"
    )
    print(
        f"  overall agent − curated Δ = {100 * overall.delta:+.1f} pp, "
        f"95% CI [{100 * overall.ci_low:.1f}, {100 * overall.ci_high:.1f}]"
    )
    diffs = np.random.default_rng(0).normal(0.03, 0.4, size=args.questions)
    start = time.perf_counter()
    paired_bootstrap_ci(diffs, n_resamples=args.resamples, seed=0)
    print(
        f"paired_bootstrap_ci: n = {args.questions}, B = {args.resamples}: {time.perf_counter() - start:.3f} s"
    )


if __name__ == "__main__":
    main()
