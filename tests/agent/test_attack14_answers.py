"""Attack 14: answers as open models write them, read by the one extractor (both modes) and the real agent loop.

Candidates are real shapes of the benchmark's candidate lists: ICD long titles with commas in their
names, drug names with parentheses and apostrophes. The loop tests serve the replies over loopback
HTTP to the real provider and ``run_agent`` on a demo episode.
"""

from __future__ import annotations

import pytest
from _agent_helpers import make_question

from clinseek.agent._extract import extract_answer
from clinseek.agent._reading import read_curated_reply, read_finish, read_text_answer
from clinseek.bench import Question
from clinseek.tools import ToolContext
from fakes.llm_servers import OpenAIFake
from fakes.loop import run_agent_at

AKI = "Acute kidney failure, unspecified"
LIPID = "Hyperlipidemia, unspecified"
OTHER_LIPID = "Other and unspecified hyperlipidemia"
ALZ = "Alzheimer's disease, unspecified"
FLUSH = "Sodium Chloride 0.9%  Flush (Syringe)"
CANDIDATES = (AKI, LIPID, OTHER_LIPID, ALZ, FLUSH, "Heparin", "Potassium Chloride", "Sodium & Water")


@pytest.mark.parametrize(("text", "answer"), [
    # "Final Answer:" on the same line as other text (the most common phrasing of all)
    ("The final answer is: Heparin", ["Heparin"]),
    ("Based on the labs, the final answer is: Potassium Chloride", ["Potassium Chloride"]),
    ("So my final answer: Heparin", ["Heparin"]),
    ("Heparin was given.\n\n**Final Answer:** Potassium Chloride", ["Potassium Chloride"]),
    ("Some reasoning.\n> Answer: Heparin\nMore words after.", ["Heparin"]),
    # several candidates with commas in their own names, on one line
    (f"Final Answer: {AKI}, {LIPID}", [AKI, LIPID]),
    (f"<answer>{AKI}; Heparin</answer>", [AKI, "Heparin"]),
    (f"Final Answer: {OTHER_LIPID} and Heparin", [OTHER_LIPID, "Heparin"]),
    (f"Final Answer: Heparin, {ALZ}, and Potassium Chloride", ["Heparin", ALZ, "Potassium Chloride"]),
    # a numbered / bulleted list as the reply's last lines: every item, not only the last one
    ("The patient got:\n1. Heparin\n2. Potassium Chloride", ["Heparin", "Potassium Chloride"]),
    ("- Heparin\n- Potassium Chloride", ["Heparin", "Potassium Chloride"]),
    # a JSON list over several lines, and a Python list
    ('<answer>\n["Heparin",\n "Potassium Chloride"]\n</answer>', ["Heparin", "Potassium Chloride"]),
    ("Final Answer: ['Heparin', 'Potassium Chloride']", ["Heparin", "Potassium Chloride"]),
    ('Final Answer:\n[\n  "Heparin",\n  "Potassium Chloride"\n]', ["Heparin", "Potassium Chloride"]),
    # HTML entities (llama-cpp-python escapes the prompt; the model copies what it saw)
    ("<answer>Alzheimer&#x27;s disease, unspecified</answer>", [ALZ]),
    ("<answer>Sodium &amp; Water</answer>", ["Sodium & Water"]),
    # case and white space
    ("<answer>  sodium chloride 0.9% flush (SYRINGE) </answer>", [FLUSH]),
])
def test_answers_open_models_write_are_read(text: str, answer: list[str]) -> None:
    reading = read_text_answer([text], CANDIDATES)
    assert (reading.status, reading.answer) == ("answered", answer), (extract_answer(text, CANDIDATES), reading)


def test_a_trailing_list_is_never_read_as_its_last_item_only() -> None:
    """A partial answer is a wrong answer: a list whose last item is a candidate and another is not
    must not be read as that one item."""
    reading = read_text_answer(["Likely:\n1. Warfarin\n2. Heparin"], CANDIDATES)
    assert reading.answer != ["Heparin"], reading


