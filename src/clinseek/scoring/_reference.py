"""Reading the reference's result files (ClinSeek-Evaluation-Results layout) into score inputs.

Three row shapes are read, told apart by their fields:

- raw runs ``{ehr_bench,mm_bench,agent_ehr_bench}/{agentic,oneshot}/<split>/<slug>/results.jsonl``:
  rows with ``messages``; the answer is the ``response`` of the last ``finish``/``ehr.finish``
  tool call, gold is ``label`` (or ``ground_truth``);
- multimodal scored rows ``mm_bench/{agentic,oneshot}/scored/<slug>/{scored,rescored}.jsonl``:
  ``gold_names`` and ``prediction_strs`` (answer only when ``note`` is ``ok``);
- hierarchical rows ``hierarchical/{agentic,oneshot}/<bench>/<model>/L1.*/…/rows.jsonl``:
  ``gold``, ``pred`` and ``fine_task``.

``agentic`` is read as mode ``agent`` and ``oneshot`` as ``curated``; the benchmark and model
come from the path. The reference's own F1 is ignored: everything is rescored here.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ScoringError
from ._model import ScoreInput, TaskType, Usage
from ._normalize import gold_items, label_strings
from ._read import _fail, _problem, iter_jsonl, row_error, tool_call_counts
from ._tasks import reference_category, reference_task_type

FINISH_NAMES = frozenset({"finish", "ehr.finish", "ehr_finish", "ehr__finish"})
"""Tool names the reference's finish call has (no substring matching)."""
_BENCHES = ("ehr_bench", "mm_bench", "agent_ehr_bench")
_WRAPPERS = re.compile(r"(full|subset)\d+|scored|rescored|hierarchical")


def reference_run_key(path: Path) -> tuple[str, str, str]:
    """(benchmark, mode, model) of a reference results file, read from its path.

    Raises:
        ScoringError: when no path part is ``agentic`` or ``oneshot``.
    """
    parts = path.resolve().parts
    modes = [i for i, p in enumerate(parts) if p in ("agentic", "oneshot")]
    if not modes:
        raise ScoringError(f"{path}: not in the reference layout (no 'agentic' or 'oneshot' folder)")
    benches = [i for i, p in enumerate(parts) if p in _BENCHES]
    bench = parts[benches[-1]] if benches else "unknown"
    start = max([modes[-1], *benches]) + 1
    model = next((p for p in parts[start:-1] if not _WRAPPERS.fullmatch(p)), "unknown")
    mode = "agent" if parts[modes[-1]] == "agentic" else "curated"
    return bench, mode, model


def _arguments(raw: object) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(raw)
        except (ValueError, SyntaxError):
            continue
        return value if isinstance(value, dict) else None
    return None


def finish_answer(messages: list[Mapping[str, Any]]) -> list[str] | None:
    """The ``response`` of the last finish tool call, as strings; ``None`` when there is none."""
    for message in reversed(messages):
        for call in reversed(message.get("tool_calls") or []):
            function = call.get("function") or {}
            if function.get("name") not in FINISH_NAMES:
                continue
            args = _arguments(function.get("arguments"))
            response = None if args is None else args.get("response")
            if isinstance(response, str):
                return [response] if response.strip() else None
            return label_strings(response) if isinstance(response, list) else None
    return None


def _messages_usage(messages: list[Mapping[str, Any]]) -> Usage:
    assistant = [m for m in messages if m.get("role") == "assistant"]
    names = [
        str((call.get("function") or {}).get("name", "")).replace("__", ".")
        for m in assistant
        for call in m.get("tool_calls") or []
    ]
    canonical = [
        n
        if "." in n
        else n.replace("_", ".", 1)
        if n.startswith(("ehr_", "browser_", "image_"))
        else f"ehr.{n}"
        for n in names
    ]
    return Usage(turns=len(assistant), tool_calls=tool_call_counts(canonical))


def _raw_row(row: Mapping[str, Any]) -> tuple[str, list[str] | None, object, Usage]:
    messages = row.get("messages") or []
    answer = finish_answer(messages)
    error = row.get("status") == "error" or str(row.get("stop_reason", "")).startswith("exception")
    status = "infra_error" if error else "answered" if answer else "no_answer"
    gold = row.get("label") if row.get("label") is not None else row.get("ground_truth")
    return status, answer, gold, _messages_usage(messages)


def _scored_row(row: Mapping[str, Any]) -> tuple[str, list[str] | None, object, Usage]:
    answer = label_strings(row.get("prediction_strs")) if row.get("note") == "ok" else None
    return ("answered" if answer else "no_answer"), answer, row.get("gold_names"), Usage()


def _hier_row(row: Mapping[str, Any]) -> tuple[str, list[str] | None, object, Usage]:
    answer = label_strings(row.get("pred")) or None
    return ("answered" if answer else "no_answer"), answer, row.get("gold"), Usage()


def reference_input(row: Mapping[str, Any], run_key: tuple[str, str, str]) -> ScoreInput:
    """One reference row (any of the three shapes) as a :class:`ScoreInput`."""
    if "messages" in row:
        status, answer, gold, usage = _raw_row(row)
    elif "gold_names" in row:
        status, answer, gold, usage = _scored_row(row)
    else:
        status, answer, gold, usage = _hier_row(row)
    task = str(row.get("task") or row.get("fine_task") or row["task"])
    gold_names, aliases = gold_items(gold)
    if not gold_names:
        raise ValueError("field 'label': empty or absent; a question needs at least one gold label")
    declared = row.get("task_type") or ("multimodal" if row.get("is_multimodal") else None)
    task_type: TaskType = reference_task_type(task, declared)
    return ScoreInput(
        qid=str(row["qid"]),
        run_index=int(row.get("run_index") or 0),
        benchmark=run_key[0],
        task=task,
        task_type=task_type,
        category=str(row.get("category") or reference_category(task)),
        mode=run_key[1],  # type: ignore[arg-type]
        model=run_key[2],
        status=status,  # type: ignore[arg-type]
        answer=answer,
        gold=gold_names,
        gold_aliases=aliases,
        candidates=None if row.get("candidates") is None else label_strings(row["candidates"]),
        usage=usage,
    )


def read_reference_results(
    path: Path | str, *, bad_rows: list[ScoringError] | None = None
) -> list[ScoreInput]:
    """Read one reference results file (``results.jsonl``, ``scored.jsonl``, ``rescored.jsonl``
    or ``rows.jsonl``) into score inputs; benchmark, mode and model come from its path.

    Multimodal rows are routed by gold length, as the reference does (its ``answer_type`` is
    ``list`` in every row and is ignored).

    Raises:
        ScoringError: naming file, line and field of the first bad row (or collected in
            ``bad_rows`` and skipped when a list is given), or for a path outside the layout.
    """
    path = Path(path)
    run_key = reference_run_key(path)
    out: list[ScoreInput] = []
    for line_no, row in iter_jsonl(path, bad_rows):
        try:
            out.append(reference_input(row, run_key))
        except (KeyError, TypeError, ValueError) as err:
            field, problem = _problem(err)
            _fail(row_error(path, line_no, field, problem), bad_rows)
    return out
