"""The paper's Table 3 view on a fixture in the seed layout: agent_ehr_bench/agentic/subset600/<model>/results.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinseek.scoring import score_path, summary_markdown, table3_cells, table3_rows

# per task: (gold, answer); F1: diagnoses 1 (case differs), labs 2/3 (P 1, R 1/2), micro 0, procedures 2/3
# (P 1/2, R 1), transfers 1, prescriptions 2/3
ROWS = {
    "diagnoses_ccs": (["Septicemia (except in labor)"], ["septicemia (except in labor)"]),
    "labevents": (["Glucose", "Sodium"], ["Glucose"]),
    "microbiologyevents": (["URINE CULTURE"], ["Blood Culture, Routine"]),
    "procedures_ccs": (["Hemodialysis"], ["Hemodialysis", "Blood transfusion"]),
    "transfers": (["Medicine"], ["Medicine"]),
    "prescriptions": (["Heparin", "Insulin"], ["Insulin"]),
}


def _row(i: int, task: str, gold: list[str], answer: list[str]) -> dict[str, object]:
    call = {"id": "c1", "type": "function", "function": {"name": "ehr.finish", "arguments": json.dumps({"response": answer})}}
    return {"qid": f"{task}_{i}", "run_index": 0, "task": task, "label": [{"name": g} for g in gold],
            "messages": [{"role": "user", "content": "..."}, {"role": "assistant", "content": "", "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": "c1", "content": "Finish"}],
            "completed": True, "status": "success", "stop_reason": "finish_tool_call"}


@pytest.fixture
def seed_layout(tmp_path: Path) -> Path:
    folder = tmp_path / "agent_ehr_bench" / "agentic" / "subset600" / "qwen3_5_35b_a3b"
    folder.mkdir(parents=True)
    rows = [_row(0, task, gold, answer) for task, (gold, answer) in ROWS.items()]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return tmp_path


def test_table3_rows_per_task_and_average(seed_layout: Path) -> None:
    report = score_path(seed_layout, layout="reference").report
    row, = table3_rows(report.runs)
    assert (row.benchmark, row.mode, row.model) == ("agent_ehr_bench", "agent", "qwen3_5_35b_a3b")
    expected = {"diagnoses_ccs": 1.0, "labevents": 2 / 3, "microbiologyevents": 0.0, "procedures_ccs": 2 / 3,
                "transfers": 1.0, "prescriptions": 2 / 3}
    assert row.f1 == pytest.approx(expected)
    assert row.average == pytest.approx((1.0 + 2 / 3 + 0.0 + 2 / 3 + 1.0) / 5)  # prescriptions not in it
    assert table3_cells(row) == ["qwen3_5_35b_a3b", "agent", "100.0", "66.7", "0.0", "66.7", "100.0", "66.7", "66.7"]
    assert "| qwen3_5_35b_a3b | agent | 100.0 | 66.7 | 0.0 | 66.7 | 100.0 | 66.7 | 66.7 |" in summary_markdown(report)


def test_no_agentehr_run_no_table3(seed_layout: Path, tmp_path: Path) -> None:
    other = tmp_path / "other" / "ehr_bench" / "agentic" / "full1800" / "m"
    other.mkdir(parents=True)
    row = _row(0, "Inpatient_Mortality", ["yes"], ["yes"]) | {"task_type": "risk_prediction"}
    (other / "results.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    report = score_path(tmp_path / "other", layout="reference").report
    assert table3_rows(report.runs) == [] and "Table 3" not in summary_markdown(report)
