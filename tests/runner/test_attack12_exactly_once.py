"""Attack (session 12, runner12: rows built and written two loop steps after a job ends): every job's row is written
exactly once, whatever ends together, escapes or cannot be built; two runs one after the other in one event loop
never write a row into the other's file; a run stopped by a store failure, resumed on the jobs it did not write,
writes each job once in all. On main (the row built inside ``execute``) the same holds."""

from __future__ import annotations

import asyncio
import inspect
import random
from pathlib import Path
from typing import Any

import pytest

from clinseek.errors import StoreError
from clinseek.records import ResultRow
from clinseek.runner import Job, ResultsFile, read_results, run_jobs

_DEFERRED = "finish" in inspect.signature(run_jobs).parameters


def _row(qid: str, status: str = "answered", error: str | None = None, error_type: str | None = None) -> ResultRow:
    return ResultRow(qid=qid, run_index=0, session_id=f"{qid}__run_0", benchmark="b", task="t",
                     task_type="risk_prediction", mode="curated", model="m:x", config_hash="c" * 64,
                     prompt_version="p", policy_version="clinseek-text-v1", status=status,  # type: ignore[arg-type]
                     completed=status == "answered", stop_reason="answer_block", error=error, error_type=error_type)


def _error_row(job: Job, exc: BaseException) -> ResultRow:
    return _row(job.qid, "infra_error", f"{type(exc).__name__}: {exc}", type(exc).__name__)


def _jobs(names: list[str]) -> list[Job]:
    return [Job(qid=q, run_index=0, question=None) for q in names]


class _Random:
    """Jobs that end after a random number of loop steps (many end in the same step); some escape, some rows
    cannot be built, one (``store``) is a store failure."""

    def __init__(self, seed: int, store: str | None = None) -> None:
        self.rng = random.Random(seed)
        self.store = store

    async def run(self, job: Job) -> str:
        for _ in range(self.rng.choice([0, 0, 1, 2, 5])):
            await asyncio.sleep(0)
        if self.rng.random() < 0.1:
            raise RuntimeError(f"escaped {job.qid}")
        return job.qid

    def finish(self, job: Job, done: str) -> ResultRow:
        assert done == job.qid
        if job.qid == self.store:
            return _row(job.qid, "infra_error", "StoreError: /x/store.duckdb is damaged", "StoreError")
        if self.rng.random() < 0.1:
            raise ValueError(f"unbuildable {job.qid}")
        return _row(job.qid)

    async def run_jobs(self, jobs: list[Job], results: ResultsFile, concurrency: int) -> Any:
        if _DEFERRED:
            return await run_jobs(jobs, self.run, _error_row, results, concurrency=concurrency, finish=self.finish)

        async def execute(job: Job) -> ResultRow:
            return self.finish(job, await self.run(job))

        return await run_jobs(jobs, execute, _error_row, results, concurrency=concurrency)


def _written(path: Path) -> list[str]:
    return [r.qid for r in read_results(path).rows]


@pytest.mark.parametrize("seed", range(5))
def test_every_row_is_written_once(tmp_path: Path, seed: int) -> None:
    names = [f"q{i}" for i in range(150)]
    results = ResultsFile(tmp_path / "r.jsonl")
    results.open()
    try:
        counts = asyncio.run(_Random(seed).run_jobs(_jobs(names), results, concurrency=16))
    finally:
        results.close()
    written = _written(tmp_path / "r.jsonl")
    assert sorted(written) == sorted(names) and counts.rows == len(names)


def test_two_runs_in_one_loop_write_only_their_own_rows(tmp_path: Path) -> None:
    one, two = ResultsFile(tmp_path / "one.jsonl"), ResultsFile(tmp_path / "two.jsonl")

    async def both() -> None:
        one.open()
        try:
            await _Random(1).run_jobs(_jobs([f"a{i}" for i in range(40)]), one, concurrency=8)
        finally:
            one.close()
        two.open()
        try:
            await _Random(2).run_jobs(_jobs([f"b{i}" for i in range(40)]), two, concurrency=8)
            for _ in range(5):  # any write still scheduled by the first run falls due now
                await asyncio.sleep(0)
        finally:
            two.close()

    asyncio.run(both())
    assert sorted(_written(tmp_path / "one.jsonl")) == sorted(f"a{i}" for i in range(40))
    assert sorted(_written(tmp_path / "two.jsonl")) == sorted(f"b{i}" for i in range(40))


@pytest.mark.parametrize("seed", range(3))
def test_a_run_stopped_by_a_store_failure_and_resumed_writes_each_job_once(tmp_path: Path, seed: int) -> None:
    names = [f"q{i}" for i in range(80)]
    path = tmp_path / "r.jsonl"
    results = ResultsFile(path)
    results.open()
    try:
        with pytest.raises(StoreError):
            asyncio.run(_Random(seed, store="q20").run_jobs(_jobs(names), results, concurrency=8))
    finally:
        results.close()
    first = _written(path)
    assert len(first) == len(set(first)) and "q20" in first
    redo = [q for q in names if q not in first]
    results = ResultsFile(path)
    results.open()
    try:
        asyncio.run(_Random(seed + 100).run_jobs(_jobs(redo), results, concurrency=8))
    finally:
        results.close()
    written = _written(path)
    assert sorted(written) == sorted(names)
