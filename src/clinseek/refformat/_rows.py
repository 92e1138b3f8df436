"""Rows of the reference's result files, translated to and from clinseek's row fields.

Shapes read (ref_data_scoring.md §3, §5), told apart by :func:`row_format`:

- ``raw``: a run of the reference's harness (``results.jsonl``, ``merged_unique.jsonl``): the
  question's manifest fields, ``messages`` (OpenAI-style trajectory), ``completed``, ``status``
  (``success``/``incomplete``/``error``, curated ``ok``/``error``), ``stop_reason``, ``error``;
- ``exported``: a clinseek row written in the reference's shape by :func:`to_reference_row` (a raw
  row that also carries every clinseek field; ``clinseek_status`` marks it);
- ``scored``: a row of the reference's multimodal scorer (``scored.jsonl``/``rescored.jsonl``):
  ``gold_names``, ``prediction_strs``, ``note``;
- ``hierarchical``: a row of the paper's tables (``rows.jsonl``): ``gold``, ``pred``, ``fine_task``;
- ``clinseek``: a row in clinseek's field vocabulary. A row the runner wrote carries ``schema_version`` and is
  read as a ``clinseek.records.ResultRow``; one written by hand or by another harness may hold only the fields
  a scorer needs, in the looser forms docs/scoring.md lists (``label``/``ground_truth`` for ``gold``,
  ``cached_tokens``, tool calls as names or a total).

:func:`clinseek_fields` gives every shape but the runner's own rows in one vocabulary, the
``ResultRow`` field names, so the scorer reads no other. Everything here works on plain JSON objects,
so the runner (writing) and the scorer (reading) share it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ._layout import _MODES

RowFormat = Literal["clinseek", "exported", "raw", "scored", "hierarchical"]

FINISH_NAMES = frozenset({"finish", "ehr.finish", "ehr_finish", "ehr__finish"})
"""Tool names of the reference's finish call (matched exactly, never by substring)."""
CLINSEEK_STATUSES = frozenset({"answered", "no_answer", "infra_error", "invalid_input"})
REFERENCE_STATUSES = frozenset({"success", "incomplete", "error", "ok"})
ONE_SHOT_PREFIX = "one_shot_"
"""Id prefix of the synthetic finish call the reference appends to a Curated Input answer."""
ONE_SHOT_TOOL_TEXT = "Finish (one-shot)"
_SYNTHETIC = "clinseek_synthetic"
"""Marks an assistant turn :func:`to_reference_row` added only to carry the synthetic finish call."""
_SCORED_NOTES = frozenset({"ok", "no_finish_call", "bad_json_args", "no_response_key"})


def _text(row: Mapping[str, Any], key: str) -> str | None:
    value = row.get(key)
    return value if isinstance(value, str) else None


def row_format(row: Mapping[str, Any]) -> RowFormat | None:
    """Which shape ``row`` has (see the module docstring); ``None`` when it has none of them."""
    if "clinseek_status" in row:
        return "exported"
    if "gold_names" in row or ("prediction_strs" in row and _text(row, "note") in _SCORED_NOTES):
        return "scored"
    if "pred" in row and "gold" in row and ("fine_task" in row or "bench" in row):
        return "hierarchical"
    if _text(row, "status") in CLINSEEK_STATUSES:
        return "clinseek"
    if "messages" in row or _text(row, "status") in REFERENCE_STATUSES:
        return "raw"
    return None


def row_qid(row: Mapping[str, Any]) -> str:
    """The row's ``qid`` as text: a non-empty string or an integer.

    Raises:
        KeyError: no ``qid``; ValueError: naming the field, any other value (``null``, ``""``, ``1.5``, ``true``).
    """
    value = row["qid"]
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"field 'qid': expected a question id (text or an integer), got {value!r}")


def row_run_index(row: Mapping[str, Any]) -> int:
    """The row's ``run_index`` (0 when absent or null): an integer from 0, also written ``1.0`` or ``"1"``.

    Raises:
        ValueError: naming the field, any other value (``NaN``, ``1.5``, ``-1``, ``"first"``, ``true``).
    """
    value = row.get("run_index")
    if value is None:
        return 0
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().isdecimal():
        number = int(value)
    if number is None or number < 0:
        raise ValueError(f"field 'run_index': expected a run number (0, 1, ...), got {value!r}")
    return number


