"""Models-layer throughput and client CPU per call against a loopback fake with a fixed latency.

The fake server runs in a child process, so the figures are the client side only: the wall time
of N calls at a given concurrency against the ideal (calls / concurrency x latency), and the CPU
seconds this process spent per call (encoding, the SDK, HTTP, decoding). On a loaded machine the
wall figures suffer first; the CPU figure is the steadier one.
Run: ``.venv/bin/python benchmarks/models.py [--latency 1.0] [--concurrency 64] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from multiprocessing.connection import Connection
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


def _serve(kind: str, latency_s: float, conn: Connection) -> None:
    fake: FakeLLMServer = (OpenAIFake if kind == "openai" else AnthropicFake)(latency_s=latency_s)

    def answer(request: RecordedRequest) -> Reply:
        return fake.tool_calls([("ehr__tool_1", {"a": "b"})])  # type: ignore[attr-defined, no-any-return]

    fake.responder = answer
    with fake:
        conn.send(fake.url)
        conn.recv()  # block until told to stop


async def _measure(url: str, name: str, calls: int, concurrency: int) -> tuple[float, float]:
    model = get_model(name, base_url=url)
    limiter = anyio.CapacityLimiter(concurrency)

    async def one() -> None:
        async with limiter:
            await model.generate(HISTORY, TOOLS, GenerateConfig(timeout_s=60))

    await one()  # warm-up: the SDK's lazy first-call set-up is not what we measure
    started, cpu = time.perf_counter(), time.process_time()
    async with anyio.create_task_group() as group:
        for _ in range(calls):
            group.start_soon(one)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    await model.aclose()
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    calls = args.concurrency * args.rounds
    ideal = args.rounds * args.latency
    os.environ.setdefault("ANTHROPIC_API_KEY", "benchmark-key")
    context = multiprocessing.get_context("fork")
    for kind, name in [("openai", "openai:bench"), ("anthropic", "anthropic:bench")]:
        parent, child = context.Pipe()
        server = context.Process(target=_serve, args=(kind, args.latency, child), daemon=True)
        server.start()
        url = parent.recv()
        try:
            wall, cpu = anyio.run(_measure, url, name, calls, args.concurrency)
        finally:
            parent.send("stop")
            server.join(5)
        print(
            f"{name:16s} calls={calls} concurrency={args.concurrency} latency={args.latency:.2f}s "
            f"wall={wall:.3f}s ideal={ideal:.3f}s throughput={ideal / wall:.3f}x-ideal "
            f"client_cpu/call={cpu / calls * 1000:.2f}ms"
        )


if __name__ == "__main__":
    main()
