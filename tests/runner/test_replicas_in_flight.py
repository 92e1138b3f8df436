"""Calls to several replicas at once: every call of a run in flight together, one client per replica."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio


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
