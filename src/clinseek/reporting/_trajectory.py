"""One result row as the trajectory viewer shows it: its run facts and its steps, in order.

A step is one message of ``ResultRow.messages`` (the runner's serialisation of
``clinseek.models.Message``, defaults left out), joined with the accounting the runner kept beside
it: the model call of each assistant turn (``calls``: latency, tokens, cost) and the execution of
each tool call (``tools``: elapsed time, output size, truncation, error kind).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..agent import CallRecord, ToolRecord
from ..runner import ResultRow
from ._assets_store import ImageTable, SharedTexts

Payload = dict[str, Any]
"""JSON-ready dict shipped to the page (never passed to another package)."""


def _images(message: dict[str, Any], images: ImageTable, roots: Sequence[Path]) -> list[str]:
    refs = message.get("images") or []
    return [images.ref(str(ref.get("path", "")), roots) for ref in refs if isinstance(ref, dict)]


def _call(call: dict[str, Any]) -> Payload:
    out: Payload = {"id": call.get("id"), "name": call.get("name"), "args": call.get("arguments") or {}}
    for key in ("raw_arguments", "error_kind", "error"):
        if call.get(key):
            out[key] = call[key]
    return out


def _call_facts(record: CallRecord) -> Payload:
    return {"latency_s": record.latency_s, "input_tokens": record.input_tokens,
            "output_tokens": record.output_tokens, "cached_tokens": record.cached_input_tokens,
            "cost_usd": record.cost_usd, "stop_reason": record.stop_reason}


def _tool_facts(record: ToolRecord) -> Payload:
    return {"elapsed_s": record.elapsed_s, "output_chars": record.output_chars, "truncated": record.truncated,
            "ok": record.ok, "error_kind": record.error_kind}


def _assistant(message: dict[str, Any], turn: int, calls: Iterator[CallRecord]) -> Payload:
    step: Payload = {"kind": "assistant", "turn": turn, "text": message.get("content", "")}
    if message.get("reasoning"):
        step["reasoning"] = message["reasoning"]
    blocks = [b.get("text", "") for b in message.get("reasoning_blocks") or [] if b.get("kind") == "thinking"]
    if blocks and "reasoning" not in step:
        step["reasoning"] = "\n\n".join(blocks)
    step["calls"] = [_call(c) for c in message.get("tool_calls") or []]
    record = next(calls, None)
    if record is not None:
        step.update(_call_facts(record))
    return step


def _tool(message: dict[str, Any], records: dict[str, list[ToolRecord]]) -> Payload:
    step: Payload = {"kind": "tool", "name": message.get("name"), "call_id": message.get("tool_call_id"),
                     "text": message.get("content", ""), "is_error": bool(message.get("is_error"))}
    queue = records.get(str(message.get("name")))
    if queue:
        step.update(_tool_facts(queue.pop(0)))
    return step


def trajectory_steps(row: ResultRow, texts: SharedTexts, images: ImageTable,
                     roots: Sequence[Path] = ()) -> list[Payload]:
    """The steps of ``row.messages``: system (a shared-text id), user, assistant, tool.

    Assistant turns are numbered from 1 and carry their model call's latency, tokens and cost
    (``row.calls``, in order); tool results carry their execution record (``row.tools``, matched
    in order per tool name). Images become ids of ``images`` (looked up under ``roots``).
    """
    calls = iter(row.calls)
    records: dict[str, list[ToolRecord]] = {}
    for record in row.tools:
        records.setdefault(record.name, []).append(record)
    steps: list[Payload] = []
    turn = 0
    for message in row.messages:
        role = message.get("role")
        if role == "system":
            steps.append({"kind": "system", "ref": texts.ref(str(message.get("content", "")))})
        elif role == "assistant":
            turn += 1
            steps.append(_assistant(message, turn, calls))
        elif role == "tool":
            steps.append(_tool(message, records))
        else:
            steps.append({"kind": "user", "text": message.get("content", "")})
        found = _images(message, images, roots)
        if found:
            steps[-1]["images"] = found
    return steps


def row_payload(row: ResultRow, texts: SharedTexts, images: ImageTable, roots: Sequence[Path] = ()) -> Payload:
    """Everything the viewer shows about one run of one question: answer, gold, status, usage, steps."""
    return {
        "qid": row.qid, "run_index": row.run_index, "mode": row.mode, "model": row.model,
        "status": row.status, "stop_reason": row.stop_reason, "error": row.error, "error_type": row.error_type,
        "answer": row.answer, "invalid_answer": row.invalid_answer, "gold": row.gold,
        "candidates": row.candidates, "subject_id": row.subject_id, "hadm_id": row.hadm_id,
        "prediction_time": row.prediction_time, "instruction": row.manifest.get("instruction"),
        "turns": row.turns, "tool_calls": row.tool_calls, "latency_s": row.latency_s, "cost_usd": row.cost_usd,
        "input_tokens": row.usage.input_tokens, "output_tokens": row.usage.output_tokens,
        "cached_tokens": row.usage.cached_input_tokens, "prompt_version": row.prompt_version,
        "policy_version": row.policy_version, "started_at": row.started_at,
        "steps": trajectory_steps(row, texts, images, roots),
    }