def checked_messages(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The row's ``messages`` (``[]`` when absent or null), checked to be the trajectory's shape: a list of
    message objects, whose ``tool_calls`` are lists of call objects whose ``function`` is an object.

    Raises:
        TypeError: naming the first part of another shape (``field 'messages[2].tool_calls[0]': ...``).
    """
    messages = row.get("messages")
    if messages is None:
        return []
    if not isinstance(messages, list):
        raise TypeError(f"field 'messages': expected a list of message objects, got {type(messages).__name__}")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise TypeError(f"field 'messages[{i}]': expected a message object, got {message!r:.60}")
        calls = message.get("tool_calls")
        if calls is None:
            continue
        if not isinstance(calls, list):
            raise TypeError(f"field 'messages[{i}].tool_calls': expected a list of calls, got {type(calls).__name__}")
        for j, call in enumerate(calls):
            where = f"messages[{i}].tool_calls[{j}]"
            if not isinstance(call, Mapping):
                raise TypeError(f"field '{where}': expected a call object, got {call!r:.60}")
            if call.get("function") is not None and not isinstance(call["function"], Mapping):
                raise TypeError(f"field '{where}.function': expected an object with name and arguments, "
                                f"got {call['function']!r:.60}")
    return messages


# ---------------------------------------------------------------------------------------------
# reading the reference's rows


def _arguments(raw: object) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        return value if isinstance(value, dict) else None
    return None


def _items(value: object) -> list[str]:
    """Answer items as strings: dict items give their ``name``/``value``/``text``/``answer``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, int | float):
        return [json.dumps(value)]
    if isinstance(value, dict):
        for key in ("name", "value", "text", "answer"):
            if value.get(key) is not None and str(value[key]).strip():
                return _items(value[key])
        return [json.dumps(value, sort_keys=True)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _items(item)]
    return [str(value)]


def finish_answer(messages: Sequence[Mapping[str, Any]]) -> list[str] | None:
    """The ``response`` of the last finish tool call, as strings; ``None`` when there is none.

    The call is the last one named exactly ``finish``, ``ehr.finish``, ``ehr_finish`` or
    ``ehr__finish`` (its synthetic forms ``synthetic_finish_*`` and ``one_shot_*`` count, as in the
    reference). A string ``response`` is one item; arguments that do not parse, or a ``response`` that
    is neither a list nor a non-empty string, give ``None``.
    """
    for message in reversed(messages):
        for call in reversed(message.get("tool_calls") or []):
            function = call.get("function") or {}
            if function.get("name") not in FINISH_NAMES:
                continue
            args = _arguments(function.get("arguments"))
            response = None if args is None else args.get("response")
            if isinstance(response, str):
                return [response] if response.strip() else None
            return _items(response) if isinstance(response, list) else None
    return None


