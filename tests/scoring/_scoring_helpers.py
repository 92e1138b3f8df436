"""Builders of result rows and score inputs for the scoring tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clinseek.scoring import QuestionScore, ScoreInput, score_input_from_row

DEFAULTS = {"benchmark": "bench", "mode": "agent", "model": "m"}


def row_dict(**fields: Any) -> dict[str, Any]:
    """A runner row (the fields read_results expects) with test defaults."""
    base: dict[str, Any] = {
        "qid": "q1",
        "run_index": 0,
        "task": "labevents",
        "task_type": "decision_making",
        "category": "Lab_Microbiology_orders",
        "status": "answered",
        "gold": ["Glucose"],
        "answer": ["Glucose"],
    }
    base.update(fields)
    return base


def score_input(**fields: Any) -> ScoreInput:
    """A ScoreInput through the runner-row adapter."""
    return score_input_from_row(row_dict(**fields), DEFAULTS)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write rows as JSON lines (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def question(
    qid: str, f1: float, *, binary: bool = False, task: str = "t", category: str = "c"
) -> QuestionScore:
    """A scored QuestionScore with the given F1 (P = R = EM = F1)."""
    return QuestionScore(
        benchmark="b",
        mode="agent",
        model="m",
        qid=qid,
        task=task,
        task_type="risk_prediction" if binary else "decision_making",
        category=category,
        binary=binary,
        status="answered",
        scored=True,
        precision=f1,
        recall=f1,
        f1=f1,
        exact_match=f1,
    )
