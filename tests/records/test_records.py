"""One records module: rows of every schema version read as the current ResultRow, by every stage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

import clinseek
from clinseek.records import (
    SCHEMA_VERSION,
    CallRecord,
    ResultRow,
    Usage,
    decode_row,
    read_results,
    read_run_manifest,
)

DATA = Path(__file__).parent / "data"
V1 = DATA / "v1" / "clinseek-bench-text" / "agent" / "scripted_v1"
"""A run written by main's code before the records module (schema_version 1): one agent row of a scripted
model that made two calls of 120 input, 12 output and 30 cached tokens each, and its run manifest."""
V1_REFERENCE = DATA / "v1_reference" / "ehr_bench" / "agentic" / "full1" / "v1"
"""The same run written in the reference's layout (``--layout reference``) by main's code."""


def _line(path: Path) -> dict[str, object]:
    return json.loads((path / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])


def test_a_version_1_row_reads_as_the_current_row() -> None:
    raw = _line(V1)
    assert raw["schema_version"] == 1 and "input_tokens" in raw["calls"][0]  # type: ignore[index]
    (row,) = read_results(V1 / "results.jsonl").rows
    assert row.schema_version == SCHEMA_VERSION == 2
    assert [c.usage for c in row.calls] == [Usage(input_tokens=120, output_tokens=12, cached_input_tokens=30)] * 2
    assert row.usage == Usage(input_tokens=240, output_tokens=24, cached_input_tokens=60)
    assert (row.status, row.answer, row.gold, row.parse_mode) == ("answered", ["no"], ["yes"], "finish_call")
    assert ResultRow.model_validate_json(row.model_dump_json()) == row  # written back at version 2, read the same


def test_a_version_1_row_of_the_reference_layout_reads_the_same(tmp_path: Path) -> None:
    (row,) = read_results(V1_REFERENCE / "results.jsonl").rows
    (plain,) = read_results(V1 / "results.jsonl").rows
    assert row.schema_version == 2 and row.usage == plain.usage
    assert [c.usage for c in row.calls] == [c.usage for c in plain.calls]  # two runs: same tokens, own timings
    assert (row.status, row.answer, row.gold, row.stop_reason) == (plain.status, plain.answer, plain.gold, plain.stop_reason)
    assert decode_row(_line(V1_REFERENCE)) == row


def test_a_version_1_manifest_reads() -> None:
    manifest = read_run_manifest(V1)
    assert manifest is not None and (manifest.model, manifest.mode) == ("scripted:v1", "agent")
    assert read_run_manifest(V1.parent) is None  # no manifest there


@pytest.mark.parametrize(("folder", "trajectories"), [("v1", 1), ("v1_reference", 0)])
def test_scoring_and_reporting_read_version_1_runs(tmp_path: Path, folder: str, trajectories: int) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(DATA / folder, runs)
    scored = clinseek.score(runs, out=tmp_path / "scores")
    (sample,) = [s for q in scored.questions for s in q.runs]
    assert (sample.f1, sample.usage.input_tokens, sample.usage.cached_tokens, sample.usage.turns) == (0.0, 240, 60, 2)
    assert sample.usage.tool_calls == {"ehr.run_sql_query": 1, "ehr.finish": 1}
    stats = clinseek.report([tmp_path / "scores"], tmp_path / "report.html")
    assert (stats.runs, stats.trajectories, stats.bad_rows) == (1, trajectories, 0)  # reference runs: no trajectories


@pytest.mark.parametrize("folder", ["v1", "v1_reference"])
def test_distill_exports_version_1_runs(tmp_path: Path, folder: str) -> None:
    from clinseek.distill import ExportFilters, export_dataset

    shutil.copytree(DATA / folder, tmp_path / "runs")
    done = export_dataset([tmp_path / "runs"], tmp_path / "sft", ExportFilters(min_f1=0.0))
    (sample,) = done.samples
    assert done.refusals == [] and sample.qid == "clinseek_risk_prediction_0"
    calls = [c["function"]["name"] for m in sample.messages if m.get("tool_calls") for c in m["tool_calls"]]
    assert calls[-1] == "ehr__finish"  # the wire name of ehr.finish


@pytest.mark.parametrize(("stop_reason", "status", "parse_mode"), [
    ("finish_tool_call", "answered", "finish_call"), ("answer_block", "answered", "answer_tag"),
    ("text_answer", "answered", None), ("max_turns", "no_answer", None)])
def test_a_version_1_row_without_parse_mode_gets_the_one_its_stop_implies(
        stop_reason: str, status: str, parse_mode: str | None) -> None:
    raw = {k: v for k, v in _line(V1).items() if k != "parse_mode"}
    row = decode_row({**raw, "stop_reason": stop_reason, "status": status})
    assert row.parse_mode == parse_mode
    current = {**raw, "schema_version": 2, "calls": [], "stop_reason": stop_reason, "status": status}
    assert decode_row(current).parse_mode is None  # version 2 rows are read as written


def test_a_row_of_an_unknown_version_is_refused_by_name() -> None:
    raw = {**_line(V1), "schema_version": 3}
    with pytest.raises(ValidationError, match="schema_version"):
        decode_row(raw)


def test_a_call_carries_the_one_usage_shape() -> None:
    assert set(CallRecord.model_fields) >= {"usage", "usage_reported"}
    assert not {"input_tokens", "output_tokens", "cached_input_tokens"} & set(CallRecord.model_fields)
    assert Usage(input_tokens=1, output_tokens=2) + Usage(input_tokens=3, cache_write_tokens=4) == \
        Usage(input_tokens=4, output_tokens=2, cache_write_tokens=4)
