"""The time limit of episode queries: one watchdog thread per store reader instead of a timer thread per query."""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable

_IDLE = math.inf
"""A watch's deadline while no query runs (and its queued time while the watchdog holds no entry of it)."""

RETRY_S = 0.01
"""How often a query still running past its deadline is interrupted again: DuckDB ignores an interrupt that
lands before its statement starts (a thread stalled between arming the limit and starting it)."""

Arm = Callable[[Callable[[], None]], Callable[[], bool]]
"""Arms a statement's time limit, called with the function that interrupts the statement right before it starts;
returns whether the limit has passed already (the caller asks once more right before starting it and does not
start a statement whose limit has passed)."""


class Watch:
    """The time limit of one episode's queries, which run one at a time (the episode's lock).

    :meth:`start` arms it for the next query and :meth:`stop` disarms it: two attribute writes and a
    clock read, without a lock or a heap push in the common case. The watchdog holds at most a few
    entries per watch: it pushes one only when no entry it holds is due before the new deadline
    (the first query, a query after an idle spell longer than its time limit, a shorter limit), and
    when an entry falls due while a later query runs, it re-queues that query's deadline instead of
    firing. ``callback(query)`` runs on the watchdog thread once a query's deadline has passed while
    it still runs; the callback must itself check that ``query`` (the number :meth:`start` returned)
    is still the running one, under the same lock the caller holds around :meth:`start`. A query still
    running :data:`RETRY_S` after its callback ran gets it again (the first interrupt may have landed before the
    statement started), until :meth:`stop`.
    """

    __slots__ = ("_callback", "_dog", "deadline", "query", "queued")

    def __init__(self, dog: Watchdog, callback: Callable[[int], None]) -> None:
        self._dog = dog
        self._callback = callback
        self.deadline = _IDLE
        """``time.monotonic()`` past which the running query is interrupted; ``inf`` while none runs."""
        self.query = 0
        """The number of the query started last."""
        self.queued = _IDLE
        """The earliest time an entry of this watch the watchdog holds falls due (``inf``: none known)."""

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self.deadline != _IDLE

    def start(self, timeout_s: float) -> int:
        """Arm the limit for a query starting now; returns its number (what the callback gets).

        Raises:
            RuntimeError: the watchdog is closed.
        """
        deadline = time.monotonic() + timeout_s
        self.query += 1
        self.deadline = deadline  # written before ``queued`` is read; the watchdog clears ``queued`` before reading it
        if deadline < self.queued:
            self._dog._queue(self, deadline)
        return self.query

    def stop(self) -> None:
        """Disarm the limit: the query ended (its callback is not called for it any more)."""
        self.deadline = _IDLE

    def passed(self) -> bool:
        """Whether the running query's deadline has passed (``False`` while none runs)."""
        return time.monotonic() >= self.deadline


class Watchdog:
    """Calls a query's interrupt callback when its deadline passes, unless the query ended first.

    One daemon thread (started on first use) sleeps until the earliest entry falls due; an episode's
    queries are watched through one :class:`Watch` (:meth:`watch`). The callback runs on the
    watchdog thread, outside its lock.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Watch]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def watch(self, callback: Callable[[int], None]) -> Watch:
        """A new :class:`Watch` (one per episode) whose expired queries go to ``callback(query)``.

        Raises:
            RuntimeError: the watchdog is closed.
        """
        if self._closed:
            raise RuntimeError("the watchdog is closed")
        return Watch(self, callback)

    def _queue(self, watch: Watch, due: float) -> None:
        with self._cond:
            if self._closed:
                raise RuntimeError("the watchdog is closed")
            earliest = not self._heap or due < self._heap[0][0]
            heapq.heappush(self._heap, (due, next(self._order), watch))
            watch.queued = min(watch.queued, due)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="clinseek-query-watchdog", daemon=True)
                self._thread.start()
            elif earliest:
                self._cond.notify()

    def _loop(self) -> None:
        while True:
            expired: list[tuple[Watch, int]] = []
            with self._cond:
                while not self._closed:
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    if wait is not None and wait <= 0:
                        break
                    self._cond.wait(wait)
                if self._closed:
                    return
                now = time.monotonic()
                while self._heap and self._heap[0][0] <= now:
                    watch = heapq.heappop(self._heap)[2]
                    watch.queued = _IDLE  # cleared before the query is read: a query starting meanwhile queues itself
                    query, deadline = watch.query, watch.deadline
                    if deadline <= now:  # interrupted now, and again until it stops (see RETRY_S)
                        expired.append((watch, query))
                        deadline = now + RETRY_S
                    if deadline != _IDLE:  # still running, or a later query runs: watch its deadline
                        heapq.heappush(self._heap, (deadline, next(self._order), watch))
                        watch.queued = min(watch.queued, deadline)
            for watch, query in expired:
                watch._callback(query)

    def close(self) -> None:
        """Stop the thread (pending watches are dropped; starting a watched query then raises). Idempotent."""
        with self._cond:
            self._closed = True
            for _, _, watch in self._heap:
                watch.queued = _IDLE
            self._heap.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
