"""Fixtures for the policy tests: the crafted store and episodes on it, for both policy versions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clinseek.episode import Episode, EpisodeKey, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY

from .crafted import OTHER, S, T, build_crafted_store


@pytest.fixture(scope="session")
def crafted_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The crafted store (see ``crafted.py``), built once per session."""
    return build_crafted_store(tmp_path_factory.mktemp("crafted") / "crafted.duckdb")


@pytest.fixture(scope="session")
def text_ep(crafted_store: Path) -> Iterator[Episode]:
    """Subject S at T under the text policy (strict ``<``), no target encounter."""
    with build_episode(crafted_store, EpisodeKey(S, T, TEXT_POLICY)) as ep:
        yield ep


@pytest.fixture(scope="session")
def mm_ep(crafted_store: Path) -> Iterator[Episode]:
    """Subject S at T under the multimodal policy (inclusive ``<=``), linked study 901 only."""
    with build_episode(crafted_store, EpisodeKey(S, T, MM_POLICY, study_ids=(901,))) as ep:
        yield ep


@pytest.fixture(scope="session")
def other_ep(crafted_store: Path) -> Iterator[Episode]:
    """The other subject at T under the text policy."""
    with build_episode(crafted_store, EpisodeKey(OTHER, T)) as ep:
        yield ep


@pytest.fixture(scope="session")
def episode_for(crafted_store: Path) -> Callable[..., Episode]:
    """Build an episode of S at T with extra key fields (the caller closes it)."""

    def make(**fields: Any) -> Episode:
        return build_episode(crafted_store, EpisodeKey(S, fields.pop("prediction_time", T), **fields))

    return make