def _tool_names(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Canonical names of the assistant's tool calls (``ehr_x``/``ehr__x`` → ``ehr.x``, bare → ``ehr.x``)."""
    names = [str((call.get("function") or {}).get("name", "")).replace("__", ".")
             for m in messages if m.get("role") == "assistant" for call in m.get("tool_calls") or []]
    return [n if "." in n else n.replace("_", ".", 1) if n.startswith(("ehr_", "browser_", "image_")) else f"ehr.{n}"
            for n in names]


def tool_call_counts(value: object) -> dict[str, int]:
    """Tool calls as ``{name: count}``, from a dict of counts, a list of names (or of ``{"name"}`` objects),
    or a total (``{"(unnamed)": n}``); ``None`` gives ``{}``.

    Raises:
        TypeError: any other value.
    """
    if value is None:
        return {}
    if isinstance(value, bool):
        raise TypeError("expected a dict of counts, a list of names or an int")
    if isinstance(value, int):
        return {"(unnamed)": value} if value else {}
    if isinstance(value, Mapping):
        return {str(k): int(v) for k, v in value.items()}
    if isinstance(value, list):
        counts: dict[str, int] = {}
        for name in value:
            key = str(name.get("name", "(unnamed)") if isinstance(name, Mapping) else name)
            counts[key] = counts.get(key, 0) + 1
        return counts
    raise TypeError(f"expected a dict of counts, a list of names or an int, got {type(value).__name__}")


def _gold(row: Mapping[str, Any]) -> object:
    """The gold of a row: ``gold``, else the reference's ``label``, else ``ground_truth``."""
    return next((row[k] for k in ("gold", "label", "ground_truth") if row.get(k) is not None), None)


_FORMAT_STOPS = {"finish_tool_call": "finish_call", "answer_block": "answer_tag"}


def implied_parse_mode(status: object, stop_reason: object) -> str | None:
    """The ``parse_mode`` of a clinseek row written before the field existed: the strict mode its
    ``stop_reason`` implies for an ``answered`` row (``finish_tool_call`` → ``finish_call``,
    ``answer_block`` → ``answer_tag``); ``None`` (unrecorded) otherwise."""
    return _FORMAT_STOPS.get(str(stop_reason)) if status == "answered" else None


_PLAIN_FIELDS = ("qid", "run_index", "benchmark", "task", "task_type", "category", "model", "status", "answer",
                 "invalid_answer", "gold_aliases", "answer_type", "candidates", "question_hash", "parse_mode",
                 "stop_reason")


def _plain_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row in clinseek's vocabulary written by hand or another harness, in the ``ResultRow`` field names.

    ``usage`` may also hold ``turns``, ``tool_calls``, ``cost_usd`` and ``latency_s``; its cached prompt
    tokens may be named ``cached_tokens``; ``mode`` may be the reference's ``agentic``/``oneshot``; a missing
    ``parse_mode`` is :func:`implied_parse_mode`.
    """
    usage = row.get("usage") or {}
    if not isinstance(usage, Mapping):
        raise TypeError("usage must be an object")
    mode = row.get("mode")
    parse_mode = row.get("parse_mode") or implied_parse_mode(row.get("status"), row.get("stop_reason"))
    return {
        **{k: row[k] for k in _PLAIN_FIELDS if k in row},
        "parse_mode": parse_mode,
        "gold": _gold(row),
        **({"mode": _MODES.get(str(mode), mode)} if mode is not None else {}),
        "usage": {"input_tokens": usage.get("input_tokens"), "output_tokens": usage.get("output_tokens"),
                  "cached_input_tokens": usage.get("cached_input_tokens", usage.get("cached_tokens"))},
        "tool_calls": tool_call_counts(row.get("tool_calls", usage.get("tool_calls"))),
        **{k: row.get(k, usage.get(k)) for k in ("turns", "cost_usd", "latency_s")},
        "question": row.get("question") if isinstance(row.get("question"), str) else None,
    }


def _raw_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    messages = checked_messages(row)
    answer = finish_answer(messages)
    failed = row.get("status") == "error" or str(row.get("stop_reason") or "").startswith("exception")
    return {
        "status": "infra_error" if failed else "answered" if answer else "no_answer",
        "answer": answer,
        "gold": _gold(row),
        "tool_calls": tool_call_counts(_tool_names(messages)),
        "turns": sum(m.get("role") == "assistant" for m in messages),
        "question": row.get("question") if isinstance(row.get("question"), str) else None,
    }


def _scored_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    answer = _items(row.get("prediction_strs")) if row.get("note") == "ok" else None
    return {"status": "answered" if answer else "no_answer", "answer": answer or None, "gold": row.get("gold_names")}


def _hierarchical_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    answer = _items(row.get("pred"))
    return {"status": "answered" if answer else "no_answer", "answer": answer or None, "gold": row.get("gold"),
            "task": row.get("task") or row.get("fine_task"), "category": row.get("category") or row.get("fine_task")}


def clinseek_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row of any shape but the runner's own in clinseek's vocabulary (the ``ResultRow`` field names).

    A reference row gives ``qid``, ``run_index``, ``task``, ``task_type`` (``None`` when the row has none:
    the multimodal rows), ``category`` (``None`` when absent), ``status`` (``answered`` / ``no_answer`` /
    ``infra_error``: ``status: error`` or a ``stop_reason`` starting with ``exception`` is an infrastructure
    error), ``answer`` (the last finish call's ``response``), ``gold`` (``label``, else ``ground_truth``,
    ``gold_names`` or ``gold``, as released), ``candidates``, ``tool_calls`` (counts by name), ``turns``,
    ``question`` (its text, when present) and ``reference_status`` (the row's own ``status``). An
    ``exported`` row gives its clinseek fields back unchanged (:func:`from_reference_row`). A row in
    clinseek's vocabulary without ``schema_version`` (the ``clinseek`` shape, or none) keeps its fields,
    with ``gold``, ``usage``, ``tool_calls``, ``turns``, ``cost_usd``, ``latency_s`` and ``mode`` in their
    ``ResultRow`` forms (usage values ``None`` when not reported).

    Raises:
        KeyError: the row has no ``qid``; TypeError: ``usage`` or ``tool_calls`` of the wrong type.
    """
    shape = row_format(row)
    if row.get("status") is not None and not isinstance(row["status"], str):
        raise ValueError(f"field 'status': expected text, got {row['status']!r}")
    if shape == "exported":
        return from_reference_row(row)
    if shape in ("clinseek", None):
        return {**_plain_fields(row), "qid": row_qid(row), "run_index": row_run_index(row)}
    fields = (_scored_fields(row) if shape == "scored" else _hierarchical_fields(row) if shape == "hierarchical"
              else _raw_fields(row))
    declared_type = row.get("task_type") or ("multimodal" if row.get("is_multimodal") else None)
    return {
        "qid": row_qid(row),
        "run_index": row_run_index(row),
        "task": row.get("task") or row.get("fine_task"),
        "task_type": declared_type,
        "category": row.get("category"),
        "candidates": row.get("candidates"),
        "reference_status": row.get("status"),
        **fields,
    }  # a hierarchical row's fine_task is its L4 category (the scorer maps it to the card's)


# ---------------------------------------------------------------------------------------------
# writing clinseek rows in the reference's shape, and reading them back


def reference_status(mode: str, status: str) -> tuple[str, str]:
    """(``status``, ``stop_reason``) the reference writes for a clinseek ``mode`` and ``status``.

    Agent: ``answered`` → (``success``, ``finish_tool_call``), ``no_answer`` → (``incomplete``,
    ``no_final_answer``), ``infra_error`` → (``error``, ``exception``), ``invalid_input`` (a manifest
    row that could not run) → (``error``, ``invalid_input``). Curated Input (the reference's one-shot
    runner says only ``ok``/``error``): ``ok`` unless ``infra_error`` or ``invalid_input``.
    """
    stop = {"answered": "finish_tool_call", "no_answer": "no_final_answer", "invalid_input": "invalid_input"}.get(
        status, "exception"
    )
    if mode == "curated":
        return ("error" if status in ("infra_error", "invalid_input") else "ok"), stop
    return {"answered": "success", "no_answer": "incomplete"}.get(status, "error"), stop


def reference_label(gold: Sequence[str], aliases: Sequence[Sequence[str]], task_type: str) -> object:
    """The gold in the reference's ``label`` shape: a string for a binary text task, ``{"name"}``
    objects for multimodal rows, ``{"name", "atc_name"}`` objects when an item has an alias, else
    a list of strings."""
    if task_type == "risk_prediction" and len(gold) == 1:
        return gold[0]
    if task_type == "multimodal":
        return [{"name": g} for g in gold]
    if any(aliases):
        padded = [*aliases, *[[]] * (len(gold) - len(aliases))]
        return [{"name": g, "atc_name": a[0]} if a else {"name": g} for g, a in zip(gold, padded, strict=False)]
    return list(gold)


def _to_reference_call(call: Mapping[str, Any]) -> dict[str, Any]:
    extra = {k: v for k, v in call.items() if k not in ("id", "name", "arguments")}
    function = {"name": call.get("name", ""), "arguments": json.dumps(call.get("arguments") or {}, ensure_ascii=False)}
    return {"id": call.get("id", ""), "type": "function", "function": function, **extra}


def _to_reference_message(message: Mapping[str, Any]) -> dict[str, Any]:
    out = {("reasoning_content" if k == "reasoning" else k): v for k, v in message.items() if k != "tool_calls"}
    if message.get("tool_calls"):
        out["tool_calls"] = [_to_reference_call(c) for c in message["tool_calls"]]
    return out


def _one_shot_finish(messages: list[dict[str, Any]], items: list[str], call_id: str) -> list[dict[str, Any]]:
    """``messages`` with the reference's synthetic finish on the last assistant turn, and its tool turn."""
    call = {"id": call_id, "type": "function",
            "function": {"name": "ehr.finish", "arguments": json.dumps({"response": items}, ensure_ascii=False)}}
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
    if last is None:
        messages.append({"role": "assistant", "content": "", "tool_calls": [call], _SYNTHETIC: True})
    else:
        messages[last] = {**messages[last], "tool_calls": [*messages[last].get("tool_calls", []), call]}
    messages.append({"role": "tool", "content": ONE_SHOT_TOOL_TEXT, "tool_call_id": call_id})
    return messages


def to_reference_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A clinseek result row (``ResultRow`` as JSON) in the reference's ``results.jsonl`` shape.

    Every clinseek field stays (the question's ids, ``task``, ``task_type``, ``candidates``,
    ``completed``, ``error``... are where the reference's readers look for them), and the
    reference's own fields are added or rewritten: ``label`` (:func:`reference_label`), ``question``
    (the question's text, else the first user turn), ``status`` and ``stop_reason`` in its terms
    (:func:`reference_status`; clinseek's move to ``clinseek_status`` and ``clinseek_stop_reason``),
    and ``messages`` with OpenAI-style tool calls (``{id, type, function: {name, arguments: JSON
    text}}``) and ``reasoning_content``. A Curated Input row with an answer gets the reference's
    synthetic finish call (id ``one_shot_<qid>_<run>``) on its reply, so the reference's extractor
    finds the same items, valid and invalid, as clinseek's. :func:`from_reference_row` undoes it.
    """
    manifest = row.get("manifest") or {}
    out: dict[str, Any] = {k: v for k, v in row.items() if k not in ("status", "stop_reason", "messages")}
    mode, status = str(row.get("mode")), str(row.get("status"))
    out["clinseek_status"], out["clinseek_stop_reason"] = status, row.get("stop_reason")
    out["status"], out["stop_reason"] = reference_status(mode, status)
    out["label"] = reference_label(row.get("gold") or [], row.get("gold_aliases") or [], str(row.get("task_type")))
    messages = [_to_reference_message(m) for m in row.get("messages") or []]
    first_user = next((m.get("content") for m in messages if m.get("role") == "user"), None)
    out["question"] = manifest.get("question_text") or first_user
    items = [*(row.get("answer") or []), *(row.get("invalid_answer") or [])]
    if mode == "curated" and items:
        messages = _one_shot_finish(messages, items, f"{ONE_SHOT_PREFIX}{row.get('qid')}_{row.get('run_index', 0)}")
    out["messages"] = messages
    return out


def _from_reference_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    out: dict[str, Any] = {"id": call.get("id"), "name": function.get("name")}
    arguments = _arguments(function.get("arguments"))
    if arguments:
        out["arguments"] = arguments
    out.update({k: v for k, v in call.items() if k not in ("id", "type", "function")})
    return out


def _from_reference_message(message: Mapping[str, Any]) -> dict[str, Any] | None:
    if message.get(_SYNTHETIC) or (
        message.get("role") == "tool" and str(message.get("tool_call_id") or "").startswith(ONE_SHOT_PREFIX)
    ):
        return None
    out = {("reasoning" if k == "reasoning_content" else k): v for k, v in message.items() if k != "tool_calls"}
    calls = [_from_reference_call(c) for c in message.get("tool_calls") or []
             if not str(c.get("id") or "").startswith(ONE_SHOT_PREFIX)]
    if calls:
        out["tool_calls"] = calls
    return out


def from_reference_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """The clinseek fields of a row written by :func:`to_reference_row` (its inverse).

    ``status`` and ``stop_reason`` are clinseek's again, ``messages`` have clinseek's tool calls and
    no synthetic finish, and ``reference_status`` keeps the reference's ``status``. The reference's
    ``label`` and ``question`` stay in the dict: a reader keeps the fields it knows (``ResultRow``
    fields for the runner).

    Raises:
        KeyError: ``row`` has no ``clinseek_status`` (it was not written by :func:`to_reference_row`).
    """
    checked_messages(row)
    out = dict(row)
    out["reference_status"] = row.get("status")
    out["status"] = out.pop("clinseek_status")
    out["stop_reason"] = out.pop("clinseek_stop_reason", None)
    out["messages"] = [m for m in (_from_reference_message(m) for m in row.get("messages") or []) if m is not None]
    return out
