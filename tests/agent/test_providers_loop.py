"""Both SDKs through the loop against loopback servers, on a real sealed episode of the MIMIC-IV demo."""

from __future__ import annotations

import anyio

from clinseek.agent import AgentBudget, run_agent
from clinseek.bench import Question
from clinseek.models import get_model
from clinseek.tools import ToolContext
from fakes.llm_servers import AnthropicFake, OpenAIFake, usage_anthropic, usage_openai
from fakes.loop import run_agent_at

SQL = "SELECT count(*) AS n_admissions FROM hosp.admissions"


def _run(name: str, url: str, ctx: ToolContext, question: Question, budget: AgentBudget | None = None):
    return run_agent_at(url, ctx, question, model=name, budget=budget)


def test_openai_tool_calls_parallel_calls_and_malformed_json(
    openai_server: OpenAIFake, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = openai_server
    s.script(
        s.tool_calls([("ehr__load_ehr", {})], usage=usage_openai(1000, 20, cached=800)),
        s.tool_calls([("ehr__run_sql_query", {"sql_query": SQL}), ("ehr__think", {"response": "count first"})]),
        s.tool_calls([("ehr__finish", '{"response": ["yes"')]),  # malformed JSON arguments
        s.tool_calls([("ehr__finish", {"response": ["No"]})]),
    )
    outcome = _run("openai:gpt-test", s.url, demo_ctx, demo_question)
    assert outcome.status == "answered" and outcome.answer == ["no"]
    assert [(t.name, t.ok) for t in outcome.tools] == [
        ("ehr.load_ehr", True), ("ehr.run_sql_query", True), ("ehr.think", True), ("ehr.finish", False),
        ("ehr.finish", True),
    ]
    assert outcome.tools[3].error_kind == "invalid_json"
    assert outcome.usage.input_tokens == 1000 + 3 * 10 and outcome.usage.cached_input_tokens == 800
    assert outcome.cost_usd is None  # gpt-test has no price: unknown, not 0
    sent = s.requests[2].json["messages"]  # the third request carries both parallel results, in order
    tool_msgs = [m for m in sent if m["role"] == "tool"]
    calls = s.requests[2].json["messages"][-3]["tool_calls"]
    assert [m["tool_call_id"] for m in tool_msgs[-2:]] == [c["id"] for c in calls]
    assert "n_admissions" in tool_msgs[-2]["content"]
    assert {t["function"]["name"] for t in s.requests[0].json["tools"]} >= {"ehr__load_ehr", "ehr__finish"}


def test_anthropic_tool_use_round_trip(
    anthropic_server: AnthropicFake, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = anthropic_server
    s.script(
        s.tool_calls([("ehr__load_ehr", {}), ("ehr__run_sql_query", {"sql_query": SQL})],
                     usage=usage_anthropic(100, 10, cached=50)),
        s.text("I believe the answer is no."),  # no tool call: one reminder
        s.tool_calls([("ehr__finish", {"response": ["yes"]})]),
    )
    outcome = _run("anthropic:claude-test", s.url, demo_ctx, demo_question)
    assert outcome.status == "answered" and outcome.answer == ["yes"] and outcome.reminders == 1
    assert outcome.usage.cached_input_tokens == 50
    second = s.requests[1].json["messages"]
    results = [b for m in second for b in (m["content"] if isinstance(m["content"], list) else []) if b.get("type") == "tool_result"]
    assert len(results) == 2


def test_unknown_wire_name_is_an_error_result(
    openai_server: OpenAIFake, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = openai_server
    s.script(s.tool_calls([("ehr_finish", {"response": ["yes"]})]), s.tool_calls([("ehr__finish", {"response": ["yes"]})]))
    outcome = _run("openai:gpt-test", s.url, demo_ctx, demo_question)
    assert outcome.tools[0].error_kind == "unknown_tool" and outcome.answer == ["yes"]


def test_context_length_error_from_the_provider(
    openai_server: OpenAIFake, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = openai_server
    s.script(s.tool_calls([("ehr__load_ehr", {})]), s.tool_calls([("ehr__think", {"response": "a"})]),
             s.context_length(), s.tool_calls([("ehr__finish", {"response": ["no"]})]))
    outcome = _run("openai:gpt-test", s.url, demo_ctx, demo_question)
    assert outcome.status == "answered" and outcome.compactions == 1
    s.script(s.context_length())
    outcome = _run("openai:gpt-test", s.url, demo_ctx, demo_question)
    assert outcome.status == "no_answer" and outcome.stop_reason == "context_length"


def test_server_errors_end_the_run_as_infra_error_with_the_transcript(
    openai_server: OpenAIFake, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = openai_server
    s.script(s.tool_calls([("ehr__load_ehr", {})]), s.server_error(500))
    outcome = _run("openai:gpt-test", s.url, demo_ctx, demo_question)
    assert outcome.status == "infra_error" and outcome.error_type == "ProviderUnavailable"
    assert [m.role for m in outcome.messages][-2:] == ["assistant", "tool"]
    assert api_keys not in outcome.model_dump_json()


def _action(tool: str, **arguments) -> str:
    import json

    return "Next step.\n```json\n" + json.dumps({"tool": tool, "arguments": arguments}) + "\n```"


def test_text_protocol_endpoint_without_native_tools(
    openai_server: OpenAIFake, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = openai_server
    s.script(s.text(_action("ehr.load_ehr")), s.text("```json\n{not json}\n```"),
             s.text(_action("ehr.finish", response=["no"])))

    async def go():
        model = get_model("openai:local-model", base_url=s.url, tool_protocol="text")
        try:
            return await run_agent(model, demo_ctx, demo_question)
        finally:
            await model.aclose()

    outcome = anyio.run(go)
    assert outcome.status == "answered" and outcome.answer == ["no"]
    assert (outcome.tools[0].name, outcome.tools[0].ok) == ("ehr.load_ehr", True)
    assert outcome.tools[1].ok is False  # the malformed block came back to the model as an error
    assert "tools" not in s.requests[0].json  # no native tool schema sent
