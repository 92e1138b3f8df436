"""Worker threads for clinseek's CPU-bound blocking work (DuckDB statements, rendering, tokenizers).

An event loop that runs many questions at once (the runner at concurrency 64, an MCP server) hands their
blocking work to worker threads. anyio's default limiter lets 40 of them run at once; on a machine with 2
usable CPUs they then only take turns on the cores, each time slice starting with cold caches, and the
same work costs ~20 % more CPU (docs/performance.md). :func:`run_cpu_bound` runs such work under one
limiter sized to the usable CPUs instead.

The limiter belongs to the running event loop (an anyio ``RunVar``, as anyio's own default limiter), never
to the process: a sync twin (``EpisodeSession.call_tool``, ``clinseek.run``) runs its own event loop, in a
worker thread if need be, and gets its own tokens, so work holding a token that waits on a sync twin
cannot wait on itself. Ray workers are processes with loops of their own.

A token is taken before the work starts: time limits measured inside the work (the SQL watchdog of
``Limits.sql_timeout_s``) do not count the wait for one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar, TypeVarTuple

import anyio.to_thread
from anyio import CapacityLimiter
from anyio.lowlevel import RunVar

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")

_LIMITER: RunVar[CapacityLimiter] = RunVar("clinseek_cpu_limiter")


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one), at least 1."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if count is not None:
        return max(1, count() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def cpu_limiter() -> CapacityLimiter:
    """The running event loop's limiter of CPU-bound worker threads: :func:`usable_cpus` tokens, created on
    first use in each loop. Its ``total_tokens`` may be changed (a test, a server sharing its cores).

    Raises:
        RuntimeError: no event loop is running in this thread (anyio's ``NoEventLoopError``).
    """
    try:
        return _LIMITER.get()
    except LookupError:
        limiter = CapacityLimiter(usable_cpus())
        _LIMITER.set(limiter)
        return limiter


async def run_cpu_bound(fn: Callable[[*_Ts], _T], *args: *_Ts) -> _T:
    """``fn(*args)`` in a worker thread once the loop's :func:`cpu_limiter` grants a token; its result or exception.

    The calling task is not cancelled while ``fn`` runs (anyio's default): ``fn`` owns resources (a sealed
    database, an open episode) that it must release itself.
    """
    return await anyio.to_thread.run_sync(fn, *args, limiter=cpu_limiter())
