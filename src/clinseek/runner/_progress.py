"""A rich progress display: done/total, errors, tokens, cost so far and ETA."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

from ._rows import ResultRow


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
        if enabled:
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

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
