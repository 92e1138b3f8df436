"""Answers counted by parse_mode per run; --strict scores only each mode's own format, beside the rest."""

from __future__ import annotations

from pathlib import Path

from _scoring_helpers import row_dict, write_jsonl
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.scoring import score_path, summary_markdown


def _rows(mode: str, strict_mode: str) -> list[dict]:
    return [
        row_dict(qid="q1", mode=mode, parse_mode=strict_mode),
        row_dict(qid="q2", mode=mode, parse_mode="candidate_match"),
        row_dict(qid="q3", mode=mode, parse_mode="final_answer"),
        row_dict(qid="q4", mode=mode, status="no_answer", answer=None),
    ]


def _results(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "b" / "agent" / "m" / "results.jsonl", _rows("agent", "finish_call"))
    write_jsonl(tmp_path / "b" / "curated" / "m" / "results.jsonl", _rows("curated", "answer_tag"))
    return tmp_path


def test_answers_are_counted_by_parse_mode_per_run(tmp_path: Path) -> None:
    report = score_path(_results(tmp_path), n_resamples=10).report
    agent, curated = report.runs
    assert agent.parse_modes == {"candidate_match": 1, "final_answer": 1, "finish_call": 1}
    assert curated.parse_modes == {"answer_tag": 1, "candidate_match": 1, "final_answer": 1}
    assert agent.strict is None
    assert "Answered runs by parse mode: candidate_match 1, final_answer 1, finish_call 1." in summary_markdown(report)


def test_strict_scores_only_the_modes_own_format_beside_the_main_numbers(tmp_path: Path) -> None:
    plain = score_path(_results(tmp_path), n_resamples=10).report.runs[0]
    strict = score_path(_results(tmp_path), n_resamples=10, strict=True).report.runs[0]
    assert strict.overall == plain.overall and plain.overall.f1 == 0.75  # never mixed
    assert strict.strict is not None and strict.strict.f1 == 0.25 and strict.strict.n_answered == 1


def test_rows_written_before_parse_mode_get_it_from_their_stop_reason(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "b" / "agent" / "m" / "results.jsonl", [
        row_dict(qid="q1", stop_reason="finish_tool_call"),
        row_dict(qid="q2", stop_reason="no_tool_call"),
    ])
    run = score_path(tmp_path, n_resamples=10, strict=True).report.runs[0]
    assert run.parse_modes == {"finish_call": 1, "unrecorded": 1}
    assert run.strict is not None and run.strict.f1 == 0.5


def test_score_strict_on_the_command_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["score", str(_results(tmp_path)), "--strict", "--resamples", "10"],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "strict F1" in result.output and "finish_call 1" in result.output
