"""The OpenAI-compatible provider (plain aiohttp) against a loopback server."""

from __future__ import annotations

import gc
import json
import warnings
from decimal import Decimal
from pathlib import Path

import pytest
from _models_helpers import SECRET, TOOLS, run

from clinseek.errors import ModelError
from clinseek.models import (
    BadRequest,
    ContextLengthExceeded,
    GenerateConfig,
    ImageRef,
    Message,
    ModelResponse,
    ProviderUnavailable,
    RateLimited,
    ToolCall,
    get_model,
)
from fakes.llm_servers import OpenAIFake, Reply, usage_openai

CONVERSATION = [Message.system("You are a clinical assistant."), Message.user("Will the patient die in hospital?")]


def _generate(server: OpenAIFake, messages: list[Message] = CONVERSATION, config: GenerateConfig | None = None,
              name: str = "openai:gpt-test", **kwargs: object) -> ModelResponse:
    async def body() -> ModelResponse:
        model = get_model(name, base_url=server.url, **kwargs)  # type: ignore[arg-type]
        try:
            return await model.generate(messages, TOOLS, config or GenerateConfig(timeout_s=5))
        finally:
            await model.aclose()

    return run(body)


def test_a_tool_call_comes_back_with_its_canonical_name(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.tool_calls([("ehr__run_sql_query", {"sql_query": "SELECT 1"})]))
    response = _generate(openai_server)
    [call] = response.message.tool_calls
    assert (call.name, call.arguments, call.error_kind) == ("ehr.run_sql_query", {"sql_query": "SELECT 1"}, None)
    assert call.id.startswith("call_")
    assert response.stop_reason == "tool_calls"
    assert response.model == "openai:gpt-test"


def test_parallel_tool_calls_keep_the_model_order(openai_server: OpenAIFake) -> None:
    openai_server.script(
        openai_server.tool_calls(
            [("ehr__run_sql_query", {"sql_query": "SELECT 1"}), ("browser__search", {"query": "sepsis"}),
             ("ehr__finish", {"response": ["yes"]})]
        )
    )
    calls = _generate(openai_server).message.tool_calls
    assert [c.name for c in calls] == ["ehr.run_sql_query", "browser.search", "ehr.finish"]
    assert len({c.id for c in calls}) == 3


def test_malformed_json_arguments_are_kept_raw_and_flagged(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.tool_calls([("ehr__finish", '{"response": ["yes"')]))
    [call] = _generate(openai_server).message.tool_calls
    assert (call.name, call.arguments, call.raw_arguments, call.error_kind) == (
        "ehr.finish", {}, '{"response": ["yes"', "invalid_json"
    )


def test_an_unknown_tool_name_is_flagged_not_repaired(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.tool_calls([("ehr_finish", {"response": ["yes"]})]))
    [call] = _generate(openai_server).message.tool_calls
    assert (call.name, call.error_kind) == ("ehr_finish", "unknown_tool")


def test_the_request_is_json_with_wire_names_and_options(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.text("no"))
    _generate(openai_server, config=GenerateConfig(timeout_s=5, temperature=0.0, seed=3, tool_choice="ehr.finish",
                                                   parallel_tool_calls=False, max_output_tokens=321))
    [request] = openai_server.requests
    body = request.json
    assert [t["function"]["name"] for t in body["tools"]] == ["ehr__run_sql_query", "ehr__finish", "browser__search"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "ehr__finish"}}
    assert (body["temperature"], body["seed"], body["parallel_tool_calls"], body["max_tokens"]) == (0.0, 3, False, 321)
    assert body["messages"][0] == {"role": "system", "content": "You are a clinical assistant."}
    assert request.headers["content-type"] == "application/json"


