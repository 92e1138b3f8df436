"""The Ray executor on a local Ray (2 CPUs, no dashboard) against loopback OpenAI-compatible servers.

Same rows and scores as the local executor, resume across executors, a worker killed mid-run, the
cluster-wide request rate, sticky routing over replicas, a staged store, GPU placement of imaging
workers, the CLI flags.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from _runner_helpers import SECRET, curated_questions, expected_answer

import clinseek
from clinseek.agent import Sources
from clinseek.runner import ModelSettings, RunOptions, RunSettings, read_results, run_benchmark
from fakes.llm_servers import OpenAIFake, RecordedRequest, Reply

pytestmark = pytest.mark.slow

MODEL = "openai:fake-model"
TIMING = frozenset({"latency_s", "total_s", "elapsed_s", "wait_s", "started_at", "finished_at"})
"""Fields that measure time, the only ones two executors may record differently."""


def _completion(key: str, message: dict[str, Any]) -> Reply:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return Reply(200, {"id": f"chatcmpl-{key[:12]}", "object": "chat.completion", "created": 1_700_000_000,
                       "model": "fake-model", "choices": [{"index": 0, "message": message, "finish_reason": finish,
                                                           "logprobs": None}],
                       "usage": {"prompt_tokens": 40, "completion_tokens": 6, "total_tokens": 46}},
                 {"x-request-id": f"req_{key[:12]}"})


def agent_reply(request: RecordedRequest) -> Reply:
    """A deterministic agent: one SQL query, then ``ehr.finish`` with yes/no from a hash of the whole
    conversation (the query's result included). Ids come from the content, never from arrival order."""
    messages = request.json["messages"]
    tools = [t["function"]["name"] for t in request.json.get("tools", [])]
    key = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
    if not any("run_sql_query" in t for t in tools):  # the pre-flight's probe
        return _completion(key, {"role": "assistant", "content": "OK"})
    if not any(m["role"] == "tool" for m in messages):
        name, arguments = next(t for t in tools if "run_sql_query" in t), {
            "sql_query": "SELECT admission_type, count(*) AS n FROM hosp.admissions GROUP BY 1 ORDER BY 1"}
    else:
        name, arguments = next(t for t in tools if t.endswith("finish")), {
            "response": ["yes" if int(key, 16) % 2 else "no"]}
    call = {"id": f"call_{key[:10]}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return _completion(key, {"role": "assistant", "content": None, "tool_calls": [call]})


def curated_reply(request: RecordedRequest) -> Reply:
    """The curated answer of ``_runner_helpers.HashModel`` (yes/no from a hash of the prompt)."""
    text = request.json["messages"][-1]["content"]
    key = hashlib.sha256(text.encode()).hexdigest()
    return _completion(key, {"role": "assistant", "content": f"<answer>\n{expected_answer(text)}\n</answer>"})


def _settings(*urls: str, executor: str = "ray", **run: Any) -> RunSettings:
    model = ModelSettings(base_url=urls[0], endpoints=tuple(urls[1:]))
    return RunSettings(model=model, run=RunOptions(executor=executor, **{"concurrency": 4, "workers": 2, **run}))  # type: ignore[arg-type]


def _run(questions, store: Path, out: Path, settings: RunSettings, mode: str = "agent", **kw: Any):
    return anyio.run(lambda: run_benchmark(questions, store, mode, MODEL, out, settings=settings, **kw))  # type: ignore[arg-type]


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _rows(out_dir: str | Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The rows of a results folder by (qid, run_index), timing left out; each key exactly once."""
    rows = read_results(Path(out_dir) / "results.jsonl").rows
    keyed = {(r.qid, r.run_index): _strip(r.model_dump(mode="json")) for r in rows}
    assert len(keyed) == len(rows), "a (qid, run_index) was written twice"
    return keyed


def _scores(out_dir: str | Path) -> list[dict[str, Any]]:
    return sorted((_strip(q.model_dump(mode="json")) for q in clinseek.score(out_dir).questions),
                  key=lambda q: q["qid"])


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory):
    """A local Ray for this module, shut down after it: 2 CPUs, no dashboard, a 200 MB object store, and a
    logical GPU so that GPU placement is testable (no accelerator is used).

    Its workers get the test API key and a private folder for staged stores in their environment, as a
    cluster's workers would get them from the job's runtime environment.
    """
    ray = pytest.importorskip("ray")
    stage = tmp_path_factory.mktemp("ray_stage")
    ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, configure_logging=False, log_to_driver=False,
             object_store_memory=200 * 1024 * 1024, namespace="clinseek",
             runtime_env={"env_vars": {"OPENAI_API_KEY": SECRET, "CLINSEEK_STAGE_DIR": str(stage)}})
    try:
        yield stage
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def ray_bench(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory):
    """A text benchmark from the synthetic store: 2 questions of each of 3 tasks (folder, questions)."""
    from clinseek.bench import build_benchmark, load_questions

    out = tmp_path_factory.mktemp("ray_bench") / "bench"
    build_benchmark(synthetic_store, tasks=["Inpatient_Mortality", "ICU_Mortality_7day", "labevents"], per_task=2,
                    seed=42, out=out)
    return out, [q for q in load_questions(out) if q.benchmark == "clinseek-bench-text"]


@pytest.fixture(scope="module")
def text_questions(ray_bench):
    return ray_bench[1]


def test_ray_rows_and_scores_equal_the_local_executors(
        local_ray: Path, text_questions, synthetic_store: Path, tmp_path: Path, api_keys: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """Agent runs (SQL on the store, then finish), 2 runs per question: every row and every score of a
    Ray run over two replicas equals the local run's on one endpoint, under one configuration hash;
    every turn of a question reached one replica. The Ray workers read a staged copy of the store
    (``stage_store``), written once to their node's staging folder and checked against the driver's
    (the workers that read the store at its own path are those of the other tests)."""
    caplog.set_level(logging.INFO, "clinseek.runner")
    with OpenAIFake(responder=agent_reply) as a, OpenAIFake(responder=agent_reply) as b:
        local = _run(text_questions, synthetic_store, tmp_path / "local",
                     _settings(a.url, executor="local", runs_per_question=2)).runs[0]
        a.reset()
        ray = _run(text_questions, synthetic_store, tmp_path / "ray",
                   _settings(a.url, b.url, runs_per_question=2, stage_store=True)).runs[0]
        urls = (a.url, b.url)
    copies = list(local_ray.rglob(synthetic_store.name))
    assert len(copies) == 1 and copies[0].stat().st_size == synthetic_store.stat().st_size
    assert f"store {copies[0]}" in caplog.text
    assert local.total == ray.total == 2 * len(text_questions) and local.infra_errors == ray.infra_errors == 0
    local_rows, ray_rows = _rows(local.out_dir), _rows(ray.out_dir)
    assert len(local_rows) == local.total and local_rows == ray_rows
    assert {r["status"] for r in ray_rows.values()} >= {"answered"}
    assert _scores(local.out_dir) == _scores(ray.out_dir)
    manifests = [json.loads((Path(d) / "run_manifest.json").read_text()) for d in (local.out_dir, ray.out_dir)]
    assert manifests[0]["config_hash"] == manifests[1]["config_hash"]
    assert manifests[0]["executor"] == {"kind": "local"} and manifests[1]["executor"]["kind"] == "ray"
    assert manifests[1]["endpoints"] == [urls[1]]
    # sticky: the task turn of each question reached one replica only; both replicas served
    seen: dict[str, set[int]] = {}
    for replica, server in enumerate((a, b)):
        for request in server.requests:
            if request.path.endswith("/chat/completions") and "run_sql_query" in json.dumps(request.json.get("tools")):
                seen.setdefault(json.dumps(request.json["messages"][:2]), set()).add(replica)
    assert len(seen) == len(text_questions) and all(len(replicas) == 1 for replicas in seen.values())
    assert {replica for replicas in seen.values() for replica in replicas} == {0, 1}


def test_a_run_resumes_across_executors(
        local_ray, text_questions, synthetic_store: Path, tmp_path: Path, api_keys: str) -> None:
    """Started locally, continued on Ray, finished locally: one row per (question, run), the rows
    written by one executor kept by the other."""
    with OpenAIFake(responder=agent_reply) as server:
        first = _run(text_questions, synthetic_store, tmp_path, _settings(server.url, executor="local"), limit=2).runs[0]
        kept = _rows(first.out_dir)
        second = _run(text_questions, synthetic_store, tmp_path, _settings(server.url), limit=4).runs[0]
        manifest = json.loads((Path(second.out_dir) / "run_manifest.json").read_text())
        third = _run(text_questions, synthetic_store, tmp_path, _settings(server.url, executor="local")).runs[0]
    assert (first.ran, second.resumed, second.ran) == (2, 2, 2)
    assert manifest["executor"]["kind"] == "ray"
    assert (third.resumed, third.ran, third.total) == (4, len(text_questions) - 4, len(text_questions))
    rows = _rows(third.out_dir)
    assert len(rows) == len(text_questions) and all(rows[k] == v for k, v in kept.items())


def test_a_killed_worker_s_question_runs_run_elsewhere_and_each_row_is_written_once(
        local_ray, tmp_path: Path, api_keys: str, caplog: pytest.LogCaptureFixture) -> None:
    """A worker is killed (``ray.kill``) while it holds question runs waiting on the model: they run
    again on the other workers; every (question, run) has exactly one row, none an error, the same
    rows as a local run."""
    import ray

    questions = curated_questions(12)
    killed: list[str] = []
    lock = threading.Lock()

    def respond(request: RecordedRequest) -> Reply:
        with lock:
            kill = len(killed) == 0 and sum(r.path.endswith("/chat/completions") for r in server.requests) >= 8
            if kill:
                names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                         if a["name"].endswith("-worker-0")]
                killed.extend(names)
        if kill:
            ray.kill(ray.get_actor(killed[0], namespace="clinseek"))
        time.sleep(0.2)  # question runs are in flight on both workers when one dies
        return curated_reply(request)

    with OpenAIFake(responder=respond) as server:
        caplog.set_level(logging.WARNING, "clinseek.runner")
        done = _run(questions, tmp_path / "none.duckdb", tmp_path / "ray", _settings(server.url, runs_per_question=2),
                    mode="curated").runs[0]
        calls = sum(r.path.endswith("/chat/completions") for r in server.requests)
        local = _run(questions, tmp_path / "none.duckdb", tmp_path / "local",
                     _settings(server.url, executor="local", runs_per_question=2), mode="curated").runs[0]
    assert len(killed) == 1 and f"Ray worker {killed[0]} died" in caplog.text
    assert calls > done.total  # the killed worker's runs were sent again
    rows = _rows(done.out_dir)
    assert len(rows) == done.total == 24 and done.infra_errors == 0 and done.answered == 24
    assert rows == _rows(local.out_dir)


def test_the_request_rate_limit_holds_across_the_cluster(local_ray, tmp_path: Path, api_keys: str) -> None:
    """Two workers, one limit of 4 requests/s: the server sees at most 4/s over the run (one limiter
    for the cluster; one per worker would let 8/s through)."""
    arrivals: list[float] = []

    def respond(request: RecordedRequest) -> Reply:
        arrivals.append(time.monotonic())
        return curated_reply(request)

    rate, questions = 4.0, curated_questions(16)
    with OpenAIFake(responder=respond) as server:
        settings = RunSettings(model=ModelSettings(base_url=server.url, requests_per_s=rate),
                               run=RunOptions(executor="ray", workers=2, concurrency=8))
        done = _run(questions, tmp_path / "none.duckdb", tmp_path, settings, mode="curated").runs[0]
    assert done.answered == len(questions) == len(arrivals)
    span = max(arrivals) - min(arrivals)
    # evenly spaced grants take (n - 1) / rate; two intervals of slack for arrivals delayed after their grant
    # (one limiter per worker would let 8/s through: 13 / ~1.9 s, still far above the limit)
    measured = (len(arrivals) - 3) / span
    assert measured <= rate, f"{len(arrivals)} requests in {span:.2f} s: {measured:.2f}/s exceeds {rate}/s"


def test_calls_in_flight_never_exceed_the_run_s_concurrency_over_the_cluster(
        local_ray, tmp_path: Path, api_keys: str) -> None:
    """Concurrency 5 over two workers (shares 3 and 2, each holding more runs queued): the server, holding
    each request 0.2 s, never has more than 5 at once, and every question is answered exactly once."""
    lock, in_flight, most = threading.Lock(), [0], [0]

    def respond(request: RecordedRequest) -> Reply:
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.2)
        with lock:
            in_flight[0] -= 1
        return curated_reply(request)

    questions = curated_questions(30)
    with OpenAIFake(responder=respond) as server:
        done = _run(questions, tmp_path / "none.duckdb", tmp_path, _settings(server.url, concurrency=5),
                    mode="curated").runs[0]
    assert done.answered == len(_rows(done.out_dir)) == 30
    assert 1 < most[0] <= 5, most[0]


def test_a_429_seen_by_one_worker_pauses_every_worker(local_ray, tmp_path: Path, api_keys: str) -> None:
    """No request rate set (no limiter actor call per model call): the first request gets a 429 with
    ``retry-after: 2``; the worker that saw it tells the others through the run's limiter actor, so
    no new request reaches the server from any worker until the pause is over."""
    arrivals: list[float] = []
    paused_at: list[float] = []
    lock = threading.Lock()

    def respond(request: RecordedRequest) -> Reply:
        with lock:
            arrivals.append(time.monotonic())
            first = not paused_at
            if first:
                paused_at.append(arrivals[-1])
        if first:
            return server.rate_limited(2.0)
        time.sleep(0.3)  # calls are in flight on both workers when the 429 comes back
        return curated_reply(request)

    questions = curated_questions(12)
    with OpenAIFake(responder=respond) as server:
        done = _run(questions, tmp_path / "none.duckdb", tmp_path, _settings(server.url, concurrency=4),
                    mode="curated").runs[0]
    assert done.answered == len(questions) and len(arrivals) == len(questions) + 1
    start = paused_at[0]
    # requests sent before the pause reached the workers arrive at once; the next ones only after it
    # (one worker pausing alone would let the other send its next request when its reply came, after 0.3 s)
    during = [t - start for t in arrivals if start + 0.25 < t < start + 1.8]
    assert not during, f"requests arrived {during} s into a 2 s pause"
    assert max(arrivals) - start >= 2.0


def test_imaging_workers_reserve_gpus(local_ray, synthetic_store: Path, synthetic_bench, tmp_path: Path,
                                      api_keys: str, caplog: pytest.LogCaptureFixture) -> None:
    """Multimodal agent runs that offer ``image.*`` tools start workers reserving ``worker_gpus`` each
    (Ray assigns them the session's GPU); text runs start workers without one."""
    from clinseek.imaging import store_cxr_root

    questions = [q for q in synthetic_bench[1] if q.benchmark == "clinseek-bench-mm" or q.task == "Inpatient_Mortality"]
    caplog.set_level(logging.INFO, "clinseek.runner")
    with OpenAIFake(responder=agent_reply) as server:
        settings = _settings(server.url, worker_gpus=0.5)
        settings = RunSettings(model=settings.model, run=settings.run,
                               sources=Sources(cxr_root=store_cxr_root(synthetic_store)))
        summary = _run(questions, synthetic_store, tmp_path, settings)
    by_benchmark = {r.benchmark: r for r in summary.runs}
    assert by_benchmark["clinseek-bench-mm"].infra_errors == by_benchmark["clinseek-bench-text"].infra_errors == 0
    started = [line for line in caplog.text.splitlines() if "-worker-" in line and " on " in line]
    assert len(started) == 4  # two workers without GPU (text), two sharing the GPU (multimodal)
    assert sum("GPU 0" in line for line in started) == 2


def test_a_model_object_that_cannot_be_pickled_is_refused(local_ray, tmp_path: Path) -> None:
    class Local:
        name = "fake:local"
        supports_native_tools = True
        lock = threading.Lock()

        async def generate(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("never called")

        async def aclose(self) -> None:
            pass

    with pytest.raises(clinseek.ClinseekError, match=r"cannot be pickled.*'provider:model'"):
        anyio.run(lambda: run_benchmark(curated_questions(1), tmp_path / "none.duckdb", "curated", Local(), tmp_path,  # type: ignore[arg-type]
                                        settings=_settings("http://127.0.0.1:9/v1")))


def test_the_cli_runs_on_ray_over_two_replicas(local_ray, ray_bench, synthetic_store: Path, tmp_path: Path,
                                                api_keys: str) -> None:
    from typer.testing import CliRunner

    from clinseek.cli import app

    bench, _ = ray_bench
    with OpenAIFake(responder=agent_reply) as a, OpenAIFake(responder=agent_reply) as b:
        second = b.url
        result = CliRunner().invoke(app, [
            "run", "--bench", str(bench), "--store", str(synthetic_store), "--model", MODEL, "--tasks", "Inpatient_Mortality",
            "--out", str(tmp_path), "--base-url", a.url, "--base-url", b.url, "--knowledge", "off",
            "--executor", "ray", "--workers", "2", "--no-progress"])
        served = [sum(r.path.endswith("/chat/completions") and "run_sql_query" in json.dumps(r.json)
                      for r in s.requests) for s in (a, b)]
        probes = [sum(r.path.endswith("/models") for r in s.requests) for s in (a, b)]
    assert result.exit_code == 0, result.output
    assert "2 answered (finish_call 2), 0 no answer, 0 infra errors of 2" in result.output
    assert sum(served) == 4  # two turns per question (a query, then the answer)
    assert probes == [1, 1]  # the pre-flight checked every replica
    manifest = json.loads(next(tmp_path.rglob("run_manifest.json")).read_text())
    assert manifest["executor"]["workers"] == 2 and manifest["endpoints"] == [second]
