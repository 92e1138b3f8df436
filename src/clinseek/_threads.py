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

**No hand-off without something to overlap.** Handing work to a thread costs CPU of its own (anyio's and
asyncio's machinery on the loop's thread, the work's caches cold in the worker: ~1.2 ms per tool call of a
question, docs/performance.md). It buys nothing when the calling task is the only unfinished task of its
event loop (a sync twin's own loop, the CLI, a script awaiting one call at a time): no other task could run
meanwhile. :func:`run_cpu_bound` then runs the work inline, on the loop's thread, in a copy of the caller's
context; with any other task on the loop (the runner's other questions, an MCP server's reader, inspect_ai's
samples) it hands the work off as above. Time limits hold inline too: the SQL watchdog is a thread of its own
that interrupts DuckDB whichever thread runs the statement. Callbacks without a task (timers, a bare
``asyncio.Protocol``) and coroutines submitted from other threads wait for the inline work to end, as they
would for any synchronous code of that task. Work that may start an event loop of its own (a plug-in tool)
goes through :func:`hand_off`, which always uses a worker thread; a sync twin (:func:`clinseek._sync.run_sync`)
called from inline work runs its loop on a thread of its own.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
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


_INLINE = threading.local()


def alone_on_loop() -> bool:
    """True when the calling task is the only unfinished task of the running asyncio event loop (nothing else
    on the loop could run while it blocks); False under another backend (trio) or outside a task."""
    try:
        current = asyncio.current_task()
    except RuntimeError:  # no running asyncio loop in this thread
        return False
    if current is None:
        return False
    tasks = asyncio.all_tasks()
    return len(tasks) == 1 and current in tasks


def running_inline() -> bool:
    """True inside work that :func:`run_cpu_bound` runs inline on an event loop's thread."""
    return bool(getattr(_INLINE, "depth", 0))


async def run_cpu_bound(fn: Callable[[*_Ts], _T], *args: *_Ts) -> _T:
    """``fn(*args)``: its result or exception. Inline on the loop's thread when the calling task is alone on its
    loop (:func:`alone_on_loop`), else in a worker thread once the loop's :func:`cpu_limiter` grants a token.

    ``fn`` runs in a copy of the caller's context either way. The calling task is not cancelled while ``fn``
    runs (anyio's default for threads; inline work is not interrupted either): ``fn`` owns resources (a sealed
    database, an open episode) that it must release itself. ``fn`` must not start an event loop in its own
    thread (``asyncio.run``); a clinseek sync twin is fine (it moves to a thread of its own when inline).
    """
    if alone_on_loop():
        _INLINE.depth = getattr(_INLINE, "depth", 0) + 1
        try:
            return contextvars.copy_context().run(fn, *args)
        finally:
            _INLINE.depth -= 1
    return await hand_off(fn, *args)


async def hand_off(fn: Callable[[*_Ts], _T], *args: *_Ts) -> _T:
    """``fn(*args)`` in a worker thread once the loop's :func:`cpu_limiter` grants a token, whatever else runs on
    the loop: for work that may start an event loop of its own (a plug-in tool calling ``asyncio.run``)."""
    return await anyio.to_thread.run_sync(fn, *args, limiter=cpu_limiter())