def test_openai_itself_gets_max_completion_tokens(
    openai_server: OpenAIFake, openai_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no base_url means api.openai.com; point the SDK at the fake through its own variable instead
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    openai_server.script(openai_server.text("ok"))

    async def body() -> None:
        model = get_model("openai:gpt-5.1")
        await model.generate(CONVERSATION, (), GenerateConfig(max_output_tokens=99, timeout_s=5))
        await model.aclose()

    run(body)
    assert openai_server.requests[0].json["max_completion_tokens"] == 99
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_usage_cached_tokens_and_cost_are_recorded(openai_server: OpenAIFake) -> None:
    usage = usage_openai(input=1_000_000, output=100_000, cached=400_000)
    openai_server.script(openai_server.text("no", usage=usage))
    response = _generate(openai_server, name="openai:gpt-5.1")
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.cached_input_tokens) == (
        1_000_000, 100_000, 400_000
    )
    # 600k uncached x 1.25 + 400k cached x 0.125 + 100k out x 10 (USD per Mtok)
    assert response.cost_usd == Decimal("0.75") + Decimal("0.05") + Decimal("1.0")
    assert response.request_id and response.request_id.startswith("req_")
    assert response.provider_response_id and response.provider_response_id.startswith("chatcmpl-")
    assert response.latency_s > 0


def test_an_unpriced_model_has_unknown_cost_not_zero(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.text("no"))
    assert _generate(openai_server, name="openai:Qwen/Qwen3.5-35B-A3B").cost_usd is None


def test_a_text_reply_has_no_calls_and_keeps_reasoning(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.text("The answer is no.", reasoning="labs are normal"))
    response = _generate(openai_server)
    assert response.message.content == "The answer is no."
    assert response.message.reasoning == "labs are normal"
    assert (response.message.tool_calls, response.stop_reason) == ([], "end_turn")


def test_length_stop_is_max_tokens(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.text("The answer", finish="length"))
    assert _generate(openai_server).stop_reason == "max_tokens"


def test_history_with_tool_calls_and_results_is_encoded_for_the_wire(openai_server: OpenAIFake, tmp_path: Path) -> None:
    png = tmp_path / "cxr.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    good = ToolCall(id="call_a", name="ehr.run_sql_query", arguments={"sql_query": "SELECT 1"})
    bad = ToolCall(id="call_b", name="ehr.finish", raw_arguments="{oops", error_kind="invalid_json", error="bad")
    history = [
        *CONVERSATION,
        Message(role="assistant", content="", tool_calls=[good, bad]),
        Message.tool(good, "1 row"),
        Message(role="tool", content="see image", tool_call_id="call_b", images=[ImageRef(path=str(png))], is_error=True),
    ]
    openai_server.script(openai_server.text("ok"))
    _generate(openai_server, messages=history)
    sent = openai_server.requests[0].json["messages"]
    assert sent[2]["tool_calls"][0]["function"] == {"name": "ehr__run_sql_query", "arguments": '{"sql_query": "SELECT 1"}'}
    # arguments that did not parse go back as a JSON object (vLLM / SGLang refuse other text with HTTP 400)
    assert sent[2]["tool_calls"][1]["function"]["arguments"] == "{}"
    assert sent[2]["content"] == ""  # never null beside tool calls (llama-cpp-python answers null with 500)
    assert sent[3] == {"role": "tool", "tool_call_id": "call_a", "content": "1 row"}
    assert sent[4]["role"] == "tool" and sent[4]["tool_call_id"] == "call_b"
    assert sent[5]["role"] == "user"
    assert sent[5]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_rate_limit_maps_to_rate_limited_with_retry_after(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.rate_limited(7))
    with pytest.raises(RateLimited) as caught:
        _generate(openai_server)
    assert (caught.value.retry_after_s, caught.value.status_code, caught.value.retryable) == (7.0, 429, True)
    assert len(openai_server.requests) == 1  # the SDK did not retry on its own


