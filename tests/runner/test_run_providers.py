"""run_benchmark with real SDK clients against loopback servers: retries, infra errors, resume, no key on disk."""

from __future__ import annotations

from pathlib import Path

import anyio
from _runner_helpers import SECRET

from clinseek.models import GenerateConfig
from clinseek.runner import ModelSettings, RetryPolicy, RunOptions, RunSettings, read_results, run_benchmark
from fakes.llm_servers import AnthropicFake, OpenAIFake, RecordedRequest, Reply

FAST = RetryPolicy(max_attempts=5, base_delay_s=0.01, max_delay_s=0.05)


def _answer_openai(server: OpenAIFake):
    def respond(request: RecordedRequest) -> Reply:
        return server.text("Reasoning with key-free text.\n<answer>\nno\n</answer>")

    return respond


def _run(questions, store: Path, out: Path, model: str, url: str, concurrency: int = 4, cache_dir: Path | None = None):
    settings = RunSettings(run=RunOptions(concurrency=concurrency),
                           model=ModelSettings(retry=FAST, base_url=url, generate=GenerateConfig(timeout_s=1.0),
                                               cache_dir=cache_dir))
    return anyio.run(lambda: run_benchmark(questions, store, "curated", model, out, settings=settings)).runs[0]


def test_retries_infra_errors_resume_and_no_key_anywhere(
    demo_bench, demo_store: Path, tmp_path: Path, openai_server: OpenAIFake, api_keys: str
) -> None:
    _, questions = demo_bench
    qs = [q for q in questions if q.task_type == "risk_prediction"][:4]
    s = openai_server
    # 429, 500 and a timeout are retried; a 400 is not (an infra error, redone on resume)
    s.script(s.rate_limited(0.01), s.server_error(500), s.slow(s.text("late"), 2.5), s.error(400, f"bad request {SECRET}"))
    s.responder = _answer_openai(s)
    first = _run(qs, demo_store, tmp_path, "openai:gpt-test", s.url, concurrency=1)  # one order of replies
    rows = read_results(Path(first.out_dir) / "results.jsonl").rows
    assert len(rows) == 4 and first.infra_errors == 1
    bad = next(r for r in rows if r.status == "infra_error")
    assert bad.error_type == "BadRequest" and bad.answer is None
    assert all(r.answer == ["no"] for r in rows if r.status == "answered")

    second = _run(qs, demo_store, tmp_path, "openai:gpt-test", s.url)
    rows = read_results(Path(second.out_dir) / "results.jsonl").rows
    assert second.ran == 1 and second.infra_errors == 0
    assert sorted(r.qid for r in rows) == sorted(q.qid for q in qs)

    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaked == []
    assert (tmp_path / "clinseek-bench-text" / "curated" / "openai_gpt-test" / "attempts.jsonl").exists()


def test_anthropic_curated_run_with_cache(
    demo_bench, demo_store: Path, tmp_path: Path, anthropic_server: AnthropicFake, api_keys: str
) -> None:
    _, questions = demo_bench
    qs = [q for q in questions if q.task_type == "risk_prediction"][:2]
    s = anthropic_server
    s.responder = lambda request: s.text("<answer>\nyes\n</answer>")
    cache = tmp_path / "cache"
    first = _run(qs, demo_store, tmp_path / "a", "anthropic:claude-test", s.url, cache_dir=cache)
    calls = len(s.requests)
    second = _run(qs, demo_store, tmp_path / "b", "anthropic:claude-test", s.url, cache_dir=cache)
    assert first.answered == second.answered == 2 and len(s.requests) == calls == 2
    a = read_results(Path(first.out_dir) / "results.jsonl").rows
    b = read_results(Path(second.out_dir) / "results.jsonl").rows
    assert {(r.qid, tuple(r.answer or ())) for r in a} == {(r.qid, tuple(r.answer or ())) for r in b}
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
