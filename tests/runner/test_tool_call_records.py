"""Tool calls are recorded in results.jsonl exactly as the model sent them: ``{}`` stays ``{}``,
arguments that are not a JSON object are kept as text with the error the model was shown."""

from __future__ import annotations

from pathlib import Path

import anyio

from clinseek.models import GenerateConfig
from clinseek.runner import ModelSettings, RetryPolicy, RunOptions, RunSettings, read_results, run_benchmark
from fakes.llm_servers import OpenAIFake


def test_arguments_are_recorded_as_sent(demo_bench, demo_store: Path, tmp_path: Path, openai_server: OpenAIFake,
                                        api_keys: str) -> None:
    _, questions = demo_bench
    question = next(q for q in questions if q.task_type == "risk_prediction")
    s = openai_server
    s.script(
        s.tool_calls([("ehr__get_table_names", "{}")]),
        s.tool_calls([("ehr__run_sql_query", '{"sql_query": "SELECT 1"')]),  # cut off: not JSON
        s.tool_calls([("ehr__think", "[1, 2]")]),  # JSON, but not an object
        s.tool_calls([("ehr__finish", {"response": ["no"]})]),
    )
    settings = RunSettings(model=ModelSettings(base_url=s.url, retry=RetryPolicy(max_attempts=1), generate=GenerateConfig(timeout_s=5.0)), run=RunOptions(concurrency=1))
    summary = anyio.run(lambda: run_benchmark([question], demo_store, "agent", "openai:gpt-test", tmp_path,
                                              settings=settings)).runs[0]
    (row,) = read_results(Path(summary.out_dir) / "results.jsonl").rows
    calls = [c for m in row.messages for c in m.get("tool_calls", [])]
    assert [c["name"] for c in calls] == ["ehr.get_table_names", "ehr.run_sql_query", "ehr.think", "ehr.finish"]
    assert calls[0]["arguments"] == {} and "raw_arguments" not in calls[0]
    assert calls[1]["arguments"] == {} and calls[1]["raw_arguments"] == '{"sql_query": "SELECT 1"'
    assert calls[1]["error_kind"] == "invalid_json" and calls[1]["error"]
    assert calls[2]["raw_arguments"] == "[1, 2]" and calls[2]["error_kind"] == "not_an_object"
    assert calls[3]["arguments"] == {"response": ["no"]}
    assert row.status == "answered"
