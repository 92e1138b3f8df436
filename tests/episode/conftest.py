"""Fixtures for the episode tests: the crafted store of tests/policy and an episode on it (the module's reader of
the demo store, ``demo_reader``, is in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clinseek.episode import Episode, EpisodeKey, build_episode
from policy.crafted import S, T, build_crafted_store


@pytest.fixture(scope="session")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The crafted store (tests/policy/crafted.py), built once per session."""
    return build_crafted_store(tmp_path_factory.mktemp("episode_store") / "crafted.duckdb")


@pytest.fixture(scope="session")
def sealed(small_store: Path) -> Iterator[Episode]:
    """A text-policy episode of the crafted subject, with one candidate list."""
    with build_episode(
        small_store, EpisodeKey(S, T), candidates={"labevents": ["Creatinine", "Lactate"]}
    ) as ep:
        yield ep
