"""A run stops, with one message, when its model server goes away mid-run (``runner._outage``); a flaky or
erroring server does not stop it. Real loopback HTTP servers, killed and restarted at the same URL."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
from _runner_helpers import curated_questions

from clinseek.models import GenerateConfig, ProviderUnavailable
from clinseek.runner import (
    EndpointGone,
    ModelSettings,
    RetryPolicy,
    RunOptions,
    RunSettings,
    read_results,
    run_benchmark,
)
from clinseek.runner._outage import EndpointWatch
from clinseek.runner._run import _watch
from fakes.llm_servers import OpenAIFake, RecordedRequest, Reply

MODEL = "openai:fake-model"
ANSWER = "<answer>\nno\n</answer>"


def _settings(url: str, *, stop_after: int | None = 3, concurrency: int = 2, attempts: int = 2,
              timeout_s: float = 1.0) -> RunSettings:
    return RunSettings(
        run=RunOptions(concurrency=concurrency, stop_after_no_reply=stop_after),
        model=ModelSettings(base_url=url, retry=RetryPolicy(max_attempts=attempts, base_delay_s=0.01, max_delay_s=0.02),
                            generate=GenerateConfig(timeout_s=timeout_s)))


def _run(questions, out: Path, settings: RunSettings):
    return anyio.run(lambda: run_benchmark(questions, out / "no-store.duckdb", "curated", MODEL, out,
                                           settings=settings))


def _rows(out: Path):
    return read_results(out / "clinseek-bench-text" / "curated" / "openai_fake-model" / "results.jsonl").rows


def _lines(out: Path) -> int:
    path = out / "clinseek-bench-text" / "curated" / "openai_fake-model" / "results.jsonl"
    return len(path.read_text(encoding="utf-8").splitlines())


def _dies_after(server: OpenAIFake, answered: int):
    """Answer ``answered`` requests, then kill the server (its kept-alive connections cut) and hang the request."""
    count = {"n": 0}
    lock = threading.Lock()

    def respond(request: RecordedRequest) -> Reply:
        with lock:
            count["n"] += 1
            n = count["n"]
        if n <= answered:
            return server.text(ANSWER)
        if n == answered + 1:
            threading.Thread(target=server.stop).start()
        return server.slow(server.text(ANSWER), 30.0)

    return respond


def test_a_killed_server_stops_the_run_and_a_rerun_resumes_exactly_the_rest(tmp_path: Path, api_keys: str) -> None:
    questions = curated_questions(40)
    server = OpenAIFake().start()
    port, url = server.port, server.url
    server.responder = _dies_after(server, 5)
    started = time.perf_counter()
    with pytest.raises(EndpointGone) as caught:
        _run(questions, tmp_path, _settings(url))
    elapsed = time.perf_counter() - started
    gone = caught.value
    rows = _rows(tmp_path)
    assert elapsed < 5, elapsed  # bounded: not 35 questions x retries
    assert sum(r.status == "answered" for r in rows) == 5
    infra = [r for r in rows if r.status == "infra_error"]
    assert 3 <= len(infra) <= 3 + 1 and all(r.error_type == "ProviderUnavailable" for r in infra)
    assert gone.not_run == 40 - len(rows) and gone.failed == len(infra) and gone.streak >= 3
    message = str(gone)
    assert url in message and "connection failed" in gone.last_error and f"{gone.not_run} question runs" in message
    assert "rerun the same command" in message
    written = _lines(tmp_path)
    assert written == len(rows)  # nothing half-done, nothing written twice

    back = OpenAIFake().start(port)  # the server is back at the same URL
    try:
        back.responder = lambda request: back.text(ANSWER)
        summary = _run(questions, tmp_path, _settings(url)).runs[0]
    finally:
        back.stop()
    assert summary.resumed == 5 and summary.ran == 40 - 5 and summary.answered == 40 and summary.infra_errors == 0
    assert len(back.requests) == 35  # exactly the runs left and the infra errors
    final = _rows(tmp_path)
    assert sorted(r.qid for r in final) == sorted(q.qid for q in questions)


def test_a_server_that_accepts_but_never_answers_stops_the_run(tmp_path: Path, api_keys: str) -> None:
    with OpenAIFake() as server:
        server.responder = lambda request: server.slow(server.text(ANSWER), 30.0)
        started = time.perf_counter()
        with pytest.raises(EndpointGone) as caught:
            _run(curated_questions(30), tmp_path, _settings(server.url, concurrency=3, timeout_s=0.3))
        elapsed = time.perf_counter() - started
    assert elapsed < 4, elapsed  # about one wave of attempts x the request timeout
    rows = _rows(tmp_path)
    assert all(r.status == "infra_error" for r in rows) and 3 <= len(rows) <= 3 + 2
    assert "no reply within 0.3 s" in caught.value.last_error and caught.value.not_run == 30 - len(rows)


def test_a_gateway_503_burst_stops_the_run_but_a_500_burst_does_not(tmp_path: Path, api_keys: str) -> None:
    with OpenAIFake() as server:
        server.responder = lambda request: server.server_error(503)
        with pytest.raises(EndpointGone) as caught:
            _run(curated_questions(20), tmp_path / "a", _settings(server.url))
        assert "HTTP 503" in caught.value.last_error
        server.responder = lambda request: server.server_error(500)
        summary = _run(curated_questions(12), tmp_path / "b", _settings(server.url)).runs[0]
    assert summary.infra_errors == 12  # the server answered: each request's problem, not a gone server


def test_a_flaky_server_does_not_stop_the_run(tmp_path: Path, api_keys: str) -> None:
    count = {"n": 0}
    lock = threading.Lock()
    with OpenAIFake() as server:
        def respond(request: RecordedRequest) -> Reply:  # two calls in three get no reply in time
            with lock:
                count["n"] += 1
                n = count["n"]
            return server.text(ANSWER) if n % 3 == 0 else server.slow(server.text(ANSWER), 5.0)

        server.responder = respond
        summary = _run(curated_questions(15), tmp_path, _settings(server.url, concurrency=1, attempts=1,
                                                                   timeout_s=0.2)).runs[0]
    assert summary.ran == 15 and summary.answered == 5 and summary.infra_errors == 10


def test_the_rule() -> None:
    watch = EndpointWatch("http://x/v1", 3)
    gone = ProviderUnavailable("connection failed", model="openai:m", no_reply=True)
    for _ in range(2):
        watch.failed(gone)
    watch.succeeded()
    watch.failed(gone)
    watch.failed(ProviderUnavailable("boom", model="openai:m", status_code=500))  # an answer: the server is there
    watch.failed(gone)
    watch.failed(gone)
    assert not watch.gone
    watch.failed(ProviderUnavailable("bad gateway", model="openai:m", status_code=502))
    assert watch.gone
    error = watch.error(7, 2).also_not_started(("bench-mm curated",))
    assert (error.not_run, error.failed, error.streak) == (7, 2, 3)
    assert "7 question runs were not run and 2 ended as infrastructure errors" in str(error)
    assert "not started: bench-mm curated" in str(error) and "HTTP 502" in error.last_error
    assert not EndpointWatch("u", 0).gone  # 0: never
    default = _watch(type("M", (), {"name": "openai:m"})(), RunSettings(run=RunOptions(concurrency=4)))
    assert default.threshold == 8 and "the provider's default URL" in default.endpoint
    wide = _watch(type("M", (), {"name": "openai:m"})(), RunSettings(
        run=RunOptions(concurrency=64), model=ModelSettings(base_url="http://user:pw@h:8000/v1")))
    assert wide.threshold == 64 and "pw" not in wide.endpoint and "h:8000/v1" in wide.endpoint


def test_an_agent_run_stops_cleanly_with_episodes_in_flight(demo_bench, demo_store: Path, tmp_path: Path,
                                                            api_keys: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import clinseek.runner._execute as execute

    opened = []

    def session(*args, **kwargs):
        opened.append(real(*args, **kwargs))
        return opened[-1]

    real = execute.open_question_session
    monkeypatch.setattr(execute, "open_question_session", session)
    _, questions = demo_bench
    jobs = len(questions) * 3
    server = OpenAIFake().start()
    server.responder = _dies_after(server, 3)
    base = _settings(server.url, concurrency=4)
    settings = replace(base, run=replace(base.run, runs_per_question=3),
                       sources=replace(base.sources, knowledge=None))
    with pytest.raises(EndpointGone) as caught:
        anyio.run(lambda: run_benchmark(questions, demo_store, "agent", MODEL, tmp_path, settings=settings))
    paths = list(tmp_path.rglob("results.jsonl"))
    rows = [r for path in paths for r in read_results(path).rows]
    assert sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths) == len(rows) < jobs
    assert len(paths) == 1 and caught.value.not_run == jobs - len(rows) > 0 and caught.value.streak >= 3
    # a job whose call failed may be cancelled while its episode closes: then it has no row either (redone)
    assert caught.value.failed == sum(r.status == "infra_error" for r in rows)
    assert {r.status for r in rows} <= {"answered", "no_answer", "infra_error"}
    assert len(opened) > len(rows) and all(s.closed for s in opened)  # the cancelled ones closed their episode
