"""The paper's Table 3 view of AgentEHR-Bench runs: per-task F1 and the average, one row per (model, mode).

Table 3 of the paper reports five tasks (diagnoses_ccs, labevents, microbiologyevents, procedures_ccs,
transfers) and their average; prescriptions, the sixth task of the evaluation set (subset600), is shown
in its own column and left out of the average, as in the paper. Every number is a run summary's per-task
mean F1 (missing questions count 0 when the run was scored against its manifest).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from pydantic import BaseModel, ConfigDict

from ..bench import AGENTEHR_TABLE3_TASKS, AGENTEHR_TASKS
from ._render import pct
from ._summary_model import RunScores

AGENTEHR_BENCHMARKS = ("agentehr-bench", "agent_ehr_bench")
"""Benchmark names of AgentEHR-Bench runs: clinseek's, and the reference layout's folder name."""


class Table3Row(BaseModel):
    """One run (benchmark, mode, model) in the Table 3 view."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    mode: str
    model: str
    f1: dict[str, float | None]
    """Mean F1 per AgentEHR-Bench task (registry order; ``None`` when the run has no question of it)."""
    n: dict[str, int]
    """Scored questions per task."""
    average: float | None
    """Mean of the five Table 3 tasks' F1 (``None`` unless all five were scored)."""


def table3_rows(runs: Sequence[RunScores]) -> list[Table3Row]:
    """The Table 3 rows of the AgentEHR-Bench runs among ``runs`` (others are ignored), in input order."""
    rows = []
    for run in runs:
        if run.benchmark not in AGENTEHR_BENCHMARKS:
            continue
        f1 = {t.name: (run.per_task[t.name].f1 if t.name in run.per_task else None) for t in AGENTEHR_TASKS}
        table3 = [f1[t] for t in AGENTEHR_TABLE3_TASKS]
        rows.append(Table3Row(
            benchmark=run.benchmark, mode=run.mode, model=run.model, f1=f1,
            n={t.name: run.per_task[t.name].n_questions if t.name in run.per_task else 0 for t in AGENTEHR_TASKS},
            average=fmean(v for v in table3 if v is not None) if all(v is not None for v in table3) else None,
        ))
    return rows


TABLE3_HEADER = ["model", "mode", *AGENTEHR_TABLE3_TASKS, "average", "prescriptions"]
"""Columns of :func:`table3_cells` (F1 in %)."""


def table3_cells(row: Table3Row) -> list[str]:
    """One row of the view as text cells (F1 in %, ``–`` when not scored)."""
    extra = [t.name for t in AGENTEHR_TASKS if t.name not in AGENTEHR_TABLE3_TASKS]
    return [row.model, row.mode, *(pct(row.f1[t]) for t in AGENTEHR_TABLE3_TASKS), pct(row.average),
            *(pct(row.f1[t]) for t in extra)]


def table3_markdown(runs: Sequence[RunScores]) -> list[str]:
    """The Table 3 section of ``summary.md`` (no lines when no AgentEHR-Bench run was scored)."""
    rows = table3_rows(runs)
    if not rows:
        return []
    lines = ["## AgentEHR-Bench (the paper's Table 3)", "",
             "| " + " | ".join(TABLE3_HEADER) + " |", "|" + "---|" * len(TABLE3_HEADER)]
    lines += ["| " + " | ".join(table3_cells(r)) + " |" for r in rows]
    note = ("F1 (%) per task; average = mean of the five Table 3 tasks (shown only when all five were scored); "
            "prescriptions, the sixth task of the evaluation set, is not in the average.")
    return [*lines, "", note, ""]
