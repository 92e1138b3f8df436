"""Subprocess target of the kill -9 test: run 200 curated questions slowly into OUT (argv[1])."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from _runner_helpers import HashModel, curated_questions  # on PYTHONPATH, given by the test

from clinseek.runner import ModelSettings, RetryPolicy, RunOptions, RunSettings, run_benchmark


def main() -> None:
    out = Path(sys.argv[1])
    delay = float(sys.argv[2])
    settings = RunSettings(model=ModelSettings(retry=RetryPolicy(max_attempts=1)), run=RunOptions(concurrency=8))
    anyio.run(lambda: run_benchmark(curated_questions(200), out / "no-store.duckdb", "curated",
                                    HashModel(delay_s=delay), out, settings=settings))


if __name__ == "__main__":
    main()
