"""A progress display: done/total, errors, tokens, cost so far and ETA.

On a terminal it is rich's live bar; when the output is not a terminal (a log file, a pipe, CI)
it prints plain, complete lines instead (about every tenth of the run, and a final one), since a
live bar there is cut at 80 columns.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

from ..records import ResultRow

_REFRESH_PER_S = 2.0
"""Redraws of the live bar per second (rich's default is 10): each redraw holds the interpreter lock
for about a millisecond in rich's refresh thread, while the event loop waits with replies to handle."""


class Progress:
    """Live counters of one run; shown with rich when ``enabled`` (tests keep it off)."""

    def __init__(self, total: int, label: str, *, enabled: bool = True, console: Console | None = None) -> None:
        self.total = total
        self.done = 0
        self.infra_errors = 0
        self.no_answer = 0
        self.tokens = 0
        self.cost_usd = 0.0
        self.cost_known = True
        self._bar: RichProgress | None = None
        self._task = None
        self._label = label
        self._plain: Console | None = None
        self._every = max(1, total // 10)
        self._started = time.perf_counter()
        console = console or Console()
        if enabled and not console.is_terminal:
            self._plain = console
        elif enabled:
            self._bar = RichProgress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
                transient=False,
                refresh_per_second=_REFRESH_PER_S,
            )
            self._task = self._bar.add_task(label, total=total, stats=self.stats())

    def stats(self) -> str:
        """One-line counters: errors, no-answer, tokens and cost (``?`` when a price is unknown)."""
        cost = f"${self.cost_usd:.4f}" if self.cost_known else f">=${self.cost_usd:.4f} (some prices unknown)"
        return f"errors {self.infra_errors}  no-answer {self.no_answer}  tokens {self.tokens:,}  cost {cost}"

    def resumed(self, count: int) -> None:
        """Count ``count`` rows already done before this run (resume)."""
        self.done += count
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=count, stats=self.stats())
        if self._plain is not None and count:
            self._line(f"resumed {count}")

    def update(self, row: ResultRow) -> None:
        """Count one finished row."""
        self.done += 1
        self.infra_errors += row.status == "infra_error"
        self.no_answer += row.status == "no_answer"
        self.tokens += row.usage.total_tokens
        if row.cost_usd is None:
            self.cost_known = self.cost_known and not row.calls
        else:
            self.cost_usd += row.cost_usd
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=1, stats=self.stats())
        if self._plain is not None and self.done % self._every == 0 and self.done < self.total:
            self._line()

    def _line(self, note: str = "") -> None:
        """One plain progress line, never wrapped or cut (non-terminal output)."""
        assert self._plain is not None
        elapsed = time.perf_counter() - self._started
        text = f"{self._label}: {self.done}/{self.total}  {self.stats()}  elapsed {elapsed:.0f}s"
        self._plain.print(f"{text}  {note}".rstrip(), markup=False, highlight=False, soft_wrap=True)

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
        if self._plain is not None:
            self._line("(finished)" if exc_type is None else "(stopped)")
