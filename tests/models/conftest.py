"""Fixtures of the models tests: loopback fake OpenAI / Anthropic servers (one per test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _models_helpers import SECRET

from fakes.llm_servers import AnthropicFake, OpenAIFake


@pytest.fixture
def openai_server() -> Iterator[OpenAIFake]:
    with OpenAIFake() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicFake]:
    with AnthropicFake() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return SECRET


@pytest.fixture
def anthropic_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return SECRET
