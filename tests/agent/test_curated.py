"""Curated Input mode: one call, the <answer> format, fallbacks recorded by parse_mode, failures counted."""

from __future__ import annotations

import datetime as dt

import anyio
from _agent_helpers import ScriptedModel, assistant, make_question

from clinseek.agent import ANSWER_FORMAT, run_curated, verbatim_package
from clinseek.models import RateLimited

WHEN = dt.datetime(2150, 1, 1, 12, 0)


def _q(**kw):
    return make_question(1, WHEN, **kw)


def _run(model: ScriptedModel, package: str = "## Admissions [2150-01-01]\n- admission_type: URGENT", **kw):
    return anyio.run(lambda: run_curated(model, _q(**kw), package))


def test_one_call_without_tools_and_a_clear_answer_format() -> None:
    model = ScriptedModel([assistant(content="Looks stable.\n<answer>\nno\n</answer>")])
    outcome = _run(model)
    assert outcome.status == "answered" and outcome.answer == ["no"] and outcome.stop_reason == "answer_block"
    messages, tools, _ = model.requests[0]
    assert tools == [] and len(model.requests) == 1
    user = messages[1].content
    assert user.startswith("## Admissions") and user.endswith(ANSWER_FORMAT)
    assert "Current Time: 2150-01-01 12:00:00" in user and '["yes", "no"]' in user


def test_a_reply_without_any_answer_is_a_counted_parse_failure() -> None:
    outcome = _run(ScriptedModel([assistant(content="I cannot tell from these records.")]))
    assert outcome.status == "no_answer" and outcome.stop_reason == "parse_error"
    assert outcome.parse_failures == 1 and outcome.answer is None and outcome.parse_mode is None


def test_an_answer_outside_the_format_is_read_and_marked_as_a_fallback() -> None:
    outcome = _run(ScriptedModel([assistant(content="Final answer: no")]))
    assert outcome.status == "answered" and outcome.answer == ["no"]
    assert outcome.parse_mode == "final_answer" and outcome.stop_reason == "text_answer"
    assert outcome.parse_failures == 1 and not outcome.completed


def test_the_format_is_strict_answer_tag_and_completed() -> None:
    outcome = _run(ScriptedModel([assistant(content="<think>maybe yes</think>\n<answer>\nno\n</answer>")]))
    assert (outcome.parse_mode, outcome.parse_failures, outcome.completed) == ("answer_tag", 0, True)
    assert outcome.answer == ["no"]


def test_items_outside_the_candidates_are_reported() -> None:
    outcome = _run(ScriptedModel([assistant(content="<answer>\nyes\nperhaps\n</answer>")]))
    assert outcome.answer == ["yes"] and outcome.invalid_answer == ["perhaps"]


def test_provider_errors_are_infra_errors_with_the_transcript() -> None:
    outcome = _run(ScriptedModel([RateLimited("slow down", retry_after_s=1)]))
    assert outcome.status == "infra_error" and outcome.error_type == "RateLimited"
    assert [m.role for m in outcome.messages] == ["system", "user"]


def test_package_source_is_decided_by_declared_fields() -> None:
    released = _q(question_text="<patient_timeline>...</patient_timeline>", curated_text="input text")
    assert verbatim_package(released) == ("<patient_timeline>...</patient_timeline>", True)
    assert verbatim_package(_q(curated_text="input text")) == ("input text", False)
    assert verbatim_package(_q()) == (None, False)


def test_an_embedded_question_gets_only_the_answer_format() -> None:
    model = ScriptedModel([assistant(content="<answer>\nyes\n</answer>")])
    q = _q(question_text="FULL RELEASED PROMPT")
    anyio.run(lambda: run_curated(model, q, "FULL RELEASED PROMPT", embeds_question=True))
    assert model.requests[0][0][1].content == "FULL RELEASED PROMPT\n\n" + ANSWER_FORMAT
