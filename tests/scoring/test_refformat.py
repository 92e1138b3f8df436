"""The one adapter between clinseek's rows and the reference's (``clinseek.refformat``): names, paths, shapes,
and clinseek rows written in the reference's shape and read back exactly."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from clinseek.refformat import (
    clinseek_fields,
    finish_answer,
    from_reference_row,
    path_run_key,
    path_split,
    reference_label,
    reference_model_name,
    reference_results_dir,
    reference_status,
    row_format,
    to_reference_row,
)


@pytest.mark.parametrize(("spec", "name"), [
    ("anthropic:claude-opus-4-6", "claude_opus_4_6"),
    ("anthropic:claude-sonnet-4-6-20260101", "claude_sonnet_4_6"),
    ("bedrock:us.anthropic.claude-opus-4-6-v1", "claude_opus_4_6"),
    ("bedrock:openai.gpt-oss-120b-1:0", "gpt_oss_120b"),
    ("openai:Qwen/Qwen3.5-35B-A3B", "qwen3_5_35b_a3b"),
    ("openai:Qwen/Qwen3-VL-235B", "qwen3_vl_235b"),
    ("openai:moonshotai/Kimi-K2.5", "kimi_k2_5"),
    ("openai:zai-org/GLM-4.7", "glm_4_7"),
    ("openai:MiniMax-M2.5", "minimax_m2_5"),
    ("baseline:evidence", "baseline_evidence"),
    ("claude_opus_4_6", "claude_opus_4_6"),
])
def test_reference_model_names(spec: str, name: str) -> None:
    assert reference_model_name(spec) == name


def test_reference_results_dir_and_run_key(tmp_path: Path) -> None:
    folder = reference_results_dir(tmp_path, "clinseek-bench-mm", "curated", "full989", "anthropic:claude-opus-4-6")
    assert folder == tmp_path / "mm_bench/oneshot/full989/claude_opus_4_6"
    assert reference_results_dir(tmp_path, "agentehr-bench", "agent", "subset600", "m").parts[-4:] == (
        "agent_ehr_bench", "agentic", "subset600", "m")
    with pytest.raises(ValueError, match="split"):
        reference_results_dir(tmp_path, "x", "agent", "a/b", "m")
    raw = tmp_path / "mm_bench/agentic/full2703/_multi_eval_raw/full5_20260421T091517Z/claude-sonnet-4-6"
    raw.mkdir(parents=True)
    os.symlink(raw, tmp_path / "mm_bench/agentic/full2703/claude_sonnet_4_6")
    linked = tmp_path / "mm_bench/agentic/full2703/claude_sonnet_4_6/merged_unique.jsonl"
    assert path_run_key(linked) == ("mm_bench", "agent", "claude_sonnet_4_6")  # the link's name, not the target's
    assert path_run_key(raw / "results.jsonl") == ("mm_bench", "agent", "claude-sonnet-4-6")
    assert path_split(linked) == "full2703"
    assert path_run_key(tmp_path / "runs/x/results.jsonl") is None


def test_row_formats() -> None:
    assert row_format({"qid": "q", "status": "answered", "gold": ["a"]}) == "clinseek"
    assert row_format({"qid": "q", "status": "success", "messages": []}) == "raw"
    assert row_format({"qid": "q", "status": "ok"}) == "raw"
    assert row_format({"qid": "q", "clinseek_status": "answered", "status": "success"}) == "exported"
    assert row_format({"qid": "q", "gold_names": ["a"], "prediction_strs": [], "note": "ok"}) == "scored"
    assert row_format({"qid": "q", "gold": ["a"], "pred": ["a"], "fine_task": "t"}) == "hierarchical"
    assert row_format({"qid": "q"}) is None


def test_reference_status_and_label() -> None:
    assert reference_status("agent", "answered") == ("success", "finish_tool_call")
    assert reference_status("agent", "no_answer") == ("incomplete", "no_final_answer")
    assert reference_status("agent", "infra_error") == ("error", "exception")
    assert reference_status("curated", "no_answer") == ("ok", "no_final_answer")
    assert reference_status("curated", "infra_error") == ("error", "exception")
    assert reference_label(["yes"], [], "risk_prediction") == "yes"
    assert reference_label(["A", "B"], [], "decision_making") == ["A", "B"]
    assert reference_label(["Aspirin", "X"], [["B01AC06"]], "decision_making") == [
        {"name": "Aspirin", "atc_name": "B01AC06"}, {"name": "X"}]
    assert reference_label(["yes"], [], "multimodal") == [{"name": "yes"}]


def _row(mode: str, **fields: Any) -> dict[str, Any]:
    """A ResultRow as JSON (model_dump(mode="json") of a runner row, defaults left out of messages)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are ..."},
        {"role": "user", "content": "Will the patient die?", "images": [{"path": "cxr/a.jpg"}]},
    ]
    if mode == "agent":
        messages += [
            {"role": "assistant", "reasoning": "look first", "tool_calls": [
                {"id": "c1", "name": "ehr.run_sql_query", "arguments": {"sql_query": "SELECT 1"}},
                {"id": "c2", "name": "ehr.get_records_by_time", "raw_arguments": "{bad", "error_kind": "invalid_json",
                 "error": "arguments are not JSON"}]},
            {"role": "tool", "content": "1", "tool_call_id": "c1", "name": "ehr.run_sql_query"},
            {"role": "tool", "content": "error", "tool_call_id": "c2", "name": "ehr.get_records_by_time",
             "is_error": True},
            {"role": "assistant", "tool_calls": [{"id": "c3", "name": "ehr.finish",
                                                  "arguments": {"response": ["yes", "maybe"]}}]},
        ]
    else:
        messages += [{"role": "assistant", "content": "<answer>yes\nmaybe</answer>"}]
    return {"schema_version": 1, "qid": "q1", "run_index": 0, "benchmark": "clinseek-bench-text",
            "task": "Inpatient_Mortality", "task_type": "risk_prediction", "category": "mortality", "mode": mode,
            "model": "anthropic:claude-opus-4-6", "status": "answered", "completed": True,
            "stop_reason": "finish_tool_call" if mode == "agent" else "answer_block", "answer": ["yes"],
            "invalid_answer": ["maybe"], "gold": ["yes"], "gold_aliases": [], "candidates": ["yes", "no"],
            "manifest": {"source": "clinseek-build"}, "messages": messages, **fields}


