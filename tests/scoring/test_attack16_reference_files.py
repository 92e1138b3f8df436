"""attack16reach: the reference's result files as users have them (BOM, bytes that are not UTF-8,
broken trajectories, NaN, null ids, repeated rows): each bad row is a per-row error naming file,
line and field; no good row is lost; nothing crashes ``clinseek score``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.errors import ScoringError
from clinseek.scoring import score_path
from clinseek.scoring._reference import read_reference_results


def _row(qid: str, answer: list[str], label: object = "Yes") -> dict[str, object]:
    """A raw agentic row of the reference's ehr_bench results.jsonl (ref_data_scoring.md §5)."""
    call = {"id": "c1", "type": "function",
            "function": {"name": "ehr.finish", "arguments": json.dumps({"response": answer})}}
    return {"qid": qid, "run_index": 0, "task": "ICU_Mortality_1day", "task_type": "risk_prediction",
            "label": label, "candidates": ["Yes", "No"], "completed": True, "status": "success",
            "stop_reason": "finish_tool_call",
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"},
                         {"role": "assistant", "content": "", "tool_calls": [call]},
                         {"role": "tool", "content": "ok", "tool_call_id": "c1"}]}


GOOD = [_row(f"q{i}", ["Yes"] if i % 2 else ["No"]) for i in range(4)]


def _tree(tmp_path: Path, data: bytes) -> Path:
    folder = tmp_path / "ehr_bench/agentic/full1800/m1"
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_bytes(data)
    return folder / "results.jsonl"


