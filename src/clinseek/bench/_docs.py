"""``docs/tasks.md``, generated from the task registry (a test keeps the committed file up to date)."""

from __future__ import annotations

from ._spec import TaskSpec
from ._tasks import TASKS, get_category


def _task_section(spec: TaskSpec) -> str:
    lines = [
        f"### `{spec.name}`",
        "",
        f"- **type**: {spec.task_type}; **category**: {get_category(spec.category).title} (`{spec.category}`)",
        f"- **instruction**: {spec.instruction}",
        f"- **prediction time**: {spec.prediction_time}",
        f"- **label**: {spec.label_definition}",
        f"- **candidates**: {spec.candidate_source}",
        f"- **store tables**: {', '.join(f'`{t}`' for t in spec.tables)}",
        f"- **hidden encounter**: `target_{spec.target}`" if spec.target else "- **hidden encounter**: none",
        f"- **definition source**: {spec.label_source}",
    ]
    return "\n".join(lines)


def tasks_markdown() -> str:
    """The task reference: the card's categories, the 45 text subtasks, the 6 multimodal categories and the
    6 AgentEHR-Bench tasks."""
    out = [
        "# Benchmark tasks",
        "",
        "Generated from `clinseek.bench` (the task registry) by `python scripts/gen_tasks_doc.py`; "
        "do not edit by hand. `docs/benchmarks.md` explains manifests, the builder and Curated Input.",
        "",
        "## Categories (dataset card)",
        "",
        "| split | category | slug | rows in the release | description |",
        "|---|---|---|---:|---|",
    ]
    out += [
        f"| {c.split} | {c.title} | `{c.slug}` | {c.release_rows} | {c.description} |" for c in TASKS.categories
    ]
    for task_type, title in (
        ("risk_prediction", "Risk prediction (yes/no)"),
        ("decision_making", "Decision making"),
    ):
        out += ["", f"## Text: {title}", ""]
        out += [_task_section(s) + "\n" for s in TASKS.tasks("clinseek-bench-text") if s.task_type == task_type]
    out += ["", "## Multimodal categories", ""]
    for mm in TASKS.tasks("clinseek-bench-mm"):
        out += [
            f"### `{mm.name}`",
            "",
            f"- **upstream tasks**: {', '.join(f'`{t}`' for t in mm.upstream_tasks)} ({mm.label_source})",
            f"- **prediction time**: {mm.prediction_time}",
            f"- **label**: {mm.label_definition}",
            "",
        ]
    out += ["", "## AgentEHR-Bench", "",
            "`clinseek bench build --benchmark agentehr` draws these six tasks (the evaluation set has 100 of "
            "each); the paper's Table 3 averages the first five. Each episode gets its task's candidate table "
            "(`docs/benchmarks.md`).", ""]
    out += [_task_section(s).replace("### `", "### AgentEHR `", 1) + "\n" for s in TASKS.tasks("agentehr-bench")]
    return "\n".join(out).rstrip("\n") + "\n"
