"""Runner test fixtures: loopback fake LLM servers and a test API key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakes.llm_servers import AnthropicFake, OpenAIFake

SECRET = "sk-runner-test-SECRET-9f8e7d6c5b4a"


@pytest.fixture
def openai_server() -> Iterator[OpenAIFake]:
    with OpenAIFake() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicFake]:
    with AnthropicFake() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def api_keys(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return SECRET
