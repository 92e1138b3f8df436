"""Fixtures of the models tests: loopback fake OpenAI / Anthropic servers (one per test)."""

from __future__ import annotations

import pytest
from _models_helpers import SECRET


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return SECRET


@pytest.fixture
def anthropic_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return SECRET
