"""The local engine's order of work in one event-loop step: a finished job's successor starts at once, and the
rows of a wave of replies are built and written after the successors' requests have left (as a Ray worker
does, tests/runner/test_ray_worker_queue.py); every finished job's row is written, once, whatever stops the run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import anyio
import pytest

from clinseek.errors import StoreError
from clinseek.records import ResultRow
from clinseek.runner import Job, ResultsFile, RowCounts, read_results, run_jobs


def _row(qid: str, status: str = "answered", error: str | None = None, error_type: str | None = None) -> ResultRow:
    return ResultRow(qid=qid, run_index=0, session_id=f"{qid}__run_0", benchmark="b", task="t",
                     task_type="risk_prediction", mode="curated", model="m:x", config_hash="c" * 64,
                     prompt_version="p", policy_version="clinseek-text-v1", status=status,  # type: ignore[arg-type]
                     completed=status == "answered", stop_reason="answer_block", error=error, error_type=error_type)


class _Gated:
    """Jobs that wait for their gate, recording starts, sends, ends and rows in order. A job's "send" happens
    one event-loop step after its start, as aiohttp writes a request body from a task of its own."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.gates: dict[str, asyncio.Future[None]] = {}

    async def run(self, job: Job) -> str:
        loop = asyncio.get_running_loop()
        self.events.append(f"start {job.qid}")
        loop.call_soon(self.events.append, f"send {job.qid}")
        self.gates[job.qid] = loop.create_future()
        await self.gates[job.qid]
        self.events.append(f"end {job.qid}")
        return f"outcome {job.qid}"

    def finish(self, job: Job, outcome: str) -> ResultRow:
        assert outcome == f"outcome {job.qid}"
        self.events.append(f"row {job.qid}")
        return _row(job.qid)

    def error_row(self, job: Job, exc: BaseException) -> ResultRow:
        self.events.append(f"error {job.qid}")
        return _row(job.qid, "infra_error", f"{type(exc).__name__}: {exc}", type(exc).__name__)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def _jobs(n: int) -> list[Job]:
    return [Job(qid=f"q{i}", run_index=0, question=None) for i in range(n)]


def test_a_waves_rows_are_written_after_its_successors_requests_left(tmp_path: Path) -> None:
    gated = _Gated()
    results = ResultsFile(tmp_path / "results.jsonl")

    async def scenario() -> RowCounts:
        async def drive() -> None:
            await _settle()
            gated.gates["q0"].set_result(None)  # both replies of the wave arrive together
            gated.gates["q1"].set_result(None)
            await _settle()
            gated.events.append("wave handled")
            for qid in ("q2", "q3"):
                gated.gates[qid].set_result(None)

        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            counts = await run_jobs(_jobs(4), gated.run, gated.error_row, results, concurrency=2,
                                    finish=gated.finish)
        return counts

    results.open()
    try:
        counts = asyncio.run(scenario())
    finally:
        results.close()
    events = gated.events
    assert events[:4] == ["start q0", "start q1", "send q0", "send q1"]
    assert events[4:13] == ["end q0", "start q2", "end q1", "start q3", "send q2", "send q3", "row q0", "row q1",
                            "wave handled"]
    assert sorted(events[13:]) == ["end q2", "end q3", "row q2", "row q3"]
    assert counts.rows == 4 and counts.answered == 4
    assert sorted(r.qid for r in read_results(tmp_path / "results.jsonl").rows) == ["q0", "q1", "q2", "q3"]


def test_a_row_that_cannot_be_built_is_an_error_row_and_an_escape_too(tmp_path: Path) -> None:
    class Broken(_Gated):
        def finish(self, job: Job, outcome: str) -> ResultRow:
            raise ValueError("bad outcome")

    async def execute(job: Job) -> str:
        if job.qid == "q1":
            raise RuntimeError("escaped")
        return f"outcome {job.qid}"

    broken = Broken()
    results = ResultsFile(tmp_path / "results.jsonl")
    results.open()
    try:
        counts = asyncio.run(run_jobs(_jobs(2), execute, broken.error_row, results, concurrency=2,
                                      finish=broken.finish))
    finally:
        results.close()
    rows = {r.qid: r for r in read_results(tmp_path / "results.jsonl").rows}
    assert counts.rows == 2 and counts.infra_errors == 2
    assert rows["q0"].error == "ValueError: bad outcome" and rows["q1"].error == "RuntimeError: escaped"


def test_a_store_failure_stops_the_run_after_writing_every_finished_row(tmp_path: Path) -> None:
    gated = _Gated()

    def finish(job: Job, outcome: str) -> ResultRow:
        gated.events.append(f"row {job.qid}")
        if job.qid == "q0":
            return _row(job.qid, "infra_error", "StoreError: /x/store.duckdb is damaged", "StoreError")
        return _row(job.qid)

    results = ResultsFile(tmp_path / "results.jsonl")

    async def scenario() -> None:
        async def drive() -> None:
            await _settle()
            gated.gates["q0"].set_result(None)
            gated.gates["q1"].set_result(None)

        driver = asyncio.create_task(drive())
        await run_jobs(_jobs(6), gated.run, gated.error_row, results, concurrency=2, finish=finish)
        await driver

    results.open()
    try:
        with pytest.raises(StoreError, match=r"store\.duckdb is damaged"):
            asyncio.run(scenario())
    finally:
        results.close()
    written = [r.qid for r in read_results(tmp_path / "results.jsonl").rows]
    assert sorted(written) == ["q0", "q1"]  # both finished jobs' rows, once; the successors were stopped
    assert [e for e in gated.events if e.startswith("end")] == ["end q0", "end q1"]


def test_a_cancelled_run_still_writes_its_finished_rows(tmp_path: Path) -> None:
    gated = _Gated()
    results = ResultsFile(tmp_path / "results.jsonl")

    async def scenario() -> None:
        with anyio.CancelScope() as scope:
            async def drive() -> None:
                await _settle()
                gated.gates["q0"].set_result(None)
                await asyncio.sleep(0)  # q0's end, not yet its row's step
                scope.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(drive)
                await run_jobs(_jobs(3), gated.run, gated.error_row, results, concurrency=2, finish=gated.finish)

    results.open()
    try:
        asyncio.run(scenario())
    finally:
        results.close()
    assert [r.qid for r in read_results(tmp_path / "results.jsonl").rows] == ["q0"]


def test_under_trio_rows_are_written_at_once(tmp_path: Path) -> None:
    pytest.importorskip("trio")

    async def execute(job: Job) -> str:
        return f"outcome {job.qid}"

    gated = _Gated()
    results = ResultsFile(tmp_path / "results.jsonl")
    results.open()
    try:
        counts = anyio.run(lambda: run_jobs(_jobs(3), execute, gated.error_row, results, concurrency=2,
                                            finish=gated.finish), backend="trio")
    finally:
        results.close()
    assert counts.rows == 3

