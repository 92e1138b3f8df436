"""The time limit of episode queries: one watchdog thread per store reader instead of a timer thread per query."""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable


class Watch:
    """One query being watched; :meth:`Watchdog.done` ends the watch (its callback is then never called)."""

    __slots__ = ("active", "callback")

    def __init__(self, callback: Callable[[], None]) -> None:
        self.active = True
        self.callback = callback


class Watchdog:
    """Calls a query's interrupt callback when its deadline passes, unless the query ended first.

    One daemon thread (started on first use) sleeps until the earliest deadline; starting and ending
    a watch costs a heap push and a flag, and wakes the thread only when the new deadline is the
    earliest. The callback runs on the watchdog thread and must itself make sure it interrupts the
    query it was given for (the episode checks that the query is still the one running).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Watch]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def watch(self, timeout_s: float, callback: Callable[[], None]) -> Watch:
        """Start watching: ``callback()`` runs once ``timeout_s`` seconds have passed, unless :meth:`done` ran."""
        entry = Watch(callback)
        deadline = time.monotonic() + timeout_s
        with self._cond:
            if self._closed:
                raise RuntimeError("the watchdog is closed")
            earliest = not self._heap or deadline < self._heap[0][0]
            heapq.heappush(self._heap, (deadline, next(self._order), entry))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="clinseek-query-watchdog", daemon=True)
                self._thread.start()
            elif earliest:
                self._cond.notify()
        return entry

    @staticmethod
    def done(entry: Watch) -> None:
        """End a watch (the query finished); its callback will not be called."""
        entry.active = False

    def _loop(self) -> None:
        while True:
            due: list[Watch] = []
            with self._cond:
                while not self._closed:
                    while self._heap and not self._heap[0][2].active:
                        heapq.heappop(self._heap)  # finished queries: dropped without waiting for their deadline
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    if wait is not None and wait <= 0:
                        break
                    self._cond.wait(wait)
                if self._closed:
                    return
                now = time.monotonic()
                while self._heap and self._heap[0][0] <= now:
                    entry = heapq.heappop(self._heap)[2]
                    if entry.active:
                        due.append(entry)
            for entry in due:
                if entry.active:
                    entry.callback()

    def close(self) -> None:
        """Stop the thread (pending watches are dropped). Idempotent."""
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
