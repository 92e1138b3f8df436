"""The one answer extractor: every answer form, its parse_mode, and what it never guesses."""

from __future__ import annotations

import pytest

from clinseek.agent import PARSE_MODES, STRICT_PARSE_MODES, extract_answer

YES_NO = ["yes", "no"]
DRUGS = ["Heparin", "Insulin Glargine", "Sodium Chloride 0.9%", "OBSERVATION ADMIT"]


@pytest.mark.parametrize(("text", "candidates", "items", "mode"), [
    # the Curated Input format: one <answer> block, one item per line (bullets, quotes cleaned)
    ("Stable.\n<answer>\nno\n</answer>", YES_NO, ["no"], "answer_tag"),
    ("<answer>\n- Heparin\n2. \"Insulin Glargine\"\n</answer>", DRUGS, ["Heparin", "Insulin Glargine"], "answer_tag"),
    ('<answer>["Heparin", "Insulin Glargine"]</answer>', DRUGS, ["Heparin", "Insulin Glargine"], "answer_tag"),
    ("<answer>Heparin, Insulin Glargine</answer>", DRUGS, ["Heparin", "Insulin Glargine"], "answer_tag"),
    ("<answer>draft: yes</answer> on reflection <answer>no</answer>", YES_NO, ["no"], "answer_tag"),  # the last
    # an embedded {"response": ...}, also as a finish call written in text
    ('I conclude {"response": ["yes"]}', YES_NO, ["yes"], "response_json"),
    ('{"name": "ehr.finish", "arguments": {"response": ["Heparin"]}}', DRUGS, ["Heparin"], "response_json"),
    ('```json\n{"response": "no"}\n```', YES_NO, ["no"], "response_json"),
    # "Final Answer:" cues, inline or as a list below
    ("Reasoning...\nFinal Answer: no", YES_NO, ["no"], "final_answer"),
    ("**Final answer:**\n- Heparin\n- Insulin Glargine\n\nThanks", DRUGS, ["Heparin", "Insulin Glargine"],
     "final_answer"),
    ("Answer: Heparin; Sodium Chloride 0.9%", DRUGS, ["Heparin", "Sodium Chloride 0.9%"], "final_answer"),
    # a last line that names candidates, as the small model wrote them
    ('["no"]', YES_NO, ["no"], "candidate_match"),
    ("OBSERVATION ADMIT", DRUGS, ["OBSERVATION ADMIT"], "candidate_match"),
    ("The patient is stable.\nYes.", YES_NO, ["Yes"], "candidate_match"),
])
def test_every_answer_form_is_read_with_its_parse_mode(text: str, candidates: list[str], items: list[str],
                                                       mode: str) -> None:
    found = extract_answer(text, candidates)
    assert found is not None and (found.items, found.parse_mode) == (items, mode)


@pytest.mark.parametrize("text", [
    "I cannot tell from these records.",
    "The patient may or may not die; yes and no are both possible here.",  # no substring search
    "Heparn",  # no fuzzy match
    "",
])
def test_nothing_is_guessed(text: str) -> None:
    assert extract_answer(text, DRUGS + YES_NO) is None


def test_reasoning_is_never_read_as_the_answer() -> None:
    assert extract_answer("<think><answer>yes</answer></think>\nI am unsure.", YES_NO) is None
    found = extract_answer("<think>Final Answer: yes</think>\n<answer>no</answer>", YES_NO)
    assert found is not None and found.items == ["no"]


def test_only_one_block_is_the_well_formed_format() -> None:
    one = extract_answer("<answer>no</answer>", YES_NO)
    two = extract_answer("<answer>yes</answer><answer>no</answer>", YES_NO)
    assert one is not None and one.well_formed and two is not None and not two.well_formed


def test_items_outside_the_candidates_are_kept_for_validation() -> None:
    found = extract_answer("<answer>\nHeparin\nAspirin\n</answer>", DRUGS)
    assert found is not None and found.items == ["Heparin", "Aspirin"]


def test_without_candidates_a_last_line_is_not_an_answer() -> None:
    assert extract_answer("yes") is None
    found = extract_answer("<answer>free text</answer>")
    assert found is not None and found.items == ["free text"]


def test_the_strict_modes_are_the_formats_each_mode_asks_for() -> None:
    assert STRICT_PARSE_MODES == {"agent": "finish_call", "curated": "answer_tag"}
    assert set(STRICT_PARSE_MODES.values()) < set(PARSE_MODES)


def test_every_parse_mode_is_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "agent.md").read_text(encoding="utf-8")
    assert [m for m in PARSE_MODES if f"`{m}`" not in doc] == []
