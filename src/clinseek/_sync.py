"""Run a coroutine function to completion from synchronous code.

The sync functions of the front door (``clinseek.run``, ``EpisodeSession.call_tool`` ...) only wrap their
async twins with :func:`run_sync`, at the edge, as inspect_ai's ``eval()`` wraps ``eval_async()``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from ._threads import running_inline
from .errors import ClinseekError

_P = ParamSpec("_P")
_T = TypeVar("_T")


def run_sync(fn: Callable[_P, Coroutine[Any, Any, _T]], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``await fn(*args, **kwargs)`` on a new event loop (anyio's asyncio backend) and return its result.

    Called from blocking work that :func:`clinseek._threads.run_cpu_bound` runs inline on a loop's thread, the
    new loop runs on a thread of its own (as it would have in a worker thread) while this one waits.

    Raises:
        ClinseekError: called from inside a running event loop (a notebook cell, an async server); the
            message names the async twin to await there instead.
    """
    import anyio

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop in this thread: the edge
        return anyio.run(functools.partial(fn, *args, **kwargs))
    if running_inline():  # blocking work that run_cpu_bound ran on its loop's thread: as in a worker thread
        return _on_own_thread(functools.partial(anyio.run, functools.partial(fn, *args, **kwargs)))
    name = getattr(fn, "__qualname__", "the async twin")
    raise ClinseekError(f"a sync clinseek function was called inside a running event loop: await {name}(...) there")


def _on_own_thread(run: Callable[[], _T]) -> _T:
    """``run()`` on a thread of its own, waited for; its result or exception."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="clinseek-sync-twin") as pool:
        return pool.submit(run).result()


def sync_twin(fn: Callable[_P, Coroutine[Any, Any, _T]]) -> Callable[_P, _T]:
    """The sync function of the async ``fn`` (named ``fn``'s name without ``_async``): same parameters, runs
    ``fn`` with :func:`run_sync`. ``inspect.signature`` and ``help()`` show ``fn``'s parameters."""
    name = fn.__name__.removesuffix("_async")

    @functools.wraps(fn)
    def sync(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        return run_sync(fn, *args, **kwargs)

    sync.__name__ = name
    sync.__qualname__ = fn.__qualname__.removesuffix("_async")
    sync.__doc__ = (f"Sync twin of :func:`{fn.__name__}`: the same arguments and result (not inside a running "
                    f"event loop: await ``{fn.__name__}`` there).\n\n{fn.__doc__ or ''}")
    return sync
