"""Runs against strict loopback servers: pre-flight, attempt records, cost rules, token budgets, run options."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from clinseek.agent import AgentBudget
from clinseek.cli import app
from clinseek.errors import ModelError
from clinseek.models import GenerateConfig, preflight
from clinseek.runner import ModelSettings, RetryPolicy, RunOptions, RunSettings, read_results, run_benchmark
from fakes.llm_servers import OpenAIFake, RecordedRequest, Reply

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.02)


def _risk(questions, n: int):
    return [q for q in questions if q.task_type == "risk_prediction"][:n]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_is_one_clear_error_within_seconds(demo_bench, demo_store: Path, tmp_path: Path) -> None:
    bench, _ = demo_bench
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    args = ["run", "--bench", str(bench), "--store", str(demo_store), "--model", "openai:qwen", "--base-url", url,
            "--mode", "both", "--out", str(tmp_path / "runs"), "--limit", "3", "--no-progress", "--knowledge", "off"]
    started = time.perf_counter()
    result = CliRunner().invoke(app, args)
    elapsed = time.perf_counter() - started
    assert isinstance(result.exception, ModelError) and elapsed < 5.0
    assert "cannot reach the model endpoint" in str(result.exception) and url in str(result.exception)
    assert not list((tmp_path / "runs").rglob("results.jsonl"))  # no infra-error rows: nothing ran
    done = subprocess.run([sys.executable, "-c", "from clinseek.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "cannot reach" in done.stderr


def test_a_server_that_never_answers_fails_the_pre_flight_in_its_connect_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (backlog), never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"

        async def check() -> None:
            from clinseek.models import get_model

            model = get_model("openai:qwen", base_url=url)
            try:
                await preflight(model, tools=True, timeout_s=60)
            finally:
                await model.aclose()

        with pytest.raises(ModelError, match="did not answer GET /models within 4 s"):  # connected: not "cannot reach"
            anyio.run(check)


def test_an_unknown_model_and_refused_tools_are_named() -> None:
    async def check(server: OpenAIFake, name: str, tools: bool) -> str:
        from clinseek.models import get_model

        model = get_model(name, base_url=server.url)
        try:
            with pytest.raises(ModelError) as err:
                await preflight(model, tools=tools, timeout_s=5)
            return str(err.value)
        finally:
            await model.aclose()

    with OpenAIFake(profile="vllm") as server:
        message = anyio.run(check, server, "openai:Qwen/Qwen3-8", True)
    assert "does not serve the model" in message and "Qwen/Qwen3-8B" in message
    with OpenAIFake(profile="vllm-no-tool-parser") as server:
        message = anyio.run(check, server, "openai:Qwen/Qwen3-8B", True)
    assert "refuses tool calls" in message and "--tool-protocol text" in message


def test_pre_flight_finds_the_tokenizer_and_the_manifest_records_options(
    demo_bench, demo_store: Path, tmp_path: Path
) -> None:
    bench, _ = demo_bench
    with OpenAIFake(profile="llama.cpp") as server:
        server.responder = lambda request: server.text("Looks stable.\n<answer>\nno\n</answer>")
        result = CliRunner().invoke(app, [
            "run", "--bench", str(bench), "--store", str(demo_store), "--model", "openai:qwen",
            "--base-url", server.url, "--mode", "curated", "--out", str(tmp_path), "--tasks", "Inpatient_Mortality",
            "--limit", "2", "--no-progress", "--context-window", "16384", "--curated-budget", "3000",
            "--request-timeout", "30", "--max-attempts", "2", "--max-output-tokens", "256",
        ])
        paths = [r.path for r in server.requests]
    assert result.exit_code == 0, result.output
    assert "2 answered (answer_tag 2)" in result.output and "cost unknown" in result.output
    assert "/tokenize" in paths and "/v1/models" in paths
    manifest = json.loads(next(tmp_path.rglob("run_manifest.json")).read_text())
    assert manifest["budget"]["context_window_tokens"] == 16384
    assert manifest["budget"]["curated_budget_tokens"] == 3000
    assert manifest["budget"]["max_output_tokens"] == 256 and "max_output_tokens" not in manifest["generate"]
    assert manifest["generate"]["timeout_s"] == 30 and manifest["retry"]["max_attempts"] == 2
    assert manifest["token_counter"] == "server:llama.cpp /tokenize"
    assert manifest["preflight"]["server_context_window"] == 16384
    sent = [r.json for r in server.requests if r.path == "/v1/chat/completions"][1:]  # after the probe
    assert all(body["max_tokens"] == 256 for body in sent)


def test_every_attempt_is_recorded_and_failed_calls_are_kept(demo_bench, demo_store: Path, tmp_path: Path) -> None:
    _, questions = demo_bench
    with OpenAIFake() as server:
        server.script(server.server_error(503), server.slow(server.text("late"), 2.0),
                      server.text("<answer>\nno\n</answer>"),
                      server.server_error(500), server.server_error(502), server.server_error(503))
        settings = RunSettings(model=ModelSettings(retry=FAST, base_url=server.url, generate=GenerateConfig(timeout_s=0.5)), run=RunOptions(concurrency=1))
        summary = anyio.run(lambda: run_benchmark(_risk(questions, 2), demo_store, "curated", "openai:qwen",
                                                  tmp_path, settings=settings))
    rows = {r.status: r for r in read_results(Path(summary.runs[0].out_dir) / "results.jsonl").rows}
    [ok] = rows["answered"].calls
    assert [a.ok for a in ok.attempts] == [False, False, True]
    assert [a.error_type for a in ok.attempts[:2]] == ["ProviderUnavailable", "ProviderUnavailable"]
    assert ok.attempts[0].status_code == 503 and ok.attempts[0].wait_s > 0
    assert ok.latency_s == ok.attempts[-1].latency_s < 0.5 and ok.total_s is not None and ok.total_s > 0.5
    [failed] = rows["infra_error"].calls
    assert failed.status == "failed" and len(failed.attempts) == 3 and failed.error_type == "ProviderUnavailable"
    # an unpriced model: unknown cost in every row kind, never 0
    assert rows["answered"].cost_usd is None and rows["infra_error"].cost_usd is None
    assert summary.runs[0].cost_usd is None


def test_a_priced_model_s_failed_calls_cost_zero(demo_bench, demo_store: Path, tmp_path: Path) -> None:
    _, questions = demo_bench
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"openai:qwen": {"input": "1", "output": "2"}}}))
    with OpenAIFake() as server:
        server.responder = lambda request: server.error(400, "bad request")
        settings = RunSettings(model=ModelSettings(retry=FAST, base_url=server.url, price_table=prices), run=RunOptions(concurrency=1))
        summary = anyio.run(lambda: run_benchmark(_risk(questions, 1), demo_store, "curated", "openai:qwen",
                                                  tmp_path / "runs", settings=settings))
    [row] = read_results(Path(summary.runs[0].out_dir) / "results.jsonl").rows
    assert row.status == "infra_error" and row.cost_usd == 0.0 and row.calls[0].cost_usd == 0.0


def test_an_episode_error_row_of_an_unpriced_model_has_unknown_cost(demo_bench, demo_store: Path,
                                                                     tmp_path: Path) -> None:
    from clinseek.runner import Executor, Job

    _, questions = demo_bench
    executor = Executor(store=demo_store, mode="agent", model=_Unpriced(), benchmark="b", digest="0" * 64,
                        settings=RunSettings(), tools=())
    row = executor.error_row(Job(questions[0].qid, 0, questions[0]), RuntimeError("episode"))
    assert row.status == "infra_error" and row.cost_usd is None


class _Unpriced:
    name = "openai:nowhere"
    supports_native_tools = True
    priced = False


def test_the_curated_budget_is_in_tokens_of_the_servers_tokenizer(demo_bench, demo_store: Path,
                                                                  tmp_path: Path) -> None:
    from fakes.llm_servers import fake_token_count

    _, questions = demo_bench
    qs = [q for q in questions if q.task_type == "decision_making" and not q.curated_text][:2]
    seen: list[str] = []

    def respond(request: RecordedRequest) -> Reply:
        seen.append(request.json["messages"][-1]["content"])
        return server.text("<answer>\nno\n</answer>")

    with OpenAIFake(profile="vllm") as server:
        server.responder = respond
        settings = RunSettings(model=ModelSettings(retry=FAST, base_url=server.url, preflight=True), run=RunOptions(concurrency=1), budget=AgentBudget(curated_budget_tokens=1200))
        anyio.run(lambda: run_benchmark(qs, demo_store, "curated", "openai:Qwen/Qwen3-8B", tmp_path,
                                        settings=settings))
    packages = [text.split("\n\n<task_instruction>")[0] for text in seen[1:]]  # after the probe
    assert packages and all(fake_token_count(p) <= 1200 for p in packages)
    assert any("older event blocks omitted to fit 1200 tokens" in p for p in packages)
