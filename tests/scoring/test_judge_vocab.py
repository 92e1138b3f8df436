"""The optional LLM judge column and the shipped closed vocabularies."""

from __future__ import annotations

import anyio
import pytest
from _scoring_helpers import score_input

from clinseek.schema import CHEXPERT_LABELS
from clinseek.scoring import (
    apply_verdicts,
    group_stats,
    load_vocabulary,
    parse_verdict,
    score_questions,
)

MM = {"task": "ehrxqa_image", "task_type": "multimodal", "category": "cxr_vqa"}


class ScriptedJudge:
    """An async judge that says match iff the model answer contains the word 'fluid'."""

    def __init__(self) -> None:
        self.calls: list[list[dict[str, str]]] = []

    async def __call__(self, messages: list[dict[str, str]]) -> str:
        self.calls.append(messages)
        return '{"match": true}' if "fluid" in messages[-1]["content"] else 'sure: {"match": false}'


def test_judge_verdicts_sit_beside_the_deterministic_score() -> None:
    from clinseek.scoring import judge_rows

    rows = [
        score_input(qid="a", gold=["pleural effusion"], answer=["fluid around the lung"], **MM),
        score_input(qid="b", gold=["pleural effusion"], answer=["pleural effusion"], **MM),
        score_input(qid="c", gold=["A", "B"], answer=["A"], **MM),  # multi-answer: not judged
        score_input(qid="d", gold=["yes"], answer=None, status="no_answer", **MM),  # nothing to judge
    ]
    judge = ScriptedJudge()
    verdicts = anyio.run(lambda: judge_rows(rows, judge, concurrency=2))
    assert sorted(k[3] for k in verdicts) == ["a", "b"] and len(judge.calls) == 2
    questions = apply_verdicts(score_questions(rows), verdicts)
    by_qid = {q.qid: q for q in questions}
    assert (by_qid["a"].f1, by_qid["a"].judge_accuracy) == (0.0, 1.0)  # never mixed into f1
    assert (by_qid["b"].f1, by_qid["b"].judge_accuracy) == (1.0, 0.0)
    stats = group_stats(questions)
    assert stats.f1 == pytest.approx((0 + 1 + 2 / 3 + 0) / 4)
    assert (stats.judge_accuracy, stats.n_judged) == (0.5, 2)


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ('{"match": true, "reason": "same"}', True),
        ('x {"match": false} y', False),
        ("no json", None),
        ('{"match": 1}', None),
    ],
)
def test_parse_verdict(reply: str, verdict: bool | None) -> None:
    assert parse_verdict(reply) is verdict


def test_vocabularies_have_the_documented_sizes() -> None:
    vocab = load_vocabulary()
    assert vocab.names("chexpert") == sorted(CHEXPERT_LABELS)
    assert len(vocab.names("medmod_phenotypes")) == 25
    assert len(vocab.names("ehrxqa_findings")) >= 60


def test_ambiguous_synonyms_are_not_mapped_outside_a_task_vocabulary() -> None:
    vocab = load_vocabulary()
    assert vocab.canonical("pneumonia", "medmod_phenotyping").startswith("Pneumonia (except")  # type: ignore[union-attr]
    assert vocab.canonical("Pneumonia", "medmod_radiology") == "Pneumonia"
    assert vocab.canonical("pneumothorax", None) is None  # a phenotype synonym and a finding name
    assert vocab.canonical("enlarged heart", "medmod_radiology") == "Cardiomegaly"
    assert vocab.canonical("Shock", "some_other_task") == "Shock"


def test_with_the_reference_rules_a_judge_grades_their_single_answers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """--scorer reference with --judge: the verdict is the reference's F1 of a multimodal single answer (as its
    judge grades it); clinseek's F1 and the rows without a verdict keep their values."""
    from _scoring_helpers import row_dict, write_jsonl

    from clinseek.scoring import judge_scored, score_path

    rows = [
        row_dict(qid="a", gold=["pleural effusion"], answer=["fluid around the lung"], **MM),
        row_dict(qid="b", gold=["pleural effusion"], answer=["pleural effusion"], **MM),
        row_dict(qid="c", gold=["A", "B"], answer=["A"], **MM),
    ]
    path = write_jsonl(tmp_path / "bench" / "agent" / "m" / "results.jsonl", rows)
    scored = score_path(path, scorer="reference", n_resamples=20)
    before = {q.qid: (q.f1, q.f1_reference) for q in scored.questions}
    assert before == {"a": (0.0, 0.0), "b": (1.0, 1.0), "c": (pytest.approx(2 / 3), pytest.approx(2 / 3))}
    judged = anyio.run(lambda: judge_scored(scored, ScriptedJudge(), judge_name="fake:judge"))
    after = {q.qid: (q.f1, q.f1_reference) for q in judged.questions}
    assert after == {"a": (0.0, 1.0), "b": (1.0, 0.0), "c": before["c"]}
    assert "LLM judge fake:judge" in str(judged.report.reference_rules)
    (run,) = judged.report.runs
    assert run.overall.f1_reference == pytest.approx((1 + 0 + 2 / 3) / 3)
