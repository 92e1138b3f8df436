"""The text protocol: one fenced JSON action per reply, parsed strictly."""

from __future__ import annotations

import pytest
from _models_helpers import TOOLS, run

from clinseek.models import (
    GenerateConfig,
    Message,
    ModelResponse,
    ToolCall,
    get_model,
    parse_action,
    render_messages,
    to_tool_infos,
)
from fakes.llm_servers import AnthropicFake, OpenAIFake

NAMES = ["ehr.run_sql_query", "ehr.finish", "browser.search"]


def test_one_block_is_one_call() -> None:
    text = 'I will query.\n```json\n{"tool": "ehr.run_sql_query", "arguments": {"sql_query": "SELECT 1"}}\n```\n'
    assert parse_action(text, "text_1", NAMES) == [
        ToolCall(id="text_1", name="ehr.run_sql_query", arguments={"sql_query": "SELECT 1"})
    ]


def test_no_block_is_no_call() -> None:
    assert parse_action("The answer is yes.", "text_1", NAMES) == []
    assert parse_action("```sql\nSELECT 1\n```", "text_1", NAMES) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('```json\n{"tool": "ehr.finish", "arguments": {"response": ["yes"]}\n```', "invalid_json"),
        ('```json\n{"tool": "ehr.finish"}\n```', "format"),
        ('```json\n{"tool": "ehr.finish", "arguments": {}, "why": "x"}\n```', "format"),
        ('```json\n["ehr.finish"]\n```', "format"),
        ('```json\n{"tool": "finish", "arguments": {}}\n```', "unknown_tool"),
        ('```json\n{"tool": "ehr_finish", "arguments": {}}\n```', "unknown_tool"),
        ('```json\n{"tool": "ehr.finish", "arguments": ["yes"]}\n```', "not_an_object"),
        (
            '```json\n{"tool": "ehr.finish", "arguments": {}}\n```\n```json\n{"tool": "ehr.finish", "arguments": {}}\n```',
            "format",
        ),
    ],
)
def test_malformed_actions_are_errors_not_guesses(text: str, kind: str) -> None:
    [call] = parse_action(text, "text_2", NAMES)
    assert call.error_kind == kind
    assert call.arguments == {}
    assert (call.error and "json" in call.error.lower()) or kind == "unknown_tool"


def test_rendering_lists_tools_and_turns_results_into_user_turns() -> None:
    call = ToolCall(id="text_1", name="ehr.run_sql_query", arguments={"sql_query": "SELECT 1"})
    history = [
        Message.system("You are a clinical assistant."),
        Message.user("Question?"),
        Message(role="assistant", content="", tool_calls=[call]),
        Message.tool(call, "1 row"),
    ]
    rendered = render_messages(history, to_tool_infos(TOOLS))
    assert [m.role for m in rendered] == ["system", "user", "assistant", "user"]
    assert rendered[0].content.startswith("You are a clinical assistant.")
    assert "## ehr.run_sql_query" in rendered[0].content and '"tool": "<tool name>"' in rendered[0].content
    assert '"tool": "ehr.run_sql_query"' in rendered[2].content
    assert rendered[3].content == "[result of ehr.run_sql_query (call text_1)]\n1 row"
    assert all(not m.tool_calls for m in rendered)


def _text_model_call(server: OpenAIFake | AnthropicFake, name: str, history: list[Message]) -> ModelResponse:
    async def body() -> ModelResponse:
        model = get_model(name, base_url=server.url, tool_protocol="text")
        assert model.supports_native_tools is False
        try:
            return await model.generate(history, TOOLS, GenerateConfig(timeout_s=5))
        finally:
            await model.aclose()

    return run(body)


def test_text_protocol_end_to_end_over_openai_compatible_http(openai_server: OpenAIFake) -> None:
    openai_server.script(
        openai_server.text('Checking.\n```json\n{"tool": "ehr.finish", "arguments": {"response": ["no"]}}\n```')
    )
    history = [Message.system("sys"), Message.user("q"), Message(role="assistant", content="hi")]
    response = _text_model_call(openai_server, "openai:local-model", history)
    [call] = response.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("text_2", "ehr.finish", {"response": ["no"]})
    assert response.stop_reason == "tool_calls"
    body = openai_server.requests[0].json
    assert "tools" not in body and "tool_choice" not in body
    assert "## ehr.finish" in body["messages"][0]["content"]


def test_text_protocol_over_anthropic_merges_result_turns(anthropic_server: AnthropicFake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    anthropic_server.script(anthropic_server.text("```json\n{oops}\n```"))
    a = ToolCall(id="text_1", name="ehr.run_sql_query", arguments={"sql_query": "SELECT 1"})
    history = [Message.user("q"), Message(role="assistant", content="", tool_calls=[a]), Message.tool(a, "1 row"),
               Message.user("reminder")]
    response = _text_model_call(anthropic_server, "anthropic:claude-test", history)
    assert response.message.tool_calls[0].error_kind == "invalid_json"
    turns = anthropic_server.requests[0].json["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert "tools" not in anthropic_server.requests[0].json
