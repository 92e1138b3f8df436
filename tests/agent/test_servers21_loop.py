"""Servers 21: replies of real servers through the real agent loop (loopback HTTP, demo episode)."""

from __future__ import annotations

import json

from clinseek.bench import Question
from clinseek.tools import ToolContext
from fakes.llm_servers import AnthropicFake, OpenAIFake
from fakes.loop import run_agent_at

SQL = "SELECT count(*) AS n_admissions FROM hosp.admissions"


def test_one_malformed_call_among_several_is_answered_and_the_others_run(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    """llama-server serving arguments parsed (ggml-org/llama.cpp#20198): a good SQL call and a finish whose
    arguments are an array in one turn. Before: ``AttributeError`` ended the run as ``infra_error`` and
    the SQL call never ran."""
    s = OpenAIFake()
    with s:
        s.script(s.tool_calls([("ehr__run_sql_query", {"sql_query": SQL}), ("ehr__finish", ["no"])],  # type: ignore[list-item]
                              arguments_as_objects=True),
                 s.tool_calls([("ehr__finish", {"response": ["no"]})], arguments_as_objects=True))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
        sent = s.requests[1].json["messages"]
    assert (outcome.status, outcome.answer) == ("answered", ["no"]), outcome.error
    assert [(t.name, t.ok) for t in outcome.tools][:2] == [("ehr.run_sql_query", True), ("ehr.finish", False)]
    results = [m for m in sent if m["role"] == "tool"]
    assert "n_admissions" in results[0]["content"]
    assert "arguments must be a JSON object, got array" in results[1]["content"], results[1]
    # the malformed call goes back as a JSON object text (vLLM / SGLang refuse anything else with a 400)
    assert json.loads(sent[-3]["tool_calls"][1]["function"]["arguments"]) == {}


def test_a_reply_that_filled_the_context_window_ends_as_context_length(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    """Claude's ``model_context_window_exceeded`` (Sonnet 4.5 and later: the reply stopped because the context
    window is full; docs "Handling stop reasons"): the next request cannot fit either."""
    s = AnthropicFake()
    with s:
        s.script(*[s.text("The admissions show", stop="model_context_window_exceeded") for _ in range(6)])
        outcome = run_agent_at(s.url, demo_ctx, demo_question, model="anthropic:claude-fake")
    assert (outcome.status, outcome.stop_reason) == ("no_answer", "context_length"), (outcome, len(s.requests))


def test_a_reasoning_model_cut_at_the_output_token_limit_says_so(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    """A thinking model that spends the whole output budget thinking: ``content`` null, the thinking in
    ``reasoning_content``, ``finish_reason: "length"`` (vLLM's reasoning parsers, vllm-project/vllm#35296;
    LM Studio and llama-server, lmstudio-ai/lmstudio-bug-tracker#1990). Before: ``no_tool_call``, "the model
    stopped calling tools without ehr.finish": the row blamed the model, not the limit one can raise."""
    s = OpenAIFake()
    with s:
        s.script(*[s.text(None, reasoning="Let me think about the admissions. " * 40, finish="length")
                   for _ in range(4)])
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert outcome.status == "no_answer", outcome
    assert "output-token limit" in (outcome.error or "") and "8192" in (outcome.error or ""), outcome.error


def test_a_claude_refusal_ends_the_run_naming_it_without_asking_again(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    """Claude 4's ``stop_reason: "refusal"`` (docs "Streaming refusals": "Attempting to continue without
    resetting will result in continued refusals"). Before: a reminder sent into the refused context, a second
    billed call, then "the model stopped calling tools without ehr.finish"."""
    s = AnthropicFake()
    with s:
        s.script(*[s.text("Hello..", stop="refusal") for _ in range(4)])
        outcome = run_agent_at(s.url, demo_ctx, demo_question, model="anthropic:claude-fake")
        asked = len(s.requests)
    assert outcome.status == "no_answer" and "refusal" in (outcome.error or ""), outcome.error
    assert asked == 1
