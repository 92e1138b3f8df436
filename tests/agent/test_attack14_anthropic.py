"""Attack 14: Claude with extended thinking through the real agent loop (loopback Messages API, demo episode).

The Messages API refuses a request whose last assistant turn with tool use does not start with the
thinking block it sent, unchanged (signature included), when thinking is enabled.
"""

from __future__ import annotations

from typing import Any

import anyio

from clinseek.agent import run_agent
from clinseek.bench import Question
from clinseek.models import GenerateConfig, get_model
from clinseek.tools import ToolContext
from fakes.llm_servers import AnthropicFake, RecordedRequest, Reply

SQL = "SELECT count(*) AS n_admissions FROM hosp.admissions"


def _thinking_rule(server: AnthropicFake, replies: list[Reply]):
    sent: list[dict[str, Any]] = []

    def answer(request: RecordedRequest) -> Reply:
        body = request.json
        assistants = [m for m in body["messages"] if m["role"] == "assistant"]
        if body.get("thinking") and assistants:
            first = assistants[-1]["content"][0]
            if first.get("type") not in ("thinking", "redacted_thinking") or first not in sent:
                return server.error(400, "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                                         "found `text`. When `thinking` is enabled, a final `assistant` message must "
                                         "start with a thinking block (preceeding the lastmost set of `tool_use` and "
                                         "`tool_result` blocks).")
        reply = replies.pop(0)
        sent.extend(b for b in reply.body["content"] if b["type"] in ("thinking", "redacted_thinking"))
        return reply

    return answer


def _message(server: AnthropicFake, blocks: list[dict[str, Any]], stop: str) -> Reply:
    return server._message(blocks, stop, None, "claude-fake")


def test_thinking_with_text_and_tool_use_goes_back_unchanged(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    with AnthropicFake() as s:
        s.responder = _thinking_rule(s, [
            _message(s, [{"type": "thinking", "thinking": "Count first.", "signature": "sig-A"},
                         {"type": "text", "text": "Let me count the admissions."},
                         {"type": "tool_use", "id": "toolu_1", "name": "ehr__run_sql_query", "input": {"sql_query": SQL}},
                         {"type": "text", "text": "Then I will decide."}], "tool_use"),
            _message(s, [{"type": "redacted_thinking", "data": "EuYBCkQYAiJA"},
                         {"type": "tool_use", "id": "toolu_2", "name": "ehr__finish", "input": {"response": ["no"]}}],
                     "tool_use"),
        ])

        async def go():
            model = get_model("anthropic:claude-fake", base_url=s.url)
            try:
                return await run_agent(model, demo_ctx, demo_question,
                                       config=GenerateConfig(thinking_budget_tokens=1024))
            finally:
                await model.aclose()

        outcome = anyio.run(go)
    assert (outcome.status, outcome.answer) == ("answered", ["no"]), outcome.error
