"""Start-up cost: ``clinseek --help`` (modules imported, CPU seconds) and test collection (``pytest --collect-only``).

Prints, for ``clinseek --help`` and a few commands' ``--help``, the number of modules in ``sys.modules`` at
exit and the median CPU seconds (user + system) of a fresh interpreter over ``--repeat`` runs (bytecode
cached by a first, uncounted run); with ``--collect``, the wall and CPU seconds of
``python -m pytest --collect-only -q`` (second run of two, bytecode cached). Targets (issue #21):
``clinseek --help`` <= 300 modules and <= 0.3 s CPU; collection <= 8 s.

Run e.g. ``python benchmarks/startup.py --repeat 9 --collect``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_PROBE = """
import json, sys
sys.argv = ["clinseek", *{args!r}]
from clinseek.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(len(sys.modules)), file=sys.stderr)
"""


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cmd: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall s, CPU s, the finished process) of one child."""
    cpu, wall = _child_cpu(), time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    return time.perf_counter() - wall, _child_cpu() - cpu, done


def help_cost(args: list[str], repeat: int) -> tuple[int, float]:
    """(modules, median CPU seconds) of ``clinseek ARGS`` in a fresh interpreter."""
    cmd = [sys.executable, "-c", _PROBE.format(args=args)]
    _run(cmd)  # writes the bytecode caches
    runs = [_run(cmd) for _ in range(repeat)]
    modules = json.loads(runs[-1][2].stderr.strip().splitlines()[-1])
    return modules, statistics.median(cpu for _, cpu, _ in runs)


def collect_cost() -> tuple[float, float, str]:
    """(wall s, CPU s, pytest's last line) of ``pytest --collect-only -q`` (the second of two runs)."""
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    _run(cmd)
    wall, cpu, done = _run(cmd)
    return wall, cpu, done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="Fresh interpreters per command (median).")
    parser.add_argument("--collect", action="store_true", help="Also time pytest --collect-only.")
    opts = parser.parse_args()
    for args in (["--help"], ["run", "--help"], ["bench", "build", "--help"], ["score", "--help"]):
        modules, cpu = help_cost(args, opts.repeat)
        print(f"clinseek {' '.join(args):<20} {modules:5d} modules  {cpu:.3f} s CPU (median of {opts.repeat})")
    if opts.collect:
        wall, cpu, last = collect_cost()
        print(f"pytest --collect-only: {wall:.1f} s wall, {cpu:.1f} s CPU ({last})")


if __name__ == "__main__":
    main()
