"""The open episodes of the HTTP mode: opened on a token's first request, shared by its clients, closed when idle.

Memory is bounded by ``max_open``: a request for a token whose episode is not open, when ``max_open``
episodes are, closes the least recently used one that no request holds, or is refused with "busy"
when every one is in use. An episode no request held for ``idle_close_s`` seconds, or whose token was
revoked or has expired, is closed by :meth:`EpisodePool.close_idle` (the server runs it periodically).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

from ..agent import EpisodeSession
from ..errors import ClinseekError
from ._tokens import TokenRecord

logger = logging.getLogger(__name__)


class PoolBusy(ClinseekError):
    """Every open episode is in use and no other can be opened now (``max_open``)."""


@dataclass
class _Entry:
    record: TokenRecord
    session: EpisodeSession | None = None
    opened: anyio.Event = field(default_factory=anyio.Event)
    leases: int = 0
    last_used: float = 0.0


class EpisodePool:
    """Episodes by token id, each opened once however many requests ask for it at the same time.

    Args:
        opener: opens a token's episode (``open_spec`` of its spec).
        max_open: episodes open at most.
        idle_close_s: an episode no request held for this long is closed.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, opener: Callable[[TokenRecord], Awaitable[EpisodeSession]], *, max_open: int = 16,
                 idle_close_s: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        if max_open < 1 or idle_close_s <= 0:
            raise ClinseekError(f"max_open {max_open} and idle_close_s {idle_close_s} must be positive")
        self._opener = opener
        self.max_open = max_open
        self.idle_close_s = idle_close_s
        self.clock = clock
        self._entries: dict[str, _Entry] = {}
        self._lock = anyio.Lock()
        self.opened_total = 0
        """Episodes opened since the pool started (a token reopened after an idle close counts again)."""

    @property
    def open_ids(self) -> list[str]:
        """Token ids whose episode is open or opening."""
        return list(self._entries)

    @asynccontextmanager
    async def lease(self, record: TokenRecord) -> AsyncIterator[EpisodeSession]:
        """The open episode of ``record`` (opened now if needed), held until the block ends.

        Raises:
            PoolBusy: ``max_open`` episodes are open and all are in use.
            ClinseekError: the episode cannot be opened (what ``open_spec`` raises).
        """
        entry = await self._acquire(record)
        try:
            assert entry.session is not None
            yield entry.session
        finally:
            entry.leases -= 1
            entry.last_used = self.clock()

    async def _acquire(self, record: TokenRecord) -> _Entry:
        while True:
            victim: _Entry | None = None
            async with self._lock:
                entry = self._entries.get(record.id)
                if entry is not None and entry.session is not None:
                    entry.leases += 1
                    return entry
                opener = entry is None
                if entry is None:
                    if len(self._entries) >= self.max_open:
                        victim = self._least_recent_unused()
                        if victim is None:
                            raise PoolBusy(f"{self.max_open} episodes are open and in use; try again shortly")
                        del self._entries[victim.record.id]
                    entry = self._entries[record.id] = _Entry(record)
            if victim is not None and victim.session is not None:
                logger.info("closing episode %s to open %s (max_open %d)", victim.record.id, record.id, self.max_open)
                await victim.session.aclose()
            if opener:
                return await self._open(entry)
            await entry.opened.wait()  # opened (or failed) by another request: look again under the lock

    async def _open(self, entry: _Entry) -> _Entry:
        try:
            session = await self._opener(entry.record)
        except BaseException:
            async with self._lock:
                self._entries.pop(entry.record.id, None)
            entry.opened.set()
            raise
        async with self._lock:
            entry.session = session
            entry.leases += 1
            entry.last_used = self.clock()
            self.opened_total += 1
        entry.opened.set()
        logger.info("opened episode %s: %s", entry.record.id, entry.record.spec.describe())
        return entry

    def _least_recent_unused(self) -> _Entry | None:
        unused = [e for e in self._entries.values() if e.session is not None and e.leases == 0]
        return min(unused, key=lambda e: e.last_used) if unused else None

    async def close_idle(self, valid_ids: Collection[str] | None = None) -> list[str]:
        """Close the episodes no request holds that were idle ``idle_close_s`` seconds or whose token is not
        in ``valid_ids`` (revoked or expired); returns their token ids."""
        now = self.clock()
        async with self._lock:
            done = [e for e in self._entries.values() if e.session is not None and e.leases == 0 and (
                now - e.last_used >= self.idle_close_s or (valid_ids is not None and e.record.id not in valid_ids))]
            for entry in done:
                del self._entries[entry.record.id]
        for entry in done:
            assert entry.session is not None
            await entry.session.aclose()
            logger.info("closed idle episode %s", entry.record.id)
        return [e.record.id for e in done]

    async def aclose(self) -> None:
        """Close every open episode (at server shutdown)."""
        async with self._lock:
            entries, self._entries = list(self._entries.values()), {}
        for entry in entries:
            if entry.session is not None:
                await entry.session.aclose()
