"""One client per event loop, closed with its loop.

An HTTP client's connections belong to the event loop that opened them: a model built once and called
from several loops (a pre-flight and a run in two ``anyio.run``s, the sync twins, a Ray worker) needs
one client in each, and each must be closed in its own loop. :class:`PerLoop` opens one on a loop's
first :meth:`~PerLoop.get` and closes it as the loop ends (``asyncio.run`` / ``anyio.run`` finalize
the loop's async generators, :meth:`asyncio.loop.shutdown_asyncgens`) or on :meth:`~PerLoop.aclose`.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Held(Generic[T]):
    client: T
    closer: AsyncGenerator[None, None]
    """Started once in the loop, so the loop's end or :meth:`PerLoop.aclose` runs its ``finally``; held
    here, since a loop keeps its async generators only weakly."""


class PerLoop(Generic[T]):
    """One ``T`` per running event loop.

    Args:
        make: opens a client (called in the loop that will use it).
        close: closes one (awaited in its own loop).
    """

    def __init__(self, make: Callable[[], T], close: Callable[[T], Awaitable[None]]) -> None:
        self._make = make
        self._close = close
        self._held: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Held[T]] = weakref.WeakKeyDictionary()

    def __getstate__(self) -> dict[str, object]:
        """Pickled without its clients (a copy in another process opens its own)."""
        return {"make": self._make, "close": self._close}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["make"], state["close"])  # type: ignore[misc]

    async def get(self) -> T:
        """This loop's client (opened, and bound to close with the loop, on the loop's first call)."""
        loop = asyncio.get_running_loop()
        held = self._held.get(loop)
        if held is None:
            client = self._make()
            held = self._held[loop] = _Held(client, self._closed_with_loop(client))
            await anext(held.closer)  # registered with the loop: its end (shutdown_asyncgens) closes the client
        return held.client

    async def _closed_with_loop(self, client: T) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            await self._close(client)

    async def aclose(self) -> None:
        """Close every client still open: this loop's here, another running loop's in that loop (a closed
        loop's was closed as the loop ended)."""
        here = asyncio.get_running_loop()
        held, self._held = dict(self._held), weakref.WeakKeyDictionary()
        for loop, one in held.items():
            if loop is here:
                await one.closer.aclose()
            elif not loop.is_closed() and loop.is_running():
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(one.closer.aclose(), loop))


__all__ = ["PerLoop"]
