"""Agent test fixtures: loopback fake LLM servers, a test key, and real episodes of the MIMIC-IV demo store."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from _agent_helpers import make_question, store_admissions

from clinseek.bench import Question, episode_key
from clinseek.episode import StoreReader, build_episode
from clinseek.tools import ToolContext

SECRET = "sk-agent-test-SECRET-0a1b2c3d4e5f"


@pytest.fixture
def api_keys(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return SECRET


@pytest.fixture(scope="session")
def demo_question(demo_store: Path) -> Question:
    """A yes/no question one day into the demo's first admission."""
    subject_id, _, admittime = store_admissions(demo_store, 1)[0]
    return make_question(subject_id, admittime + dt.timedelta(days=1))


@pytest.fixture
def demo_ctx(demo_reader: StoreReader, demo_question: Question) -> Iterator[ToolContext]:
    """A fresh tool context on the question's own sealed episode (built from the module's reader of the demo store,
    as a run builds its episodes)."""
    with build_episode(demo_reader, episode_key(demo_question)) as episode:
        yield ToolContext(episode=episode)
