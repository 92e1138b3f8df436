"""Run a coroutine function to completion from synchronous code.

The sync functions of the front door (``clinseek.run``, ``EpisodeSession.call_tool`` ...) only wrap their
async twins with :func:`run_sync`, at the edge, as inspect_ai's ``eval()`` wraps ``eval_async()``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from .errors import ClinseekError

_P = ParamSpec("_P")
_T = TypeVar("_T")


def run_sync(fn: Callable[_P, Coroutine[Any, Any, _T]], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``await fn(*args, **kwargs)`` on a new event loop (anyio's asyncio backend) and return its result.

    Raises:
        ClinseekError: called from inside a running event loop (a notebook cell, an async server); the
            message names the async twin to await there instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop in this thread: the edge
        import anyio

        return anyio.run(functools.partial(fn, *args, **kwargs))
    name = getattr(fn, "__qualname__", "the async twin")
    raise ClinseekError(f"a sync clinseek function was called inside a running event loop: await {name}(...) there")


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
