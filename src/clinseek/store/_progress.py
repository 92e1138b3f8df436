"""A per-table rich progress bar fed by DuckDB's query progress (or nothing when disabled)."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

import duckdb
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

T = TypeVar("T")

_POLL_S = 0.1


class TableProgress:
    """One bar per table on stderr; a no-op when ``enabled`` is false.

    DuckDB runs the load in a worker thread while this thread polls
    ``DuckDBPyConnection.query_progress()`` (percent of the running query) into the bar.
    """

    def __init__(self, enabled: bool) -> None:
        self._progress: Progress | None = None
        if enabled:
            self._progress = Progress(
                TextColumn("{task.description:<28}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[note]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )

    def __enter__(self) -> TableProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def skipped(self, name: str, rows: int) -> None:
        """Show a table that was already complete in the store."""
        if self._progress is not None:
            self._progress.add_task(name, total=1, completed=1, note=f"{rows:,} rows (already done)")

    def run(self, con: duckdb.DuckDBPyConnection, name: str, work: Callable[[], T]) -> T:
        """Run ``work`` (which executes on ``con``) with a bar for ``name``; return its result."""
        if self._progress is None:
            return work()
        task = self._progress.add_task(name, total=100.0, note="")
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            future = pool.submit(work)
            try:
                result = self._poll(con, future, task)
            except BaseException:
                con.interrupt()
                raise
        self._progress.update(task, completed=100.0, note=_rows_note(result))
        return result

    def _poll(self, con: duckdb.DuckDBPyConnection, future: concurrent.futures.Future[T], task: TaskID) -> T:
        assert self._progress is not None
        while True:
            try:
                return future.result(timeout=_POLL_S)
            except concurrent.futures.TimeoutError:
                percent = con.query_progress()
                if percent >= 0:
                    self._progress.update(task, completed=min(float(percent), 99.0))


def _rows_note(result: object) -> str:
    rows = result[0] if isinstance(result, tuple) else result
    return f"{rows:,} rows" if isinstance(rows, int) else ""
