"""Attack 14: edges of the tool-call shapes written in text (no server needed: ``calls_in_content``)."""

from __future__ import annotations

from _models_helpers import TOOLS

from clinseek.models._content import calls_in_content, split_reasoning
from clinseek.models._names import tool_set

NAMES = tool_set("openai", TOOLS).names


def test_a_llama_call_followed_by_json_that_is_not_a_call_keeps_the_call() -> None:
    calls, rest = calls_in_content('<|python_tag|>{"name": "ehr__finish", "parameters": {"response": ["yes"]}}\n\n'
                                   '{"note": 1}', NAMES)
    assert [(c.name, c.arguments) for c in calls] == [("ehr.finish", {"response": ["yes"]})] and rest == '{"note": 1}'


def test_mistral_v11_calls_that_are_cut_or_unknown_are_flagged_not_repaired() -> None:
    cut, _ = calls_in_content('[TOOL_CALLS]ehr__finish[ARGS]{"response": ["ye', NAMES)
    assert (cut[0].name, cut[0].error_kind, cut[0].raw_arguments) == ("ehr.finish", "invalid_json", '{"response": ["ye')
    unknown, _ = calls_in_content('[TOOL_CALLS]sql[CALL_ID]a1b2c3d4e[ARGS]{"q": 1}', NAMES)
    assert (unknown[0].name, unknown[0].error_kind) == ("sql", "unknown_tool")


def test_harmony_without_a_tool_message_is_reasoning_and_content() -> None:
    content, reasoning = split_reasoning("<|channel|>analysis<|message|>think<|end|><|start|>assistant"
                                         "<|channel|>final<|message|><answer>\nno\n</answer><|return|>")
    assert (content, reasoning) == ("<answer>\nno\n</answer>", "think")
    assert calls_in_content(content, NAMES) == ([], content)
