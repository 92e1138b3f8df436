"""The worker threads of CPU-bound work: one limiter per event loop sized to the usable CPUs; a tool call's time
limit does not count the wait for a thread; work holding a thread may call a sync twin without a deadlock."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from _tool_cases import pick_case

from clinseek._threads import cpu_limiter, run_cpu_bound, usable_cpus
from clinseek.agent import EpisodeSession, open_session
from clinseek.episode import EpisodeKey
from clinseek.tools import Limits, call_tool

_SQL = {"sql_query": "SELECT count(*) AS n FROM admissions"}


@pytest.fixture()
def session(synthetic_store: Path) -> Iterator[EpisodeSession]:
    case = pick_case(synthetic_store)
    with open_session(synthetic_store, EpisodeKey(case.subject_id, case.prediction_time),
                      limits=Limits(sql_timeout_s=0.5)) as opened:
        yield opened


def test_one_limiter_per_event_loop_sized_to_the_usable_cpus() -> None:
    if hasattr(os, "sched_getaffinity"):
        assert usable_cpus() == len(os.sched_getaffinity(0))

    async def limiters() -> tuple[object, object, float]:
        first = cpu_limiter()
        return first, cpu_limiter(), first.total_tokens

    first, again, tokens = anyio.run(limiters)
    other, _, _ = anyio.run(limiters)
    assert first is again and other is not first
    assert tokens == usable_cpus()


def test_a_tool_call_waiting_for_a_thread_is_not_timed_out(session: EpisodeSession) -> None:
    """Its SQL time limit (0.5 s) starts when the query does, not while it waits 0.8 s for the only token."""
    release = threading.Event()

    async def main() -> tuple[str | None, bool]:
        limiter = cpu_limiter()
        limiter.total_tokens = 1
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_cpu_bound, release.wait)
            while limiter.borrowed_tokens < 1:
                await anyio.sleep(0.001)
            outcome: list[str | None] = []

            async def query() -> None:
                result = await call_tool(session.context, "ehr.run_sql_query", _SQL)
                outcome.append(result.error_kind if not result.ok else None)

            tg.start_soon(query)
            while limiter.statistics().tasks_waiting < 1:
                await anyio.sleep(0.001)
            await anyio.sleep(0.8)
            ran_early = bool(outcome)  # the query must still be waiting: one token, held by release.wait
            release.set()
        return outcome[0], ran_early

    error_kind, ran_early = anyio.run(main)
    assert not ran_early
    assert error_kind is None


def test_work_holding_the_only_token_may_call_a_sync_twin(session: EpisodeSession) -> None:
    """A sync twin runs its own event loop with its own tokens: no deadlock on the caller's."""
    done: list[bool] = []

    async def main() -> None:
        cpu_limiter().total_tokens = 1
        reply = await run_cpu_bound(session.call_tool, "ehr.run_sql_query", _SQL)
        done.append(reply.ok)

    runner = threading.Thread(target=anyio.run, args=(main,), daemon=True)
    runner.start()
    runner.join(60)
    assert done == [True]
