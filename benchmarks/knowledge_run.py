"""What the browser tools cost an agent run: opening the knowledge source (cold build vs cached
load) and the per-question overhead of offering them (a browser per episode, 3 more tool schemas).

Synthesizes a store, builds a small text benchmark, then runs ``baseline:evidence`` in agent mode
with ``knowledge=None`` and with the offline index (cold: empty cache; warm: the same cache again),
printing wall and process CPU seconds of each ``run_benchmark`` call. Decides whether a demo should
offer the browser: the baselines never search, so the whole difference is overhead.
Run: ``.venv/bin/python benchmarks/knowledge_run.py [--patients 40] [--per-task 1]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import anyio

from clinseek.bench import build_benchmark, load_questions
from clinseek.knowledge import KnowledgeConfig
from clinseek.runner import RunOptions, RunSettings, Sources, run_benchmark
from clinseek.store import synthesize

TASKS = ["Inpatient_Mortality", "ICU_Mortality_7day", "labevents", "prescriptions", "transfers", "diagnoses_icd"]


def _timed(label: str, questions: list, store: Path, out: Path, settings: RunSettings) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    anyio.run(lambda: run_benchmark(questions, store, "agent", "baseline:evidence", out, settings=settings))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{label:<34} wall {wall:6.2f} s   CPU {cpu:6.2f} s   ({len(questions)} questions)")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=40)
    parser.add_argument("--per-task", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = root / "store.duckdb"
        synthesize(out=store, patients=args.patients, seed=7)
        build_benchmark(store, tasks=TASKS, per_task=args.per_task, seed=3, out=root / "bench")
        questions = [q for q in load_questions(root / "bench") if q.task_type != "multimodal"]
        config = KnowledgeConfig(cache_dir=root / "kb", store=store)
        _timed("knowledge off", questions, store, root / "off", RunSettings(run=RunOptions(concurrency=4)))
        _, cold = _timed("offline index, cold (builds it)", questions, store, root / "cold",
                         RunSettings(run=RunOptions(concurrency=4), sources=Sources(knowledge=config)))
        _, warm = _timed("offline index, warm (cached load)", questions, store, root / "warm",
                         RunSettings(run=RunOptions(concurrency=4), sources=Sources(knowledge=config)))
        print(f"cold minus warm (the index build): {cold - warm:.2f} CPU s")


if __name__ == "__main__":
    main()
