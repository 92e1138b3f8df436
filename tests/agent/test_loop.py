"""The ClinSeekAgent loop with a scripted model on the real think/finish tools (no data needed)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import anyio
import pytest
from _agent_helpers import ScriptedModel, assistant, call, make_question

from clinseek.agent import FINISH_NOW, PROMPT_VERSION, REMINDER, AgentBudget, run_agent
from clinseek.models import ContextLengthExceeded, Message, ProviderUnavailable, ToolCall
from clinseek.tools import ToolContext

TOOLS = ("ehr.think", "ehr.finish")
WHEN = dt.datetime(2150, 1, 1, 12, 0)


def _run(model: ScriptedModel, budget: AgentBudget | None = None, **q: Any):
    question = make_question(10000032, WHEN, **q)
    ctx = ToolContext(episode=None)  # type: ignore[arg-type]  # think/finish never read the episode
    return anyio.run(lambda: run_agent(model, ctx, question, budget=budget, tools=TOOLS))


def test_finish_ends_the_run_with_a_valid_answer() -> None:
    outcome = _run(ScriptedModel([assistant(call("ehr.finish", response=["YES"]))]))
    assert outcome.status == "answered"
    assert outcome.completed and outcome.stop_reason == "finish_tool_call"
    assert outcome.answer == ["yes"]
    assert outcome.prompt_version == PROMPT_VERSION
    assert outcome.tool_counts() == {"ehr.finish": 1}


def test_the_prompt_states_the_cutoff_subject_and_candidates() -> None:
    model = ScriptedModel([assistant(call("ehr.finish", response=["no"]))])
    _run(model)
    messages, tools, config = model.requests[0]
    assert [m.role for m in messages] == ["system", "user"]
    assert "Current Time: 2150-01-01 12:00:00" in messages[1].content
    assert "Patient Subject ID: 10000032" in messages[1].content
    assert '["yes", "no"]' in messages[1].content
    assert [t["function"]["name"] for t in tools] == list(TOOLS)
    assert config is not None and config.max_output_tokens == AgentBudget().max_output_tokens


def test_parallel_calls_are_answered_in_order() -> None:
    turn = assistant(call("ehr.think", "a", response="one"), call("ehr.think", "b", response="two"),
                     call("ehr.think", "c", response="three"))
    model = ScriptedModel([turn, assistant(call("ehr.finish", response=["no"]))])
    outcome = _run(model)
    tool_msgs = [m for m in outcome.messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_msgs[:3]] == ["a", "b", "c"]
    assert [r.name for r in outcome.tools] == ["ehr.think"] * 3 + ["ehr.finish"]


def test_a_call_the_provider_could_not_decode_gets_an_error_not_a_repair() -> None:
    bad = ToolCall(id="x", name="ehr__finsh", error_kind="unknown_tool", error="no tool 'ehr__finsh'")
    model = ScriptedModel([assistant(bad), assistant(call("ehr.finish", response=["no"]))])
    outcome = _run(model)
    first = next(m for m in outcome.messages if m.role == "tool")
    assert first.is_error and "ehr__finsh" in first.content
    assert outcome.tools[0].error_kind == "unknown_tool"
    assert outcome.answer == ["no"]


def test_malformed_arguments_reach_the_model_as_an_error() -> None:
    bad = ToolCall(id="x", name="ehr.finish", raw_arguments="{oops", error_kind="invalid_json", error="not JSON")
    outcome = _run(ScriptedModel([assistant(bad), assistant(call("ehr.finish", response=["yes"]))]))
    assert outcome.tools[0].ok is False and outcome.tools[0].error_kind == "invalid_json"
    assert outcome.status == "answered"


def test_bad_arguments_come_back_as_a_tool_error() -> None:
    outcome = _run(ScriptedModel([assistant(call("ehr.finish", answer=["yes"])), assistant(call("ehr.finish", response=["yes"]))]))
    assert outcome.tools[0].error_kind == "bad_argument"
    assert outcome.status == "answered"


def test_a_tool_not_offered_is_refused() -> None:
    outcome = _run(ScriptedModel([assistant(call("ehr.run_sql_query", sql_query="select 1")),
                                  assistant(call("ehr.finish", response=["no"]))]))
    assert outcome.tools[0].error_kind == "unknown_tool"


def test_a_turn_without_tool_calls_gets_one_reminder_then_the_run_gives_up() -> None:
    model = ScriptedModel([assistant(content="I think so"), assistant(content="Let me look again later.")])
    outcome = _run(model)
    assert outcome.status == "no_answer" and outcome.stop_reason == "no_tool_call"
    assert outcome.reminders == 1 and outcome.parse_mode is None
    assert [m.content for m in outcome.messages if m.role == "user"][-1] == REMINDER


def test_an_answer_written_in_text_after_the_reminder_is_read_as_a_fallback() -> None:
    model = ScriptedModel([assistant(content="I think yes"), assistant(content="yes")])
    outcome = _run(model)
    assert (outcome.status, outcome.answer, outcome.parse_mode) == ("answered", ["yes"], "candidate_match")
    assert outcome.stop_reason == "text_answer" and not outcome.completed


def test_a_text_answer_before_the_reminder_counts_when_the_last_reply_has_none() -> None:
    model = ScriptedModel([assistant(content="<answer>\nno\n</answer>"), assistant(content="As I said.")])
    outcome = _run(model)
    assert (outcome.answer, outcome.parse_mode) == (["no"], "answer_tag")


def test_a_finish_call_is_the_strict_parse_mode() -> None:
    outcome = _run(ScriptedModel([assistant(call("ehr.finish", response=["no"]))]))
    assert (outcome.parse_mode, outcome.completed) == ("finish_call", True)


def test_a_reminder_can_recover_the_run() -> None:
    outcome = _run(ScriptedModel([assistant(content="hmm"), assistant(call("ehr.finish", response=["yes"]))]))
    assert outcome.status == "answered" and outcome.reminders == 1


def test_invalid_items_are_sent_back_once_then_reported() -> None:
    model = ScriptedModel([assistant(call("ehr.finish", response=["maybe"])),
                           assistant(call("ehr.finish", response=["maybe", "yes"]))])
    outcome = _run(model)
    assert outcome.status == "answered"
    assert outcome.answer == ["yes"] and outcome.invalid_answer == ["maybe"]
    assert len(model.requests) == 2


def test_only_invalid_items_is_no_answer() -> None:
    model = ScriptedModel([assistant(call("ehr.finish", response=["maybe"]))] * 2)
    outcome = _run(model)
    assert outcome.status == "no_answer" and outcome.answer is None
    assert outcome.invalid_answer == ["maybe"]


def test_empty_finish_is_an_empty_answer() -> None:
    outcome = _run(ScriptedModel([assistant(call("ehr.finish", response=[]))]), candidates=["a", "b"],
                   task="labevents", task_type="decision_making", label=["a"])
    assert outcome.status == "answered" and outcome.answer == []


def test_max_turns_ends_without_answer_after_a_finish_notice() -> None:
    think = assistant(call("ehr.think", response="still thinking"))
    model = ScriptedModel([think] * 10)
    outcome = _run(model, AgentBudget(max_turns=4, finish_notice_turns=1))
    assert outcome.status == "no_answer" and outcome.stop_reason == "max_turns"
    assert outcome.turns == 4
    assert sum(m.content == FINISH_NOW for m in outcome.messages) == 1


def test_token_budget_ends_the_run() -> None:
    model = ScriptedModel([assistant(call("ehr.think", response="x"))] * 10)
    outcome = _run(model, AgentBudget(max_total_tokens=250))
    assert outcome.stop_reason == "token_budget" and outcome.turns == 3
    assert outcome.usage.input_tokens == 300


def test_old_tool_outputs_are_compacted_near_the_context_limit() -> None:
    long = "x" * 4000
    model = ScriptedModel([assistant(call("ehr.think", f"t{i}", response=long)) for i in range(4)]
                          + [assistant(call("ehr.finish", response=["no"]))])
    # think echoes only "Thought recorded."; make the tool outputs big through the cap instead
    outcome = _run(model, AgentBudget(context_window_tokens=150, keep_recent_tool_outputs=1, max_tool_chars=10))
    assert outcome.compactions >= 1
    contents = [m.content for m in outcome.messages if m.role == "tool"]
    assert contents[0].startswith("[older tool output compacted")
    assert not contents[-1].startswith("[older tool output compacted")


def test_context_length_error_compacts_and_retries_once() -> None:
    model = ScriptedModel([assistant(call("ehr.think", response="a")), assistant(call("ehr.think", response="b")),
                           ContextLengthExceeded("too long"), assistant(call("ehr.finish", response=["yes"]))])
    outcome = _run(model)
    assert outcome.status == "answered" and outcome.compactions == 1


def test_context_length_with_nothing_to_compact_is_no_answer() -> None:
    outcome = _run(ScriptedModel([ContextLengthExceeded("too long")]))
    assert outcome.status == "no_answer" and outcome.stop_reason == "context_length"


def test_provider_failure_is_an_infra_error_that_keeps_the_transcript() -> None:
    model = ScriptedModel([assistant(call("ehr.think", response="a")), ProviderUnavailable("down", status_code=503)])
    outcome = _run(model)
    assert outcome.status == "infra_error" and outcome.error_type == "ProviderUnavailable"
    assert [m.role for m in outcome.messages] == ["system", "user", "assistant", "tool"]
    ok, failed = outcome.calls  # the failed call is kept, with its error
    assert (ok.status, failed.status, failed.error_type, failed.turn) == ("ok", "failed", "ProviderUnavailable", 2)
    assert failed.latency_s == 0.0 and failed.total_s is not None


def test_usage_and_cost_are_summed_and_unknown_cost_stays_unknown() -> None:
    model = ScriptedModel([assistant(call("ehr.think", response="a")), assistant(call("ehr.finish", response=["no"]))])
    outcome = _run(model)
    assert outcome.usage.output_tokens == 20 and outcome.cost_usd == pytest.approx(0.002)
    unknown = ScriptedModel([assistant(call("ehr.finish", response=["no"]))], cost=None)
    assert _run(unknown).cost_usd is None


def test_tool_results_are_messages_the_model_sees() -> None:
    model = ScriptedModel([assistant(call("ehr.think", "t", response="plan")), assistant(call("ehr.finish", response=["no"]))])
    _run(model)
    second: list[Message] = model.requests[1][0]
    assert second[-1].role == "tool" and second[-1].tool_call_id == "t"


def test_a_tool_set_without_finish_is_refused() -> None:
    from clinseek.errors import ClinseekError

    question = make_question(1, WHEN)
    with pytest.raises(ClinseekError, match=r"ehr\.finish"):
        anyio.run(lambda: run_agent(ScriptedModel([]), ToolContext(episode=None), question, tools=("ehr.think",)))  # type: ignore[arg-type]


def test_a_tool_crash_is_an_infra_error_named_after_the_real_exception() -> None:
    # run_sql_query needs the episode, which this context lacks: the tool raises AttributeError
    model = ScriptedModel([assistant(call("ehr.run_sql_query", sql_query="SELECT 1"), call("ehr.think", response="x"))])
    question = make_question(1, WHEN)
    ctx = ToolContext(episode=None)  # type: ignore[arg-type]
    outcome = anyio.run(lambda: run_agent(model, ctx, question, tools=("ehr.run_sql_query", "ehr.finish", "ehr.think")))
    assert outcome.status == "infra_error" and outcome.error_type == "AttributeError"
    assert outcome.messages[-1].role == "assistant"  # the transcript up to the crash is kept


def test_compaction_is_decided_by_the_count_whatever_the_character_bound() -> None:
    """The loop skips counting only when the character bound is within the limit: a limit between the estimate
    and the bound compacts nothing, one below the estimate compacts (letters: ~3 per token, 1 per character)."""
    from clinseek.models import ESTIMATE, messages_tokens, messages_tokens_bound

    def script() -> ScriptedModel:
        return ScriptedModel([assistant(call("ehr.think", response="abcdefghij" * 300)),
                              assistant(call("ehr.finish", response=["no"]))])

    first = _run(script())
    pending = first.messages[2:4]  # what the second request adds: the think call and its output
    assert [m.role for m in pending] == ["assistant", "tool"]
    base = first.calls[0].usage.total_tokens
    count, bound = messages_tokens(ESTIMATE, pending), messages_tokens_bound(ESTIMATE, pending)
    assert bound is not None and count < bound
    for limit, compacted in [(base + count - 1, True), (base + count, False), (base + (count + bound) // 2, False)]:
        outcome = _run(script(), AgentBudget(context_window_tokens=limit, compact_at=1.0, keep_recent_tool_outputs=0))
        assert outcome.status == "answered"
        assert (outcome.compactions == 1) is compacted, (limit, base, count, bound)
