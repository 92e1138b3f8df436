"""Runner throughput and harness overhead against a loopback OpenAI-compatible model that answers after 1 s.

Targets (issue 6): harness overhead <= 2 % of wall time, and throughput at concurrency 64 >= 0.9 x
the ideal (concurrency / latency). The fake server runs in its own process so that the harness is
measured alone; the real ``openai`` SDK talks to it over HTTP on 127.0.0.1 (a minimal asyncio keep-alive server:
``tests/fakes``' threaded server spends more CPU per request than the harness being measured). Curated Input mode
with questions that carry their package, so every second of wall time is the model's or the
harness's (episode builds are measured by ``benchmarks/episode.py``).

Usage: ``python benchmarks/runner.py [--questions 256] [--concurrency 64] [--latency 1.0]``
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
import multiprocessing as mp
import os
import tempfile
import time
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path

_BODY = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 1_700_000_000, "model": "bench-model",
    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                 "message": {"role": "assistant", "content": "<answer>\nno\n</answer>"}}],
    "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
}).encode()
_REPLY = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
          + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY)


def _serve(latency_s: float, port_out: Connection, stop: Event) -> None:
    """A minimal asyncio HTTP/1.1 keep-alive server answering every POST after ``latency_s``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                await asyncio.sleep(latency_s)
                writer.write(_REPLY)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
        port_out.send(server.sockets[0].getsockname()[1])
        while not stop.is_set():
            await asyncio.sleep(0.1)
        server.close()

    asyncio.run(main())


def _questions(n: int):
    from clinseek.bench import Question

    when = dt.datetime(2150, 1, 1, 8, 0)
    return [
        Question(qid=f"b{i:05d}", benchmark="clinseek-bench-text", source="clinseek-build", task="Inpatient_Mortality",
                 task_type="risk_prediction", category="mortality", subject_id=i, prediction_time=when,
                 policy="clinseek-text-v1", candidates=("yes", "no"), label=("no",),
                 curated_text=f"## Patient {i}\n- admission_type: URGENT", instruction="Will the patient die?")
        for i in range(n)
    ]


def measure(questions: int, concurrency: int, latency_s: float) -> dict[str, float]:
    import anyio

    from clinseek.models import GenerateConfig
    from clinseek.runner import RunSettings, read_results, run_benchmark

    import_started = time.perf_counter()
    import openai  # noqa: F401  (a one-time process cost, reported apart from the per-question overhead)

    import_s = time.perf_counter() - import_started
    receive, send = mp.Pipe(duplex=False)
    stop = mp.Event()
    server = mp.Process(target=_serve, args=(latency_s, send, stop), daemon=True)
    server.start()
    port = receive.recv()
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-not-a-real-key")
    try:
        with tempfile.TemporaryDirectory() as out:
            settings = RunSettings(concurrency=concurrency, base_url=f"http://127.0.0.1:{port}/v1",
                                   generate=GenerateConfig(timeout_s=30))
            qs = _questions(questions)
            cpu0, started = time.process_time(), time.perf_counter()
            summary = anyio.run(lambda: run_benchmark(qs, Path(out) / "none.duckdb", "curated", "openai:bench-model",
                                                      Path(out), settings=settings))
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu0
            rows = read_results(Path(summary.runs[0].out_dir) / "results.jsonl").rows
    finally:
        stop.set()
        server.join(5)
    run = summary.runs[0]
    assert run.answered == questions, run
    ideal_wall = math.ceil(questions / concurrency) * latency_s
    in_model = sum(c.latency_s for r in rows for c in r.calls)
    per_row = sum(r.latency_s for r in rows)
    return {
        "questions": questions, "concurrency": concurrency, "latency_s": latency_s, "wall_s": wall,
        "ideal_wall_s": ideal_wall, "overhead_pct": 100 * (wall - ideal_wall) / wall,
        "throughput_qps": questions / wall, "ideal_qps": concurrency / latency_s,
        "throughput_ratio": (questions / wall) / (concurrency / latency_s), "harness_cpu_s": cpu,
        "harness_cpu_ms_per_question": 1000 * cpu / questions, "sdk_import_s": import_s,
        "outside_model_pct": 100 * (per_row - in_model) / per_row,
        "model_call_s_mean": in_model / len(rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=1.0)
    args = parser.parse_args()
    r = measure(args.questions, args.concurrency, args.latency)
    print(f"questions {r['questions']}  concurrency {r['concurrency']}  model latency {r['latency_s']:.2f} s")
    print(f"wall {r['wall_s']:.2f} s  (ideal {r['ideal_wall_s']:.2f} s)")
    print(f"harness overhead {r['overhead_pct']:.2f} % of wall time vs the ideal   (target <= 2 %)")
    print(f"time of a question spent outside the model call: {r['outside_model_pct']:.2f} %;"
          f" mean model call {r['model_call_s_mean']:.3f} s (SDK + loopback server included)")
    print(f"throughput {r['throughput_qps']:.1f} q/s = {r['throughput_ratio']:.3f} x ideal {r['ideal_qps']:.0f} q/s"
          "   (target >= 0.9)")
    print(f"harness CPU {r['harness_cpu_s']:.2f} s = {r['harness_cpu_ms_per_question']:.1f} ms per question"
          f" (SDK client included); one-time openai import {r['sdk_import_s']:.2f} s (not counted)")


if __name__ == "__main__":
    main()
