"""The Anthropic provider (direct, Bedrock, Vertex), driven through the real anthropic SDK on loopback."""

from __future__ import annotations

import gc
import json
import warnings
from decimal import Decimal
from typing import Any

import pytest
from _models_helpers import TOOLS, run

from clinseek.errors import MissingExtraError, ModelError
from clinseek.models import (
    BadRequest,
    ContextLengthExceeded,
    GenerateConfig,
    Message,
    ModelResponse,
    ProviderUnavailable,
    RateLimited,
    ReasoningBlock,
    ToolCall,
    get_model,
)
from fakes.llm_servers import AnthropicFake, usage_anthropic

CONVERSATION = [Message.system("You are a clinical assistant."), Message.user("Will the patient die in hospital?")]


def _generate(
    server: AnthropicFake,
    messages: list[Message] = CONVERSATION,
    config: GenerateConfig | None = None,
    name: str = "anthropic:claude-test",
    tools: list[dict[str, Any]] = TOOLS,
    **kwargs: Any,
) -> ModelResponse:
    async def body() -> ModelResponse:
        model = get_model(name, base_url=server.url, **kwargs)
        try:
            return await model.generate(messages, tools, config or GenerateConfig(timeout_s=5))
        finally:
            await model.aclose()

    return run(body)


def test_tool_use_comes_back_with_canonical_names_in_order(anthropic_server: AnthropicFake, anthropic_key: str) -> None:
    anthropic_server.script(
        anthropic_server.tool_calls(
            [("ehr__run_sql_query", {"sql_query": "SELECT 1"}), ("ehr__finish", {"response": ["no"]})],
            content="Let me check.",
        )
    )
    response = _generate(anthropic_server)
    assert [(c.name, c.arguments) for c in response.message.tool_calls] == [
        ("ehr.run_sql_query", {"sql_query": "SELECT 1"}),
        ("ehr.finish", {"response": ["no"]}),
    ]
    assert response.message.content == "Let me check."
    assert response.stop_reason == "tool_calls"
    assert response.request_id and response.request_id.startswith("req_")


def test_an_unknown_tool_name_is_flagged(anthropic_server: AnthropicFake, anthropic_key: str) -> None:
    anthropic_server.script(anthropic_server.tool_calls([("finish", {"response": ["no"]})]))
    [call] = _generate(anthropic_server).message.tool_calls
    assert (call.name, call.error_kind) == ("finish", "unknown_tool")


