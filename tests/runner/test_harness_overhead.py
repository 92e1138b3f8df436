"""The runner's per-call savings (issue 6, harness overhead <= 2 %) keep their guarantees.

A worker's next call starts without a trip through the event loop (so it reuses the HTTP connection
its last call released), the provider limiter still caps calls in flight and serves waiters in
order, rows are not kept in memory, the environment is scanned for credentials once per results
file, and the pre-run heap is frozen only while a run lasts. ``benchmarks/runner.py`` measures the
overhead itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from _runner_helpers import curated_questions

from clinseek.models import GenerateConfig, Message
from clinseek.runner import (
    Job,
    ProviderLimiter,
    ResultRow,
    ResultsFile,
    RowCounts,
    read_results,
    run_jobs,
)

MSGS = [Message.system("s"), Message.user("u")]


class _Flag:
    """Set by another task: whether the event loop ran anything else since ``arm``."""

    def __init__(self) -> None:
        self.other_ran = False

    async def arm(self, tg: anyio.abc.TaskGroup) -> None:
        self.other_ran = False

        async def other() -> None:
            self.other_ran = True

        tg.start_soon(other)


def test_a_free_slot_is_taken_without_yielding_to_the_loop() -> None:
    flag = _Flag()
    seen: list[bool] = []

    class Probe:
        name, supports_native_tools = "fake:probe", True

        async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                           config: GenerateConfig | None = None) -> None:
            seen.append(flag.other_ran)

        async def aclose(self) -> None: ...

    async def scenario() -> None:
        limiter = ProviderLimiter(2)
        async with anyio.create_task_group() as tg:
            await flag.arm(tg)
            await limiter.call(Probe(), MSGS, [], None)  # type: ignore[arg-type]

    anyio.run(scenario)
    assert seen == [False]


def test_the_limiter_caps_calls_in_flight_and_serves_waiters_in_order() -> None:
    in_flight, peak, started = [0], [0], []

    class Slow:
        name, supports_native_tools = "fake:slow", True

        async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                           config: GenerateConfig | None = None) -> None:
            started.append(messages[0].content)
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            await anyio.sleep(0.01)
            in_flight[0] -= 1

        async def aclose(self) -> None: ...

    async def scenario() -> None:
        limiter = ProviderLimiter(2)
        async with anyio.create_task_group() as tg:
            for i in range(7):
                tg.start_soon(limiter.call, Slow(), [Message.system(str(i))], [], None)  # type: ignore[arg-type]
                await anyio.sleep(0)  # queue them in a known order
        assert limiter._slots.borrowed_tokens == 0  # every slot given back

    anyio.run(scenario)
    assert peak == [2] and started == [str(i) for i in range(7)]


def test_a_cancelled_caller_gives_its_slot_back() -> None:
    class Hang:
        name, supports_native_tools = "fake:hang", True

        async def generate(self, *a: object, **k: object) -> None:
            await anyio.sleep(10)

        async def aclose(self) -> None: ...

    async def scenario() -> int:
        limiter = ProviderLimiter(1)
        with anyio.move_on_after(0.05):
            await limiter.call(Hang(), MSGS, [], None)  # type: ignore[arg-type]
        return limiter._slots.borrowed_tokens

    assert anyio.run(scenario) == 0


def test_a_worker_starts_its_next_job_without_yielding(tmp_path: Path) -> None:
    flag = _Flag()
    seen: list[tuple[str, bool]] = []
    questions = curated_questions(3)
    jobs = [Job(q.qid, 0, q) for q in questions]
    results = ResultsFile(tmp_path / "results.jsonl")

    async def scenario() -> RowCounts:
        async with anyio.create_task_group() as tg:

            async def execute(job: Job) -> ResultRow:
                seen.append((job.qid, flag.other_ran))
                await flag.arm(tg)  # no yield: another task is only scheduled
                return _row(job.qid)

            counts = await run_jobs(jobs, execute, lambda job, exc: _row(job.qid), results, concurrency=1)
        return counts

    results.open()
    try:
        counts = anyio.run(scenario)
    finally:
        results.close()
    assert [qid for qid, _ in seen] == [q.qid for q in questions]
    assert [other for _, other in seen[1:]] == [False, False]  # the next job followed at once
    assert counts.rows == 3 and len(read_results(tmp_path / "results.jsonl").rows) == 3


def _row(qid: str, status: str = "answered", cost: float | None = 0.5) -> ResultRow:
    return ResultRow(qid=qid, run_index=0, session_id=f"{qid}__run_0", benchmark="b", task="t",
                     task_type="risk_prediction", mode="curated", model="m:x", config_hash="c" * 64,
                     prompt_version="p", policy_version="clinseek-text-v1", status=status,  # type: ignore[arg-type]
                     completed=status == "answered", stop_reason="answer_block", cost_usd=cost)


def test_row_counts_add_up_and_an_unknown_cost_makes_the_total_unknown() -> None:
    counts = RowCounts.of([_row("a"), _row("b", "no_answer"), _row("c", "infra_error")])
    assert (counts.rows, counts.answered, counts.no_answer, counts.infra_errors) == (3, 1, 1, 1)
    assert counts.cost_usd == 1.5
    total = counts + RowCounts.of([_row("d", cost=None)])
    assert total.rows == 4 and total.answered == 2 and total.cost_usd is None and total.known_cost_usd == 1.5


def test_credentials_are_looked_up_once_per_file_not_per_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clinseek.runner._secrets import secret_values

    secret = "sk-once-" + "x" * 16
    monkeypatch.setenv("EXAMPLE_API_KEY", secret)
    lookups: list[int] = []

    def counted() -> list[str]:
        lookups.append(1)
        return secret_values()

    monkeypatch.setattr("clinseek.runner._results.secret_values", counted)
    f = ResultsFile(tmp_path / "results.jsonl")
    f.open()
    for i in range(5):
        row = _row(f"q{i}").model_copy(update={"error": f"echo {secret}"})
        f.append(row)
    f.close()
    assert len(lookups) == 1
    text = (tmp_path / "results.jsonl").read_text()
    assert secret not in text and text.count("[redacted]") == 5
