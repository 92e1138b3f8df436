"""Attack 14: what real OpenAI-compatible servers say and write, through the real agent loop on a demo episode.

Each reply below is what one server sends (its own status, body shape and wording; its own tool-call
text), served over loopback HTTP to the real provider (aiohttp) and read by ``run_agent``.
"""

from __future__ import annotations

import json

import pytest

from clinseek.bench import Question
from clinseek.tools import ToolContext
from fakes.llm_servers import OpenAIFake, Reply
from fakes.loop import run_agent_at

SQL = "SELECT count(*) AS n_admissions FROM hosp.admissions"


# -- "the prompt does not fit", as each server words it ----------------------------------------------
# llama.cpp llama-server (tools/server: format_error_response, ERROR_TYPE_EXCEED_CONTEXT_SIZE)
LLAMA_CPP = Reply(400, {"error": {"code": 400, "message": "request (16540 tokens) exceeds the available context size "
                                                         "(16384 tokens), try increasing it",
                                  "type": "exceed_context_size_error", "n_prompt_tokens": 16540, "n_ctx": 16384}})
# vLLM V1 engine (processor: the prompt is longer than max_model_len), OpenAI-style error object
VLLM_V1 = Reply(400, {"error": {"message": "The decoder prompt (length 40000) is longer than the maximum model length "
                                           "of 32768. Make sure that `max_model_len` is no smaller than the number of "
                                           "text tokens.", "type": "BadRequestError", "param": None, "code": 400}})
# TGI Messages API: 422 with {"error": <text>, "error_type": "validation"}
TGI = Reply(422, {"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 9000 "
                           "`inputs` tokens and 1024 `max_new_tokens`", "error_type": "validation"})


# guards (already read): SGLang, llama-cpp-python, OpenAI
SGLANG = Reply(400, {"object": "error", "message": "The input (40000 tokens) is longer than the model's context length "
                                                   "(32768 tokens).", "type": "BadRequestError", "param": None, "code": 400})
LLAMA_CPP_PYTHON = Reply(400, {"error": {"message": "Requested tokens (16540) exceed context window of 16384",
                                         "type": "invalid_request_error", "param": "messages", "code": None}})
OPENAI = Reply(400, {"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages "
                                          "resulted in 130000 tokens.", "type": "invalid_request_error",
                               "param": "messages", "code": "context_length_exceeded"}})


@pytest.mark.parametrize("reply", [LLAMA_CPP, VLLM_V1, TGI, SGLANG, LLAMA_CPP_PYTHON, OPENAI],
                         ids=["llama.cpp", "vllm-v1", "tgi", "sglang", "llama-cpp-python", "openai"])
