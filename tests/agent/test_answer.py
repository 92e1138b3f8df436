"""Answer validation against candidates and the strict curated <answer> parser."""

from __future__ import annotations

import pytest

from clinseek.agent import AnswerFormatError, finish_items, parse_answer_block, validate_answer


def test_valid_items_take_the_candidates_spelling_and_drop_duplicates() -> None:
    valid, invalid = validate_answer([" YES ", "yes", "Maybe"], ["yes", "no"])
    assert valid == ["yes"]
    assert invalid == ["Maybe"]


def test_whitespace_and_unicode_variants_match() -> None:
    valid, invalid = validate_answer(["Hemoglobin\u00a0 A1c"], ["hemoglobin a1c"])
    assert (valid, invalid) == (["hemoglobin a1c"], [])


def test_without_candidates_every_item_is_valid() -> None:
    assert validate_answer(["Pneumonia", ""], []) == (["Pneumonia"], [])


def test_finish_items_accepts_a_list_or_one_string_only() -> None:
    assert finish_items(["a", "b"]) == ["a", "b"]
    assert finish_items("a") == ["a"]
    assert finish_items({"a": 1}) is None
    assert finish_items([1, 2]) is None


def test_answer_block_one_item_per_line() -> None:
    assert parse_answer_block("reasoning...\n<answer>\nyes\n\n  no \n</answer>") == ["yes", "no"]


def test_empty_answer_block_is_an_empty_answer() -> None:
    assert parse_answer_block("<answer>\n</answer>") == []


@pytest.mark.parametrize(
    "text",
    [
        "Final answer: yes",  # no block: never salvaged
        "<answer>\nyes\n",  # unterminated
        "<answer>yes</answer> and <answer>no</answer>",  # two blocks
        "</answer>yes<answer>",  # reversed
    ],
)
def test_malformed_answer_blocks_are_errors(text: str) -> None:
    with pytest.raises(AnswerFormatError):
        parse_answer_block(text)