def test_prompt_cache_breakpoints_sit_on_system_tools_and_last_turn(
    anthropic_server: AnthropicFake, anthropic_key: str
) -> None:
    anthropic_server.script(anthropic_server.text("no"))
    _generate(anthropic_server, config=GenerateConfig(timeout_s=5, tool_choice="required", parallel_tool_calls=False))
    body = anthropic_server.requests[0].json
    assert body["system"] == [
        {"type": "text", "text": "You are a clinical assistant.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [t["name"] for t in body["tools"]] == ["ehr__run_sql_query", "ehr__finish", "browser__search"]
    assert [("cache_control" in t) for t in body["tools"]] == [False, False, True]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert anthropic_server.requests[0].headers["x-stainless-retry-count"] == "0"


def test_usage_with_cache_reads_and_writes_and_its_cost(anthropic_server: AnthropicFake, anthropic_key: str) -> None:
    usage = usage_anthropic(input=100_000, output=10_000, cached=800_000, cache_write=100_000)
    anthropic_server.script(anthropic_server.text("no", usage=usage))
    response = _generate(anthropic_server, name="anthropic:claude-opus-4-6")
    assert response.usage.model_dump() == {
        "input_tokens": 1_000_000,
        "output_tokens": 10_000,
        "cached_input_tokens": 800_000,
        "cache_write_tokens": 100_000,
    }
    # 0.1 Mtok x 5 + 0.8 x 0.5 + 0.1 x 6.25 + 0.01 x 25
    assert response.cost_usd == Decimal("0.5") + Decimal("0.4") + Decimal("0.625") + Decimal("0.25")


def test_history_merges_tool_results_and_replays_thinking(anthropic_server: AnthropicFake, anthropic_key: str) -> None:
    a = ToolCall(id="toolu_a", name="ehr.run_sql_query", arguments={"sql_query": "SELECT 1"})
    b = ToolCall(id="toolu_b", name="browser.search", arguments={"query": "sepsis"})
    history = [
        *CONVERSATION,
        Message(
            role="assistant",
            tool_calls=[a, b],
            reasoning="think",
            reasoning_blocks=[
                ReasoningBlock(kind="thinking", text="think", signature="sig-9"),
                ReasoningBlock(kind="redacted_thinking", text="opaque"),
            ],
        ),
        Message.tool(a, "1 row"),
        Message.tool(b, "no results", is_error=True),
        Message.user("Please finish now."),
    ]
    anthropic_server.script(anthropic_server.text("no"))
    _generate(anthropic_server, messages=history)
    turns = anthropic_server.requests[0].json["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][0] == {"type": "thinking", "thinking": "think", "signature": "sig-9"}
    assert turns[1]["content"][1] == {"type": "redacted_thinking", "data": "opaque"}
    assert [b["name"] for b in turns[1]["content"][2:]] == ["ehr__run_sql_query", "browser__search"]
    results = turns[2]["content"]
    assert [(r["type"], r.get("tool_use_id"), r.get("is_error")) for r in results] == [
        ("tool_result", "toolu_a", False),
        ("tool_result", "toolu_b", True),
        ("text", None, None),
    ]


def test_thinking_comes_back_as_reasoning_with_its_signature(anthropic_server: AnthropicFake, anthropic_key: str) -> None:
    anthropic_server.script(anthropic_server.text("no", thinking="lactate is normal", signature="sig-x"))
    response = _generate(anthropic_server, config=GenerateConfig(timeout_s=5, thinking_budget_tokens=2048))
    assert response.message.reasoning == "lactate is normal"
    assert response.message.reasoning_blocks == [
        ReasoningBlock(kind="thinking", text="lactate is normal", signature="sig-x")
    ]
    assert anthropic_server.requests[0].json["thinking"] == {"type": "enabled", "budget_tokens": 2048}


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda s: s.rate_limited(3), RateLimited),
        (lambda s: s.server_error(500), ProviderUnavailable),
        (lambda s: s.overloaded(), ProviderUnavailable),
        (lambda s: s.context_length(), ContextLengthExceeded),
        (lambda s: s.error(400, "max_tokens: must be positive"), BadRequest),
        (lambda s: s.error(401, "invalid x-api-key"), BadRequest),
        (lambda s: s.malformed_body(), ProviderUnavailable),
    ],
)
def test_errors_map_to_the_taxonomy(
    anthropic_server: AnthropicFake, anthropic_key: str, make: Any, error: type[Exception]
) -> None:
    anthropic_server.script(make(anthropic_server))
    with pytest.raises(error) as caught:
        _generate(anthropic_server)
    if isinstance(caught.value, RateLimited):
        assert caught.value.retry_after_s == 3.0
    assert len(anthropic_server.requests) == 1
    assert anthropic_key not in str(caught.value)


def test_a_timeout_maps_to_provider_unavailable(anthropic_server: AnthropicFake, anthropic_key: str) -> None:
    anthropic_server.script(anthropic_server.slow(anthropic_server.text("late"), 3.0))
    with pytest.raises(ProviderUnavailable):
        _generate(anthropic_server, config=GenerateConfig(timeout_s=0.3))