def test_each_servers_context_length_error_compacts_then_stops_as_context_length(
    reply: Reply, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = OpenAIFake()
    with s:
        s.script(s.tool_calls([("ehr__run_sql_query", {"sql_query": SQL})]),
                 s.tool_calls([("ehr__run_sql_query", {"sql_query": SQL})]),
                 reply, s.tool_calls([("ehr__finish", {"response": ["no"]})]))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
        assert outcome.status == "answered" and outcome.compactions == 1, outcome.error  # compacted and went on
        s.script(reply, reply)
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert (outcome.status, outcome.stop_reason) == ("no_answer", "context_length"), outcome.error


def test_an_error_whose_body_is_a_bare_string_keeps_the_servers_words(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    """TGI and Ollama answer errors as ``{"error": "<text>"}``: the text must reach the outcome."""
    s = OpenAIFake()
    with s:
        s.script(Reply(400, {"error": "json: cannot unmarshal number into Go struct field .messages.content"}))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert outcome.status == "infra_error"
    assert "cannot unmarshal number" in (outcome.error or ""), outcome.error


# -- tool calls written in the text, as each model family writes them ---------------------------------
def _text_then_finish(s: OpenAIFake, text: str) -> None:
    s.script(s.text(text), s.tool_calls([("ehr__finish", {"response": ["no"]})]))


@pytest.mark.parametrize("text", [
    # Llama 3.1 / 3.2 (vLLM's llama3_json parser reads calls separated by "; ")
    '<|python_tag|>{"name": "ehr__run_sql_query", "parameters": {"sql_query": "@SQL@"}}; '
    '{"name": "ehr__finish", "parameters": {"response": ["yes"]}}'.replace("@SQL@", SQL),
    # Mistral tokenizer v11+ (Mistral Small 3.2, Magistral, Devstral): [TOOL_CALLS]name[ARGS]{...}
    '[TOOL_CALLS]ehr__run_sql_query[ARGS]{"sql_query": "@SQL@"}[TOOL_CALLS]ehr__finish[ARGS]{"response": ["yes"]}'.replace("@SQL@", SQL),
    # Qwen / Hermes: two calls, one per line, inside one <tool_call> block
    '<tool_call>\n{"name": "ehr__run_sql_query", "arguments": {"sql_query": "@SQL@"}}\n'
    '{"name": "ehr__finish", "arguments": {"response": ["yes"]}}\n</tool_call>'.replace("@SQL@", SQL),
], ids=["llama3-semicolon", "mistral-v11", "two-in-one-tag"])
def test_every_call_written_in_the_text_is_run(text: str, api_keys: str, demo_ctx: ToolContext,
                                               demo_question: Question) -> None:
    s = OpenAIFake()
    with s:
        _text_then_finish(s, text)
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert [(t.name, t.ok) for t in outcome.tools][:2] == [("ehr.run_sql_query", True), ("ehr.finish", True)]
    assert outcome.status == "answered" and outcome.answer == ["yes"]  # the second call was the answer


def test_a_single_mistral_v11_call_is_run(api_keys: str, demo_ctx: ToolContext, demo_question: Question) -> None:
    s = OpenAIFake()
    with s:
        _text_then_finish(s, '[TOOL_CALLS]ehr__run_sql_query[ARGS]{"sql_query": "@SQL@"}'.replace("@SQL@", SQL))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert (outcome.tools[0].name, outcome.tools[0].ok) == ("ehr.run_sql_query", True)
    sent = s.requests[1].json["messages"]
    assert "[TOOL_CALLS]" not in json.dumps(sent[-2]["content"])  # the call left the text it was read from


# -- a reply cut at the output-token limit in the middle of a call -------------------------------------
@pytest.mark.parametrize("native", [True, False], ids=["native", "in-text"])
def test_a_call_cut_at_the_output_token_limit_is_answered_as_cut_not_as_malformed(
    native: bool, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = OpenAIFake()
    with s:
        if native:
            cut = s.tool_calls([("ehr__run_sql_query", '{"sql_query": "SELECT subject_id, hadm_id, admittime, dis')])
            cut.body["choices"][0]["finish_reason"] = "length"
        else:
            cut = s.text('<tool_call>\n{"name": "ehr__run_sql_query", "arguments": {"sql_query": "SELECT subject_id, '
                         'hadm_id, admittime, dis', finish="length")
        s.script(cut, s.tool_calls([("ehr__finish", {"response": ["no"]})]))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
        told = s.requests[-1].json["messages"][-1]
    assert outcome.status == "answered" and outcome.tools[0].ok is False
    assert told["role"] == "tool" and "output-token limit" in told["content"], told


# -- gpt-oss's harmony format left in the text (servers without a harmony parser) ---------------------
HARMONY_CALL = ('<|channel|>analysis<|message|>Count the admissions first; the answer is "yes" if many.<|end|>'
                '<|start|>assistant<|channel|>commentary to=functions.ehr__run_sql_query <|constrain|>json'
                '<|message|>{"sql_query": "@SQL@"}<|call|>').replace("@SQL@", SQL)
HARMONY_FINAL = ('<|channel|>analysis<|message|>Only one admission. Answer: yes<|end|>'
                 '<|start|>assistant<|channel|>final<|message|>Final Answer: no<|return|>')


def test_harmony_text_is_read_as_reasoning_calls_and_a_final_answer(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = OpenAIFake()
    with s:
        s.script(s.text(HARMONY_CALL), s.text(HARMONY_FINAL), s.text(HARMONY_FINAL))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
        replayed = s.requests[1].json["messages"][-2]
    assert (outcome.tools[0].name, outcome.tools[0].ok) == ("ehr.run_sql_query", True)
    assert "<|channel|>" not in replayed["content"] and "Count the admissions" not in replayed["content"]
    assert (outcome.status, outcome.answer, outcome.parse_mode) == ("answered", ["no"], "final_answer")
    reasoning = [m.reasoning for m in outcome.messages if m.role == "assistant"]
    assert "Count the admissions first" in (reasoning[0] or "")


# -- the prompts say "call ehr.finish"; servers that parse the model's calls pass that name through ---
def test_a_native_call_by_the_canonical_name_the_prompt_uses_is_run(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    """llama.cpp --jinja / vLLM's hermes parser send the name the model wrote: the prompt's ``ehr.finish``."""
    s = OpenAIFake()
    with s:
        s.script(s.tool_calls([("ehr.run_sql_query", {"sql_query": SQL})]), s.tool_calls([("ehr.finish", {"response": ["no"]})]))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert [(t.name, t.ok) for t in outcome.tools] == [("ehr.run_sql_query", True), ("ehr.finish", True)]
    assert outcome.status == "answered" and outcome.answer == ["no"]



# -- a lone UTF-16 surrogate escape in what the model wrote (a cut emoji, a bad escape) ---------------
@pytest.mark.parametrize("reply", [
    lambda s: s.tool_calls([("ehr__think", '{"response": "fever \\ud83d"}')]),  # in argument text
    lambda s: s.tool_calls([("ehr__run_sql_query", '{"sql_query": "SELECT \'\\ud83d\' AS x"}')]),
    lambda s: Reply(200, '{"id": "c1", "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": '
                         '"assistant", "content": "Checking \\ud83d"}}]}'),  # in the reply's own JSON
    lambda s: Reply(200, '{"id": "c1", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": '
                         '"assistant", "content": "", "tool_calls": [{"id": "t1", "type": "function", "function": '
                         '{"name": "ehr__think", "arguments": {"response": "x \\udc00"}}}]}}]}'),  # arguments as an object
], ids=["arguments", "sql", "content", "object-arguments"])
def test_a_lone_surrogate_from_the_model_does_not_crash_the_run(
    reply, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = OpenAIFake()
    with s:
        s.script(reply(s), s.tool_calls([("ehr__finish", {"response": ["no"]})]))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert outcome.status == "answered" and outcome.answer == ["no"], outcome.error


def test_a_200_reply_that_carries_an_error_object_keeps_its_words(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    """Gateways (OpenRouter, LiteLLM) can answer HTTP 200 with ``{"error": {...}}`` and no choices."""
    s = OpenAIFake()
    with s:
        s.script(Reply(200, {"error": {"message": "Upstream provider returned 502: model overloaded", "code": 502}}))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert outcome.status == "infra_error" and "model overloaded" in (outcome.error or ""), outcome.error


def test_llama_pythonic_calls_in_the_text_are_run(api_keys: str, demo_ctx: ToolContext, demo_question: Question) -> None:
    """Llama 3.2 / 4 write calls as a Python list of calls (vLLM's ``pythonic`` tool parser reads them)."""
    s = OpenAIFake()
    with s:
        s.script(s.text('[ehr__run_sql_query(sql_query="@SQL@"), ehr__finish(response=["yes"])]'.replace("@SQL@", SQL)),
                 s.tool_calls([("ehr__finish", {"response": ["no"]})]))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert [(t.name, t.ok) for t in outcome.tools][:2] == [("ehr.run_sql_query", True), ("ehr.finish", True)]
    assert outcome.answer == ["yes"]


def test_qwen3_coder_xml_calls_in_the_text_are_run(api_keys: str, demo_ctx: ToolContext, demo_question: Question) -> None:
    s = OpenAIFake()
    with s:
        s.script(s.text("<tool_call>\n<function=ehr__run_sql_query>\n<parameter=sql_query>\n@SQL@\n</parameter>\n"
                        "</function>\n</tool_call>".replace("@SQL@", SQL)),
                 s.tool_calls([("ehr__finish", {"response": ["no"]})]))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert (outcome.tools[0].name, outcome.tools[0].ok) == ("ehr.run_sql_query", True)


def test_qwen3_coder_xml_values_are_typed_and_checked_like_json_ones(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    """A multi-line SQL with ``<``, the subject as an integer, an extra parameter (the tool's own bad_argument),
    and the answer list, all written as Qwen3-Coder's XML in the text."""
    sql = "SELECT count(*) AS n\nFROM hosp.admissions\nWHERE hadm_id < 99999999"
    run_sql = ("<tool_call>\n<function=ehr__run_sql_query>\n<parameter=sql_query>\n" + sql + "\n</parameter>\n"
               f"<parameter=subject_id>\n{demo_question.subject_id}\n</parameter>\n</function>\n"
               "<function=ehr__run_sql_query>\n<parameter=sql_query>\nSELECT 1\n</parameter>\n"
               "<parameter=limit>\n5\n</parameter>\n</function>\n</tool_call>")
    finish = "<tool_call>\n<function=ehr__finish>\n<parameter=response>\n[\"no\"]\n</parameter>\n</function>\n</tool_call>"
    s = OpenAIFake()
    with s:
        s.script(s.text(run_sql), s.text(finish))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
        told = [m for m in s.requests[-1].json["messages"] if m["role"] == "tool"]
    assert [(t.name, t.ok, t.error_kind) for t in outcome.tools[:2]] == [
        ("ehr.run_sql_query", True, None), ("ehr.run_sql_query", False, "bad_argument")]
    assert "limit" in told[1]["content"] and outcome.answer == ["no"], told
