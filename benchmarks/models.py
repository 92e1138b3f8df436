"""Models-layer throughput and overhead against a loopback fake that answers after a fixed latency.

Prints, for the OpenAI-compatible and the Anthropic provider: the wall time of N concurrent calls
against the ideal (rounds x latency), and the per-call time spent outside the wait (encoding,
HTTP, decoding). Run: ``.venv/bin/python benchmarks/models.py [--latency 1.0] [--concurrency 64]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from clinseek.models import GenerateConfig, Message, get_model
from fakes.llm_servers import AnthropicFake, FakeLLMServer, OpenAIFake, RecordedRequest, Reply

TOOLS = [
    {"type": "function", "function": {"name": f"ehr.tool_{i}", "description": "x" * 200,
                                      "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    for i in range(19)
]
HISTORY = [Message.system("s" * 4000), Message.user("q" * 2000)] + [
    Message(role="assistant", content="thinking " * 50) for _ in range(10)
]


async def _measure(server: FakeLLMServer, name: str, calls: int, concurrency: int) -> float:
    model = get_model(name, base_url=server.url)
    limiter = anyio.CapacityLimiter(concurrency)

    async def one() -> None:
        async with limiter:
            await model.generate(HISTORY, TOOLS, GenerateConfig(timeout_s=60))

    await one()  # warm-up: the SDK's lazy first-call set-up is not what we measure
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(calls):
            group.start_soon(one)
    wall = time.perf_counter() - started
    await model.aclose()
    return wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    calls = args.concurrency * args.rounds
    ideal = args.rounds * args.latency
    import os

    os.environ.setdefault("ANTHROPIC_API_KEY", "benchmark-key")
    for fake_cls, name in [(OpenAIFake, "openai:bench"), (AnthropicFake, "anthropic:bench")]:
        fake = fake_cls(latency_s=args.latency)
        fake.responder = _responder(fake)
        with fake:
            wall = anyio.run(_measure, fake, name, calls, args.concurrency)
        overhead_ms = (wall - ideal) / args.rounds * 1000
        print(
            f"{name:16s} calls={calls} concurrency={args.concurrency} latency={args.latency:.2f}s "
            f"wall={wall:.3f}s ideal={ideal:.3f}s throughput={ideal / wall:.3f}x-ideal "
            f"overhead/round={overhead_ms:.1f}ms"
        )


def _responder(fake: FakeLLMServer) -> object:
    def answer(request: RecordedRequest) -> Reply:
        return fake.tool_calls([("ehr__tool_1", {"a": "b"})])  # type: ignore[attr-defined, no-any-return]

    return answer


if __name__ == "__main__":
    main()
