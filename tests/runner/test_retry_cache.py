"""Retries with backoff on the models' retryable errors, provider limits, and the response cache,
driven through the real SDKs against loopback servers."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from clinseek.models import BadRequest, GenerateConfig, Message, ProviderUnavailable, RateLimited, get_model
from clinseek.runner import CachedModel, ProviderLimiter, ResilientModel, ResponseCache, RetryPolicy
from fakes.llm_servers import OpenAIFake

FAST = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05)
MSGS = [Message.system("s"), Message.user("u")]
CFG = GenerateConfig(timeout_s=2.0)


def _model(server: OpenAIFake, policy: RetryPolicy = FAST) -> ResilientModel:
    return ResilientModel(get_model("openai:gpt-test", base_url=server.url), ProviderLimiter(8), policy)


def test_429_and_500_are_retried_until_success(openai_server: OpenAIFake, api_keys: str) -> None:
    openai_server.script(openai_server.rate_limited(0.01), openai_server.server_error(), openai_server.text("ok"))
    model = _model(openai_server)
    response = anyio.run(lambda: model.generate(MSGS, [], CFG))
    assert response.message.content == "ok" and model.retries == 2
    assert len(openai_server.requests) == 3


def test_a_timeout_is_retried(openai_server: OpenAIFake, api_keys: str) -> None:
    openai_server.script(openai_server.slow(openai_server.text("late"), 3.0), openai_server.text("ok"))
    model = _model(openai_server)
    response = anyio.run(lambda: model.generate(MSGS, [], GenerateConfig(timeout_s=0.5)))
    assert response.message.content == "ok" and model.retries == 1


def test_retries_give_up_with_the_typed_error(openai_server: OpenAIFake, api_keys: str) -> None:
    openai_server.script(*[openai_server.server_error(503)] * 4)
    with pytest.raises(ProviderUnavailable):
        anyio.run(lambda: _model(openai_server).generate(MSGS, [], CFG))


def test_bad_requests_are_not_retried(openai_server: OpenAIFake, api_keys: str) -> None:
    openai_server.script(openai_server.error(400, "bad parameter"), openai_server.text("never"))
    with pytest.raises(BadRequest):
        anyio.run(lambda: _model(openai_server).generate(MSGS, [], CFG))
    assert len(openai_server.requests) == 1


def test_retry_after_is_honoured_and_pauses_the_provider() -> None:
    class Throttled:
        name, supports_native_tools = "fake:x", True

        def __init__(self) -> None:
            self.calls = 0

        async def generate(self, *a, **k):
            self.calls += 1
            if self.calls == 1:
                raise RateLimited("slow", retry_after_s=0.3)
            raise BadRequest("stop")

        async def aclose(self) -> None: ...

    limiter = ProviderLimiter(4)
    model = ResilientModel(Throttled(), limiter, RetryPolicy(max_attempts=2))  # type: ignore[arg-type]
    started = time.monotonic()
    with pytest.raises(BadRequest):
        anyio.run(lambda: model.generate(MSGS))
    assert time.monotonic() - started >= 0.29


def test_request_rate_spaces_calls() -> None:
    class Instant:
        name, supports_native_tools = "fake:x", True

        async def generate(self, *a, **k):
            return None

        async def aclose(self) -> None: ...

    limiter = ProviderLimiter(8, requests_per_s=20)

    async def burst() -> float:
        start = time.monotonic()
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(limiter.call, Instant(), MSGS, [], None)
        return time.monotonic() - start

    assert anyio.run(burst) >= 0.19  # 5 calls at 20/s: the last starts 0.2 s after the first


def test_backoff_is_exponential_capped_and_seeded() -> None:
    import random

    policy = RetryPolicy(base_delay_s=1, max_delay_s=5, seed=3)
    delays = [policy.delay_s(a, random.Random(3)) for a in range(5)]
    assert all(0.5 * min(2**a, 5) <= d <= min(2**a, 5) for a, d in enumerate(delays))
    assert policy.delay_s(0, random.Random(0), retry_after_s=99) == 5


def test_cache_makes_reruns_free_and_identical(openai_server: OpenAIFake, api_keys: str, tmp_path: Path) -> None:
    openai_server.script(openai_server.text("first"), openai_server.text("second"))
    cache = ResponseCache(tmp_path / "cache")

    async def scenario() -> tuple:
        model = CachedModel(get_model("openai:gpt-test", base_url=openai_server.url), cache)
        try:
            one = await model.generate(MSGS, [], CFG)
            two = await model.generate(MSGS, [], CFG)
            other = await model.generate(MSGS, [], GenerateConfig(timeout_s=2.0, seed=7))
        finally:
            await model.aclose()
        return one, two, other

    one, two, other = anyio.run(scenario)
    assert one == two and cache.hits == 1
    assert other.message.content == "second" and len(openai_server.requests) == 2
    assert api_keys not in "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
