"""``clinseek tools`` and ``clinseek tasks``: every tool and benchmark task with a one-line description."""

from __future__ import annotations

import json
import re
from typing import Annotated

import typer

from ._app import app
from ._console import table_console


def first_sentence(text: str, width: int = 120) -> str:
    """The first sentence of ``text``'s first paragraph, on one line, cut to ``width`` characters."""
    paragraph = " ".join(text.strip().split("\n\n", 1)[0].split())
    sentence = re.split(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=[A-Z])", paragraph, maxsplit=1)[0]
    return sentence if len(sentence) <= width else sentence[: width - 1].rstrip() + "…"


_NEEDS = {"browser": "a knowledge source (--knowledge)", "image": "linked CXR images (--cxr-root)"}
_MODEL_BACKED = ("image.chest_xray_classifier", "image.chest_xray_report_generator", "image.xray_phrase_grounding",
                 "image.chest_xray_segmentation")
"""Image tools that run a model: they also need the [imaging] extra and weights (docs/imaging.md)."""


def tool_rows() -> list[dict[str, str]]:
    """One row per registered tool: name, family, description (first sentence) and what it needs."""
    from ..tools import BROWSER_TOOLS, DEFAULT_REGISTRY, EHR_SEMANTIC_TOOL, EHR_TOOLS, IMAGE_TOOLS

    known = (*EHR_TOOLS, *BROWSER_TOOLS, *IMAGE_TOOLS)
    rows = []
    for name in [*known, *(n for n in DEFAULT_REGISTRY.names() if n not in known)]:
        spec = DEFAULT_REGISTRY.get(name)
        needs = _NEEDS.get(spec.family, "")
        if name in _MODEL_BACKED:
            needs += ", [imaging] + weights (--imaging-weights)"
        if name == EHR_SEMANTIC_TOOL:
            needs = "[semantic] + a local sentence-transformers model"
        rows.append({"name": name, "family": spec.family, "description": first_sentence(spec.description),
                     "needs": needs})
    return rows


def _task_description(instruction: str) -> str:
    text = instruction.removeprefix("Please predict ").removeprefix("Predict ").removesuffix(".")
    text = text.removesuffix(", based on the patient's records up to the current time")
    return text[:1].upper() + text[1:]


_BUILD = {"clinseek-bench-text": "clinseek", "clinseek-bench-mm": "clinseek", "agentehr-bench": "agentehr"}


def task_rows() -> list[dict[str, str]]:
    """One row per task of the registry: the 45 text subtasks, the 6 multimodal categories (``--benchmark
    clinseek``), then the 6 AgentEHR-Bench tasks (``--benchmark agentehr``)."""
    from ..bench import TASKS, get_category

    return [{"name": t.name, "benchmark": _BUILD[t.benchmark], "kind": t.task_type, "category": t.category,
             "description": get_category(t.category).description if t.task_type == "multimodal"
             else _task_description(t.instruction)} for t in TASKS.tasks()]


def _print(rows: list[dict[str, str]], columns: list[str], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    table = Table(*columns, box=None, pad_edge=False, show_edge=False)
    for row in rows:
        table.add_row(*(row[c] for c in columns))
    table_console().print(table, markup=False, highlight=False)


@app.command("tools")
def tools_cmd(as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False) -> None:
    """List every tool an agent can be offered, with what it does and what it needs (docs/tools.md)."""
    _print(tool_rows(), ["name", "description", "needs"], as_json)


@app.command("tasks")
def tasks_cmd(as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False) -> None:
    """List every benchmark task (the names --tasks takes, per --benchmark) with what it asks (docs/tasks.md)."""
    _print(task_rows(), ["name", "benchmark", "kind", "category", "description"], as_json)
