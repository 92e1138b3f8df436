"""An EpisodeWorker's queued jobs (no Ray needed: the actor class is a plain class): at most its share runs at
once, every job's row comes back once, and a finished job's successor starts before the other replies of its
wave are handled (as the local engine's workers start theirs)."""

from __future__ import annotations

import asyncio
from typing import Any

from clinseek.runner import RunSettings
from clinseek.runner._engine import Job
from clinseek.runner._ray_worker import EpisodeWorker, WorkerSpec


class _Gated:
    """An executor whose jobs wait for their gate, recording starts, sends, ends and rows in order.

    A job's "send" happens one event-loop step after its start, as aiohttp writes a request body from a
    task of its own."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.gates: dict[str, asyncio.Future[None]] = {}
        self.running = 0
        self.most = 0

    async def run(self, job: Job) -> tuple[str, float, str]:
        self.events.append(f"start {job.qid}")
        asyncio.get_running_loop().call_soon(self.events.append, f"send {job.qid}")
        self.running += 1
        self.most = max(self.most, self.running)
        self.gates[job.qid] = asyncio.get_running_loop().create_future()
        await self.gates[job.qid]
        self.running -= 1
        self.events.append(f"end {job.qid}")
        return f"outcome {job.qid}", 0.0, ""

    def row(self, job: Job, outcome: str, latency_s: float, started_at: str) -> Any:
        self.events.append(f"row {job.qid}")
        return f"row {job.qid}"

    async def execute(self, job: Job) -> Any:  # the run and its row at once (the local engine's call)
        return self.row(job, *await self.run(job))

    def error_row(self, job: Job, exc: BaseException) -> Any:
        return f"error {job.qid}"


def _worker(executor: _Gated, slots: int) -> EpisodeWorker:
    spec = WorkerSpec(model="openai:stub", settings=RunSettings(), store="none.duckdb", store_id=None, limiter=None)
    worker = EpisodeWorker(spec, name="w", slots=slots)
    worker._executors["k"] = executor  # type: ignore[assignment]  # what configure() builds, stubbed
    return worker


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_finished_jobs_successor_starts_before_the_rest_of_its_wave_is_handled() -> None:
    async def scenario() -> tuple[list[str], list[tuple[int, Any]], int]:
        executor = _Gated()
        worker = _worker(executor, slots=2)
        await worker.submit("k", [(i, Job(qid=f"q{i}", run_index=0, question=None)) for i in range(4)])
        await _settle()
        assert [e for e in executor.events if e.startswith("start")] == ["start q0", "start q1"]  # its share
        # runs, the rest waits queued
        executor.gates["q0"].set_result(None)  # both replies of the wave arrive together
        executor.gates["q1"].set_result(None)
        await _settle()
        for qid in ("q2", "q3"):
            executor.gates[qid].set_result(None)
        await _settle()
        rows = await worker.collect("k")
        await worker.close()
        return executor.events, rows, executor.most

    events, rows, most = asyncio.run(scenario())
    ends = [e for e in events if not e.startswith(("send", "row"))]
    assert ends[:5] == ["start q0", "start q1", "end q0", "start q2", "end q1"]
    assert sorted(rows) == [(0, "row q0"), (1, "row q1"), (2, "row q2"), (3, "row q3")]
    assert most == 2


def test_a_waves_rows_are_built_after_its_successors_requests_left() -> None:
    async def scenario() -> list[str]:
        executor = _Gated()
        worker = _worker(executor, slots=2)
        await worker.submit("k", [(i, Job(qid=f"q{i}", run_index=0, question=None)) for i in range(4)])
        await _settle()
        executor.gates["q0"].set_result(None)  # both replies of the wave arrive together
        executor.gates["q1"].set_result(None)
        await _settle()
        rows = await worker.collect("k")
        assert sorted(rows) == [(0, "row q0"), (1, "row q1")]
        await worker.close()
        return executor.events

    events = asyncio.run(scenario())
    assert events[4:] == ["end q0", "start q2", "end q1", "start q3", "send q2", "send q3", "row q0", "row q1"]


def test_a_row_that_cannot_be_built_is_an_error_row() -> None:
    class Broken(_Gated):
        def row(self, job: Job, outcome: str, latency_s: float, started_at: str) -> Any:
            raise ValueError("bad outcome")

    async def scenario() -> list[tuple[int, Any]]:
        executor = Broken()
        worker = _worker(executor, slots=1)
        await worker.submit("k", [(0, Job(qid="a", run_index=0, question=None))])
        await _settle()
        executor.gates["a"].set_result(None)
        rows = await worker.collect("k")
        await worker.close()
        return rows

    assert asyncio.run(scenario()) == [(0, "error a")]


def test_jobs_submitted_later_run_after_the_queue_drained() -> None:
    async def scenario() -> list[tuple[int, Any]]:
        executor = _Gated()
        worker = _worker(executor, slots=3)
        await worker.submit("k", [(0, Job(qid="a", run_index=0, question=None))])
        await _settle()
        executor.gates["a"].set_result(None)
        await _settle()
        first = await worker.collect("k")
        await worker.submit("k", [(1, Job(qid="b", run_index=0, question=None))])
        await _settle()
        executor.gates["b"].set_result(None)
        await _settle()
        return first + await worker.collect("k")

    assert asyncio.run(scenario()) == [(0, "row a"), (1, "row b")]
