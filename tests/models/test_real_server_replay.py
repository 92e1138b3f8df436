"""Real exchanges with llama-cpp-python 0.3.36 serving Qwen2.5-Coder-0.5B-Instruct (its own chat
template), recorded once with vcrpy and replayed here, so CI keeps the shapes a real server sends
without the server (docs/models.md, "Verified against a real server").

To record again: serve the model on 127.0.0.1:8765 (``python -m llama_cpp.server --model M.gguf
--model_alias qwen2.5-coder-0.5b-instruct --n_ctx 16384 --port 8765``) and run this file with
``CLINSEEK_RECORD_LLAMA=1``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from _models_helpers import run

from clinseek.agent import extract_answer
from clinseek.models import (
    ESTIMATE,
    GenerateConfig,
    Message,
    ModelResponse,
    estimate_tokens,
    get_model,
    preflight,
)

vcr = pytest.importorskip("vcr")

CASSETTES = Path(__file__).resolve().parent / "cassettes"
BASE_URL = "http://127.0.0.1:8765/v1"
MODEL = "openai:qwen2.5-coder-0.5b-instruct"
RECORD = os.environ.get("CLINSEEK_RECORD_LLAMA") == "1"
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "ehr.run_sql_query",
        "description": "Run one read-only DuckDB SQL query on this patient's records up to the current time.",
        "parameters": {"type": "object", "properties": {"sql_query": {"type": "string"}}, "required": ["sql_query"]}}},
    {"type": "function", "function": {
        "name": "ehr.finish",
        "description": "Submit the final answer: a list of items chosen from the candidate answers.",
        "parameters": {"type": "object", "properties": {"response": {"type": "array", "items": {"type": "string"}}},
                       "required": ["response"]}}},
]
SYSTEM = ("You answer questions about one patient by calling tools. Call ehr.run_sql_query to read the "
          "records, then ehr.finish with your answer.")
QUESTION = ("Will the patient die in hospital? Candidate answers: [\"yes\", \"no\"]. Tables: hosp.labevents "
            "(charttime, itemid, valuenum, flag).")
CURATED = ("## Labevents [2180-07-23 06:15:00]\n- label: Creatinine; valuenum: 1.4; flag: abnormal\n"
           "## Admissions [2180-07-22 14:00:00]\n- admission_type: URGENT\n\n"
           "Will the patient die in hospital? Candidate answers: [\"yes\", \"no\"].\n"
           "End your reply with exactly one <answer></answer> block holding the answer items, one per line.")


def _cassette(name: str) -> Any:
    recorder = vcr.VCR(cassette_library_dir=str(CASSETTES), record_mode="all" if RECORD else "none",
                       match_on=["method", "scheme", "host", "port", "path", "query"],
                       filter_headers=["authorization"], decode_compressed_response=True)
    return recorder.use_cassette(f"{name}.yaml")


def _generate(messages: list[Message], tools: list[dict[str, Any]]) -> ModelResponse:
    async def body() -> ModelResponse:
        model = get_model(MODEL, base_url=BASE_URL)
        try:
            return await model.generate(messages, tools, GenerateConfig(max_output_tokens=256, temperature=0.0,
                                                                        timeout_s=600))
        finally:
            await model.aclose()

    return run(body)


def _requests(name: str) -> list[dict[str, Any]]:
    import yaml

    data = yaml.safe_load((CASSETTES / f"{name}.yaml").read_text(encoding="utf-8"))
    return data["interactions"]


def test_pre_flight_against_llama_cpp_python() -> None:
    async def body() -> Any:
        model = get_model(MODEL, base_url=BASE_URL)
        try:
            return await preflight(model, tools=True, timeout_s=600)
        finally:
            await model.aclose()

    with _cassette("llama_cpp_python_preflight"):
        report, counter = run(body)
    assert report is not None and report.tools_checked
    assert report.token_counter == "server:llama-cpp-python /extras/tokenize/count" and counter is not ESTIMATE
    assert report.model_listed and report.served_models == ["qwen2.5-coder-0.5b-instruct"]  # --model_alias


def test_an_agent_exchange_the_server_accepts() -> None:
    """Turn 1: the model's call comes back as bare JSON in the text (with a stray ``response`` key);
    turn 2 replays it (content "", JSON argument text) with the tool result, which llama-cpp-python
    accepts (it answered null content with HTTP 500); the model's second call is not valid JSON and
    is flagged, not repaired."""
    conversation = [Message.system(SYSTEM), Message.user(QUESTION)]
    with _cassette("llama_cpp_python_agent"):
        first = _generate(conversation, TOOLS)
        calls = first.message.tool_calls
        assert calls, first.message.content
        history = [*conversation, first.message,
                   *[Message.tool(c, "flag   | n\nabnormal | 3\n(1 row)") for c in calls]]
        second = _generate(history, TOOLS)
    [call] = calls
    assert first.tool_calls_source == "content" and first.stop_reason == "tool_calls"
    assert (call.name, call.error_kind) == ("ehr.run_sql_query", None) and "sql_query" in call.arguments
    assert len(call.id) == 9 and call.id.isalnum()
    assert first.usage_reported and first.usage.input_tokens > 0
    sent = json.loads(_requests("llama_cpp_python_agent")[1]["request"]["body"])
    assistant = next(m for m in sent["messages"] if m["role"] == "assistant")
    assert assistant["content"] == ""
    assert all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in assistant["tool_calls"])
    [finish] = second.message.tool_calls
    assert (finish.name, finish.error_kind, second.tool_calls_source) == ("ehr.finish", "invalid_json", "content")


def test_a_curated_exchange_is_read_by_the_extractor() -> None:
    with _cassette("llama_cpp_python_curated"):
        response = _generate([Message.system("You are a careful clinician."), Message.user(CURATED)], [])
    found = extract_answer(response.message.content, ["yes", "no"])
    assert found is not None and (found.items, found.parse_mode) == (["no"], "candidate_match")


def test_the_estimate_is_an_upper_bound_of_the_real_tokenizer() -> None:
    """Token counts of EHR-shaped texts by the real Qwen2.5 tokenizer (``/extras/tokenize/count``,
    recorded): the estimate is never below them, and not far above."""
    from _calibration import QWEN25_COUNTS, SAMPLES

    for name, text in SAMPLES.items():
        real = QWEN25_COUNTS[name]
        assert real <= estimate_tokens(text) <= 2 * real, (name, real, estimate_tokens(text))