def test_a_curated_reply_with_a_multiline_json_list_is_one_well_formed_block() -> None:
    reading = read_curated_reply('<answer>\n[\n "Heparin",\n "Potassium Chloride"\n]\n</answer>', CANDIDATES)
    assert (reading.status, reading.answer, reading.completed) == ("answered", ["Heparin", "Potassium Chloride"], True)


def test_a_finish_call_with_an_html_escaped_candidate_is_valid() -> None:
    reading = read_finish(["Alzheimer&#x27;s disease, unspecified", "Sodium &amp; Water"], CANDIDATES)
    assert (reading.status, reading.answer, reading.invalid_answer) == ("answered", [ALZ, "Sodium & Water"], [])


def test_the_loop_reads_a_final_answer_written_mid_line(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    question = make_question(demo_question.subject_id, demo_question.prediction_time, task="Inpatient_Mortality",
                             candidates=("Yes", "No"))
    s = OpenAIFake()
    with s:
        s.script(s.tool_calls([("ehr__load_ehr", {})]),
                 s.text("<think>Mortality risk looks low.</think>Considering everything, the final answer is: **No**"),
                 s.text("I already answered above. Therefore, the final answer is: **No**."))
        outcome = run_agent_at(s.url, demo_ctx, question)
    assert (outcome.status, outcome.answer, outcome.parse_mode) == ("answered", ["No"], "final_answer"), outcome


def test_the_loop_reads_every_item_of_a_trailing_numbered_list(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    question = make_question(demo_question.subject_id, demo_question.prediction_time, task="Inpatient_Mortality",
                             candidates=CANDIDATES, label=("Heparin",))
    s = OpenAIFake()
    with s:
        s.script(s.tool_calls([("ehr__load_ehr", {})]),
                 s.text("Medications:\n1. Heparin\n2. Potassium Chloride"),
                 s.text("Medications:\n1. Heparin\n2. Potassium Chloride"))
        outcome = run_agent_at(s.url, demo_ctx, question)
    assert (outcome.status, outcome.answer) == ("answered", ["Heparin", "Potassium Chloride"]), outcome


# -- the finish call reads its items as the text forms do (one reader, one cleaning) -------------------
@pytest.mark.parametrize(("response", "answer"), [
    (["Yes."], ["yes"]),
    (["**Yes**"], ["yes"]),
    (['"no"'], ["no"]),
    ('["no"]', ["no"]),  # a JSON list sent as one string
])
def test_a_finish_call_item_is_cleaned_as_a_text_answer_item(response, answer) -> None:
    from clinseek.agent._answer import finish_items

    reading = read_finish(finish_items(response), ("yes", "no"))
    assert (reading.status, reading.answer, reading.parse_mode) == ("answered", answer, "finish_call"), reading


def test_a_finish_call_string_of_several_candidates_is_its_items() -> None:
    reading = read_finish([f"Heparin, {AKI}"], CANDIDATES)
    assert (reading.status, reading.answer) == ("answered", ["Heparin", AKI]), reading


def test_the_loop_accepts_a_finish_call_answered_yes_with_a_period(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = OpenAIFake()
    with s:
        s.script(s.tool_calls([("ehr__finish", {"response": "No."})]), s.tool_calls([("ehr__finish", {"response": "No."})]))
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
    assert (outcome.status, outcome.answer, outcome.parse_mode) == ("answered", ["no"], "finish_call"), outcome


def test_a_cue_without_a_candidate_does_not_hide_the_answer_line_below() -> None:
    reading = read_text_answer(["The question is about mortality.\nThe answer: it depends on the lactate.\n\nYes"],
                               ("Yes", "No"))
    assert (reading.status, reading.answer, reading.parse_mode) == ("answered", ["Yes"], "candidate_match"), reading


def test_an_answer_block_written_html_escaped_is_read() -> None:
    """llama-cpp-python's chatml-function-calling template HTML-escapes the prompt: the model sees (and
    copies) ``&lt;answer&gt;``."""
    reading = read_curated_reply("Stable vitals.\n&lt;answer&gt;\nno\n&lt;/answer&gt;", ("yes", "no"))
    assert (reading.status, reading.answer, reading.parse_mode) == ("answered", ["no"], "answer_tag"), reading