def test_bedrock_with_a_bearer_key_calls_invoke(anthropic_server: AnthropicFake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-SECRET")
    anthropic_server.script(anthropic_server.tool_calls([("ehr__finish", {"response": ["yes"]})]))
    response = _generate(anthropic_server, name="bedrock:us.anthropic.claude-opus-4-6-v1", region="us-east-1")
    request = anthropic_server.requests[0]
    assert request.path == "/model/us.anthropic.claude-opus-4-6-v1/invoke"
    assert request.headers["authorization"] == "Bearer bedrock-SECRET"
    assert response.model == "bedrock:us.anthropic.claude-opus-4-6-v1"
    assert response.message.tool_calls[0].name == "ehr.finish"
    assert response.cost_usd is not None  # priced through the alias of anthropic:claude-opus-4-6
    assert "bedrock-SECRET" not in response.model_dump_json()


def test_vertex_with_an_access_token_calls_raw_predict(
    anthropic_server: AnthropicFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERTEX_ACCESS_TOKEN", "vertex-SECRET")
    anthropic_server.script(anthropic_server.text("no"))
    response = _generate(anthropic_server, name="vertex:claude-opus-4-6", region="us-east5", project_id="proj")
    request = anthropic_server.requests[0]
    assert request.path == "/projects/proj/locations/us-east5/publishers/anthropic/models/claude-opus-4-6:rawPredict"
    assert request.headers["authorization"] == "Bearer vertex-SECRET"
    assert response.message.content == "no"


def test_bedrock_without_a_key_or_boto3_asks_for_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    import importlib.util

    if importlib.util.find_spec("boto3") is not None:
        pytest.skip("boto3 is installed here")
    with pytest.raises(MissingExtraError, match=r"\[bedrock\]"):
        get_model("bedrock:anthropic.claude-opus-4-6-v1")


def test_anthropic_without_a_key_names_the_variable() -> None:
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        get_model("anthropic:claude-opus-4-6")


def test_the_api_key_is_in_no_serialized_response(anthropic_server: AnthropicFake, anthropic_key: str) -> None:
    anthropic_server.script(anthropic_server.tool_calls([("ehr__finish", {"response": ["yes"]})]))
    response = _generate(anthropic_server)
    assert anthropic_key not in response.model_dump_json()
    assert anthropic_key not in json.dumps(response.model_dump(mode="json"))
    assert anthropic_key in json.dumps(anthropic_server.requests[0].headers)  # it was sent, in a header


def test_sampling_fields_reach_the_body_although_the_sdk_dropped_them(
    anthropic_server: AnthropicFake, anthropic_key: str
) -> None:
    anthropic_server.script(anthropic_server.text("no"))
    _generate(anthropic_server, config=GenerateConfig(timeout_s=5, temperature=0.0, top_p=0.9))
    body = anthropic_server.requests[0].json
    assert body["temperature"] == 0.0 and body["top_p"] == 0.9


def test_a_reply_without_usage_has_unknown_cost_not_zero(anthropic_server: AnthropicFake, anthropic_key: str) -> None:
    reply = anthropic_server.text("no")
    body = {k: v for k, v in reply.body.items() if k != "usage"}  # a gateway that drops usage
    anthropic_server.script(type(reply)(reply.status, body, reply.headers))
    response = _generate(anthropic_server, name="anthropic:claude-opus-4-6")  # a priced model
    assert not response.usage_reported and response.cost_usd is None and response.usage.input_tokens == 0


@pytest.mark.parametrize("name", ["anthropic:claude-opus-4-6", "bedrock:anthropic.claude-opus-4-6-v1"])
def test_a_model_serves_successive_event_loops_and_leaves_no_session_open(
    anthropic_server: AnthropicFake, anthropic_key: str, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A model built once and called from two ``anyio.run``s (a pre-flight, then the run) gets a connection
    pool in each (one bound to the first loop fails in the second), each closed as its loop ends."""
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-test-key")
    anthropic_server.script(anthropic_server.text("one"), anthropic_server.text("two"))
    model = get_model(name, base_url=anthropic_server.url, region="us-east-1")

    async def once() -> str:
        return (await model.generate([Message.user("hi")], (), GenerateConfig(timeout_s=5))).message.content

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [run(once), run(once)] == ["one", "two"]
        run(model.aclose)
        gc.collect()
    assert [str(w.message) for w in caught if "Unclosed" in str(w.message)] == []
