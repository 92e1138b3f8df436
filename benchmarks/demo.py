"""Wall and CPU time of ``clinseek demo`` per stage, at the default size (or the sizes given).

Each size runs ``run_demo`` in a fresh subprocess into a fresh directory, so every stage does its
work (nothing is reused) and the peak RSS is its own. Prints, per size: questions, runs, wall and
CPU seconds per stage, CPU milliseconds per run, peak RSS, and the decision-making margin of
``baseline:evidence`` over ``baseline:null``. On a shared machine read the CPU seconds: wall
time there measures the neighbours.

Target (issue 7): the default demo in a few minutes at most on 2 cores.

Usage::

    .venv/bin/python benchmarks/demo.py                               # 150 patients, 3 per task
    .venv/bin/python benchmarks/demo.py --sizes 40:1 150:3 --out /tmp/demo-bench
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import json, resource, sys, time
import anyio
from clinseek.demo import DEMO_MODELS, DemoSettings, find_delta, run_demo
out, patients, per_task = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t0, c0 = time.perf_counter(), time.process_time()
result = anyio.run(lambda: run_demo(out, settings=DemoSettings(patients=patients, per_task=per_task)))
a, b = (f"clinseek-bench-text/agent/{m}" for m in DEMO_MODELS)
head = find_delta(result.report, a, b, "task_type:decision_making")
print(json.dumps({
    "patients": patients, "per_task": per_task, "questions": result.questions,
    "runs": sum(r.total for r in result.run_summaries),
    "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
    "stages": {s.name: round(s.seconds, 1) for s in result.stages},
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "decision_delta_pp": None if head is None else round(100 * head.delta, 1),
    "decision_ci_pp": None if head is None else [round(100 * head.ci_low, 1), round(100 * head.ci_high, 1)],
}))
"""


def _measure(out: Path, patients: int, per_task: int) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(out), str(patients), str(per_task)],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["150:3"], help="PATIENTS:PER_TASK pairs")
    parser.add_argument("--out", type=Path, default=None, help="parent folder (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.out or Path(tmp)
        for i, size in enumerate(args.sizes):
            patients, per_task = (int(x) for x in size.split(":"))
            r = _measure(root / f"demo-{i}-{patients}-{per_task}", patients, per_task)
            cpu_ms_per_run = 1000 * float(r["cpu_seconds"]) / max(1, int(r["runs"]))  # type: ignore[call-overload]
            print(f"{patients} patients, {per_task}/task: {r['questions']} questions, {r['runs']} runs; "
                  f"wall {r['seconds']:.0f} s, CPU {r['cpu_seconds']:.0f} s ({cpu_ms_per_run:.0f} ms CPU/run "
                  f"incl. store and benchmark); stages {r['stages']}; peak RSS {r['peak_rss_mb']:.0f} MB; "
                  f"decision Δ evidence−null {r['decision_delta_pp']} pp {r['decision_ci_pp']}")


if __name__ == "__main__":
    main()
