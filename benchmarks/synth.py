"""Time and peak RSS of ``clinseek.store.synthesize`` for 1k and 10k patients (or the sizes given).

Each size runs in a fresh subprocess, so its peak RSS is its own. Prints one line per size
(seconds, CPU seconds, peak RSS, rows, images, seconds per 1k patients) and the ratio of the
per-patient wall and CPU time between the largest and the smallest size (about 1 when the cost
is linear). On a shared machine read the CPU seconds: wall time there measures the neighbours.

Targets (issue 3): 10k patients in <= 5 minutes with peak RSS <= 2 GB, linear in N.

Usage::

    .venv/bin/python benchmarks/synth.py                 # 1000 and 10000 patients
    .venv/bin/python benchmarks/synth.py --sizes 200 2000 --out /tmp/synth-bench
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
from pathlib import Path
from clinseek.store import synthesize
out, n, seed = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
t0, c0 = time.perf_counter(), time.process_time()
report = synthesize(out, patients=n, seed=seed)
print(json.dumps({
    "patients": n, "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "rows": sum(report.rows.values()), "images": report.images,
    "store_mb": out.stat().st_size / 2**20,
}))
"""


def run_size(n: int, folder: Path, seed: int) -> dict[str, float]:
    """Synthesize ``n`` patients in a subprocess and return its figures."""
    out = folder / f"synth_{n}.duckdb"
    done = subprocess.run([sys.executable, "-c", _CHILD, str(out), str(n), str(seed)],
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Parse arguments, run every size, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help="folder for the stores (default: a temp folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.out or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        results = []
        for n in args.sizes:
            r = run_size(n, folder, args.seed)
            results.append(r)
            print(f"{n:>7,} patients: {r['seconds']:7.1f} s wall, {r['cpu_seconds']:7.1f} s CPU, "
                  f"peak RSS {r['peak_rss_mb']:7.0f} MB, {r['rows']:>12,} rows, {r['images']:>7,} images, "
                  f"store {r['store_mb']:6.0f} MB, {1000 * r['seconds'] / n:6.2f} s per 1k patients", flush=True)
    if len(results) > 1:
        small, large = results[0], results[-1]
        for key in ("seconds", "cpu_seconds"):
            ratio = (large[key] / large["patients"]) / (small[key] / small["patients"])
            print(f"per-patient {key.replace('_', ' ')}, largest / smallest size: {ratio:.2f} (1.0 = linear)")


if __name__ == "__main__":
    main()
