"""Attack 14: an answer or a tool call nested past Python's recursion limit, through the real agent loop."""

from __future__ import annotations

import pytest

from clinseek.agent import extract_answer
from clinseek.bench import Question
from clinseek.tools import ToolContext
from fakes.llm_servers import OpenAIFake
from fakes.loop import run_agent_at

DEEP = "[" * 5000 + "]" * 5000  # json raises RecursionError
READABLE = "[" * 900 + "]" * 900  # json reads it; the steps after it recursed past the limit


@pytest.mark.parametrize("deep", [DEEP, READABLE], ids=["past-json", "readable"])
def test_a_deeply_nested_answer_text_is_no_answer_not_a_crash(deep: str) -> None:
    for text in (deep, "Final answer: " + deep, '{"response": ' + deep + "}", "<answer>" + deep + "</answer>"):
        found = extract_answer(text, ["yes", "no"])
        assert found is None or found.items is not None


@pytest.mark.parametrize("deep", [DEEP, READABLE], ids=["past-json", "readable"])
def test_a_deeply_nested_tool_call_is_answered_with_an_error_and_the_run_goes_on(
    deep: str, api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = OpenAIFake()
    with s:
        s.script(s.tool_calls([("ehr__finish", '{"response": ' + deep + "}")]),
                 s.tool_calls([("ehr__finish", {"response": ["no"]})]))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert outcome.status == "answered" and outcome.answer == ["no"], outcome.error
    assert outcome.tools[0].ok is False