def test_server_errors_map_to_provider_unavailable(openai_server: OpenAIFake) -> None:
    for reply in [openai_server.server_error(500), openai_server.overloaded(), openai_server.server_error(502)]:
        openai_server.script(reply)
        with pytest.raises(ProviderUnavailable) as caught:
            _generate(openai_server)
        assert caught.value.retryable
    assert len(openai_server.requests) == 3


def test_a_timeout_maps_to_provider_unavailable(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.slow(openai_server.text("late"), 3.0))
    with pytest.raises(ProviderUnavailable, match=r"timed out|no reply"):
        _generate(openai_server, config=GenerateConfig(timeout_s=0.3))


def test_a_refused_connection_maps_to_provider_unavailable() -> None:
    server = OpenAIFake().start()
    url = server.url
    server.stop()

    async def body() -> None:
        model = get_model("openai:gpt-test", base_url=url)
        try:
            await model.generate(CONVERSATION, (), GenerateConfig(timeout_s=2))
        finally:
            await model.aclose()

    with pytest.raises(ProviderUnavailable, match="connection"):
        run(body)


def test_context_length_errors_are_recognised(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.context_length())
    with pytest.raises(ContextLengthExceeded) as caught:
        _generate(openai_server)
    assert not caught.value.retryable
    # vLLM's wording, without OpenAI's error code
    openai_server.script(openai_server.error(400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."))
    with pytest.raises(ContextLengthExceeded):
        _generate(openai_server)


def test_other_client_errors_are_bad_requests(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.error(400, "temperature must be <= 2"), openai_server.error(401, "bad key"))
    for _ in range(2):
        with pytest.raises(BadRequest) as caught:
            _generate(openai_server)
        assert not caught.value.retryable


def test_an_unreadable_reply_maps_to_provider_unavailable(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.malformed_body())
    with pytest.raises(ProviderUnavailable):
        _generate(openai_server)


@pytest.mark.parametrize("body", [
    [], {"choices": []}, {"choices": "none"}, {"choices": ["text"]}, "\"a JSON string\"", {"id": "x"},
], ids=["list", "no-choices", "choices-text", "choice-text", "json-string", "no-choices-key"])
def test_a_reply_without_a_choice_object_maps_to_provider_unavailable(openai_server: OpenAIFake, body: object) -> None:
    openai_server.script(Reply(200, body, {"content-type": "application/json"}))
    with pytest.raises(ProviderUnavailable, match="no choices"):
        _generate(openai_server)


def test_odd_field_types_in_a_reply_are_read_as_missing(openai_server: OpenAIFake) -> None:
    """A choice whose fields have the wrong JSON types (servers that send objects where strings belong):
    the text is read, the rest is left unknown rather than failing the call."""
    openai_server.script(Reply(200, {"id": 7, "model": ["m"], "choices": [
        {"index": 0, "finish_reason": {"why": "stop"}, "message": {"role": "assistant", "content": "no",
                                                                   "tool_calls": {"not": "a list"}}}]}))
    response = _generate(openai_server)
    assert (response.message.content, response.message.tool_calls) == ("no", [])
    assert (response.provider_response_id, response.provider_model, response.raw_stop_reason) == (None, None, None)
    assert response.stop_reason == "other" and not response.usage_reported


def test_openai_without_a_key_names_the_variable_only() -> None:
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        get_model("openai:gpt-5.1")


def test_the_api_key_is_in_no_record_or_error(openai_server: OpenAIFake, openai_key: str) -> None:
    openai_server.script(
        openai_server.tool_calls([("ehr__finish", {"response": ["yes"]})]), openai_server.error(401, "invalid api key")
    )
    response = _generate(openai_server)
    assert openai_key not in response.model_dump_json()
    assert openai_key not in json.dumps(response.model_dump(mode="json"))
    with pytest.raises(BadRequest) as caught:
        _generate(openai_server)
    assert openai_key not in str(caught.value) and openai_key not in repr(caught.value)
    model = get_model("openai:gpt-test", base_url=openai_server.url)
    assert openai_key not in repr(model) and openai_key not in str(vars(model).get("name"))
    run(model.aclose)
    # but it was really sent to the server, in the header only
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {openai_key}"


def test_forcing_a_tool_that_is_not_offered_is_refused(openai_server: OpenAIFake) -> None:
    with pytest.raises(ModelError, match=r"tool_choice 'ehr\.nope'"):
        _generate(openai_server, config=GenerateConfig(tool_choice="ehr.nope"))
    assert openai_server.requests == []


def test_a_response_round_trips_through_json(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.tool_calls([("ehr__finish", '{"response": ')]))
    response = _generate(openai_server, name="openai:gpt-5.1")
    again = ModelResponse.model_validate_json(response.model_dump_json())
    assert again == response
    assert again.cost_usd == response.cost_usd


def test_an_assistant_turn_without_text_or_calls_is_sent_as_empty_text(openai_server: OpenAIFake) -> None:
    openai_server.script(openai_server.text("ok"))
    _generate(openai_server, messages=[*CONVERSATION, Message(role="assistant"), Message.user("and?")])
    assert openai_server.requests[0].json["messages"][2] == {"role": "assistant", "content": ""}


@pytest.mark.parametrize(
    ("headers", "expected"),
    [({"retry-after-ms": "1500"}, 1.5), ({"retry-after": "0"}, 0.0), ({}, None), ({"retry-after": "soon"}, None)],
)
def test_retry_after_headers_are_read(openai_server: OpenAIFake, headers: dict[str, str], expected: float | None) -> None:
    openai_server.script(openai_server.error(429, "slow down", headers=headers))
    with pytest.raises(RateLimited) as caught:
        _generate(openai_server)
    assert caught.value.retry_after_s == expected


def test_retry_after_as_an_http_date_is_seconds_from_now(openai_server: OpenAIFake) -> None:
    from email.utils import formatdate
    from time import time

    openai_server.script(openai_server.error(429, "slow down", headers={"retry-after": formatdate(time() + 30, usegmt=True)}))
    with pytest.raises(RateLimited) as caught:
        _generate(openai_server)
    assert caught.value.retry_after_s is not None and 25 <= caught.value.retry_after_s <= 31


def test_organization_and_project_headers_come_from_the_environment(
    openai_server: OpenAIFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-test")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_test")
    openai_server.script(openai_server.text("ok"))
    _generate(openai_server)
    headers = openai_server.requests[0].headers
    assert (headers["openai-organization"], headers["openai-project"]) == ("org-test", "proj_test")


def test_one_model_serves_calls_from_successive_event_loops(openai_server: OpenAIFake) -> None:
    """A model built once and called from two ``asyncio.run``s (a pre-flight, then the run) opens a session in each."""
    openai_server.script(openai_server.text("one"), openai_server.text("two"))
    model = get_model("openai:gpt-test", base_url=openai_server.url)

    async def once() -> str:
        return (await model.generate(CONVERSATION, (), GenerateConfig(timeout_s=5))).message.content

    assert [run(once), run(once)] == ["one", "two"]
    run(model.aclose)


def test_each_event_loop_gets_its_own_session_closed_with_the_loop(openai_server: OpenAIFake) -> None:
    """A model called from two ``anyio.run``s never leaves a session open: each loop's closes as the loop ends,
    and ``aclose`` on a third loop has nothing left of the first two (no ``Unclosed client session``)."""
    openai_server.script(openai_server.text("one"), openai_server.text("two"))
    model = get_model("openai:gpt-test", base_url=openai_server.url)

    async def once() -> str:
        return (await model.generate(CONVERSATION, (), GenerateConfig(timeout_s=5))).message.content

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [run(once), run(once)] == ["one", "two"]
        run(model.aclose)
        gc.collect()
    unclosed = [str(w.message) for w in caught if "Unclosed" in str(w.message)]
    assert unclosed == []
