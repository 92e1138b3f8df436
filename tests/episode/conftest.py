"""Fixtures for the episode tests: the crafted store of tests/policy and an episode on it; a reader of the demo
store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clinseek.episode import Episode, EpisodeKey, StoreReader, build_episode, open_store_reader
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


@pytest.fixture(scope="module")
def demo_reader(demo_store: Path) -> Iterator[StoreReader]:
    """One reader of the demo store per test module: the module's episodes are built from it, as a run builds
    them (a build from the store's path opens and checks the store again, ~0.2-0.4 s per episode)."""
    with open_store_reader(demo_store) as reader:
        yield reader