@pytest.mark.parametrize("mode", ["agent", "curated"])
def test_clinseek_rows_go_to_the_reference_shape_and_back_exactly(mode: str) -> None:
    row = _row(mode)
    written = json.loads(json.dumps(to_reference_row(row)))
    assert written["status"] == ("success" if mode == "agent" else "ok")
    assert written["clinseek_status"] == "answered" and written["label"] == "yes"
    assert written["question"] == "Will the patient die?"
    calls = [c for m in written["messages"] for c in m.get("tool_calls", [])]
    assert all(c["type"] == "function" and isinstance(c["function"]["arguments"], str) for c in calls)
    assert finish_answer(written["messages"]) == ["yes", "maybe"]  # the reference's extractor, valid + invalid
    assert any("reasoning_content" in m for m in written["messages"]) == (mode == "agent")
    back = from_reference_row(written)
    assert {k: back[k] for k in row} == row
    assert back["reference_status"] == written["status"]
    fields = clinseek_fields(written)  # what the scorer reads: clinseek's own fields
    assert fields["status"] == "answered" and fields["answer"] == ["yes"] and fields["invalid_answer"] == ["maybe"]


def test_a_reference_row_in_clinseeks_vocabulary() -> None:
    row = {"qid": "ehr_bench_risk_prediction_7", "run_index": 1, "task": "ED_Hospitalization",
           "task_type": "risk_prediction", "label": "yes", "candidates": ["yes", "no"], "status": "success",
           "stop_reason": "exact_answer_text_fallback", "question": "...",
           "messages": [{"role": "user", "content": "..."},
                        {"role": "assistant", "content": "yes", "tool_calls": [
                            {"id": "synthetic_finish_0", "type": "function",
                             "function": {"name": "ehr.finish", "arguments": "{'response': ['yes']}"}}]},
                        {"role": "tool", "content": "Finish (synthesized from plain-text answer)"}]}
    fields = clinseek_fields(row)
    assert (fields["status"], fields["answer"], fields["gold"], fields["turns"]) == ("answered", ["yes"], "yes", 1)
    assert fields["tool_calls"] == {"ehr.finish": 1} and fields["reference_status"] == "success"
    failed = clinseek_fields({**row, "status": "error", "stop_reason": "exception", "messages": []})
    assert failed["status"] == "infra_error" and failed["answer"] is None
