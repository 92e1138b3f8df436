"""Conformance with real OpenAI-compatible servers: requests their strictest checks accept, replies in
every shape they send. Each server's strictness is reproduced by a loopback fake profile
(tests/fakes/llm_servers.py, PROFILES); the real SDK sends the requests."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _models_helpers import TOOLS, run

from clinseek.models import GenerateConfig, Message, ModelResponse, ToolCall, get_model
from fakes.llm_servers import PROFILES, OpenAIFake

CONVERSATION = [Message.system("You are a clinical assistant."), Message.user("Will the patient die in hospital?")]
_MODEL_OF = {"vllm": "Qwen/Qwen3-8B", "vllm-mistral": "mistralai/Mistral-Small", "ollama": "qwen2.5:7b",
             "vllm-no-tool-parser": "Qwen/Qwen3-8B"}


def _history() -> list[Message]:
    """A conversation with every kind of turn a run replays: parallel calls with no text, a call whose
    arguments did not parse, a call read from text (synthesized id), tool results, an error result."""
    good = ToolCall(id="call_a1", name="ehr.run_sql_query", arguments={"sql_query": "SELECT 1"})
    bad = ToolCall(id="call_b2", name="ehr.finish", raw_arguments='{"response": ["ye', error_kind="invalid_json",
                   error="bad")
    return [
        *CONVERSATION,
        Message(role="assistant", content="", tool_calls=[good, bad]),
        Message.tool(good, "1 row"),
        Message.tool(bad, "arguments are not valid JSON", is_error=True),
        Message(role="assistant", content="Let me look.", tool_calls=[
            ToolCall(id="call1a2b0", name="ehr.run_sql_query", arguments={"sql_query": "SELECT 2"})]),
        Message(role="tool", content="", tool_call_id="call1a2b0", name="ehr.run_sql_query"),
        Message(role="assistant", content=""),
    ]


def _generate(server: OpenAIFake, messages: list[Message], model: str = "fake-model",
              tools: list[dict[str, Any]] = TOOLS) -> ModelResponse:
    async def body() -> ModelResponse:
        chat = get_model(f"openai:{model}", base_url=server.url)
        try:
            return await chat.generate(messages, tools, GenerateConfig(timeout_s=5))
        finally:
            await chat.aclose()

    return run(body)


@pytest.mark.parametrize("profile", ["llama-cpp-python", "llama.cpp", "vllm", "sglang", "ollama", "tgi"])
def test_a_replayed_history_passes_each_servers_checks(profile: str) -> None:
    with OpenAIFake(profile=profile) as server:
        server.script(server.text("ok"))
        response = _generate(server, _history(), model=_MODEL_OF.get(profile, "fake-model"))
    assert response.message.content == "ok"
    sent = server.requests[-1].json["messages"]
    assistants = [m for m in sent if m["role"] == "assistant"]
    assert all(isinstance(m["content"], str) for m in assistants)  # "" beside tool calls, never null or absent
    for m in assistants:
        for call in m.get("tool_calls", []):
            assert isinstance(json.loads(call["function"]["arguments"]), dict)


def test_the_null_content_500_of_llama_cpp_python_is_reproduced() -> None:
    """The fake is as strict as the server: the request clinseek sent before (content null) fails."""
    with OpenAIFake(profile="llama-cpp-python") as server:
        bad = {"model": "m", "messages": [{"role": "assistant", "content": None, "tool_calls": []}]}
        reply = server._refusal(bad)
    assert reply is not None and reply.status == 500


def test_synthesized_call_ids_pass_mistrals_nine_character_rule() -> None:
    text_call = '<tool_call>\n{"name": "ehr__run_sql_query", "arguments": {"sql_query": "SELECT 1"}}\n</tool_call>'
    with OpenAIFake(profile="vllm-mistral") as server:
        server.script(server.text(text_call), server.text("done"))
        first = _generate(server, CONVERSATION, model="mistralai/Mistral-Small")
        [call] = first.message.tool_calls
        history = [*CONVERSATION, first.message, Message.tool(call, "1")]
        assert _generate(server, history, model="mistralai/Mistral-Small").message.content == "done"
    assert len(call.id) == 9 and call.id.isalnum()


def test_missing_and_repeated_native_ids_are_replaced() -> None:
    with OpenAIFake() as server:
        server.script(server.tool_calls([("ehr__run_sql_query", {"sql_query": "SELECT 1"}),
                                         ("ehr__run_sql_query", {"sql_query": "SELECT 2"}),
                                         ("ehr__finish", {"response": ["no"]})], ids=[None, "0", "0"]))
        calls = _generate(server, CONVERSATION).message.tool_calls
    ids = [c.id for c in calls]
    assert len(set(ids)) == 3 and ids[1] == "0" and all(i for i in ids)


def test_arguments_sent_as_objects_are_read() -> None:
    with OpenAIFake(profile="tgi") as server:
        server.script(server.tool_calls([("ehr__finish", {"response": ["yes"]})], arguments_as_objects=True))
        [call] = _generate(server, CONVERSATION).message.tool_calls
    assert (call.name, call.arguments, call.error_kind) == ("ehr.finish", {"response": ["yes"]}, None)


_CONTENT_SHAPES = {
    "qwen_tags": '<tool_call>\n{"name": "ehr__finish", "arguments": {"response": ["yes"]}}\n</tool_call>',
    "fenced": 'I will answer.\n```json\n{"name": "ehr__finish", "arguments": {"response": ["yes"]}}\n```',
    "bare": '{"name": "ehr__finish", "arguments": {"response": ["yes"]}}',
    "llama3_parameters": '<|python_tag|>{"name": "ehr__finish", "parameters": {"response": ["yes"]}}',
    "mistral": '[TOOL_CALLS][{"name": "ehr__finish", "arguments": {"response": ["yes"]}}]',
    "canonical_name": '<tool_call>{"name": "ehr.finish", "arguments": "{\\"response\\": [\\"yes\\"]}"}</tool_call>',
    "openai_shape": '```json\n{"type": "function", "function": {"name": "ehr__finish", "arguments": {"response": ["yes"]}}}\n```',
}


@pytest.mark.parametrize("shape", sorted(_CONTENT_SHAPES))
def test_tool_calls_written_in_the_text_are_read(shape: str) -> None:
    with OpenAIFake(profile="llama-cpp-python") as server:
        server.script(server.text(_CONTENT_SHAPES[shape]))
        response = _generate(server, CONVERSATION)
    [call] = response.message.tool_calls
    assert (call.name, call.arguments, call.error_kind) == ("ehr.finish", {"response": ["yes"]}, None)
    assert response.tool_calls_source == "content" and response.stop_reason == "tool_calls"
    assert "ehr__finish" not in response.message.content


def test_parallel_tagged_calls_keep_their_order() -> None:
    text = ('<tool_call>{"name": "ehr__run_sql_query", "arguments": {"sql_query": "SELECT 1"}}</tool_call>\n'
            '<tool_call>{"name": "browser__search", "arguments": {"query": "sepsis"}}</tool_call>')
    with OpenAIFake() as server:
        server.script(server.text(text))
        calls = _generate(server, CONVERSATION).message.tool_calls
    assert [c.name for c in calls] == ["ehr.run_sql_query", "browser.search"] and len({c.id for c in calls}) == 2


def test_a_text_call_of_an_unknown_tool_or_a_broken_block_is_flagged_not_repaired() -> None:
    with OpenAIFake() as server:
        server.script(server.text('<tool_call>{"name": "sql", "arguments": {"q": 1}}</tool_call>'),
                      server.text("<tool_call>{not json</tool_call>"))
        [unknown] = _generate(server, CONVERSATION).message.tool_calls
        [broken] = _generate(server, CONVERSATION).message.tool_calls
    assert (unknown.name, unknown.error_kind) == ("sql", "unknown_tool")
    assert broken.error_kind == "format" and broken.raw_arguments and "not json" in broken.raw_arguments


def test_a_call_with_a_stray_key_is_read_and_a_broken_one_is_flagged() -> None:
    """Both as Qwen2.5-Coder-0.5B wrote them to llama-cpp-python (tests/models/cassettes/)."""
    stray = '{"name": "ehr__run_sql_query", "arguments": {"sql_query": "SELECT 1"}, "response": ["no"]}'
    broken = '{"name": "ehr__finish", "arguments": "{\\"response\\": ["abnormal"]}"}'
    with OpenAIFake() as server:
        server.script(server.text(stray), server.text(broken))
        [call] = _generate(server, CONVERSATION).message.tool_calls
        [flagged] = _generate(server, CONVERSATION).message.tool_calls
    assert (call.name, call.arguments, call.error_kind) == ("ehr.run_sql_query", {"sql_query": "SELECT 1"}, None)
    assert (flagged.name, flagged.error_kind, flagged.raw_arguments) == ("ehr.finish", "invalid_json", broken)


def test_calls_one_per_line_are_parallel_calls() -> None:
    """As Qwen2.5-Coder-0.5B wrote them to llama-cpp-python in the agent run of docs/models.md."""
    text = ('{"name": "ehr__load_ehr", "arguments": {}}\n'
            '{"name": "ehr__run_sql_query", "arguments": {"sql_query": "SELECT 1"}}\n'
            '{"name": "ehr__finish", "arguments": ["yes"]}')
    with OpenAIFake() as server:
        server.script(server.text(text))
        calls = _generate(server, CONVERSATION, tools=[*TOOLS, {"name": "ehr.load_ehr", "parameters": {}}]).message.tool_calls
    assert [(c.name, c.error_kind) for c in calls] == [("ehr.load_ehr", None), ("ehr.run_sql_query", None),
                                                       ("ehr.finish", "not_an_object")]


def test_a_text_call_whose_arguments_are_a_list_is_flagged() -> None:
    with OpenAIFake() as server:
        server.script(server.text('{"name": "ehr__finish", "arguments": ["no"]}'))
        [call] = _generate(server, CONVERSATION).message.tool_calls
    assert (call.name, call.error_kind, call.raw_arguments) == ("ehr.finish", "not_an_object", '["no"]')


def test_json_that_is_not_a_call_stays_text() -> None:
    with OpenAIFake() as server:
        server.script(server.text('```json\n{"response": ["yes"]}\n```'))
        response = _generate(server, CONVERSATION)
    assert response.message.tool_calls == [] and '"response"' in response.message.content
    assert response.tool_calls_source is None


def test_no_text_call_is_read_when_no_tool_was_offered() -> None:
    with OpenAIFake() as server:
        server.script(server.text('{"name": "ehr__finish", "arguments": {"response": ["yes"]}}'))
        response = _generate(server, CONVERSATION, tools=[])
    assert response.message.tool_calls == []


@pytest.mark.parametrize(("content", "field", "expected_text", "expected_reasoning"), [
    ("<think>The labs are stable.</think>\n<answer>\nno\n</answer>", None, "<answer>\nno\n</answer>",
     "The labs are stable."),
    ("The labs are stable.</think>\n\nno", None, "no", "The labs are stable."),  # template opened the block
    ("<think>still thinking", None, "", "still thinking"),  # cut by max_tokens
    ("no", "reasoning_content", "no", "server-side reasoning"),
    ("no", "reasoning", "no", "server-side reasoning"),
])
def test_reasoning_is_moved_out_of_the_text(content: str, field: str | None, expected_text: str,
                                            expected_reasoning: str) -> None:
    with OpenAIFake() as server:
        if field:
            server.script(server.text(content, reasoning="server-side reasoning", reasoning_field=field))
        else:
            server.script(server.text(content))
        message = _generate(server, CONVERSATION, tools=[]).message
    assert (message.content, message.reasoning) == (expected_text, expected_reasoning)


def test_a_reply_without_usage_has_unknown_cost_not_zero() -> None:
    with OpenAIFake() as server:
        server.script(server.text("no", with_usage=False))
        response = _generate(server, CONVERSATION)
    assert response.usage_reported is False and response.usage.input_tokens == 0 and response.cost_usd is None


def test_null_content_and_content_parts_are_read() -> None:
    with OpenAIFake() as server:
        server.script(server.text(None, finish=None))
        assert _generate(server, CONVERSATION).message.content == ""
        server.script(server._completion({"role": "assistant", "content": [{"type": "text", "text": "n"},
                                                                           {"type": "text", "text": "o"}]},
                                         "stop", None, "m"))
        assert _generate(server, CONVERSATION).message.content == "no"


def test_every_profile_is_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text(encoding="utf-8")
    for name in ["vLLM", "SGLang", "llama-server --jinja", "llama-cpp-python", "Ollama", "LM Studio", "TGI"]:
        assert name in doc, name
    assert set(PROFILES) >= {"llama-cpp-python", "llama.cpp", "vllm", "sglang", "ollama", "tgi"}
