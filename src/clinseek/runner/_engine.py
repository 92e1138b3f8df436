"""The concurrent engine: N workers, one row per job, every row written as soon as it is done."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from ..errors import StoreError
from ..records import ResultRow
from ._counts import RowCounts
from ._progress import Progress
from ._results import ResultsFile


@dataclass(frozen=True, slots=True)
class Job:
    """One (question, run_index) to run; ``question`` is the benchmark's question object."""

    qid: str
    run_index: int
    question: Any


Execute = Callable[[Job], Awaitable[Any]]
OnError = Callable[[Job, BaseException], ResultRow]
Finish = Callable[[Job, Any], ResultRow]


def _as_row(job: Job, done: Any) -> ResultRow:
    """``execute``'s result when it is the row already (no ``finish``)."""
    row: ResultRow = done
    return row


async def run_jobs(
    jobs: Sequence[Job],
    execute: Execute,
    on_error: OnError,
    results: ResultsFile,
    *,
    concurrency: int,
    progress: Progress | None = None,
    finish: Finish = _as_row,
) -> RowCounts:
    """Run ``jobs`` with at most ``concurrency`` in flight; append each row when it finishes.

    ``execute`` runs a job up to its result and ``finish(job, result)`` turns that into the row
    (default: ``execute`` returns the row itself). ``execute`` records infrastructure failures itself;
    an exception escaping it is a harness bug or a cancelled provider call, and ``on_error`` turns it
    into an ``infra_error`` row so the job is redone on resume (as it does for an exception of
    ``finish``). Rows are written in completion order and not kept (``read_results`` reads them back).

    A worker starts its next job in the same step of the event loop as the previous job's result
    comes back, and rows are built and written two steps later: replies that arrive together are
    handled in one step, each successor's first request leaves in the next (aiohttp writes a request
    body from a task of its own), and the rows of the wave come after those requests, not before
    them (as a Ray worker does, docs/ray.md "Session 11"). Every finished job's row is written before
    this returns or raises, cancelled or not.

    Returns:
        The totals of the rows written by this call.

    Raises:
        StoreError: a row failed because the store file cannot be read (truncated or damaged): that
            row is written (an infra error, redone on resume), the other jobs stop, and the error
            names the file: every later job would fail the same way.
    """
    written = RowCounts()
    todo = iter(jobs)  # shared by the workers; taking the next job never waits (one event loop thread)
    tails: list[tuple[Job, Any, Exception | None]] = []
    """Jobs finished whose rows are not written yet: (job, ``execute``'s result, or the exception it raised)."""
    stopped: list[BaseException] = []
    """What stopped the run from a deferred write: a ``StoreError`` row's error, or the write's own failure."""
    due = False
    scope: anyio.CancelScope | None = None

    def write_rows() -> None:
        nonlocal due
        due = False
        done, tails[:] = list(tails), []
        for job, result, exc in done:
            try:
                row = on_error(job, exc) if exc is not None else finish(job, result)
            except Exception as err:  # a row that cannot be built is recorded, not lost
                row = on_error(job, err)
            results.append(row)
            written.add(row)
            if progress is not None:
                progress.update(row)
            failure = store_failure(row)
            if failure is not None and not stopped:
                stopped.append(failure)

    def write_later() -> None:  # a loop callback: what it raises must stop the run, not go to the loop's log
        try:
            write_rows()
        except BaseException as err:
            stopped.append(err)
        if stopped and scope is not None:
            scope.cancel()  # a store that cannot be read fails every later job alike

    def ended(job: Job, result: Any, exc: Exception | None) -> None:
        nonlocal due
        tails.append((job, result, exc))
        if due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another backend (trio): at once
            write_later()
            return
        due = True
        loop.call_soon(loop.call_soon, write_later)  # two steps: behind the sends the next step makes

    async def worker() -> None:
        for job in todo:
            if stopped:
                return
            try:
                result = await execute(job)
            except Exception as exc:  # an escape is recorded as an infra error, not lost
                ended(job, None, exc)
            else:
                ended(job, result, None)

    try:
        async with anyio.create_task_group() as tg:
            scope = tg.cancel_scope
            for _ in range(max(1, min(concurrency, len(jobs)))):
                tg.start_soon(worker)
    finally:
        scope = None
        write_later()  # the last wave's rows, and a stopped or cancelled run's finished jobs
    if stopped:
        raise stopped[0]
    return written


def store_failure(row: ResultRow) -> StoreError | None:
    """The ``StoreError`` a row records (its store cannot be read: every later job would fail alike), else ``None``."""
    if row.status == "infra_error" and row.error_type == StoreError.__name__:
        return StoreError((row.error or "").removeprefix(f"{StoreError.__name__}: "))
    return None
