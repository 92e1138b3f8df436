"""Runner test fixtures: loopback fake LLM servers and a test API key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _runner_helpers import SECRET

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
def api_keys(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return SECRET


TASKS = ("Inpatient_Mortality", "ED_Hospitalization", "labevents", "omr", "transfers")


@pytest.fixture(scope="session")
def demo_bench(demo_store, tmp_path_factory: pytest.TempPathFactory):
    """A small benchmark built from the MIMIC-IV demo store (2 questions per task)."""
    from clinseek.bench import build_benchmark, load_questions

    out = tmp_path_factory.mktemp("demo_bench") / "bench"
    build_benchmark(demo_store, tasks=list(TASKS), per_task=2, seed=42, out=out)
    return out, load_questions(out)
