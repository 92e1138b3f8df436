"""results.jsonl: one write per row, torn lines ignored, resume compaction, credentials redacted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clinseek.errors import ClinseekError
from clinseek.runner import ResultRow, ResultsFile, read_results


def _row(qid: str, run_index: int = 0, status: str = "answered", config: str = "c" * 64, **kw) -> ResultRow:
    return ResultRow(qid=qid, run_index=run_index, session_id=f"{qid}__run_{run_index}", benchmark="b",
                     task="t", task_type="risk_prediction", mode="curated", model="m:x", config_hash=config,
                     prompt_version="p", policy_version="clinseek-text-v1", status=status,  # type: ignore[arg-type]
                     completed=status == "answered", stop_reason="answer_block", **kw)


def _write(path: Path, rows: list[ResultRow]) -> None:
    f = ResultsFile(path)
    f.open()
    for r in rows:
        f.append(r)
    f.close()


def test_rows_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    _write(path, [_row("a", answer=["yes"]), _row("b")])
    report = read_results(path)
    assert [r.qid for r in report.rows] == ["a", "b"] and report.torn_lines == 0
    assert report.rows[0].answer == ["yes"]


def test_a_torn_last_line_is_ignored_and_removed_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    _write(path, [_row("a"), _row("b")])
    with path.open("ab") as fh:
        fh.write(b'{"qid": "c", "run_ind')  # killed mid-write
    assert read_results(path).torn_lines == 1
    done = ResultsFile(path).prepare_resume("c" * 64)
    assert [r.qid for r in done] == ["a", "b"]
    assert path.read_bytes().endswith(b"\n") and read_results(path).torn_lines == 0


def test_infra_errors_are_redone_and_kept_aside(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    _write(path, [_row("a"), _row("b", status="infra_error", error="503"), _row("a")])
    done = ResultsFile(path).prepare_resume("c" * 64)
    assert [(r.qid, r.status) for r in done] == [("a", "answered")]
    assert [r.qid for r in read_results(path).rows] == ["a"]
    assert "infra_error" in (tmp_path / "attempts.jsonl").read_text()


def test_resume_refuses_another_configuration(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    _write(path, [_row("a", config="d" * 64)])
    with pytest.raises(ClinseekError, match="another run configuration"):
        ResultsFile(path).prepare_resume("c" * 64)


def test_runs_of_one_question_are_distinct_keys(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    _write(path, [_row("a", 0), _row("a", 1)])
    assert len(ResultsFile(path).prepare_resume("c" * 64)) == 2


def test_credentials_in_the_environment_never_reach_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-" + os.urandom(8).hex()
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    path = tmp_path / "results.jsonl"
    _write(path, [_row("a", error=f"HTTP 401: bad key {secret}")])
    text = path.read_text()
    assert secret not in text and "[redacted]" in text


def test_two_runs_cannot_write_one_folder(tmp_path: Path) -> None:
    from clinseek.runner import RunLock

    with RunLock(tmp_path), pytest.raises(ClinseekError, match="another run is writing"):
        with RunLock(tmp_path):
            pass
    with RunLock(tmp_path):  # released on exit
        pass


def test_rows_of_a_changed_question_are_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    _write(path, [_row("a", question_hash="h1", store_id="s"), _row("b", question_hash="h2", store_id="s"),
                  _row("c", question_hash="h3", store_id="s"), _row("d")])
    results = ResultsFile(path)
    done = results.prepare_resume("c" * 64, {"a": ("h1", "s"), "b": ("other", "s"), "d": ("h4", "s")})
    assert [r.qid for r in done] == ["a", "c"]  # c is not asked by this run: kept as it is
    assert results.superseded == 2  # b answered another question; d does not say which one
    assert [r.qid for r in read_results(path).rows] == ["a", "c"]
    assert [r.qid for r in read_results(tmp_path / "superseded.jsonl").rows] == ["b", "d"]
