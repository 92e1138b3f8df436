"""The progress display's counters: done/total, errors, no-answer, tokens, cost (unknown marked)."""

from __future__ import annotations

import io

from rich.console import Console

from clinseek.records import CallRecord, Usage
from clinseek.runner import Progress, ResultRow


def _row(status: str, cost: float | None, tokens: int) -> ResultRow:
    return ResultRow(qid="q", run_index=0, session_id="s", benchmark="b", task="t", task_type="risk_prediction",
                     mode="agent", model="m:x", config_hash="c", prompt_version="p", policy_version="v",
                     status=status, completed=False, stop_reason="exception", cost_usd=cost,  # type: ignore[arg-type]
                     usage=Usage(input_tokens=tokens), calls=[CallRecord(turn=1, latency_s=0.1)])


def test_counters_and_unknown_cost() -> None:
    progress = Progress(3, "run", enabled=False)
    progress.update(_row("answered", 0.5, 100))
    progress.update(_row("infra_error", 0.25, 10))
    assert progress.stats() == "errors 1  no-answer 0  tokens 110  cost $0.7500"
    progress.update(_row("no_answer", None, 0))
    assert progress.done == 3 and "some prices unknown" in progress.stats()


def test_rich_display_renders_the_counters() -> None:
    out = io.StringIO()
    with Progress(2, "bench agent m", console=Console(file=out, force_terminal=True, width=160)) as progress:
        progress.update(_row("answered", 0.1, 5))
    assert "errors 0" in out.getvalue() and "1/2" in out.getvalue()


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    label = "clinseek-bench-text agent baseline:evidence with a long label that would not fit in 80 columns"
    with Progress(20, label, console=Console(file=out, force_terminal=False, width=80)) as progress:
        for _ in range(20):
            progress.update(_row("answered", 0.1, 5))
    lines = out.getvalue().splitlines()
    assert lines and all(line.startswith(label) for line in lines)
    assert "20/20" in lines[-1] and "cost $2.0000" in lines[-1] and "(finished)" in lines[-1]
    assert len(lines) <= 11  # about every tenth of the run, not one per row
