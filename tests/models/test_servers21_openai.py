"""Servers 21: OpenAI-compatible servers over real HTTP (a local aiohttp server), replies not mimicked before.

Each test serves the exact bytes below to ``openai:test-model`` at ``http://127.0.0.1:<port>/v1``.
Measured before the fixes:

- ``function.arguments`` sent as a JSON array or a number (llama-server serves the arguments as parsed JSON,
  not as a string, since ggml-org/llama.cpp#20198 / --tool-args-object, ggml-org/llama.cpp#20202: whatever
  the model wrote there comes through as it is) escaped the provider as ``AttributeError: 'list' object has
  no attribute 'strip'``: no ModelCallError, no call record, the row an ``infra_error`` on every retry;
- ``function.arguments`` ``"null"`` (vLLM's hermes parser writes ``json.dumps(arguments)`` of a model's
  ``"arguments": null``) was refused with ``arguments must be a JSON object, got NoneType``, while the
  JSON value ``null`` was read as ``{}``; the model was told a Python type name;
- a 200 whose JSON is an error object with the HTTP status in ``error.code`` (OpenRouter, docs "Errors":
  "the returned HTTP response status will be 200 and any error occurred while the LLM is producing the
  output will be emitted in the response body") was ``ProviderUnavailable`` whatever the code: a context
  overflow (400) was retried six times instead of compacting, a key that is not valid (401) retried six
  times;
- FastAPI's own 422 (``{"detail": [{"loc": [...], "msg": ...}]}``: llama-cpp-python, FastChat, LiteLLM's
  proxy validation; microsoft/autogen#1829, hiyouga/LlamaFactory#2644) read ``HTTP 422: Error code: 422``:
  the field and the cause were dropped.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

aiohttp = pytest.importorskip("aiohttp")
from aiohttp import web  # noqa: E402
from test_attack17_servers import _serve  # noqa: E402

from clinseek.models import (  # noqa: E402
    BadRequest,
    ContextLengthExceeded,
    GenerateConfig,
    Message,
    ProviderUnavailable,
    RateLimited,
    get_model,
)

FINISH = {"name": "ehr.finish", "description": "Give the final answer.",
          "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}}}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def _call(raw: bytes, status: int = 200, content_type: str = "application/json") -> Any:
    """One generate() (``ehr.finish`` offered) against a server that answers ``raw``: the response or the error."""
    seen: list[bytes] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(await request.read())
        return web.Response(body=raw, status=status, content_type=content_type)

    async def main() -> Any:
        async with _serve(handler) as url:
            model = get_model("openai:test-model", base_url=url)
            try:
                return await model.generate([Message(role="user", content="hi")], [FINISH],
                                            GenerateConfig(timeout_s=20))
            except Exception as err:
                return err
            finally:
                await model.aclose()

    got = anyio.run(main)
    assert len(seen) == 1
    return got


def _calls_reply(*arguments: str) -> bytes:
    """A llama-server style reply: one ``ehr__finish`` call per ``arguments`` (JSON text of the field)."""
    calls = ",".join(f'{{"type":"function","function":{{"name":"ehr__finish","arguments":{a}}},"id":"c{i}"}}'
                     for i, a in enumerate(arguments))
    return (b'{"choices":[{"finish_reason":"tool_calls","index":0,"message":{"role":"assistant","content":null,'
            b'"tool_calls":[' + calls.encode() + b']}}],"created":1760000000,"model":"qwen3","object":'
            b'"chat.completion","usage":{"completion_tokens":20,"prompt_tokens":300,"total_tokens":320},'
            b'"id":"chatcmpl-1"}')


@pytest.mark.parametrize(("arguments", "said"), [('["yes"]', "array"), ("7", "number"), ("true", "boolean")],
                         ids=["array", "number", "boolean"])
def test_arguments_served_as_json_that_is_not_an_object_are_a_call_error(arguments: str, said: str) -> None:
    """The malformed call is answered with an error the model can fix; the good call beside it is read."""
    got = _call(_calls_reply('{"answer":"yes"}', arguments))
    assert not isinstance(got, Exception), repr(got)
    good, bad = got.message.tool_calls
    assert (good.name, good.arguments, good.error_kind) == ("ehr.finish", {"answer": "yes"}, None)
    assert (bad.name, bad.error_kind, bad.raw_arguments) == ("ehr.finish", "not_an_object", arguments), bad
    assert bad.error == f"arguments must be a JSON object, got {said}", bad.error


def test_arguments_null_written_as_text_are_no_arguments_like_the_json_null() -> None:
    got = _call(_calls_reply('"null"', "null"))
    assert not isinstance(got, Exception), repr(got)
    assert [(c.arguments, c.error_kind) for c in got.message.tool_calls] == [({}, None), ({}, None)]


def test_a_json_string_that_is_not_an_object_names_the_json_type() -> None:
    got = _call(_calls_reply('"\\"yes\\""'))
    (call,) = got.message.tool_calls
    assert (call.error_kind, call.error) == ("not_an_object", "arguments must be a JSON object, got string")


# OpenRouter's error shape (docs "Errors"): {"error": {"code": <HTTP status>, "message": ..., "metadata": ...}}
@pytest.mark.parametrize(
    ("raw", "kind", "said"),
    [
        (b'{"error":{"message":"This endpoint\'s maximum context length is 8192 tokens. However, you requested '
         b'about 9000 tokens. Please reduce the length of either one, or use the \\"middle-out\\" transform.",'
         b'"code":400,"metadata":{"provider_name":"DeepInfra"}},"user_id":"user_1"}',
         ContextLengthExceeded, "maximum context length"),
        (b'{"error":{"message":"User not found.","code":401},"user_id":null}', BadRequest, "User not found"),
        (b'{"error":{"message":"Rate limit exceeded: free-models-per-min.","code":429,"metadata":{"headers":'
         b'{"X-RateLimit-Limit":"20"}}},"user_id":"user_1"}', RateLimited, "Rate limit exceeded"),
        (b'{"error":{"message":"Provider returned error","code":502,"metadata":{"provider_name":"Chutes",'
         b'"raw":"upstream connect error"}},"user_id":"user_1"}', ProviderUnavailable, "Provider returned error"),
    ],
    ids=["400-context", "401", "429", "502"],
)
def test_a_200_reply_whose_error_carries_its_status_is_classified_by_it(raw: bytes, kind: type, said: str) -> None:
    got = _call(raw)
    assert type(got) is kind, repr(got)
    assert said in str(got) and "HTTP 200" in str(got), str(got)


def test_a_200_error_without_a_status_code_stays_retryable() -> None:
    got = _call(b'{"error":{"message":"Upstream idle timeout","code":"upstream_error"}}')
    assert type(got) is ProviderUnavailable and "Upstream idle timeout" in str(got), repr(got)


def test_fastapis_own_422_names_the_field_and_the_cause() -> None:
    """The bytes of microsoft/autogen#1829 (a FastChat / llama-cpp-python style FastAPI server)."""
    raw = json.dumps({"detail": [{"loc": ["body", "messages", 2, "content"], "msg": "none is not an allowed value",
                                  "type": "type_error.none.not_allowed"}]}).encode()
    got = _call(raw, status=422)
    assert type(got) is BadRequest, repr(got)
    assert "body.messages.2.content: none is not an allowed value" in str(got), str(got)


