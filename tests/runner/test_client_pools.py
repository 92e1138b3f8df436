"""Calls to one endpoint spread over several clients (HTTP connection pools), at most ~32 in flight each."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from clinseek.models import GenerateConfig, Message
from clinseek.runner._routing import POOL_CONNECTIONS, ClientPools, client_count


class _Held:
    """A model whose calls wait until released; counts the calls it has in flight."""

    name = "openai:held"
    supports_native_tools = True

    def __init__(self, release: anyio.Event) -> None:
        self.release = release
        self.in_flight = self.most = 0

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> Any:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        await self.release.wait()
        self.in_flight -= 1
        return "reply"  # what ClientPools passes through untouched

    async def aclose(self) -> None:
        pass


def test_httpx_providers_get_one_client_per_32_calls_in_flight_and_others_one() -> None:
    assert POOL_CONNECTIONS == 32
    assert [client_count("anthropic:claude", c) for c in (1, 32, 33, 256)] == [1, 1, 2, 8]
    assert client_count("bedrock:claude", 128) == client_count("vertex:claude", 128) == 4
    assert client_count("openai:m", 256) == 1  # the SDK's aiohttp transport: one client for any number of calls
    assert client_count("llama-cpp:/models/q.gguf", 256) == 1  # weights, not a connection pool: never duplicated
    assert client_count("baseline:null", 256) == 1


def test_calls_in_flight_are_spread_evenly_over_the_clients() -> None:
    async def main() -> list[int]:
        release = anyio.Event()
        clients = [_Held(release) for _ in range(3)]
        pools = ClientPools(clients)
        assert pools.name == "openai:held" and pools.supports_native_tools
        async with anyio.create_task_group() as tg:
            for _ in range(96):
                tg.start_soon(pools.generate, [])
            await anyio.wait_all_tasks_blocked()
            busy = [c.in_flight for c in clients]
            release.set()
        assert all(c.in_flight == 0 for c in clients)
        return busy

    assert anyio.run(main) == [32, 32, 32]


def test_a_call_goes_to_the_first_client_with_room_and_beyond_that_to_the_least_busy() -> None:
    async def main() -> list[list[int]]:
        release = anyio.Event()
        clients = [_Held(release) for _ in range(2)]
        pools = ClientPools(clients)
        seen = []
        async with anyio.create_task_group() as tg:
            for n in (10, 30, 26):  # 10 to the first; 30 more: 22 to the first, 8 to the second; 26 more: 24 fill the second, 2 spread
                for _ in range(n):
                    tg.start_soon(pools.generate, [])
                await anyio.wait_all_tasks_blocked()
                seen.append([c.in_flight for c in clients])
            release.set()
        return seen

    assert anyio.run(main) == [[10, 0], [32, 8], [33, 33]]


def test_a_local_run_over_two_replicas_holds_80_calls_in_flight_at_once(
        tmp_path: Path, api_keys: str) -> None:
    """Real HTTP to two loopback replicas at concurrency 80 (one aiohttp client each): the server answers
    no question until all 80 calls are in flight at once; every question answered, both replicas used."""
    from _runner_helpers import curated_questions, expected_answer

    from clinseek.runner import ModelSettings, RunOptions, RunSettings, run_benchmark
    from fakes.llm_servers import OpenAIFake, RecordedRequest, Reply

    gate = threading.Barrier(80, timeout=30)  # every question's call in flight at once, then all answer

    def respond(request: RecordedRequest) -> Reply:
        text = request.json["messages"][-1]["content"]
        if "Patient" in text:
            gate.wait()
        return Reply(200, {"id": "c", "object": "chat.completion", "created": 1, "model": "fake-model",
                           "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None, "message": {
                               "role": "assistant", "content": f"<answer>\n{expected_answer(text)}\n</answer>"}}],
                           "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}})

    with OpenAIFake(responder=respond) as a, OpenAIFake(responder=respond) as b:
        settings = RunSettings(model=ModelSettings(base_url=a.url, endpoints=(b.url,)),
                               run=RunOptions(concurrency=80, progress=False))
        run = anyio.run(lambda: run_benchmark(curated_questions(80), tmp_path / "none.duckdb", "curated",
                                              "openai:fake-model", tmp_path, settings=settings)).runs[0]
        chats = [sum(r.path.endswith("/chat/completions") for r in s.requests) for s in (a, b)]
    assert run.answered == 80 and run.infra_errors == 0
    assert sum(chats) == 80 and min(chats) > 1
