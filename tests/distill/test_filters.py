"""Every export filter, on hand-edited copies of a real agent run (the runner's row format)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _distill_helpers import update, write_run

from clinseek.distill import ExportFilters, export_dataset
from clinseek.runner import ResultRow, read_results

BASELINES = ExportFilters(include_baselines=True)
"""The fixtures' teacher is the scripted baseline:evidence (refused unless asked for)."""


@pytest.fixture(scope="module")
def good_row(agent_results: Path) -> ResultRow:
    """A finished, fully correct risk-prediction row with several tool turns."""
    rows = [r for r in read_results(agent_results).rows if r.task_type == "risk_prediction"]
    return next(r for r in rows if r.answer and r.answer == r.gold and r.stop_reason == "finish_tool_call")


def _export(tmp_path: Path, source: Path, rows: list[ResultRow], **filters):
    results = write_run(tmp_path / "run", source, lambda _: rows)
    return export_dataset([results], tmp_path / "out", ExportFilters(**{"include_baselines": True, **filters}))


def _reasons(result) -> list[str]:
    assert len(result.refusals) == 1 and not result.samples
    return result.refusals[0].reasons


def _with_messages(row: ResultRow, edit) -> ResultRow:
    messages = [dict(m) for m in row.messages]
    edit(messages)
    return update(row, messages=messages)


def test_the_unedited_row_is_exported(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    result = _export(tmp_path, agent_results, [good_row])
    assert [s.qid for s in result.samples] == [good_row.qid] and result.samples[0].f1 == 1.0


def test_infra_error_is_refused(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    row = update(good_row, status="infra_error", stop_reason="exception", completed=False, error="boom",
                 error_type="ProviderUnavailable")
    assert "infra_error" in _reasons(_export(tmp_path, agent_results, [row]))


def test_a_run_without_finish_is_refused_unless_finish_is_not_required(
    tmp_path: Path, agent_results: Path, good_row: ResultRow
) -> None:
    row = update(good_row, stop_reason="max_turns", completed=False)
    assert _reasons(_export(tmp_path / "a", agent_results, [row])) == ["not_finished"]
    kept = _export(tmp_path / "b", agent_results, [row], require_finish=False)
    assert len(kept.samples) == 1


def test_f1_below_the_threshold_is_refused(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    wrong = [c for c in good_row.candidates if c not in good_row.gold]
    row = update(good_row, answer=wrong[:1])
    result = _export(tmp_path / "a", agent_results, [row])
    assert _reasons(result) == ["below_min_f1"] and result.refusals[0].detail == {"below_min_f1": ["F1 0.000 < 0.5"]}
    assert len(_export(tmp_path / "b", agent_results, [row], min_f1=0.0).samples) == 1


def _first_call(messages: list[dict]) -> dict:
    return next(m for m in messages if m.get("tool_calls"))


@pytest.mark.parametrize(
    "break_it",
    [
        pytest.param(lambda ms: _first_call(ms)["tool_calls"][0].update(error_kind="invalid_json", raw_arguments="{"),
                     id="unreadable-call"),
        pytest.param(lambda ms: _first_call(ms)["tool_calls"][0].update(name="ehr.drop_table"), id="tool-not-offered"),
        pytest.param(lambda ms: ms.insert(2, {"role": "assistant", "content": "I think it is no."}), id="turn-without-call"),
        pytest.param(lambda ms: ms.pop(3), id="call-never-answered"),
        pytest.param(lambda ms: ms.extend([ms[-2], ms[-1]]), id="finish-called-twice"),
    ],
)
def test_tool_protocol_errors_are_refused(tmp_path: Path, agent_results: Path, good_row: ResultRow, break_it) -> None:
    def edit(messages: list[dict]) -> None:
        for i, m in enumerate(messages):  # deep-copy the calls we may change
            if m.get("tool_calls"):
                messages[i] = {**m, "tool_calls": [dict(c) for c in m["tool_calls"]]}
        break_it(messages)

    result = _export(tmp_path, agent_results, [_with_messages(good_row, edit)])
    assert _reasons(result) == ["protocol_errors"]
    assert result.refusals[0].detail["protocol_errors"][0].endswith("tool-protocol errors")


def test_trajectories_with_images_are_refused(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    row = _with_messages(good_row, lambda ms: ms[1].update(images=[{"path": "/data/cxr/1.png"}]))
    assert _reasons(_export(tmp_path, agent_results, [row])) == ["has_images"]


def test_compacted_trajectories_are_refused(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    assert _reasons(_export(tmp_path, agent_results, [update(good_row, compactions=1)])) == ["compacted_context"]


def test_over_long_runs_are_refused_whole(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    result = _export(tmp_path, agent_results, [good_row], max_tokens=100)
    assert _reasons(result) == ["too_long"] and "approximate tokens > 100" in result.refusals[0].detail["too_long"][0]


def test_a_malformed_trajectory_fails_that_row_only(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    bad = update(_with_messages(good_row, lambda ms: ms.pop(0)), run_index=1)
    result = _export(tmp_path, agent_results, [good_row, bad])
    assert len(result.samples) == 1
    assert [r.reasons for r in result.refusals] == [["malformed_trajectory"]]


def test_a_torn_line_is_counted_and_skipped(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    results = write_run(tmp_path / "run", agent_results, lambda _: [good_row])
    with results.open("a") as fh:
        fh.write('{"qid": "torn')
    result = export_dataset([results], tmp_path / "out", BASELINES)
    assert len(result.samples) == 1 and result.card.sources[0].torn_lines == 1


def test_every_reason_is_recorded(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    row = update(good_row, stop_reason="max_turns", completed=False, compactions=2, answer=[])
    reasons = _reasons(_export(tmp_path, agent_results, [row], max_tokens=10))
    assert set(reasons) == {"not_finished", "below_min_f1", "compacted_context", "too_long"}


def test_reasoning_is_dropped_unless_asked(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    row = _with_messages(good_row, lambda ms: _first_call(ms).update(reasoning="load the record first"))
    plain = _export(tmp_path / "a", agent_results, [row]).samples[0]
    kept = _export(tmp_path / "b", agent_results, [row], keep_reasoning=True).samples[0]
    assert not any("reasoning_content" in m for m in plain.messages)
    assert [m["reasoning_content"] for m in kept.messages if "reasoning_content" in m] == ["load the record first"]


def test_wire_names_follow_the_chosen_provider(tmp_path: Path, agent_results: Path, good_row: ResultRow) -> None:
    sample = _export(tmp_path, agent_results, [good_row], wire_provider="text").samples[0]
    assert "ehr.finish" in {t["function"]["name"] for t in sample.tools}


def test_scripted_baselines_are_refused_unless_asked_for(tmp_path: Path, agent_results: Path,
                                                         good_row: ResultRow) -> None:
    results = write_run(tmp_path / "run", agent_results, lambda _: [good_row])
    refused = export_dataset([results], tmp_path / "out")
    assert good_row.model == "baseline:evidence" and not refused.samples
    assert refused.refusals[0].reasons == ["scripted_baseline"]
    assert "is a scripted baseline, not a model" in refused.refusals[0].detail["scripted_baseline"][0]
    assert refused.card.refused_by_reason == {"scripted_baseline": 1}
    assert len(export_dataset([results], tmp_path / "out2", BASELINES).samples) == 1
