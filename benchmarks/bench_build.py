"""Benchmark builder and Curated Input speed on a store (default: ingest the open MIMIC-IV demo into a temp dir).

Prints: seconds to build every task at ``--per-task`` questions (and questions/s), the build's
skipped tasks, seconds to validate the result against the store, and the median / p95 seconds to
render one text Curated Input package (sealed episode build + rendering) over ``--render`` questions.

Run e.g. ``python benchmarks/bench_build.py --per-task 40`` or ``--store my.duckdb``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from clinseek.bench import build_benchmark, load_questions, render_curated, validate_benchmark
from clinseek.store import ingest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _store(arg: str | None, tmp: Path) -> Path:
    if arg:
        return Path(arg)
    out = tmp / "demo.duckdb"
    ingest(out=out, mimic_iv=DATA / "mimic-iv-demo-2.2", ed=DATA / "mimic-iv-ed-demo-2.2", progress=False)
    return out


def main() -> None:
    """Parse arguments, build, validate, render, print figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", help="store to draw from (default: ingest the MIMIC-IV demo)")
    parser.add_argument("--per-task", type=int, default=40)
    parser.add_argument("--render", type=int, default=20, help="questions to render curated input for")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = _store(args.store, Path(tmp))
        start = time.perf_counter()
        result = build_benchmark(store, per_task=args.per_task, out=Path(tmp) / "bench")
        built_s = time.perf_counter() - start
        total = sum(result.counts.values())
        print(f"build: {total} questions in {built_s:.1f} s ({total / built_s:.1f} questions/s)")
        for name, reason in sorted(result.skipped.items()):
            print(f"  skipped/short {name}: {reason}")
        start = time.perf_counter()
        report = validate_benchmark(result.out, store=store)
        print(f"validate --store: {time.perf_counter() - start:.2f} s, ok={report.ok}")
        questions = load_questions(result.out)[:: max(1, total // args.render)][: args.render]
        times = []
        for q in questions:
            start = time.perf_counter()
            render_curated(q, store)
            times.append(time.perf_counter() - start)
        times.sort()
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        print(f"curated text render: median {statistics.median(times):.2f} s, p95 {p95:.2f} s over {len(times)}")


if __name__ == "__main__":
    main()
