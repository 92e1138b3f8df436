"""The two row adapters: runner rows and the reference's result layouts; bad rows name file, line, field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _scoring_helpers import row_dict, write_jsonl

from clinseek.errors import ScoringError
from clinseek.refformat import finish_answer
from clinseek.scoring import (
    gold_items,
    label_strings,
    read_expected,
    read_reference_results,
    read_score_inputs,
    reference_run_key,
)


def test_label_strings_loader_rule() -> None:
    assert label_strings("yes") == ["yes"]
    assert label_strings([{"name": "2", "value": 2}]) == ["2"]
    assert label_strings([{"name": "Aspirin", "atc_name": "B01AC06"}]) == ["Aspirin"]
    assert label_strings([{"atc_name": "B01AC06"}]) == ["B01AC06"]
    assert label_strings([{"name": "", "value": 3}]) == ["3"]
    assert label_strings([{"name": "A"}, "B", 4]) == ["A", "B", "4"]
    assert label_strings(None) == []


def test_gold_items_keep_atc_names_as_aliases() -> None:
    assert gold_items(
        [{"name": "Aspirin", "atc_name": "B01AC06"}, {"name": "Heparin", "atc_name": "Heparin"}]
    ) == (
        ["Aspirin", "Heparin"],
        [["B01AC06"], []],
    )
    assert gold_items("yes") == (["yes"], [])
    assert gold_items(["A", " "]) == (["A"], [])


def test_read_results_takes_run_key_from_the_layout(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "synthetic" / "curated" / "baseline_null" / "results.jsonl",
        [
            row_dict(
                usage={"input_tokens": 10, "output_tokens": 5, "cached_tokens": 2},
                tool_calls={"ehr.run_sql_query": 3},
                turns=4,
                cost_usd=0.01,
                latency_s=1.5,
            ),
        ],
    )
    (row,) = read_score_inputs(path)
    assert row.run_key == ("synthetic", "curated", "baseline_null")
    assert row.usage.input_tokens == 10 and row.usage.n_tool_calls == 3 and row.usage.turns == 4
    assert row.usage.cost_usd == 0.01 and row.usage.latency_s == 1.5


def test_row_fields_and_run_manifest_beat_the_layout(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "x" / "y" / "z" / "results.jsonl", [row_dict(model="from-row"), row_dict(qid="q2")]
    )
    (path.parent / "run_manifest.json").write_text(
        json.dumps({"benchmark": "bm", "mode": "curated", "model": "mm"})
    )
    rows = read_score_inputs(path)
    assert [r.run_key for r in rows] == [("bm", "curated", "from-row"), ("bm", "curated", "mm")]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("{not json", None),
        (json.dumps(row_dict(status="finished")), "status"),
        (json.dumps({k: v for k, v in row_dict().items() if k != "task"}), "task"),
        (json.dumps(row_dict(gold=[])), None),
        (json.dumps(row_dict(task_type="ranking")), "task_type"),
    ],
    ids=["bad-json", "bad-status", "missing-task", "empty-gold", "bad-task-type"],
)
def test_a_bad_row_names_file_line_and_field(tmp_path: Path, line: str, field: str | None) -> None:
    path = tmp_path / "b" / "agent" / "m" / "results.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(row_dict(qid="ok")) + "\n" + line + "\n")
    with pytest.raises(ScoringError) as err:
        read_score_inputs(path)
    assert f"{path}:2" in str(err.value)
    if field:
        assert repr(field) in str(err.value)
    bad: list[ScoringError] = []
    rows = read_score_inputs(path, bad_rows=bad)
    assert [r.qid for r in rows] == ["ok"] and len(bad) == 1


def _finish(response: object) -> dict[str, object]:
    args = json.dumps({"response": response})
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ehr.finish", "arguments": args}}
        ],
    }


def test_finish_answer_takes_the_last_finish_call() -> None:
    sql = {
        "role": "assistant",
        "tool_calls": [{"function": {"name": "ehr_run_sql_query", "arguments": "{}"}}],
    }
    assert finish_answer([_finish(["a"]), sql, _finish(["b", "c"])]) == ["b", "c"]
    assert finish_answer([_finish("yes")]) == ["yes"]
    assert finish_answer([sql]) is None
    not_finish = {
        "role": "assistant",
        "tool_calls": [{"function": {"name": "unfinished", "arguments": "{}"}}],
    }
    assert finish_answer([not_finish]) is None  # no substring matching


def test_reference_run_key_from_each_layout(tmp_path: Path) -> None:
    assert reference_run_key(tmp_path / "ehr_bench/agentic/full1800/claude_opus_4_6/results.jsonl") == (
        "ehr_bench",
        "agent",
        "claude_opus_4_6",
    )
    assert reference_run_key(tmp_path / "mm_bench/oneshot/scored/glm_4_7/scored.jsonl") == (
        "mm_bench",
        "curated",
        "glm_4_7",
    )
    hier = tmp_path / "hierarchical/agentic/ehr_bench/kimi_k2_5/L1.text_only/L2.x/L3.y/L4.z/rows.jsonl"
    assert reference_run_key(hier) == ("ehr_bench", "agent", "kimi_k2_5")
    with pytest.raises(ScoringError, match="reference layout"):
        reference_run_key(tmp_path / "a" / "results.jsonl")


def test_reference_raw_rows(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "ehr_bench/agentic/full1800/slug/results.jsonl",
        [
            {
                "qid": "r1",
                "task": "ICU_Mortality_1day",
                "task_type": "risk_prediction",
                "label": "yes",
                "candidates": ["yes", "no"],
                "status": "success",
                "messages": [{"role": "user", "content": "q"}, _finish(["yes"])],
            },
            {
                "qid": "r2",
                "task": "labevents",
                "task_type": "decision_making",
                "label": [{"name": "Glucose"}],
                "status": "incomplete",
                "messages": [{"role": "assistant", "content": "thinking"}],
            },
            {
                "qid": "r3",
                "task": "labevents",
                "label": ["Sodium"],
                "status": "error",
                "stop_reason": "exception",
                "messages": [],
            },
        ],
    )
    rows = {r.qid: r for r in read_reference_results(path)}
    assert (
        rows["r1"].status == "answered"
        and rows["r1"].answer == ["yes"]
        and rows["r1"].category == "mortality"
    )
    assert rows["r1"].usage.tool_calls == {"ehr.finish": 1} and rows["r1"].usage.turns == 1
    assert rows["r2"].status == "no_answer" and rows["r2"].gold == ["Glucose"]
    assert rows["r3"].status == "infra_error" and rows["r3"].task_type == "decision_making"


def test_reference_scored_and_hierarchical_rows(tmp_path: Path) -> None:
    scored = write_jsonl(
        tmp_path / "mm_bench/agentic/scored/slug/scored.jsonl",
        [
            {
                "qid": "m1",
                "run_index": 0,
                "task": "medmod_phenotyping",
                "gold_names": ["Shock", "Essential hypertension"],
                "prediction_strs": ["shock"],
                "note": "ok",
                "answer_type": "list",
            },
            {
                "qid": "m2",
                "run_index": 0,
                "task": "ehrxqa_image",
                "gold_names": ["yes"],
                "prediction_strs": [],
                "note": "no_finish_call",
            },
        ],
    )
    rows = {r.qid: r for r in read_reference_results(scored)}
    assert rows["m1"].task_type == "multimodal" and rows["m1"].category == "phenotype"
    assert rows["m1"].answer_type is None  # routed by gold length, as the reference does
    assert rows["m2"].status == "no_answer"
    hier = write_jsonl(
        tmp_path / "hierarchical/oneshot/mm_bench/slug/L1.multimodal/L4.mortality_24h/rows.jsonl",
        [
            {
                "qid": "h1",
                "bench": "mm_bench",
                "fine_task": "mortality_24h",
                "gold": ["no"],
                "pred": ["no"],
                "is_multimodal": True,
                "f1": 1.0,
            },
        ],
    )
    (row,) = read_reference_results(hier)
    assert (row.task, row.task_type, row.mode, row.answer, row.category) == (
        "mortality_24h",
        "multimodal",
        "curated",
        ["no"],
        "clinical_deterioration",
    )


def test_read_expected_from_a_json_array_manifest(tmp_path: Path) -> None:
    manifest = tmp_path / "bench.json"
    manifest.write_text(
        json.dumps(
            [
                {
                    "qid": "q1",
                    "task": "ED_Hospitalization",
                    "task_type": "risk_prediction",
                    "label": "yes",
                    "answer": "x",
                },
                {"qid": "q2", "task": "labevents", "task_type": "decision_making", "label": ["A"]},
            ]
        )
    )
    rows = read_expected(manifest)
    assert [(r.qid, r.gold, r.answer) for r in rows] == [("q1", ["yes"], None), ("q2", ["A"], None)]
    manifest.write_text(json.dumps([{"qid": "q1", "task": "t", "task_type": "risk_prediction"}]))
    with pytest.raises(ScoringError, match=r"bench.json:1: field 'gold'"):
        read_expected(manifest)
