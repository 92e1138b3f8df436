"""The runner and ``clinseek run`` with the Claude services: pre-flight once, its report in the manifest."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.errors import ModelError
from clinseek.runner import ModelSettings, RetryPolicy, RunOptions, RunSettings, read_results, run_benchmark
from fakes.llm_servers import AnthropicFake, RecordedRequest, Reply

pytest.importorskip("anthropic")

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.02)
KEY = "sk-test-SECRET-0123456789abcdef"


@pytest.mark.parametrize("provider", ["anthropic", "vertex"])
def test_the_runner_checks_the_service_once_and_records_the_report(
    provider: str, demo_bench, demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, questions = demo_bench
    qs = [q for q in questions if q.task_type == "risk_prediction"][:3]
    monkeypatch.setenv("ANTHROPIC_API_KEY" if provider == "anthropic" else "VERTEX_ACCESS_TOKEN", KEY)
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")  # Vertex's location and project: the SDK's variables
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "proj")
    model = "anthropic:claude-fake" if provider == "anthropic" else "vertex:claude-fake@20250101"
    with AnthropicFake(service=provider) as server:
        server.responder = lambda request: server.text("<answer>\nno\n</answer>")
        settings = RunSettings(
            model=ModelSettings(retry=FAST, base_url=server.url, preflight=True),
            run=RunOptions(concurrency=2),
        )
        summary = anyio.run(lambda: run_benchmark(qs, demo_store, "curated", model, tmp_path, settings=settings))
        requests = list(server.requests)
        url = server.url
    posts = [r for r in requests if r.method == "POST" and "max_tokens" in r.json]  # not the token counts
    probes = [r for r in posts if r.json["max_tokens"] == 1]
    assert len(probes) == 1 and posts[0] is probes[0] and len(posts) == 1 + len(qs)
    assert len([r for r in requests if r.method == "GET"]) == 1
    out = Path(summary.runs[0].out_dir)
    assert all(row.status == "answered" for row in read_results(out / "results.jsonl").rows)
    manifest = json.loads((out / "run_manifest.json").read_text())
    report = manifest["preflight"]
    assert report["endpoint"] == url and report["tools_checked"] is False
    assert manifest["token_counter"] == report["token_counter"] and report["token_counter"].startswith("estimate:")
    assert report["server_context_window"] == (200_000 if provider == "anthropic" else None)


def test_clinseek_run_stops_on_an_unreachable_bedrock_endpoint_within_seconds(
    demo_bench, demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench, _ = demo_bench
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", KEY)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    started = time.perf_counter()
    result = CliRunner().invoke(app, [
        "run", "--bench", str(bench), "--store", str(demo_store), "--model", "bedrock:us.anthropic.claude-fake-v1:0",
        "--base-url", url, "--mode", "both", "--out", str(tmp_path / "runs"), "--limit", "3", "--no-progress",
        "--knowledge", "off",
    ])
    elapsed = time.perf_counter() - started
    assert isinstance(result.exception, ModelError) and elapsed < 5.0
    assert str(result.exception).startswith(f"cannot reach the model endpoint {url}") and KEY not in result.output
    assert not list((tmp_path / "runs").rglob("results.jsonl"))


def test_clinseek_run_names_a_refused_tool_use_before_any_question(
    demo_bench, demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from fakes.llm_servers import SERVICES

    bench, _ = demo_bench
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    seen: list[RecordedRequest] = []

    def respond(request: RecordedRequest) -> Reply:
        seen.append(request)
        return server.text("<answer>\nno\n</answer>")

    with AnthropicFake(service=replace(SERVICES["anthropic"], tools=False), responder=respond) as server:
        result = CliRunner().invoke(app, [
            "run", "--bench", str(bench), "--store", str(demo_store), "--model", "anthropic:claude-fake",
            "--base-url", server.url, "--mode", "agent", "--out", str(tmp_path / "runs"), "--limit", "2",
            "--no-progress", "--knowledge", "off",
        ])
    assert isinstance(result.exception, ModelError) and "refuses tool calls" in str(result.exception)
    assert not seen and not list((tmp_path / "runs").rglob("results.jsonl"))


def test_bedrock_attempts_are_recorded_and_an_unpriced_model_s_cost_is_unknown(
    demo_bench, demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, questions = demo_bench
    qs = [q for q in questions if q.task_type == "risk_prediction"][:2]
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", KEY)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    with AnthropicFake(service="bedrock") as server:  # Bedrock's own throttling and outage bodies
        server.script(server.rate_limited(None), server.text("<answer>\nno\n</answer>"),
                      server.server_error(503), server.server_error(503))
        settings = RunSettings(model=ModelSettings(retry=FAST, base_url=server.url), run=RunOptions(concurrency=1))
        summary = anyio.run(lambda: run_benchmark(qs, demo_store, "curated", "bedrock:us.anthropic.claude-fake-v1:0",
                                                  tmp_path, settings=settings))
        bodies = [r.json for r in server.requests]
    assert all("model" not in body and "anthropic_version" in body for body in bodies)
    rows = {r.status: r for r in read_results(Path(summary.runs[0].out_dir) / "results.jsonl").rows}
    [ok] = rows["answered"].calls
    assert [(a.ok, a.error_type, a.status_code) for a in ok.attempts] == [(False, "RateLimited", 429), (True, None, None)]
    assert ok.latency_s == ok.attempts[-1].latency_s
    [failed] = rows["infra_error"].calls
    assert failed.status == "failed" and [a.status_code for a in failed.attempts] == [503, 503]
    assert failed.error_type == "ProviderUnavailable"
    assert rows["answered"].cost_usd is None and rows["infra_error"].cost_usd is None and summary.runs[0].cost_usd is None
