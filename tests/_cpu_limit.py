"""Checks that blocking work runs on the event loop's CPU limiter (``clinseek._threads.run_cpu_bound``).

:func:`on_the_cpu_limiter` runs ``work`` with anyio's default thread limiter exhausted (its only token held:
work sent through ``anyio.to_thread.run_sync`` without a limiter would wait for ever, and the deadline fails
the test) and the CPU limiter's only token held until ``work`` waits for it, then released.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from clinseek._threads import cpu_limiter

_T = TypeVar("_T")
DEADLINE_S = 120.0
"""Only a guard against a hang (a step on anyio's default limiter); the checks never depend on time."""


async def on_the_cpu_limiter(work: Callable[[], Awaitable[_T]]) -> _T:
    """``work()``'s result; ``work`` had to wait for the CPU limiter's one token before it could go on.

    Raises:
        TimeoutError: ``work`` used anyio's default thread limiter (it never got a thread) or never asked
            the CPU limiter for a token.
    """
    default = anyio.to_thread.current_default_thread_limiter()
    default.total_tokens = 1
    cpu = cpu_limiter()
    cpu.total_tokens = 1
    out: list[_T] = []

    async def run() -> None:
        out.append(await work())

    with anyio.fail_after(DEADLINE_S):
        await default.acquire()
        await cpu.acquire()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                while cpu.statistics().tasks_waiting < 1:
                    await anyio.sleep(0.001)
                cpu.release()
        finally:
            default.release()
    return out[0]
