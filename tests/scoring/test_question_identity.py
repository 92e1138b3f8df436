"""Pairing never mixes questions: a qid pairs only when both sides answered the same question.

Reproduces the bug where ``clinseek compare A B`` paired two runs over different benchmark builds
(same positional qids, other questions) and printed a paired test over unrelated questions.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _scoring_helpers import question, row_dict, write_jsonl
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.errors import ScoringError
from clinseek.scoring import compare_paths, compare_questions, read_score_inputs, score_path, score_questions

H1, H2 = "1" * 64, "2" * 64


def _q(qid: str, f1: float, h: str | None):
    return question(qid, f1, binary=True).model_copy(update={"question_hash": h})


def _rows(hashes: dict[str, str | None], answer: str) -> list[dict]:
    return [row_dict(qid=qid, task="Inpatient_Mortality", task_type="risk_prediction", category="mortality",
                     gold=["yes"], answer=[answer], candidates=["yes", "no"],
                     **({"question_hash": h} if h else {}))
            for qid, h in hashes.items()]


def _run(root: Path, mode: str, model: str, hashes: dict[str, str | None], answer: str = "yes") -> Path:
    return write_jsonl(root / "bench" / mode / model / "results.jsonl", _rows(hashes, answer))


def test_the_hash_is_read_from_the_row_and_old_rows_still_read(tmp_path: Path) -> None:
    path = _run(tmp_path, "agent", "m", {"a": H1, "b": None})
    got = {i.qid: i.question_hash for i in read_score_inputs(path)}
    assert got == {"a": H1, "b": None}


def test_same_qid_other_question_is_an_error_not_a_paired_test() -> None:
    a = [_q("q0", 1.0, H1), _q("q1", 0.0, H1)]
    b = [_q("q0", 0.0, H2), _q("q1", 0.0, H1)]
    with pytest.raises(ScoringError, match=r"1 of 2 shared question ids name different questions.*qid q0"):
        compare_questions(a, b, label_a="A", label_b="B", n_resamples=100)


def test_exclude_pairs_only_the_same_questions() -> None:
    a = [_q("q0", 1.0, H1), _q("q1", 1.0, H1), _q("q2", 0.0, H1)]
    b = [_q("q0", 0.0, H2), _q("q1", 0.0, H1), _q("q2", 0.0, H1)]
    comparison = compare_questions(a, b, label_a="A", label_b="B", n_resamples=100, on_changed="exclude")
    assert comparison.excluded_qids == ["q0"] and comparison.groups[0].n == 2
    with pytest.raises(ScoringError):  # nothing left to pair is never a silent empty result
        compare_questions(a[:1], b[:1], label_a="A", label_b="B", n_resamples=100, on_changed="exclude")


def test_unknown_identity_pairs_only_with_unknown() -> None:
    legacy = compare_questions([_q("q0", 1.0, None)], [_q("q0", 0.0, None)], label_a="A", label_b="B",
                               n_resamples=100)
    assert legacy.groups[0].n == 1 and legacy.excluded_qids == []
    with pytest.raises(ScoringError, match="not recorded"):
        compare_questions([_q("q0", 1.0, H1)], [_q("q0", 0.0, None)], label_a="A", label_b="B", n_resamples=100)


def test_compare_command_refuses_runs_over_different_builds(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", "agent", "m", {f"q{i}": f"{i}a".ljust(64, "0") for i in range(4)})
    b = _run(tmp_path / "b", "agent", "m", {f"q{i}": f"{i}b".ljust(64, "0") for i in range(4)}, answer="no")
    result = CliRunner().invoke(app, ["compare", str(a.parent), str(b.parent), "--resamples", "100"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ScoringError) and "4 of 4 shared question ids" in str(result.exception)
    same = _run(tmp_path / "c", "agent", "m", {f"q{i}": f"{i}a".ljust(64, "0") for i in range(4)}, answer="no")
    [ok] = compare_paths(a.parent, same.parent, n_resamples=100)
    assert ok.groups[0].n == 4 and ok.groups[0].delta == pytest.approx(1.0)


def test_score_leaves_out_agent_curated_pairs_of_different_builds(tmp_path: Path) -> None:
    _run(tmp_path, "agent", "m", {"q0": H1, "q1": H1, "q2": H1})
    _run(tmp_path, "curated", "m", {"q0": H2, "q1": H1, "q2": H1}, answer="no")
    _run(tmp_path, "agent", "n", {"q0": H1})
    _run(tmp_path, "curated", "n", {"q0": H2})
    report = score_path(tmp_path, n_resamples=100).report
    [paired] = report.paired
    assert paired.a == "bench/agent/m" and paired.excluded_qids == ["q0"] and paired.groups[0].n == 2
    assert len(report.pairing_problems) == 1 and "bench/agent/n" in report.pairing_problems[0]
    from clinseek.scoring import summary_markdown

    text = summary_markdown(report)
    assert "1 question ids left out" in text and "Comparisons left out" in text


def test_runs_of_one_qid_over_different_questions_are_an_error(tmp_path: Path) -> None:
    rows = [*_rows({"q0": H1}, "yes"), {**_rows({"q0": H2}, "yes")[0], "run_index": 1}]
    path = write_jsonl(tmp_path / "bench" / "agent" / "m" / "results.jsonl", rows)
    with pytest.raises(ScoringError, match="its runs answer different questions"):
        score_questions(read_score_inputs(path))
