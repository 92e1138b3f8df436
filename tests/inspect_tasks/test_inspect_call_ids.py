"""A transcript another solver wrote is read with each tool result paired to the call of its own turn:
models that repeat call ids across turns (Kimi K2 and llama-server send ``call_0`` in every turn) get the
arguments of the call that was answered, never those of an earlier or a later call of the same id."""

from __future__ import annotations

from typing import Any

import pytest

from clinseek.inspect_tasks import SampleView, sample_outcome

CANDIDATES = ["Sodium", "Potassium", "Glucose"]
SQL = {"sql_query": "SELECT 1"}
Call = tuple[str, str, dict[str, Any]]
"""(call id, canonical tool name, arguments)."""
Turn = tuple[list[Call], list[tuple[str, str, bool]]]
"""An assistant turn's calls and the tool results that follow it: (call id, canonical tool name, ok)."""


def _transcript(turns: list[Turn]) -> list[Any]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall, ToolCallError

    def wire(name: str) -> str:
        return name.replace(".", "__")

    messages: list[Any] = [ChatMessageUser(content="Which lab tests? Candidates: Sodium, Potassium, Glucose")]
    for calls, results in turns:
        messages.append(ChatMessageAssistant(content="", tool_calls=[
            ToolCall(id=i, function=wire(name), arguments=args) for i, name, args in calls]))
        messages += [ChatMessageTool(content="ok" if ok else "", tool_call_id=i, function=wire(name),
                                     error=None if ok else ToolCallError("parsing", "not a candidate"))
                     for i, name, ok in results]
    return messages


def _answer(turns: list[Turn]) -> list[str] | None:
    view = SampleView(qid="q1", epoch=1, metadata={"candidates": CANDIDATES}, target=["Sodium"], store={},
                      messages=_transcript(turns))
    return sample_outcome(view, "agent").answer


def _finish(items: list[str]) -> dict[str, Any]:
    return {"response": items}


@pytest.mark.parametrize(("turns", "answer"), [
    pytest.param([([("call_0", "ehr.finish", _finish(["Sodium"]))], [("call_0", "ehr.finish", True)]),
                  ([("call_0", "ehr.run_sql_query", SQL)], [("call_0", "ehr.run_sql_query", True)])],
                 ["Sodium"], id="a-later-call-of-the-id-does-not-replace-the-finish-arguments"),
    pytest.param([([("call_0", "ehr.finish", _finish(["Sodium"]))], [("call_0", "ehr.finish", True)]),
                  ([("call_0", "ehr.finish", _finish(["Potassium"]))], [])],
                 ["Sodium"], id="a-later-call-never-answered-is-not-the-answer"),
    pytest.param([([("call_0", "ehr.finish", _finish(["Aspirin"]))], [("call_0", "ehr.finish", False)]),
                  ([("call_0", "ehr.finish", _finish(["Potassium"]))], [("call_0", "ehr.finish", True)]),
                  ([("call_0", "ehr.run_sql_query", SQL)], [("call_0", "ehr.run_sql_query", True)])],
                 ["Potassium"], id="the-last-successful-finish-of-three-turns-of-call_0"),
    pytest.param([([("call_0", "ehr.finish", _finish(["Glucose"])), ("call_0", "ehr.run_sql_query", SQL)],
                   [("call_0", "ehr.finish", True), ("call_0", "ehr.run_sql_query", True)])],
                 ["Glucose"], id="an-id-repeated-within-one-turn"),
])
def test_a_finish_result_reads_the_arguments_of_its_own_turns_call(turns: list[Turn], answer: list[str]) -> None:
    assert _answer(turns) == answer


def test_a_result_whose_turn_has_no_call_of_its_id_reads_no_arguments() -> None:
    turns: list[Turn] = [([("call_0", "ehr.finish", _finish(["Sodium"]))], []),
                         ([("call_1", "ehr.run_sql_query", SQL)], [("call_0", "ehr.finish", True)])]
    assert _answer(turns) is None