# -- tool-call ids repeated across turns -----------------------------------------------------------------
# OpenAI refuses a history in which one tool_call_id answers twice (agno-agi/agno#5116, the bytes below);
# DeepSeek words it the same way, Mistral counts calls and results ("Not the same number of function calls and
# responses", NousResearch/hermes-agent#11722). Kimi K2 names its ids `functions.<name>:<n>`, counted per turn
# (NousResearch/hermes-agent#72766), and a server that sends no id got clinseek's own `call0000n` every turn.
def _duplicate_refusal(call_id: str, first: int, second: int) -> dict[str, Any]:
    return {"error": {"message": f"Invalid parameter: Duplicate value for 'tool_call_id' of '{call_id}' in "
                                 f"messages[{first}] and messages[{second}].", "type": "invalid_request_error",
                      "param": f"messages.[{second}].tool_call_id", "code": None}}


@pytest.mark.parametrize("call_id", [None, "functions.ehr__run_sql_query:0"], ids=["no-id", "kimi-per-turn"])
def test_call_ids_a_server_repeats_across_turns_go_back_unique(call_id: str | None) -> None:
    sql = {"name": "ehr.run_sql_query", "description": "Run SQL.",
           "parameters": {"type": "object", "properties": {"sql_query": {"type": "string"}}}}
    seen: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append(body)
        answered: dict[str, int] = {}
        for i, message in enumerate(body["messages"]):
            if message["role"] == "tool":
                if message["tool_call_id"] in answered:
                    return web.json_response(_duplicate_refusal(message["tool_call_id"],
                                                                answered[message["tool_call_id"]], i), status=400)
                answered[message["tool_call_id"]] = i
        call = {"index": 0, "type": "function",
                "function": {"name": "ehr__run_sql_query", "arguments": '{"sql_query": "SELECT 1"}'}}
        if call_id is not None:
            call["id"] = call_id
        return web.json_response({"id": "x", "model": "m", "choices": [
            {"index": 0, "finish_reason": "tool_calls",
             "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]})

    async def main() -> Any:
        async with _serve(handler) as url:
            model = get_model("openai:test-model", base_url=url)
            history = [Message(role="user", content="hi")]
            try:
                for _ in range(3):
                    reply = await model.generate(history, [sql], GenerateConfig(timeout_s=20))
                    history += [reply.message, Message.tool(reply.message.tool_calls[0], "n\n1")]
                return history
            except Exception as err:
                return err
            finally:
                await model.aclose()

    got = anyio.run(main)
    assert not isinstance(got, Exception), repr(got)
    sent = seen[-1]["messages"]
    pairs = [(m["tool_calls"][0]["id"], r["tool_call_id"]) for m, r in zip(sent[1::2], sent[2::2], strict=True)]
    assert len({p[0] for p in pairs}) == 2 and all(a == b for a, b in pairs), pairs
    assert all(len(a) == 9 and a.isalnum() for a, _ in pairs[1:])  # a replaced id keeps Mistral's 9-character rule
    assert {c.id for m in got if m.role == "assistant" for c in m.tool_calls} == {pairs[0][0]}  # records as sent


def test_one_call_sent_as_an_object_not_a_list_is_read() -> None:
    """servers21's leftover: ``"tool_calls": {...}`` (one call, no list) was dropped without a word."""
    raw = (b'{"choices":[{"finish_reason":"tool_calls","index":0,"message":{"role":"assistant","content":null,'
           b'"tool_calls":{"type":"function","id":"c0","function":{"name":"ehr__finish","arguments":"{\\"answer\\":'
           b'\\"yes\\"}"}}}}],"model":"m","object":"chat.completion","id":"x"}')
    got = _call(raw)
    assert not isinstance(got, Exception), repr(got)
    assert [(c.name, c.arguments) for c in got.message.tool_calls] == [("ehr.finish", {"answer": "yes"})]


def test_token_counts_that_are_no_whole_numbers_are_usage_not_reported() -> None:
    """servers21's leftover: ``"prompt_tokens": 5.5`` raised pydantic's ValidationError out of the client (the
    reply lost); now the usage counts as not reported (cost unknown) and the reply is read."""
    raw = _calls_reply('{"answer":"yes"}').replace(b'"prompt_tokens":300', b'"prompt_tokens":5.5')
    got = _call(raw)
    assert not isinstance(got, Exception), repr(got)
    assert (got.usage_reported, got.cost_usd) == (False, None)
    assert got.message.tool_calls[0].arguments == {"answer": "yes"}
