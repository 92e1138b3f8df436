"""One tool list, one provider: specs, wire names and the tools' JSON built once and reused, never stale."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _models_helpers import TOOLS, run

from clinseek.errors import ModelError
from clinseek.models import GenerateConfig, Message, get_model, tool_set
from fakes.llm_servers import OpenAIFake

CONVERSATION = [Message.system("You are a clinical assistant."), Message.user("Will the patient die in hospital?")]


def test_the_same_tool_list_gives_the_same_tool_set() -> None:
    first = tool_set("openai", TOOLS)
    assert tool_set("openai", copy.deepcopy(TOOLS)) is first  # equal content: reused
    assert [s.name for s in first.specs] == ["ehr.run_sql_query", "ehr.finish", "browser.search"]
    assert first.names.to_wire("ehr.finish") == "ehr__finish"
    assert tool_set("text", TOOLS) is not first  # another provider, another map
    assert tool_set("text", TOOLS).names.to_wire("ehr.finish") == "ehr.finish"


def test_a_changed_schema_is_never_served_stale() -> None:
    tools = copy.deepcopy(TOOLS)
    before = tool_set("openai", tools)
    tools[0]["function"]["description"] = "Another description."  # same names, mutated in place
    after = tool_set("openai", tools)
    assert after is not before
    assert after.specs[0].description == "Another description."
    tools[1]["function"]["parameters"]["required"] = []
    assert tool_set("openai", tools).specs[1].parameters["required"] == []


def test_bad_tool_lists_still_fail() -> None:
    with pytest.raises(ModelError, match="given twice"):
        tool_set("openai", [TOOLS[0], TOOLS[0]])
    with pytest.raises(ModelError, match="has no 'name'"):
        tool_set("openai", [{"type": "function", "function": {"description": "x"}}])


def _raw_request(server: OpenAIFake, tools: list[dict[str, Any]], config: GenerateConfig, **kwargs: Any) -> bytes:
    server.reset()
    server.script(server.text("no"))

    async def body() -> None:
        model = get_model("openai:gpt-test", base_url=server.url, **kwargs)
        try:
            await model.generate(CONVERSATION, tools, config)
        finally:
            await model.aclose()

    run(body)
    [request] = server.requests
    return request.raw


@pytest.mark.parametrize("tools", [TOOLS, []], ids=["tools", "no-tools"])
@pytest.mark.parametrize("extra_body", [None, {"top_k": 5}, {"tools": [], "max_tokens": 7}], ids=["plain", "extra", "override"])
def test_the_request_text_is_the_whole_request_encoded_once(
    openai_server: OpenAIFake, tools: list[dict[str, Any]], extra_body: dict[str, Any] | None
) -> None:
    config = GenerateConfig(timeout_s=5, temperature=0.0, seed=3, tool_choice="ehr.finish" if tools else "auto")
    for _ in range(2):  # the second call reuses the tools' cached JSON
        raw = _raw_request(openai_server, tools, config, extra_body=extra_body)
        request = json.loads(raw)
        # byte for byte what json.dumps gives for the request dict, keys in the provider's order
        assert raw == json.dumps(request, ensure_ascii=False).encode()
        assert list(request)[:3] == ["model", "messages", "tools"] if tools else list(request)[:2] == ["model", "messages"]
        if tools and not (extra_body and "tools" in extra_body):
            assert [t["function"]["name"] for t in request["tools"]] == ["ehr__run_sql_query", "ehr__finish",
                                                                         "browser__search"]
        for key, value in (extra_body or {}).items():
            assert request[key] == value
