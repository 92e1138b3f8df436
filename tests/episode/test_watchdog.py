"""The query watchdog: a query past its limit is interrupted (again every RETRY_S until it stops), whatever ran before
it; one that ended never is."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from clinseek.episode._watchdog import RETRY_S, Watchdog

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
    assert set(calls.queries) == {query} and query == 51  # reported until it stops (see RETRY_S)


def test_a_shorter_limit_after_longer_ones_is_kept(dog: Watchdog) -> None:
    """The watchdog holds an entry for the long limit; the short one must not wait for it."""
    calls = Calls()
    watch = dog.watch(calls)
    watch.start(LONG)
    watch.stop()
    query = watch.start(0.05)
    assert calls.event.wait(10)  # long before the hour
    assert set(calls.queries) == {query}


def test_a_query_running_when_an_earlier_entry_falls_due_is_watched_to_its_own_deadline(dog: Watchdog) -> None:
    """The first query's entry falls due while a later query runs: the later query's deadline is watched, and
    reported once it passes (the earlier query ended and is never reported)."""
    calls = Calls()
    watch = dog.watch(calls)
    watch.start(0.2)
    watch.stop()
    second = watch.start(0.6)  # its deadline is later than the entry the watchdog holds
    assert calls.event.wait(10)
    assert set(calls.queries) == {second}


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
    assert set(calls.queries) == {query}


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
            assert set(calls.queries) == {watch.query}
    assert all(not calls.queries for i, (_, calls) in enumerate(watches) if not i % 2)


def test_a_query_still_running_past_its_limit_is_reported_again_until_it_stops(dog: Watchdog) -> None:
    """An interrupt that landed before the statement started is lost (DuckDB ignores it on an idle connection): the
    query is reported again every RETRY_S while it runs, never once it stopped, and the next query never gets it."""
    calls = Calls()
    watch = dog.watch(calls)
    query = watch.start(0.01)
    deadline = time.monotonic() + 10
    while len(calls.queries) < 3 and time.monotonic() < deadline:
        time.sleep(RETRY_S)
    assert calls.queries[:3] == [query] * 3
    assert watch.passed()
    watch.stop()
    assert not watch.passed()
    seen = len(calls.queries)
    time.sleep(5 * RETRY_S)
    assert len(calls.queries) <= seen + 1  # at most one report already on its way when it stopped
    seen = len(calls.queries)
    watch.start(LONG)  # the next query, within its limit: never reported
    time.sleep(5 * RETRY_S)
    assert len(calls.queries) == seen and not watch.passed()
    watch.stop()


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
