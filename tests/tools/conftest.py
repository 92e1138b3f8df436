"""Fixtures for the tool tests: real episodes on the ingested MIMIC-IV demo and the synthetic store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _tool_cases import CANDIDATES, Case, pick_case, store_fixture


@pytest.fixture(scope="session", params=["demo_store", "synthetic_store"])
def case(request: pytest.FixtureRequest) -> Case:
    """One case on each store (the tests using it run once per store)."""
    return pick_case(store_fixture(request, request.param))


@pytest.fixture(scope="session")
def episode(case: Case) -> Iterator[object]:
    """A sealed text-policy episode for ``case`` with a candidate list (shared, read-only use)."""
    from clinseek.episode import EpisodeKey, build_episode

    key = EpisodeKey(case.subject_id, case.prediction_time)
    ep = build_episode(case.store, key, candidates=CANDIDATES)
    yield ep
    ep.close()
