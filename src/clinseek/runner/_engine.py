"""The concurrent engine: N workers, one row per job, every row written as soon as it is done."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import StoreError
from ..records import ResultRow
from ._counts import RowCounts
from ._progress import Progress
from ._results import ResultsFile

if TYPE_CHECKING:
    from ._outage import EndpointWatch


@dataclass(frozen=True, slots=True)
class Job:
    """One (question, run_index) to run; ``question`` is the benchmark's question object."""

    qid: str
    run_index: int
    question: Any


Execute = Callable[[Job], Awaitable[ResultRow]]
OnError = Callable[[Job, BaseException], ResultRow]


async def run_jobs(
    jobs: Sequence[Job],
    execute: Execute,
    on_error: OnError,
    results: ResultsFile,
    *,
    concurrency: int,
    progress: Progress | None = None,
    watch: EndpointWatch | None = None,
) -> RowCounts:
    """Run ``jobs`` with at most ``concurrency`` in flight; append each row when it finishes.

    ``execute`` turns a job into a row (it records infrastructure failures itself); an exception
    escaping it is a harness bug or a cancelled provider call, and ``on_error`` turns it into an
    ``infra_error`` row so the job is redone on resume. Rows are written in completion order and
    not kept (``read_results`` reads them back). ``watch`` (the model's :class:`~._outage.EndpointWatch`):
    once it says the endpoint is gone, no job starts and the jobs in flight are cancelled (no row: a
    cancelled job is not half-written), and the run stops.

    Returns:
        The totals of the rows written by this call.

    Raises:
        StoreError: a row failed because the store file cannot be read (truncated or damaged): that
            row is written (an infra error, redone on resume), the other jobs stop, and the error
            names the file: every later job would fail the same way.
        EndpointGone: ``watch`` found the model endpoint gone (the rows written stay; the jobs not run get
            none, so a rerun resumes exactly them); it counts them.
    """
    written = RowCounts()
    todo = iter(jobs)  # shared by the workers; taking the next job never waits (one event loop thread)

    def gone(tg: anyio.abc.TaskGroup) -> bool:
        if watch is not None and watch.gone:
            tg.cancel_scope.cancel()  # the jobs in flight stop (no row); no job starts
            return True
        return False

    async def worker(tg: anyio.abc.TaskGroup) -> None:
        for job in todo:
            if gone(tg):
                return
            try:
                row = await execute(job)
            except Exception as exc:  # an escape is recorded as an infra error, not lost
                row = on_error(job, exc)
            results.append(row)
            written.add(row)
            if progress is not None:
                progress.update(row)
            failure = store_failure(row)
            if failure is not None:
                raise failure
            if gone(tg):
                return

    try:
        async with anyio.create_task_group() as tg:
            for _ in range(max(1, min(concurrency, len(jobs)))):
                tg.start_soon(worker, tg)
    except BaseExceptionGroup as group:
        found = group.subgroup(StoreError)
        if found is None:
            raise
        raise _first(found) from None
    if watch is not None and watch.gone and written.rows < len(jobs):
        raise watch.error(len(jobs) - written.rows, written.infra_errors)
    return written


def store_failure(row: ResultRow) -> StoreError | None:
    """The ``StoreError`` a row records (its store cannot be read: every later job would fail alike), else ``None``."""
    if row.status == "infra_error" and row.error_type == StoreError.__name__:
        return StoreError((row.error or "").removeprefix(f"{StoreError.__name__}: "))
    return None


def _first(group: BaseExceptionGroup[StoreError]) -> StoreError:
    inner = group.exceptions[0]
    return inner if isinstance(inner, StoreError) else _first(inner)