def _lines(rows: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _read(path: Path) -> tuple[list[str], list[str]]:
    bad: list[ScoringError] = []
    rows = read_reference_results(path, bad_rows=bad)
    return [r.qid for r in rows], [str(e) for e in bad]


def test_a_bom_before_the_first_row_loses_no_row(tmp_path: Path) -> None:
    """A UTF-8 BOM (Windows editors, PowerShell's Out-File) cost the first row: 'Unexpected UTF-8 BOM'."""
    path = _tree(tmp_path, b"\xef\xbb\xbf" + _lines(GOOD))
    assert _read(path) == (["q0", "q1", "q2", "q3"], [])


def test_a_one_row_file_with_a_bom_is_read(tmp_path: Path) -> None:
    """Was 'no result files found (... results.jsonl: holds no rows)': the file's only row not read."""
    path = _tree(tmp_path, b"\xef\xbb\xbf" + _lines(GOOD[:1]))
    scored = score_path(tmp_path, n_resamples=200)
    assert [q.qid for q in scored.questions] == ["q0"]
    assert path.is_file()


def test_a_file_whose_first_lines_are_all_broken_is_read_not_skipped(tmp_path: Path) -> None:
    """Lines that are not JSON at the top of a file made it 'holds no rows': its good rows were lost unlisted."""
    _tree(tmp_path, b"{oops\n" * 25 + _lines(GOOD[:1]))  # more than the 20 lines discovery peeks at
    scored = score_path(tmp_path, n_resamples=200)
    assert [q.qid for q in scored.questions] == ["q0"]
    assert len(scored.report.bad_rows) == 25 and all("results.jsonl:" in b for b in scored.report.bad_rows)


def test_a_line_that_is_not_utf8_is_one_bad_row(tmp_path: Path) -> None:
    """A latin-1 byte (0xe9) in row 3 crashed `clinseek score` with a UnicodeDecodeError traceback."""
    bad_line = json.dumps(_row("q9", ["Cafe"])).replace("Cafe", "Caf\udce9").encode("utf-8", "surrogateescape")
    path = _tree(tmp_path, _lines(GOOD[:2]) + bad_line + b"\n" + _lines(GOOD[3:]))
    qids, errors = _read(path)
    assert qids == ["q0", "q1", "q3"]
    assert len(errors) == 1 and f"{path}:3:" in errors[0] and "UTF-8" in errors[0]
    result = CliRunner().invoke(app, ["score", str(tmp_path), "--resamples", "200", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "results.jsonl:3" in result.output


BROKEN = {
    "a null message": lambda r: r["messages"].insert(0, None),
    "a null tool call": lambda r: r["messages"][2]["tool_calls"].insert(0, None),
    "messages as text": lambda r: r.update(messages="oops"),
    "a function given as its name": lambda r: r["messages"][2]["tool_calls"][0].update(function="ehr.finish"),
    "tool calls as an object": lambda r: r["messages"][2].update(tool_calls={"a": 1}),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_trajectory_is_one_bad_row_naming_messages(tmp_path: Path, case: str) -> None:
    """Each crashed `clinseek score` with an AttributeError traceback ('NoneType'/'str' has no attribute 'get')."""
    row = _row("q5", ["Yes"])
    BROKEN[case](row)
    path = _tree(tmp_path, _lines([*GOOD, row]))
    qids, errors = _read(path)
    assert qids == ["q0", "q1", "q2", "q3"]
    assert len(errors) == 1 and f"{path}:5: field 'messages" in errors[0], errors
    result = CliRunner().invoke(app, ["score", str(tmp_path), "--resamples", "200", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output


@pytest.mark.parametrize(("field", "value"), [("qid", None), ("qid", ""), ("qid", 1.5), ("qid", True),
                                               ("run_index", float("nan")), ("run_index", 1.5),
                                               ("run_index", "first"), ("run_index", -1)])
def test_an_id_that_is_no_id_is_a_bad_row_naming_its_field(tmp_path: Path, field: str, value: object) -> None:
    """qid null was scored as the question 'None', run_index 1.5 as run 1; NaN said only 'cannot convert
    float NaN to integer' (no field)."""
    row = {**_row("q5", ["Yes"]), field: value}
    path = _tree(tmp_path, _lines([*GOOD, row]))
    qids, errors = _read(path)
    assert qids == ["q0", "q1", "q2", "q3"]
    assert len(errors) == 1 and f"{path}:5: field '{field}'" in errors[0], errors


def test_integer_ids_as_numbers_or_text_still_read(tmp_path: Path) -> None:
    rows = [{**_row("x", ["Yes"]), "qid": 7, "run_index": "2"}, {**_row("y", ["No"]), "run_index": 1.0}]
    path = _tree(tmp_path, _lines(rows))
    bad: list[ScoringError] = []
    got = read_reference_results(path, bad_rows=bad)
    assert bad == [] and [(r.qid, r.run_index) for r in got] == [("7", 2), ("y", 1)]


def test_a_nan_label_is_a_bad_row_not_the_gold_nan(tmp_path: Path) -> None:
    """label NaN (a missing value written by pandas/json.dumps) was scored against the gold label 'nan'."""
    path = _tree(tmp_path, _lines([*GOOD, _row("q5", ["Yes"], label=float("nan"))]))
    qids, errors = _read(path)
    assert qids == ["q0", "q1", "q2", "q3"]
    assert len(errors) == 1 and f"{path}:5: field 'gold'" in errors[0], errors


def test_a_status_of_the_wrong_type_names_the_field(tmp_path: Path) -> None:
    """status ["success"] said only "unhashable type: 'list'"."""
    row = {**_row("q5", ["Yes"]), "status": ["success"], "messages": []}
    path = _tree(tmp_path, _lines([*GOOD, row]))
    qids, errors = _read(path)
    assert qids == ["q0", "q1", "q2", "q3"]
    assert len(errors) == 1 and "field 'status'" in errors[0], errors


def test_a_repeated_row_is_a_bad_row_naming_both_lines(tmp_path: Path) -> None:
    """A results.jsonl with a retried qid (the reference's raw batch output) stopped the whole scoring with
    'duplicate result row for ehr_bench/agent/m1 qid q1 run 0' (no file, no line; every other run lost)."""
    other = tmp_path / "ehr_bench/oneshot/full1800/m1"
    other.mkdir(parents=True)
    (other / "results.jsonl").write_bytes(_lines(GOOD))
    path = _tree(tmp_path, _lines([*GOOD, _row("q1", ["No"])]))
    scored = score_path(tmp_path, n_resamples=200)
    assert sorted({q.mode for q in scored.questions}) == ["agent", "curated"]
    assert len(scored.questions) == 8
    [bad] = scored.report.bad_rows
    assert f"{path}:5:" in bad and "line 2" in bad and "q1" in bad
    q1 = next(q for q in scored.questions if q.qid == "q1" and q.mode == "agent")
    assert q1.f1 == 1.0  # the first row is the one scored


@pytest.mark.parametrize(("field", "value"), [("latency_s", float("nan")), ("cost_usd", float("inf"))])
def test_a_time_or_cost_that_is_no_number_is_a_bad_row(tmp_path: Path, field: str, value: float) -> None:
    """latency_s NaN / cost_usd Infinity were read: summary.md then said 'cost $inf ... latency mean nan s'
    for the whole run (usage tokens NaN were already refused)."""
    folder = tmp_path / "bench/agent/m1"
    folder.mkdir(parents=True)
    rows = [{"qid": f"q{i}", "task": "ICU_Mortality_1day", "status": "answered", "answer": ["Yes"], "gold": ["Yes"],
             "latency_s": 1.0, "cost_usd": 0.1} for i in range(3)]
    rows[0][field] = value
    (folder / "results.jsonl").write_bytes(_lines(rows))
    scored = score_path(tmp_path, n_resamples=200)
    [bad] = scored.report.bad_rows
    assert "results.jsonl:1: field " in bad and field in bad, bad
    assert sorted(q.qid for q in scored.questions) == ["q1", "q2"]
