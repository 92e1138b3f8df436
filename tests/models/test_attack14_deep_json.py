"""Attack 14: JSON nested past Python's recursion limit in what a model writes must never crash the reader.

``json.loads`` raises ``RecursionError`` (not a ``ValueError``) for ~1,000 nested brackets (2,000
characters: a degenerate generation fits it easily in the output-token limit). Every reader of a
model's text catches ``ValueError`` only; the error escaped ``generate`` and ended the run.
"""

from __future__ import annotations

from typing import Any

import pytest
from _models_helpers import TOOLS, run

from clinseek.models import GenerateConfig, Message, ModelCallError, ModelResponse, get_model
from clinseek.models._names import tool_set
from clinseek.models._openai_wire import decode_message
from clinseek.models._text_protocol import parse_action
from fakes.llm_servers import AnthropicFake, OpenAIFake, Reply

NAMES = tool_set("openai", TOOLS).names
DEEP = "[" * 5000 + "]" * 5000  # json raises RecursionError
READABLE = "[" * 900 + "]" * 900  # json reads it; every recursive step after it (checks, records, requests) fails


def _native(arguments: str) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"id": "a", "type": "function",
                                           "function": {"name": "ehr__finish", "arguments": arguments}}]}


@pytest.mark.parametrize("message", [
    _native('{"response": ' + DEEP + "}"),
    {"content": "<tool_call>" + DEEP + "</tool_call>"},
    {"content": '<tool_call>{"name": "ehr__finish", "arguments": {"response": ' + DEEP + "}}</tool_call>"},
    {"content": DEEP},
    {"content": "[TOOL_CALLS]" + DEEP},
    {"content": "[TOOL_CALLS]ehr__finish[ARGS]" + DEEP},
    {"content": "```json\n" + DEEP + "\n```"},
    {"content": '{"a": 1}\n' + DEEP},
    {"content": '{"name": "ehr__finish", "arguments": ' + DEEP},
    {"content": "<|channel|>commentary to=functions.ehr__finish<|message|>" + DEEP + "<|call|>"},
], ids=["native", "tagged", "tagged-arguments", "whole", "prefixed", "mistral-v11", "fenced", "sequence", "broken",
        "harmony"])
@pytest.mark.parametrize("depth", ["past-json", "readable"])
def test_deeply_nested_json_in_a_reply_is_read_without_a_crash(message: dict[str, Any], depth: str) -> None:
    if depth == "readable":
        message = {k: v.replace(DEEP, READABLE) if isinstance(v, str) else v for k, v in message.items()}
        if "tool_calls" in message:
            message = _native('{"response": ' + READABLE + "}")
    reply, _ = decode_message({"role": "assistant", **message}, NAMES)
    for call in reply.tool_calls:  # a call is flagged (never run with a guess); text stays text
        assert call.error_kind is not None


@pytest.mark.parametrize("deep", [DEEP, READABLE], ids=["past-json", "readable"])
def test_the_text_protocol_reads_a_deeply_nested_action_without_a_crash(deep: str) -> None:
    calls = parse_action("```json\n" + deep + "\n```", "text_1", ["ehr.finish"])
    assert len(calls) == 1 and calls[0].error_kind is not None
    nested = parse_action('```json\n{"tool": "ehr.finish", "arguments": {"response": ' + deep + "}}\n```",
                          "text_1", ["ehr.finish"])
    assert len(nested) == 1 and nested[0].error_kind == "invalid_json"


def test_arguments_a_few_levels_deep_are_still_read() -> None:
    nested = '{"response": ' + "[" * 10 + '"no"' + "]" * 10 + "}"
    reply, _ = decode_message({"role": "assistant", **_native(nested)}, NAMES)
    assert reply.tool_calls[0].error_kind is None


def _reply_body(deep: str) -> str:
    """A TGI-style reply (arguments as an object) whose arguments nest ``deep``."""
    return ('{"id": "x", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "finish_reason": '
            '"tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": '
            '"function", "function": {"name": "ehr__finish", "arguments": {"response": ' + deep + '}}}]}}]}')


@pytest.mark.parametrize("status, body", [(200, _reply_body(DEEP)), (400, _reply_body(DEEP)),
                                          (200, _reply_body(READABLE).replace('"content": null', '"content": "\\udc00"'))],
                         ids=["past-json", "error-status", "readable-with-a-surrogate-escape"])
def test_a_reply_body_nested_past_the_limit_is_a_provider_error_not_a_crash(
    openai_server: OpenAIFake, openai_key: str, status: int, body: str
) -> None:
    openai_server.script(Reply(status, body))

    async def body() -> None:
        model = get_model("openai:gpt-test", base_url=openai_server.url)
        try:
            await model.generate([Message.user("go")], TOOLS, GenerateConfig(timeout_s=5))
        finally:
            await model.aclose()

    with pytest.raises(ModelCallError):
        run(body)


def test_a_readable_deep_reply_body_is_an_invalid_json_call(openai_server: OpenAIFake, openai_key: str) -> None:
    openai_server.script(Reply(200, _reply_body(READABLE)))

    async def body() -> ModelResponse:
        model = get_model("openai:gpt-test", base_url=openai_server.url)
        try:
            return await model.generate([Message.user("go")], TOOLS, GenerateConfig(timeout_s=5))
        finally:
            await model.aclose()

    assert run(body).message.tool_calls[0].error_kind == "invalid_json"


@pytest.mark.parametrize("deep", [DEEP, READABLE], ids=["past-json", "readable"])
def test_an_anthropic_tool_use_nested_past_the_limit_is_answered_or_a_provider_error(
    anthropic_server: AnthropicFake, anthropic_key: str, deep: str
) -> None:
    anthropic_server.script(Reply(200, '{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", '
                                       '"stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 1, '
                                       '"output_tokens": 1}, "content": [{"type": "tool_use", "id": "toolu_1", "name": '
                                       '"ehr__finish", "input": {"response": ' + deep + "}}]}",
                                  {"content-type": "application/json"}))

    async def body() -> ModelResponse:
        model = get_model("anthropic:claude-sonnet-4-5", base_url=anthropic_server.url)
        try:
            return await model.generate([Message.user("go")], TOOLS, GenerateConfig(timeout_s=5))
        finally:
            await model.aclose()

    if deep == DEEP:
        with pytest.raises(ModelCallError):
            run(body)
    else:
        assert run(body).message.tool_calls[0].error_kind == "invalid_json"
