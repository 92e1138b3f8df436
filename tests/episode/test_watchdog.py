"""The query watchdog: a query past its limit is interrupted, whatever ran before it; one that ended never is."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from clinseek.episode._watchdog import Watchdog

LONG = 3600.0
"""A limit no test reaches."""


class Calls:
    def __init__(self) -> None:
        self.queries: list[int] = []
        self.event = threading.Event()

    def __call__(self, query: int) -> None:
        self.queries.append(query)
        self.event.set()


@pytest.fixture
def dog() -> Iterator[Watchdog]:
    watchdog = Watchdog()
    yield watchdog
    watchdog.close()


def test_a_query_past_its_limit_gets_its_own_number(dog: Watchdog) -> None:
    calls = Calls()
    watch = dog.watch(calls)
    for _ in range(50):  # quick queries: started and stopped, never reported
        watch.start(LONG)
        watch.stop()
    query = watch.start(0.05)
    assert calls.event.wait(10)
    assert calls.queries == [query] == [51]


def test_a_shorter_limit_after_longer_ones_is_kept(dog: Watchdog) -> None:
    """The watchdog holds an entry for the long limit; the short one must not wait for it."""
    calls = Calls()
    watch = dog.watch(calls)
    watch.start(LONG)
    watch.stop()
    query = watch.start(0.05)
    assert calls.event.wait(10)  # long before the hour
    assert calls.queries == [query]


def test_a_query_running_when_an_earlier_entry_falls_due_is_watched_to_its_own_deadline(dog: Watchdog) -> None:
    """The first query's entry falls due while a later query runs: the later query's deadline is watched, and
    reported once it passes (the earlier query ended and is never reported)."""
    calls = Calls()
    watch = dog.watch(calls)
    watch.start(0.2)
    watch.stop()
    second = watch.start(0.6)  # its deadline is later than the entry the watchdog holds
    assert calls.event.wait(10)
    assert calls.queries == [second]


def test_a_query_after_an_idle_spell_is_watched(dog: Watchdog) -> None:
    calls, other = Calls(), Calls()
    watch, other_watch = dog.watch(calls), dog.watch(other)
    watch.start(0.05)
    watch.stop()
    other_watch.start(0.1)  # falls due after the first watch's entry was dropped
    assert other.event.wait(10)
    assert calls.queries == []
    query = watch.start(0.05)
    assert calls.event.wait(10)
    assert calls.queries == [query]


def test_many_watches_each_report_only_their_expired_query(dog: Watchdog) -> None:
    watches = [(dog.watch(c), c) for c in (Calls() for _ in range(8))]
    for i, (watch, _) in enumerate(watches):
        watch.start(LONG)
        watch.stop()
        if i % 2:
            watch.start(0.05)
    for i, (watch, calls) in enumerate(watches):
        if i % 2:
            assert calls.event.wait(10)
            assert calls.queries == [watch.query]
    assert all(not calls.queries for i, (_, calls) in enumerate(watches) if not i % 2)


def test_a_closed_watchdog_refuses_new_queries() -> None:
    dog = Watchdog()
    watch = dog.watch(Calls())
    watch.start(LONG)
    watch.stop()
    dog.close()
    dog.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        watch.start(LONG)
    with pytest.raises(RuntimeError, match="closed"):
        dog.watch(Calls())
